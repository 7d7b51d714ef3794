// Every expression of the first-party manifests (rules, and effects' conditions, checks and
// values), compiled as the host compiles it, and documents to
// run them on, generated from the types' fields with values at the edges (zero, negative, left
// out, huge, long lists of lines). Used by the compiler's differential test and by the bench of
// the rules' programs (bench/rule-programs.ts).
import type { ParseResult } from '@marcbachmann/cel-js';
import { firstPartySources } from '../core/apps/app-source.ts';
import { buildRules, type CompiledRules } from '../core/apps/rules/document-rules.ts';
import { buildEffects, type CompiledEffect } from '../core/apps/rules/effects.ts';
import { celActivation, celRefs, type Activation, type Refs, type RuleScope } from '../core/apps/rules/evaluate.ts';
import { toCel } from '../core/apps/rules/values.ts';
import type { Compiled } from '../core/apps/rules/compile.ts';
import type { DocumentTypeDecl, FieldDecl, LineFieldDecl, Manifest } from '../manifests/manifest.schema.ts';

/** A small seeded generator (mulberry32), so that a failure can be replayed. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];

const MONEY = [0, 0, 1, -1, 0.01, -0.01, 100, 1234.5, 10_000, 250.5, 999_999_999.99, 92_233_720_368_547.75, 1e17, -1e17];
const INTEGERS = [0, 0, 1, -1, 2, 5, 10, 100, 2 ** 53 - 1, -(2 ** 53 - 1)];
const NUMBERS = [0, 0, 1, -1, 0.1, 0.15, 1.5, 2, 2.5, 4.999, 5, 7, 10, 15, 100, -2.5, 1e300, 1e-9, 1e21];
const STRINGS = ['', 'a', 'S', 'Z', 'E', 'O', 'resignation', 'VATEX-SA-32', 'VATEX-SA-OOS', '300000000000003', '1234567890', 'SA', 'x'.repeat(300)];
const DATES = ['2026-01-01', '2026-01-31', '2020-02-29', '1999-12-31', '2030-06-15'];

/** One field's value, or undefined (left out) about one time in five. */
function value(r: () => number, f: FieldDecl | LineFieldDecl, lines: (f: FieldDecl) => unknown[]): unknown {
  if (f.type === 'lines') return lines(f as FieldDecl);
  if (r() < 0.2) return undefined;
  switch (f.type) {
    case 'money':
      return pick(r, MONEY);
    case 'integer':
      return pick(r, INTEGERS);
    case 'number':
      return pick(r, NUMBERS);
    case 'boolean':
      return r() < 0.5;
    case 'date':
      return pick(r, DATES);
    case 'enum':
      return r() < 0.9 && f.values ? pick(r, f.values) : pick(r, STRINGS);
    case 'reference':
      return `ref_${Math.floor(r() * 5)}`;
    default:
      return r() < 0.5 && f.values ? pick(r, f.values) : pick(r, STRINGS);
  }
}

/** A document of the type: 0, 1, 2, 3 or 60 lines in each lines field. */
export function sampleDocument(r: () => number, fields: readonly FieldDecl[]): Record<string, unknown> {
  const lines = (f: FieldDecl) => {
    const n = pick(r, [0, 1, 2, 3, 3, 60]);
    // Lines that agree with each other now and then, so that rules comparing lines hold too.
    const same = r() < 0.4;
    const first = Object.fromEntries((f.fields ?? []).map((lf) => [lf.name, value(r, lf, () => [])]));
    return Array.from({ length: n }, () => (same ? { ...first } : Object.fromEntries((f.fields ?? []).map((lf) => [lf.name, value(r, lf, () => [])]))));
  };
  const out: Record<string, unknown> = {};
  for (const f of fields) {
    const v = value(r, f, lines);
    if (v !== undefined) out[f.name] = v;
  }
  return out;
}

/** One compiled rule, how to build what it sees, and its text. */
export interface SampleProgram {
  app: string;
  type: string;
  what: string;
  text: string;
  program: Compiled;
  /** The activations it runs with on a write (one per line for a line's rule). */
  activations(w: SampleWrite): Record<string, unknown>[];
}

/** A document, the documents its references name, a transition's body, and documents of other types made on demand (an effect's target). */
export interface SampleWrite {
  doc: Record<string, unknown>;
  refs: Refs;
  body: Record<string, unknown>;
  other(fields: readonly FieldDecl[]): Record<string, unknown>;
  pick<T>(xs: readonly T[]): T;
}

/** The fields of a referenced type, `type` in the same app or `app/type`. */
function targetsOf(manifests: Map<string, Manifest>, app: string) {
  return (to: string) => {
    const [a, t] = to.includes('/') ? to.split('/') : [app, to];
    return manifests.get(a)?.documentTypes?.find((d) => d.name === t)?.fields;
  };
}

const SCOPE: RuleScope = { digits: 2, today: '2026-01-15', lang: 'en', tr: { t: () => '' } as unknown as RuleScope['tr'] };

