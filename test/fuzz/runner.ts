// Runs fuzz cases against the in-memory host and judges every answer. Shared by the test
// (test/openapi-fuzz.test.ts: fails on the first violation, with fast-check's seed and path)
// and the bench (bench/fuzz.ts: counts everything and prints a summary per operation).
import fc from 'fast-check';
import type { Answer, Operation, Violation } from './oracle.ts';
import { CaseBuilder, type FuzzCase } from './requests.ts';
import type { FuzzWorld, Tenant } from './world.ts';
import { observePresence, type PresenceStats } from './presence.ts';
import type { Schema } from './schema-arbitrary.ts';

export interface CaseResult {
  c: FuzzCase;
  answers: Answer[];
  violations: Violation[];
}

/** A stable 32-bit seed per operation, so one operation's run does not depend on the others. */
export function opSeed(base: number, opId: string): number {
  let h = base | 0;
  for (let i = 0; i < opId.length; i++) h = Math.imul(h ^ opId.charCodeAt(i), 0x9e3779b1);
  return h | 0;
}

const clip = (s: string, n = 300) => (s.length > n ? `${s.slice(0, n)}… (${s.length} chars)` : s);

/** The case as a person reads it (and as fast-check prints a counterexample). */
export function describeCase(c: FuzzCase): string {
  return [
    c.label,
    ...c.steps.map((s) => {
      const h = Object.entries(s.headers).map(([k, v]) => `${k}: ${clip(v, 80)}`).join(' | ');
      return `  ${s.method} ${clip(s.url, 200)}${s.withCreatedId ? ' (or on the record the step before made)' : ''}  [${h}]${s.payload !== undefined ? `  body ${clip(JSON.stringify(s.payload), 300)}` : ''}${s.expect ? `  expect ${JSON.stringify(s.expect)}` : ''}`;
    }),
  ].join('\n');
}

/** `data.id` of a success answer, if any. */
function createdId(a: Answer | undefined): string | undefined {
  if (!a || a.status < 200 || a.status >= 300) return undefined;
  try {
    const id = JSON.parse(a.body).data?.id;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}

export async function runCase(world: FuzzWorld, t: Tenant, op: Operation, c: FuzzCase, presence?: PresenceStats): Promise<CaseResult> {
  const answers: Answer[] = [];
  const violations: Violation[] = [];
  for (const step of c.steps) {
    const made = step.withCreatedId && createdId(answers[answers.length - 1]);
    const ans = await world.inject(made ? { ...step, url: step.withCreatedId!(made) } : step);
    answers.push(ans);
    const sop = step.op ?? op;
    const v = world.oracle.check(sop, ans, step.expect, step.method === 'HEAD');
    violations.push(...v);
    world.harvest(t, sop, made ? step.withCreatedId!(made) : step.url, ans);
    const schema = sop.op.responses[String(ans.status)]?.content?.['application/json']?.schema;
    if (presence && v.length === 0 && ans.status < 300 && step.method !== 'HEAD' && schema !== undefined) {
      observePresence(presence, `${sop.id} ${ans.status}`, schema as Schema, JSON.parse(ans.body), world.genContext(t));
    }
  }
  if (c.idempotent && answers.length === 2) {
    const [a, b] = answers;
    if (a.status >= 200 && a.status < 300) {
      if (c.idempotent.same && (b.status !== a.status || b.body !== a.body)) {
        violations.push({ kind: 'idempotency', message: `replay answered ${b.status} ${clip(b.body, 120)}, the first ${a.status} ${clip(a.body, 120)}` });
      }
      if (!c.idempotent.same && c.steps[0].payload !== c.steps[1].payload && b.status !== 409 && b.body !== a.body) {
        violations.push({ kind: 'idempotency', message: `the key reused with another body answered ${b.status}, not 409 CONFLICT` });
      }
    }
  }
  return { c, answers, violations };
}

export interface OperationRun {
  op: Operation;
  seed: number;
  numRuns: number;
  cases: number;
  ms: number;
  /** `status code` → count. */
  outcomes: Map<string, number>;
  /** Violation kind → count and the first case that showed it. */
  violations: Map<string, { count: number; first: string; message: string }>;
  /** Optional response properties: how often present and absent. */
  presence: PresenceStats;
}

/**
 * Fuzzes one operation on a fresh tenant. `assert`: throw at the first violation (fast-check
 * shrinks it and reports seed and path); otherwise count everything and go on.
 */
export async function fuzzOperation(world: FuzzWorld, op: Operation, opts: { numRuns: number; seed: number; assert: boolean; baseSeed?: number }): Promise<OperationRun> {
  const started = performance.now();
  const t = await world.freshTenant(opts.seed);
  const arb = new CaseBuilder(world, t, op).caseArb().map((c) => Object.assign(c, { [fc.toStringMethod]: () => describeCase(c) }));
  const run: OperationRun = { op, seed: opts.seed, numRuns: opts.numRuns, cases: 0, ms: 0, outcomes: new Map(), violations: new Map(), presence: new Map() };
  const property = fc.asyncProperty(arb, async (c) => {
    const r = await runCase(world, t, op, c, run.presence);
    run.cases++;
    for (const a of r.answers) {
      let code = '';
      if (a.status >= 400) {
        if (a.body === '') code = '(no body: HEAD)';
        else try {
          code = JSON.parse(a.body).error.code;
        } catch {
          code = '?';
        }
      }
      const k = `${a.status}${code ? ` ${code}` : ''}`;
      run.outcomes.set(k, (run.outcomes.get(k) ?? 0) + 1);
    }
    for (const v of r.violations) {
      const seen = run.violations.get(v.kind);
      if (seen) seen.count++;
      else run.violations.set(v.kind, { count: 1, first: describeCase(c), message: v.message });
    }
    if (opts.assert && r.violations.length) throw new Error(r.violations.map((v) => `[${v.kind}] ${v.message}`).join('\n'));
  });
  const params = { numRuns: opts.numRuns, seed: opts.seed };
  if (opts.assert) {
    try {
      await fc.assert(property, params);
    } catch (err) {
      const again = opts.baseSeed !== undefined ? `FUZZ_SEED=${opts.baseSeed} FUZZ_RUNS=${opts.numRuns} npx vitest run test/openapi-fuzz.test.ts -t '${op.method} ${op.path}'` : `seed ${opts.seed}`;
      (err as Error).message = `${op.method} ${op.path} (${op.id}); to run it again: ${again}\n${(err as Error).message}`;
      throw err;
    }
  } else {
    await fc.check(property, params);
  }
  run.ms = performance.now() - started;
  return run;
}

export const UNKNOWN_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'PROPFIND', 'SEARCH', 'LOCK', 'COPY', 'PURGE', 'LINK', 'QUERY', 'M-SEARCH', 'MKCOL'];

