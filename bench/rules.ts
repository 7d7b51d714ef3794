// Creating payroll and invoicing documents with the manifests' rules against the same creates
// with the rules switched off, in the same run: payslips (gross, deductions and net pay computed,
// validations reading the employee and the run through `ref`, defaults, and the run's five
// totals moved in the same unit of work), end-of-service settlements (three computed fields in
// dependency order, a validation) and invoices (two lines, 15 % VAT and a zero-rated export:
// the app's hooks price the lines, the rules total them and check the exemption codes). "Off" is
// the same manifests with their expressions, defaults, locks and aggregates removed and the
// computed values sent by the client, so both hosts store the same documents (the run's totals
// are then not kept: what aggregates cost is part of what is measured). The hosts live in this
// process on in-memory SQLite, taking turns every 50 creates within a round (the order turning
// round by round), and the median of the rounds' rules/off ratios is reported.
//
//   npx tsx bench/rules.ts [--rounds 9] [--creates 400]
import { buildHost, type Host } from '../core/host.ts';
import { firstPartySources, validManifest, type AppSource } from '../core/apps/app-source.ts';
import type { Manifest } from '../manifests/manifest.schema.ts';
import { arg, machineLine, median } from './lib/util.ts';

const ROUNDS = arg('rounds', 9);
const CREATES = arg('creates', 400);
const APPS = ['employees', 'payroll', 'invoicing'];
/** The apps whose rules are switched off. */
const RULED = ['payroll', 'invoicing'];

/** The manifest without its expressions (computed fields become plain fields), or without its aggregates only. */
function withoutRules(m: Manifest, only: 'all' | 'aggregates' = 'all'): Manifest {
  const out = structuredClone(m) as Manifest;
  for (const dt of out.documentTypes ?? []) {
    if (only === 'all') {
      delete dt.validations;
      delete dt.lockedIn;
    }
    for (const f of dt.fields) {
      if (only === 'all') {
        delete (f as { compute?: string }).compute;
        delete (f as { default?: string }).default;
        delete (f as { lockedIn?: string[] }).lockedIn;
      }
      delete (f as { aggregate?: unknown }).aggregate;
    }
  }
  return validManifest(out);
}

type Kind = 'on' | 'noAggregates' | 'off';

interface Subject {
  host: Host;
  headers: Record<string, string>;
  runId: string;
  employeeId: string;
  customerId: string;
}

async function subject(kind: Kind): Promise<Subject> {
  const sources: AppSource[] = firstPartySources()
    .filter((s) => APPS.includes(s.manifest.id))
    .map((s) => (kind === 'on' || !RULED.includes(s.manifest.id) ? s : { ...s, manifest: withoutRules(s.manifest, kind === 'off' ? 'all' : 'aggregates') }));
  const host = await buildHost({ dbFile: ':memory:', sources, logger: false, config: { rateLimitPerMinute: 0 } });
  const { company } = await host.createCompany({ name: 'Bench', currency: 'SAR', apps: APPS });
  const { key } = await host.keys.create({ companyId: company.id, actor: { type: 'cli', id: 'bench' }, appId: 'core' }, { role: 'Owner', scopes: ['*'] });
  const headers = { authorization: `Bearer ${key}`, 'x-company-id': company.id, 'content-type': 'application/json' };
  const post = async (url: string, body: unknown) => (await host.app.inject({ method: 'POST', url, headers, payload: JSON.stringify(body) })).json().data.id as string;
  const employeeId = await post('/api/v1/employees', { fullName: 'Bench', jobTitle: 'Clerk', joinDate: '2020-01-01' });
  const runId = await post('/api/v1/payroll-runs', { period: '2026-01', periodStart: '2026-01-01', periodEnd: '2026-01-31', payDate: '2026-01-27' });
  const customerId = await post('/api/v1/customers', { name: 'Bench Trading', vatNumber: '300000000000003' });
  return { host, headers, runId, employeeId, customerId };
}

/** The three creates in turn, each with what it must compute (checked on the first of each). */
function bodies(s: Subject, rules: boolean): { url: string; body: unknown; check: (d: Record<string, unknown>) => boolean }[] {
  const slip = { runId: s.runId, employeeId: s.employeeId, basicSalary: 10_000, housingAllowance: 2_500, transportAllowance: 500, socialInsurance: 975 };
  const eos = { employeeId: s.employeeId, lastWorkingDay: '2026-01-31', reason: 'resignation', serviceYears: 7, lastBasicSalary: 10_000 };
  // 3 × 100 at 15 % and an export of 250.50 zero-rated: 550.50 net, 45.00 VAT, 595.50.
  const lines = [
    { description: 'Consulting day', quantity: 3, unitPrice: 100, taxCategory: 'S' },
    { description: 'Export of goods', quantity: 1, unitPrice: 250.5, taxCategory: 'Z', exemptionReasonCode: 'VATEX-SA-32' },
  ];
  const invoice = { customerId: s.customerId, date: '2026-01-10', dueDate: '2026-02-09', lines };
  const typed = <T>(body: T, computed: Record<string, unknown>) => (rules ? body : { ...body, ...computed });
  return [
    // The bench employee has no GOSI shares recorded and the payslip no overtime hours nor days of
    // absence: the employer's share, the overtime pay and the absence deduction keep what was sent
    // (nothing: 0), which the host without rules is sent.
    {
      url: '/api/v1/payslips',
      body: typed(slip, { grossPay: 13_000, totalDeductions: 975, netPay: 12_025, paymentMethod: 'bank_transfer', employerSocialInsurance: 0, overtimePay: 0, absenceDeduction: 0 }),
      check: (d) => d.netPay === 12_025 && d.employerSocialInsurance === 0 && d.overtimePay === 0 && d.absenceDeduction === 0,
    },
    { url: '/api/v1/eos-settlements', body: typed(eos, { fullAward: 45_000, gratuity: 30_000, totalPayable: 30_000 }), check: (d) => d.gratuity === 30_000 },
    { url: '/api/v1/invoices', body: typed(invoice, { subtotal: 550.5, taxTotal: 45, total: 595.5, balanceDue: 595.5 }), check: (d) => d.total === 595.5 && d.balanceDue === 595.5 },
  ];
}

