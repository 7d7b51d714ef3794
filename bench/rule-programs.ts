// The rules of a payslip, an end-of-service settlement and a two-line invoice (the writes of
// bench/rules.ts) run as a write runs them (the CEL view of the document built, defaults, computed
// fields, validations), with the programs compiled to JavaScript functions (core/apps/rules/compile.ts)
// against the same programs run by cel-js's interpreter, in this process, taking turns round by
// round. Also the CEL view alone (values.ts toCel), what both pay. Each write builds its own
// activation, as a create does.
//
//   npx tsx bench/rule-programs.ts [--rounds 15] [--writes 20000]
import type { ParseResult } from '@marcbachmann/cel-js';
import type { CompiledRules } from '../core/apps/rules/document-rules.ts';
import type { Compiled } from '../core/apps/rules/compile.ts';
import { applyDefaults, brokenRules, celActivation, computeInto, type Refs, type RuleScope } from '../core/apps/rules/evaluate.ts';
import { samplePrograms } from '../test/rule-samples.ts';
import { arg, machineLine, median } from './lib/util.ts';

const ROUNDS = arg('rounds', 15);
const WRITES = arg('writes', 20_000);

const { types } = samplePrograms(['payroll', 'invoicing']);
const typeOf = (name: string) => types.find((t) => t.dt.name === name)!;

/** The same rules with cel-js's own programs. */
function interpreted(r: CompiledRules): CompiledRules {
  const i = (p: ParseResult) => (p as Compiled).interpreted;
  return {
    ...r,
    lineComputed: r.lineComputed.map((l) => ({ ...l, computed: l.computed.map((c) => ({ ...c, program: i(c.program) })) })),
    computed: r.computed.map((c) => ({ ...c, program: i(c.program) })),
    defaults: r.defaults.map((c) => ({ ...c, program: i(c.program) })),
    validations: r.validations.map((v) => ({ ...v, program: i(v.program) })),
  };
}

const scope: RuleScope = { digits: 2, today: '2026-01-15', lang: 'en', tr: { t: () => '' } as unknown as RuleScope['tr'] };
const employee = { id: 'emp_1', fullName: 'Bench', jobTitle: 'Clerk', joinDate: '2020-01-01', state: 'active' };
const run = { id: 'run_1', period: '2026-01', periodStart: '2026-01-01', periodEnd: '2026-01-31', payDate: '2026-01-27', state: 'draft' };
const writes: { type: string; doc: () => Record<string, unknown>; refs: Refs }[] = [
  {
    type: 'payslip',
    doc: () => ({ runId: 'run_1', employeeId: 'emp_1', basicSalary: 10_000, housingAllowance: 2_500, transportAllowance: 500, socialInsurance: 975 }),
    refs: new Map<string, Record<string, unknown>>([['employeeId', employee], ['runId', run]]),
  },
  {
    type: 'eosSettlement',
    doc: () => ({ employeeId: 'emp_1', lastWorkingDay: '2026-01-31', reason: 'resignation', serviceYears: 7, lastBasicSalary: 10_000 }),
    refs: new Map([['employeeId', employee]]),
  },
  {
    type: 'invoice',
    // As the app's hooks leave it: lines priced, the tax breakdown built.
    doc: () => ({
      customerId: 'cus_1',
      date: '2026-01-10',
      dueDate: '2026-02-09',
      lines: [
        { description: 'Consulting day', quantity: 3, unitPrice: 100, taxCategory: 'S', amount: 300, taxRate: 15, taxAmount: 45, amountWithTax: 345 },
        { description: 'Export of goods', quantity: 1, unitPrice: 250.5, taxCategory: 'Z', exemptionReasonCode: 'VATEX-SA-32', amount: 250.5, taxRate: 0, taxAmount: 0, amountWithTax: 250.5 },
      ],
      taxBreakdown: [
        { taxCategory: 'S', taxRate: 15, taxableAmount: 300, taxAmount: 45 },
        { taxCategory: 'Z', taxRate: 0, taxableAmount: 250.5, taxAmount: 0, exemptionReasonCode: 'VATEX-SA-32' },
      ],
    }),
    refs: new Map(),
  },
];

const subjects = writes.map((w) => {
  const t = typeOf(w.type);
  return { ...w, dt: t.dt, compiled: t.rules, interpreted: interpreted(t.rules) };
});

let sink = 0;
/** µs per write of the whole rules step, or of the activation alone. */
function time(kind: 'compiled' | 'interpreted' | 'activation', n: number, only?: number): number {
  const list = only === undefined ? subjects : [subjects[only]];
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const s = list[i % list.length];
    const rules = kind === 'interpreted' ? s.interpreted : s.compiled;
    const doc = s.doc();
    const a = celActivation(rules, s.dt, doc, scope, s.refs);
    if (kind === 'activation') {
      sink += a.doc ? 1 : 0;
      continue;
    }
    applyDefaults(rules, doc, a, scope);
    const problems = computeInto(rules, doc, a, scope);
    problems.push(...brokenRules(rules, s.dt, a, scope));
    if (problems.length) throw new Error(`${s.type}: ${JSON.stringify(problems)}`);
    sink += doc.netPay === 12_025 || doc.gratuity === 30_000 || doc.total === 595.5 ? 1 : 0;
  }
  return ((performance.now() - t0) * 1000) / n;
}

const kinds = ['compiled', 'interpreted', 'activation'] as const;
type Kind = (typeof kinds)[number];
/** Turns of this many writes within a round, so that load on the machine that comes and goes falls on each alike. */
const SLICE = 1000;
function round(order: readonly Kind[], only?: number): Record<Kind, number> {
  const sum = { compiled: 0, interpreted: 0, activation: 0 };
  for (let at = 0; at < WRITES; at += SLICE) for (const k of order) sum[k] += time(k, SLICE, only) * SLICE;
  return { compiled: sum.compiled / WRITES, interpreted: sum.interpreted / WRITES, activation: sum.activation / WRITES };
}
for (let i = 0; i < 3; i++) round(kinds);
console.log(machineLine());
console.log(`the rules of a write, ${ROUNDS} rounds × ${WRITES} writes, µs per write (median):`);
for (const mix of [{ name: 'all three in turn' }, { name: 'payslip', only: 0 }, { name: 'eosSettlement', only: 1 }, { name: 'invoice', only: 2 }]) {
  const runs: Record<Kind, number[]> = { compiled: [], interpreted: [], activation: [] };
  for (let r = 0; r < ROUNDS; r++) {
    const got = round(kinds.map((_, j) => kinds[(j + r) % kinds.length]), mix.only);
    for (const k of kinds) runs[k].push(got[k]);
  }
  const m = (k: Kind) => median(runs[k]);
  const ratio = median(runs.interpreted.map((x, i) => x / runs.compiled[i]));
  console.log(
    `${mix.name.padEnd(18)}: compiled ${m('compiled').toFixed(2)}, interpreted ${m('interpreted').toFixed(2)} (interpreted/compiled ${ratio.toFixed(2)}×); of which the activation ${m('activation').toFixed(2)}`,
  );
}
if (sink < 0) console.log(sink);
