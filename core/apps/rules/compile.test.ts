// The compiled programs (compile.ts) against cel-js's interpreter: every expression of every
// first-party manifest (rules and effects) on generated documents must give the same value or
// the same error, and
// the error semantics rules rely on are pinned on small expressions, evaluated both ways.
import { describe, expect, it } from 'vitest';
import type { FieldDecl } from '../../../manifests/manifest.schema.ts';
import { random, samplePrograms, sampleWrite } from '../../../test/rule-samples.ts';
import type { Compiled } from './compile.ts';
import { compileOne } from './document-rules.ts';
import { documentEnvironment } from './environment.ts';
import { toCel } from './values.ts';
import { celActivation, type Activation, type RuleScope } from './evaluate.ts';
import { fieldsRead, narrowed } from './view.ts';

const SCOPE: RuleScope = { digits: 2, today: '2026-01-15', lang: 'en', tr: { t: () => '' } as unknown as RuleScope['tr'] };

/** A value, or an error as the caller sees it (code, summary and message with its highlight). */
function outcome(program: (a: never) => unknown, a: unknown): unknown {
  try {
    return { value: program(a as never) };
  } catch (e) {
    const err = e as { code?: string; summary?: string; message?: string; name?: string };
    return { error: err.code ?? err.name, summary: err.summary, message: err.message };
  }
}
const text = (x: unknown) => JSON.stringify(x, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v));

describe('compiled rules against the interpreter', () => {
  const { programs, types } = samplePrograms();

  it('compiles every expression of the first-party manifests', () => {
    expect(programs.length).toBeGreaterThan(1000);
    expect(programs.filter((p) => p.what.startsWith('effect')).length).toBeGreaterThan(50);
    expect(programs.filter((p) => !p.program.covered()).map((p) => `${p.app}.${p.type} ${p.what}`)).toEqual([]);
  });

  it('gives the same value or the same error on generated documents', () => {
    let evaluations = 0;
    const errors = new Map<string, number>();
    const differences: string[] = [];
    for (const t of types) {
      const mine = programs.filter((p) => p.app === t.app && p.type === t.dt.name);
      const r = random(t.dt.name.length * 7919 + t.app.length);
      for (let i = 0; i < 40; i++) {
        const w = sampleWrite(r, t);
        for (const p of mine)
          for (const a of p.activations(w)) {
            evaluations++;
            const got = outcome(p.program, a);
            const want = outcome(p.program.interpreted, a);
            const code = (want as { error?: string }).error;
            if (code) errors.set(code, (errors.get(code) ?? 0) + 1);
            if (text(got) !== text(want)) differences.push(`${p.app}.${p.type} ${p.what} (${p.text}) on ${text(w.doc)}: ${text(got)} ≠ ${text(want)}`);
          }
      }
    }
    expect(differences.slice(0, 5)).toEqual([]);
    expect(evaluations).toBeGreaterThan(30_000);
    // The documents reach the errors the rules can meet.
    expect([...errors.keys()]).toEqual(expect.arrayContaining(['no_such_key', 'numeric_overflow', 'index_out_of_bounds', 'int_conversion_error']));
  });
});

