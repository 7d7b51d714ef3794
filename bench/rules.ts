// Creating payroll documents with the manifest's rules against the same creates with the rules
// switched off, in the same run: payslips (gross, deductions and net pay computed, validations
// reading the employee and the run through `ref`, a default, and the run's four totals moved in
// the same unit of work) and end-of-service settlements (three computed fields in dependency
// order, a validation). "Off" is the same manifest with its expressions, defaults and aggregates
// removed and the computed fields sent by the client, so both hosts store the same payslip (the
// run's totals are then not kept: what aggregates cost is part of what is measured). Both hosts live in this process on in-memory SQLite; rounds
// alternate which goes first, and the median of each round's rules/off ratio is reported.
//
//   npx tsx bench/rules.ts [--rounds 9] [--creates 400]
import { buildHost, type Host } from '../core/host.ts';
import { firstPartySources, validManifest, type AppSource } from '../core/apps/app-source.ts';
import type { Manifest } from '../manifests/manifest.schema.ts';
import { arg, machineLine, median } from './lib/util.ts';

const ROUNDS = arg('rounds', 9);
const CREATES = arg('creates', 400);

/** The payroll manifest without its expressions (computed fields become plain fields), or without its aggregates only. */
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
}

async function subject(kind: Kind): Promise<Subject> {
  const sources: AppSource[] = firstPartySources()
    .filter((s) => s.manifest.id === 'employees' || s.manifest.id === 'payroll')
    .map((s) => (kind === 'on' || s.manifest.id !== 'payroll' ? s : { ...s, manifest: withoutRules(s.manifest, kind === 'off' ? 'all' : 'aggregates') }));
  const host = await buildHost({ dbFile: ':memory:', sources, logger: false, config: { rateLimitPerMinute: 0 } });
  const { company } = await host.createCompany({ name: 'Bench', currency: 'SAR', apps: ['employees', 'payroll'] });
  const { key } = await host.keys.create({ companyId: company.id, actor: { type: 'cli', id: 'bench' }, appId: 'core' }, { role: 'Owner', scopes: ['*'] });
  const headers = { authorization: `Bearer ${key}`, 'x-company-id': company.id, 'content-type': 'application/json' };
  const post = async (url: string, body: unknown) => (await host.app.inject({ method: 'POST', url, headers, payload: JSON.stringify(body) })).json().data.id as string;
  const employeeId = await post('/api/v1/employees', { fullName: 'Bench', jobTitle: 'Clerk', joinDate: '2020-01-01' });
  const runId = await post('/api/v1/payroll-runs', { period: '2026-01', periodStart: '2026-01-01', periodEnd: '2026-01-31', payDate: '2026-01-27' });
  return { host, headers, runId, employeeId };
}

/** Creates per second and CPU µs per create (less moved by other load on the machine): payslips and settlements alternately, each answered 201. */
async function creates(s: Subject, rules: boolean, n: number): Promise<{ rate: number; cpu: number }> {
  const slip = { runId: s.runId, employeeId: s.employeeId, basicSalary: 10_000, housingAllowance: 2_500, transportAllowance: 500, socialInsurance: 975, ...(rules ? {} : { grossPay: 13_000, totalDeductions: 975, netPay: 12_025, paymentMethod: 'bank_transfer' }) };
  const eos = { employeeId: s.employeeId, lastWorkingDay: '2026-01-31', reason: 'resignation', serviceYears: 7, lastBasicSalary: 10_000, ...(rules ? {} : { fullAward: 45_000, gratuity: 30_000, totalPayable: 30_000 }) };
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    const [url, body] = i % 2 ? ['/api/v1/eos-settlements', eos] : ['/api/v1/payslips', slip];
    const res = await s.host.app.inject({ method: 'POST', url, headers: s.headers, payload: JSON.stringify(body) });
    if (res.statusCode !== 201) throw new Error(`${url}: ${res.statusCode} ${res.body.slice(0, 300)}`);
    if (rules && i < 2) {
      const d = res.json().data;
      if (i % 2 ? d.gratuity !== 30_000 : d.netPay !== 12_025) throw new Error(`rules computed ${JSON.stringify(d)}`);
    }
  }
  const c = process.cpuUsage(c0);
  return { rate: n / ((performance.now() - t0) / 1000), cpu: (c.user + c.system) / n };
}

// Three hosts: the rules, the rules but for the run's totals (what the expressions cost apart
// from the extra write of the run each payslip makes), and none.
const subjects = { on: await subject('on'), noAggregates: await subject('noAggregates'), off: await subject('off') };
const kinds = Object.keys(subjects) as Kind[];
try {
  // Warm all three (JIT, the compiled validators and rules) before measuring.
  for (let i = 0; i < 3; i++) for (const k of kinds) await creates(subjects[k], k !== 'off', 400);
  const runs: Record<Kind, { rate: number; cpu: number }[]> = { on: [], noAggregates: [], off: [] };
  for (let r = 0; r < ROUNDS; r++) {
    // Back to back in each round, the order turning round by round.
    const order = kinds.map((_, i) => kinds[(i + r) % kinds.length]);
    for (const k of order) runs[k].push(await creates(subjects[k], k !== 'off', CREATES));
  }
  const ratio = (k: Kind) => median(runs[k].map((x, i) => x.rate / runs.off[i].rate));
  const cpuRatio = (k: Kind) => median(runs[k].map((x, i) => runs.off[i].cpu / x.cpu));
  console.log(machineLine());
  console.log(`payroll creates (payslip + end-of-service alternately), ${ROUNDS} rounds × ${CREATES}:`);
  for (const k of kinds) console.log(`  ${k.padEnd(12)}: ${median(runs[k].map((x) => x.rate)).toFixed(0)} creates/s, ${median(runs[k].map((x) => x.cpu)).toFixed(0)} µs CPU each`);
  console.log(`  rules / off: throughput ${ratio('on').toFixed(3)}×, CPU (off/on) ${cpuRatio('on').toFixed(3)}× (target ≥ 0.9×); rounds: ${runs.on.map((x, i) => (x.rate / runs.off[i].rate).toFixed(2)).join(' ')}`);
  console.log(`  rules without the run's totals / off: throughput ${ratio('noAggregates').toFixed(3)}×, CPU ${cpuRatio('noAggregates').toFixed(3)}×`);
} finally {
  for (const k of kinds) await subjects[k].host.close();
}
