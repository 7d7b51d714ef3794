// The OpenAPI fuzz at scale: many more cases than `npm test` runs, counted rather than stopped
// at the first violation, with a summary per operation (cases, time, outcomes, violations and
// the first case that showed each).
//
//   npx tsx bench/fuzz.ts [--runs 20000] [--seed 42] [--only invoicing.createInvoice,core.listApps]
//
// --runs is the total over all operations (split evenly, at least 10 each). Exit code 1 if any
// violation was seen.
import { FuzzWorld } from '../test/fuzz/world.ts';
import { fuzzOperation, fuzzUnknownMethods, opSeed, type OperationRun } from '../test/fuzz/runner.ts';
import { alwaysPresent, type PresenceStats } from '../test/fuzz/presence.ts';
import { arg, fmtInt, machineLine } from './lib/util.ts';

const runs = arg('runs', 20_000);
const seed = arg('seed', Date.now() % 2 ** 31);
const onlyAt = process.argv.indexOf('--only');
const only = onlyAt > 0 ? new Set(process.argv[onlyAt + 1].split(',')) : undefined;

const started = performance.now();
const world = await FuzzWorld.create();
const ops = world.operations.filter((o) => !only || only.has(o.id));
const perOp = Math.max(10, Math.floor(runs / (ops.length + 1)));
console.log(`fuzz: ${ops.length} operations × ${perOp} runs, seed ${seed}  (${machineLine()})`);

const results: OperationRun[] = [];
for (const op of ops) {
  const r = await fuzzOperation(world, op, { numRuns: perOp, seed: opSeed(seed, op.id), assert: false });
  results.push(r);
  const outcomes = [...r.outcomes].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k}×${n}`).join(' ');
  const bad = [...r.violations.values()].reduce((n, v) => n + v.count, 0);
  console.log(`${bad ? '✗' : '✓'} ${`${op.method} ${op.path}`.padEnd(72)} ${String(r.cases).padStart(6)} cases ${String(Math.round(r.ms)).padStart(6)} ms  ${outcomes}`);
  for (const [kind, v] of r.violations) console.log(`    ${kind} ×${v.count}: ${v.message}\n      first: ${v.first.replace(/\n/g, '\n      ')}`);
}
const unknown = only ? { cases: 0, violations: [] } : await fuzzUnknownMethods(world, { numRuns: perOp, seed, assert: false });
if (!only) console.log(`${unknown.violations.length ? '✗' : '✓'} unknown methods: ${unknown.cases} cases, ${unknown.violations.length} violations${unknown.violations[0] ? `; first: ${unknown.violations[0].message}` : ''}`);
await world.close();

const presence: PresenceStats = new Map();
for (const r of results) for (const [k, c] of r.presence) presence.set(k, c);
const candidates = alwaysPresent(presence, 20);
console.log(candidates.length ? `\noptional in the document, yet present in every answer seen (candidates for required):\n  ${candidates.join('\n  ')}` : '\nno optional response property was present in every answer');

const cases = results.reduce((n, r) => n + r.cases, 0) + unknown.cases;
const kinds = new Map<string, number>();
for (const r of results) for (const [k, v] of r.violations) kinds.set(k, (kinds.get(k) ?? 0) + v.count);
for (const v of unknown.violations) kinds.set(v.kind, (kinds.get(v.kind) ?? 0) + 1);
const seconds = (performance.now() - started) / 1000;
console.log(`\n${fmtInt(cases)} cases in ${seconds.toFixed(1)} s (${fmtInt(cases / seconds)}/s), seed ${seed}`);
console.log(kinds.size ? `violations: ${[...kinds].map(([k, n]) => `${k} ×${n}`).join(', ')}` : 'no violations');
process.exitCode = kinds.size ? 1 : 0;