describe("a write's view: the fields its rules read", () => {
  const { types } = samplePrograms();

  it('gives every rule of a write what the whole document would, on generated documents', () => {
    let evaluations = 0;
    const differences: string[] = [];
    let narrowedRefs = 0;
    for (const t of types) {
      const { rules, dt } = t;
      const writes: [string, (a: never) => unknown, string?][] = [
        ...rules.lineComputed.flatMap((l) => l.computed.map((c) => [`${l.lines.name}.${c.field.name}`, c.program, l.lines.name] as [string, (a: never) => unknown, string])),
        ...rules.computed.map((c) => [c.field.name, c.program] as [string, (a: never) => unknown]),
        ...rules.defaults.map((c) => [`default ${c.field.name}`, c.program] as [string, (a: never) => unknown]),
        ...rules.validations.map((v) => [`validation ${v.index}`, v.program, v.each] as [string, (a: never) => unknown, string?]),
      ];
      for (const [name, fields] of rules.view!.refs) if (fields.length < t.refTypes.get(name)!.filter((f) => f.type !== 'lines').length) narrowedRefs++;
      const r = random(t.dt.name.length * 104_729 + t.app.length);
      for (let i = 0; i < 40; i++) {
        const w = sampleWrite(r, t);
        const view = celActivation({ ...rules, usesRef: true }, dt, w.doc, SCOPE, w.refs);
        const all = celActivation({ ...rules, usesRef: true, view: undefined }, dt, w.doc, SCOPE, w.refs);
        for (const [what, program, each] of writes) {
          const per = (a: Activation) => (each ? ((a.doc[each] ?? []) as unknown[]).map((line) => ({ ...a, line })) : [a]);
          const [mine, whole] = [per(view), per(all)];
          for (let k = 0; k < whole.length; k++) {
            evaluations++;
            const got = text(outcome(program, mine[k]));
            const want = text(outcome(program, whole[k]));
            if (got !== want) differences.push(`${t.app}.${dt.name} ${what} on ${text(w.doc)}: ${got} ≠ ${want}`);
          }
        }
      }
    }
    expect(differences.slice(0, 5)).toEqual([]);
    expect(evaluations).toBeGreaterThan(20_000);
    // Most references are read for a few fields (a payslip reads six of an employee's).
    expect(narrowedRefs).toBeGreaterThan(30);
  });

  it('reads a document whole where a rule passes it on, and a line type whole where its lines are', () => {
    const fields = [
      { name: 'a', type: 'money' },
      { name: 'b', type: 'money' },
      { name: 'lines', type: 'lines', fields: [{ name: 'q', type: 'integer' }, { name: 'c', type: 'string' }] },
    ] as FieldDecl[];
    const { env } = documentEnvironment(fields);
    const read = (...exprs: string[]) =>
      fieldsRead(exprs.map((e) => compileOne(env, e, '', ['int', 'bool', 'list<Lines_lines>'], 't', (p) => expect.fail(p.message))!));
    expect(read('doc.a + 1', 'has(doc.b)')).toEqual(new Map([['Document', new Set(['a', 'b'])]]));
    expect(read('doc.lines.map(l, l.q).size() > 0', 'size(doc.lines) > 1')).toEqual(new Map([['Document', new Set(['lines'])], ['Lines_lines', new Set(['q'])]]));
    expect(read('doc.lines.filter(l, l.c == "S")').get('Lines_lines')).toBeNull();
    expect(read('doc.lines[0].q').get('Lines_lines')).toEqual(new Set(['q']));
    expect(read('{"d": doc}.size() > 0').get('Document')).toBeNull();
    expect(narrowed(fields, 'Document', read('doc.a > 0'))).toEqual([fields[0], { ...fields[2], fields: [] }]);
  });
});