/** Methods the document does not declare at a path answer 405 METHOD_NOT_ALLOWED, with `Allow` naming those it does. */
export async function fuzzUnknownMethods(world: FuzzWorld, opts: { numRuns: number; seed: number; assert: boolean }): Promise<{ cases: number; violations: Violation[] }> {
  const t = await world.freshTenant(opts.seed);
  // A path's methods are those of every template it matches: `/events/test` (POST) is also
  // `/events/{id}` (GET), so GET there is a 404 of that route and Allow names both.
  const template = (path: string) => new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`);
  const templates = world.operations.map((o) => ({ re: template(o.path), method: o.method }));
  const byPath = new Map<string, string[]>();
  for (const o of world.operations) {
    if (byPath.has(o.path)) continue;
    const literal = o.path.replace(/\{[^}]+\}/g, 'x1');
    byPath.set(o.path, [...new Set(templates.filter((t) => t.re.test(literal)).map((t) => t.method))]);
  }
  const cases = [...byPath].flatMap(([path, methods]) =>
    UNKNOWN_METHODS.filter((m) => !methods.includes(m) && !(m === 'HEAD' && methods.includes('GET'))).map((m) => ({ path, methods, method: m })),
  );
  const body = fc.constantFrom(
    { note: '', payload: undefined as string | undefined, ct: undefined as string | undefined },
    { note: ' + JSON body', payload: '{"a":1}', ct: 'application/json' },
    { note: ' + malformed JSON', payload: '{', ct: 'application/json' },
    { note: ' + text/plain body', payload: 'x', ct: 'text/plain' },
    { note: ' + body without content-type', payload: '{}', ct: undefined },
  );
  const all: Violation[] = [];
  let count = 0;
  const property = fc.asyncProperty(fc.constantFrom(...cases), body, async (k, b) => {
    const withParams = k.path.replace(/\{([^}]+)\}/g, (_m, name: string) => encodeURIComponent(world.poolFor(t, k.path, name)[0] ?? 'x1'));
    const headers: Record<string, string> = { authorization: `Bearer ${t.keys.Owner}`, 'x-company-id': t.companyId };
    if (b.ct) headers['content-type'] = b.ct;
    const ans = await world.inject({ method: k.method, url: withParams, headers, payload: b.payload });
    count++;
    const v: Violation[] = [];
    const where = `${k.method} ${withParams}${b.note}`;
    if (ans.status !== 405) v.push({ kind: 'unknown-method', message: `${where} answered ${ans.status} ${clip(ans.body, 160)}, not 405` });
    else {
      const env = world.oracle.checkEnvelope(ans);
      v.push(...env.violations);
      if (env.code !== 'METHOD_NOT_ALLOWED') v.push({ kind: 'unknown-method', message: `${where} answered 405 ${env.code}` });
      const allow = String(ans.headers.allow ?? '').split(',').map((s) => s.trim()).filter((s) => s && s !== 'HEAD').sort();
      if (allow.join() !== [...k.methods].sort().join()) v.push({ kind: 'allow-header', message: `${where}: Allow '${ans.headers.allow}', the document declares ${k.methods.join(', ')}` });
    }
    all.push(...v);
    if (opts.assert && v.length) throw new Error(v.map((x) => `[${x.kind}] ${x.message}`).join('\n'));
  });
  const params = { numRuns: opts.numRuns, seed: opts.seed };
  if (opts.assert) await fc.assert(property, params);
  else await fc.check(property, params);
  return { cases: count, violations: all };
}