/** Every expression of every first-party manifest (of the apps named, or all): the types' rules, then their effects'. */
export function samplePrograms(apps?: string[]): { programs: SampleProgram[]; types: { app: string; dt: DocumentTypeDecl; rules: CompiledRules; refTypes: Map<string, readonly FieldDecl[]> }[] } {
  const sources = firstPartySources().filter((s) => !apps || apps.includes(s.manifest.id));
  const manifests = new Map(firstPartySources().map((s) => [s.manifest.id, s.manifest]));
  const programs: SampleProgram[] = [];
  const types: ReturnType<typeof samplePrograms>['types'] = [];
  for (const { manifest } of sources) {
    const targets = targetsOf(manifests, manifest.id);
    for (const dt of manifest.documentTypes ?? []) {
      const { rules, problems } = buildRules(dt, '', { targets });
      if (!rules) throw new Error(`${manifest.id}.${dt.name}: ${problems.map((p) => p.message).join('; ')}`);
      if (!rules.shapes) continue;
      const refTypes = new Map(dt.fields.filter((f) => f.type === 'reference' && targets(f.to!)).map((f) => [f.name, targets(f.to!)!]));
      types.push({ app: manifest.id, dt, rules, refTypes });
      const base = (doc: Record<string, unknown>, refs: Refs): Activation => celActivation({ ...rules, usesRef: true }, dt, doc, SCOPE, refs);
      const add = (what: string, p: ParseResult, activations: SampleProgram['activations']) =>
        programs.push({ app: manifest.id, type: dt.name, what, text: (p as Compiled).source ?? p.ast.input, program: p as Compiled, activations });
      const perLine = (each: string) => ({ doc, refs }: SampleWrite) => {
        const a = base(doc, refs);
        return ((a.doc[each] ?? []) as Record<string, unknown>[]).map((line) => ({ ...a, line }));
      };
      const whole = ({ doc, refs }: SampleWrite) => [base(doc, refs) as unknown as Record<string, unknown>];
      for (const { lines, computed } of rules.lineComputed) for (const c of computed) add(`${lines.name}.${c.field.name}`, c.program, perLine(lines.name));
      for (const c of rules.computed) add(c.field.name, c.program, whole);
      for (const c of rules.defaults) add(`default ${c.field.name}`, c.program, whole);
      for (const v of rules.validations) add(`validation ${v.index}`, v.program, v.each ? perLine(v.each) : whole);
      for (const [name, t] of rules.transitions) {
        const decl = dt.transitions!.find((x) => x.name === name)!;
        const scope = ({ doc, refs, body }: SampleWrite) => {
          const a: Record<string, unknown> = { doc: toCel(dt.fields, doc, 2, t.shapes.doc, t.shapes), today: SCOPE.today, ref: celRefs(t.shapes, refs, 2) };
          if (decl.input && t.shapes.input) a.input = toCel(decl.input, body, 2, t.shapes.input);
          return [a];
        };
        if (t.guard) add(`${name} guard`, t.guard, scope);
        for (const s of t.set) add(`${name} set ${s.field.name}`, s.program, scope);
      }
      // Effects: what runEffects gives them (doc, before, input, from, id, today; line with forEach; the target's document).
      const typeOf = (ref: string) => {
        const [a, n] = ref.includes('/') ? ref.split('/') : [manifest.id, ref];
        return manifests.get(a)?.documentTypes?.find((d) => d.name === n);
      };
      const { effects, problems: effectProblems } = buildEffects(dt, '', { typeOf, dependency: (app) => (manifests.has(app) ? 'known' : false) });
      if (!effects) throw new Error(`${manifest.id}.${dt.name}: ${effectProblems.map((p) => p.message).join('; ')}`);
      const lists: [string, CompiledEffect[], readonly LineFieldDecl[] | undefined][] = [['create', effects.create, undefined]];
      for (const [name, list] of effects.transitions) lists.push([name, list, dt.transitions!.find((x) => x.name === name)!.input]);
      for (const [on, list, input] of lists)
        for (const c of list) {
          const target = c.shapes.target ? typeOf(c.type) : undefined;
          const activations = (w: SampleWrite) => {
            const own: Record<string, unknown> = { from: 'draft', id: 'doc_1', today: SCOPE.today, doc: toCel(dt.fields, w.doc, 2, c.shapes.doc, c.shapes), before: toCel(dt.fields, w.doc, 2, c.shapes.doc, c.shapes) };
            if (input && c.shapes.input) own.input = toCel(input, w.body, 2, c.shapes.input);
            if (target) {
              const t = toCel(target.fields, w.other(target.fields), 2, c.shapes.target!.doc, { ...c.shapes, lines: c.shapes.target!.lines });
              t.id = 'target_1';
              t.state = w.pick(target.states ?? ['draft']);
              own.target = t;
            }
            if (c.forEach === undefined) return [own];
            return ((own.doc as Record<string, unknown[]>)[c.forEach] ?? []).map((line) => ({ ...own, line }));
          };
          const what = `effect ${on} ${c.index}`;
          if (c.when) add(`${what} when`, c.when, activations);
          if (c.check) add(`${what} check`, c.check, activations);
          for (const x of [...c.input, ...c.set, ...c.values]) add(`${what} ${x.field.name}`, x.program, activations);
        }
    }
  }
  return { programs, types };
}

/** A document of the type, the documents its references name, and a transition's body (the union of the inputs' fields). */
export function sampleWrite(r: () => number, t: ReturnType<typeof samplePrograms>['types'][number]): SampleWrite {
  const doc = sampleDocument(r, t.dt.fields);
  const refs: Refs = new Map();
  for (const [name, fields] of t.refTypes) {
    if (r() < 0.15) continue;
    refs.set(name, { ...sampleDocument(r, fields), id: `ref_${name}`, ...(r() < 0.8 ? { state: pick(r, ['draft', 'active', 'approved', 'paid']) } : {}) });
  }
  const inputs = (t.dt.transitions ?? []).flatMap((x) => x.input ?? []);
  const body = sampleDocument(r, inputs as unknown as FieldDecl[]);
  return { doc, refs, body, other: (fields) => sampleDocument(r, fields), pick: (xs) => pick(r, xs) };
}