describe('the error semantics, compiled as interpreted', () => {
  const fields = [
    { name: 'a', type: 'money' },
    { name: 'b', type: 'integer' },
    { name: 'x', type: 'number' },
    { name: 's', type: 'string' },
    { name: 'd', type: 'date' },
    { name: 'lines', type: 'lines', fields: [{ name: 'q', type: 'integer' }, { name: 'c', type: 'string' }] },
  ] as FieldDecl[];
  const { env, shapes } = documentEnvironment(fields);
  const TYPES = ['bool', 'int', 'double', 'string', 'list<int>', 'list<string>', 'list<Lines_lines>', 'map<string, int>', 'optional<string>', 'dyn'];
  /** The expression's outcome on `doc`, asserted the same both ways. */
  function run(expr: string, doc: Record<string, unknown>): unknown {
    const problems: string[] = [];
    const program = compileOne(env, expr, '', TYPES, 'a test', (p) => problems.push(p.message)) as Compiled;
    expect(problems).toEqual([]);
    expect(program.covered()).toBe(true);
    const a = { doc: toCel(fields, doc, 2, shapes.doc, shapes), today: '2026-01-15' };
    const got = outcome(program, a);
    expect(text(got)).toBe(text(outcome(program.interpreted, a)));
    return got;
  }
  const lines = [{ q: 1, c: 'S' }, { q: 2, c: 'Z' }, { q: 3, c: 'S' }];

  it('overflow, division and modulo by zero, a helper that throws', () => {
    expect(run('doc.a + doc.a', { a: 5e16 })).toMatchObject({ error: 'numeric_overflow' });
    expect(run('doc.b * doc.b', { b: 2 ** 40 })).toMatchObject({ error: 'numeric_overflow' });
    expect(run('doc.a / doc.b', { a: 1, b: 0 })).toMatchObject({ error: 'division_by_zero' });
    expect(run('doc.a % doc.b', { a: 1, b: 0 })).toMatchObject({ error: 'modulo_by_zero' });
    expect(run('fraction(doc.a, 1, doc.b)', { a: 1, b: 0 })).toMatchObject({ error: 'RangeError', summary: undefined });
    expect(run('doc.a / doc.b', { a: 7, b: 2 })).toEqual({ value: 350n });
    expect(run('times(doc.a, doc.x)', { a: 10, x: 0.15 })).toEqual({ value: 150n });
  });

  it('no_such_key on a field left out, absorbed by && and || where the other side decides', () => {
    expect(run('doc.d < "2026-01-01"', {})).toMatchObject({ error: 'no_such_key' });
    expect(run('doc.d < "2026-01-01" || true', {})).toEqual({ value: true });
    expect(run('true || doc.d < "x"', {})).toEqual({ value: true });
    expect(run('doc.d < "x" && false', {})).toEqual({ value: false });
    expect(run('false && doc.d < "x"', {})).toEqual({ value: false });
    expect(run('doc.d < "x" || false', {})).toMatchObject({ error: 'no_such_key' });
    expect(run('doc.d < "x" && doc.s == "y"', { s: 'y' })).toMatchObject({ error: 'no_such_key' });
    expect(run('doc.d < "x" || doc.s < "y"', {})).toMatchObject({ error: 'no_such_key', summary: 'No such key: s' });
    expect(run('doc.d < "x" ? 1 : 2', {})).toMatchObject({ error: 'no_such_key' });
  });

  it('has() as presence.ts means it: a number left out is not set, a 0 given is', () => {
    expect(run('has(doc.a)', {})).toEqual({ value: false });
    expect(run('has(doc.a)', { a: 0 })).toEqual({ value: true });
    expect(run('has(doc.s) && doc.a == 0', { s: 'x' })).toEqual({ value: true });
    expect(run('doc.lines.all(l, has(l.c))', { lines: [{ q: 1 }, { q: 2, c: 'S' }] })).toEqual({ value: false });
  });

  it('optional types', () => {
    expect(run('doc.?d.hasValue()', {})).toEqual({ value: false });
    expect(run('doc.?d.value() < "2027"', { d: '2026-02-01' })).toEqual({ value: true });
    expect(run('doc.?d.value()', {})).toMatchObject({ error: expect.any(String) });
    expect(run('doc.lines[?5].hasValue()', { lines })).toEqual({ value: false });
  });

  it('macros, with an error in one element absorbed when another decides a quantifier', () => {
    expect(run('doc.lines.map(l, l.q * 2)', { lines })).toEqual({ value: [2n, 4n, 6n] });
    expect(run('doc.lines.map(l, l.q > 1, l.c)', { lines })).toEqual({ value: ['Z', 'S'] });
    expect(run('doc.lines.filter(l, l.c == "S").size()', { lines })).toEqual({ value: 2n });
    expect(run('doc.lines.exists(l, l.q == 2)', { lines })).toEqual({ value: true });
    expect(run('doc.lines.exists_one(l, l.c == "S")', { lines })).toEqual({ value: false });
    expect(run('doc.lines.all(a, doc.lines.all(b, a.q <= b.q || a.c != b.c))', { lines })).toEqual({ value: false });
    // The line without c errs; the line with q = 5 decides: all() is false, exists() true.
    const mixed = [{ q: 1 }, { q: 5, c: 'S' }];
    expect(run('doc.lines.all(l, l.c == "S" && l.q < 3)', { lines: mixed })).toEqual({ value: false });
    expect(run('doc.lines.exists(l, l.c == "S" && l.q > 3)', { lines: mixed })).toEqual({ value: true });
    expect(run('doc.lines.all(l, l.c == "S")', { lines: [{ q: 1 }, { q: 2, c: 'S' }] })).toMatchObject({ error: 'no_such_key' });
    expect(run('doc.lines.map(l, l.c)', { lines: mixed })).toMatchObject({ error: 'no_such_key' });
    expect(run('sum(doc.lines.map(l, l.q))', { lines })).toEqual({ value: 6n });
  });

  it('lists, maps, indexes, ternaries, membership and the functions', () => {
    expect(run('doc.lines[3].q', { lines })).toMatchObject({ error: 'index_out_of_bounds' });
    expect(run('doc.lines[1].c in ["S", "Z"]', { lines })).toEqual({ value: true });
    expect(run('doc.s in [doc.s, "Z"]', { s: 'q' })).toEqual({ value: true });
    expect(run('{"k": doc.b, "j": 2}["k"]', { b: 4 })).toEqual({ value: 4n });
    expect(run('{"k": 1}["nope"]', {})).toMatchObject({ error: 'no_such_key' });
    expect(run('doc.x < 2.0 ? round(doc.x) : -doc.b', { x: 2.5, b: 3 })).toEqual({ value: -3n });
    expect(run('!(doc.s.matches("^[0-9]+$")) && size(doc.s) == 3', { s: 'abc' })).toEqual({ value: true });
    expect(run('daysBetween(doc.d, today)', { d: '2026-01-01' })).toEqual({ value: 14n });
    expect(run('addDays(doc.d, doc.b)', { d: 'nope', b: 1 })).toMatchObject({ error: 'RangeError' });
    expect(run('addYears(doc.d, doc.b)', { d: '2024-02-29', b: -1 })).toEqual({ value: '2023-02-28' });
    expect(run('addYears(doc.d, 2) <= today', { d: '2024-01-15' })).toEqual({ value: true });
    expect(run('addYears(doc.d, doc.b)', { d: '2024-02-30', b: 1 })).toMatchObject({ error: 'RangeError' });
    expect(run('addYears(doc.d, doc.b) < today', { b: 1 })).toMatchObject({ error: 'no_such_key' });
    expect(run('yearsBetween(doc.d, addDays(today, 1))', { d: '2024-01-15' })).toEqual({ value: 2 + 1 / 365 });
    expect(run('yearsBetween(doc.d, today) > 1.5', { d: '2024-02-30' })).toMatchObject({ error: 'RangeError' });
  });

  it('type-checks addYears and yearsBetween as the other functions: dates (strings) and an int, giving a date or a double', () => {
    const problems: string[] = [];
    for (const expr of ['addYears(doc.d, 1.5)', 'addYears(doc.d, "2")', 'addYears(doc.b, 1)', 'addYears(doc.d)', 'addYears(doc.d, 1) + 1', 'yearsBetween(doc.d, 1)', 'yearsBetween(doc.d, doc.d) + 1'])
      compileOne(env, expr, '/x', TYPES, 'a test', (p) => problems.push(p.message));
    expect(problems).toHaveLength(7);
    expect(problems.every((p) => p.startsWith('/x: the expression does not type-check:'))).toBe(true);
  });

  it('leaves a program with a node it does not cover to cel-js (macros with their own evaluator: cel.bind, orValue)', () => {
    const a = { doc: toCel(fields, { b: 3 }, 2, shapes.doc, shapes), today: '2026-01-15' };
    const bind = compileOne(env, 'cel.bind(t, doc.b * 2, t + t)', '', ['int'], 'a test', () => undefined) as Compiled;
    expect(bind.covered()).toBe(false);
    expect(bind(a)).toBe(12n);
    const orValue = compileOne(env, 'doc.?d.orValue("none")', '', ['string'], 'a test', () => undefined) as Compiled;
    expect(orValue.covered()).toBe(false);
    expect(orValue(a)).toBe('none');
  });
});