/** Creates `n[0]`…`n[1]` of the turn (each answered 201): the wall and CPU time they took, in µs. */
async function creates(s: Subject, rules: boolean, [from, to]: [number, number], only?: number): Promise<{ wall: number; cpu: number }> {
  const all = bodies(s, rules);
  const list = only === undefined ? all : [all[only]];
  const payloads = list.map((b) => JSON.stringify(b.body));
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  for (let i = from; i < to; i++) {
    const k = i % list.length;
    const res = await s.host.app.inject({ method: 'POST', url: list[k].url, headers: s.headers, payload: payloads[k] });
    if (res.statusCode !== 201) throw new Error(`${list[k].url}: ${res.statusCode} ${res.body.slice(0, 300)}`);
    if (rules && i < list.length && !list[k].check(res.json().data)) throw new Error(`rules computed ${res.body.slice(0, 600)}`);
  }
  const c = process.cpuUsage(c0);
  return { wall: (performance.now() - t0) * 1000, cpu: c.user + c.system };
}

/** Slices of a round: the hosts take turns every SLICE creates, so load on the machine that comes and goes falls on all three alike. */
const SLICE = 50;

/** One round: `n` creates on each host, in turns of SLICE; creates per second and CPU µs per create of each. */
async function round(order: Kind[], n: number, only?: number): Promise<Record<Kind, { rate: number; cpu: number }>> {
  const sum = Object.fromEntries(order.map((k) => [k, { wall: 0, cpu: 0 }])) as Record<Kind, { wall: number; cpu: number }>;
  for (let at = 0; at < n; at += SLICE) {
    for (const k of order) {
      const t = await creates(subjects[k], k !== 'off', [at, Math.min(n, at + SLICE)], only);
      sum[k].wall += t.wall;
      sum[k].cpu += t.cpu;
    }
  }
  return Object.fromEntries(order.map((k) => [k, { rate: n / (sum[k].wall / 1e6), cpu: sum[k].cpu / n }])) as Record<Kind, { rate: number; cpu: number }>;
}

// Three hosts: the rules, the rules but for the run's totals (what the expressions cost apart
// from the aggregates), and none.
const subjects = { on: await subject('on'), noAggregates: await subject('noAggregates'), off: await subject('off') };
const kinds = Object.keys(subjects) as Kind[];
/** All three creates in turn, then each alone (payslip, settlement, invoice). */
const MIXES = [{ name: 'all three in turn', only: undefined }, { name: 'payslips', only: 0 }, { name: 'end-of-service settlements', only: 1 }, { name: 'invoices', only: 2 }];
try {
  // Warm all three on every mix (JIT, the compiled validators and rules) before measuring: the
  // mix measured first ran slower than the same mix measured last when warmed on it alone.
  for (let i = 0; i < 3; i++) for (const mix of MIXES) await round(kinds, 300, mix.only);
  console.log(machineLine());
  console.log(`creates with the rules of payroll and invoicing, ${ROUNDS} rounds × ${CREATES}:`);
  for (const mix of MIXES) {
    const runs: Record<Kind, { rate: number; cpu: number }[]> = { on: [], noAggregates: [], off: [] };
    for (let r = 0; r < ROUNDS; r++) {
      // The order of the turns changes round by round.
      const got = await round(kinds.map((_, i) => kinds[(i + r) % kinds.length]), CREATES, mix.only);
      for (const k of kinds) runs[k].push(got[k]);
    }
    const ratio = (k: Kind) => median(runs[k].map((x, i) => x.rate / runs.off[i].rate));
    const cpuRatio = (k: Kind) => median(runs[k].map((x, i) => runs.off[i].cpu / x.cpu));
    console.log(`${mix.name}:`);
    for (const k of kinds) console.log(`  ${k.padEnd(12)}: ${median(runs[k].map((x) => x.rate)).toFixed(0)} creates/s, ${median(runs[k].map((x) => x.cpu)).toFixed(0)} µs CPU each`);
    console.log(`  rules / off: throughput ${ratio('on').toFixed(3)}×, CPU (off/on) ${cpuRatio('on').toFixed(3)}× (target ≥ 0.9×); rounds: ${runs.on.map((x, i) => (x.rate / runs.off[i].rate).toFixed(2)).join(' ')}`);
    console.log(`  rules without the run's totals / off: throughput ${ratio('noAggregates').toFixed(3)}×, CPU ${cpuRatio('noAggregates').toFixed(3)}×`);
  }
} finally {
  for (const k of kinds) await subjects[k].host.close();
}
