// A document type's rules, checked and compiled together: computed fields of each line and of
// the document (in dependency order), defaults, validations (of the document and of each line),
// each transition's guard and `set`, and the rules of its topics' conditions. `buildRules`
// answers every problem with its JSON pointer (what `checkManifest` lists, so a manifest whose
// expressions cannot be checked is refused at install) or the compiled rules, which a DocType
// builds once per manifest version.
import type { Environment, ParseResult } from '@marcbachmann/cel-js';
import type { DocumentTypeDecl, FieldDecl, LineFieldDecl, TransitionDecl } from '../../../manifests/manifest.schema.ts';
import { documentEnvironment, lineEnvironment, transitionEnvironment, type CelShapes, type Targets } from './environment.ts';
import { RESULT_TYPES } from './values.ts';
import { compileProgram } from './compile.ts';
import { fieldsRead, narrowed } from './view.ts';

export interface RuleProblem {
  pointer: string;
  rule: string;
  message: string;
}

/** A compiled expression; `source`, the text as written when it runs rewritten (`has()`). */
type Program = ParseResult & { source?: string };

export interface ComputedField {
  field: FieldDecl;
  program: Program;
}

/** A default, and the fields whose change proposes it again on an update (the references it reads through `ref` among them). */
export interface DefaultField extends ComputedField {
  dependsOn: ReadonlySet<string>;
}

export interface LineComputed {
  /** The lines field, and its computed fields, each after those of the line it reads. */
  lines: FieldDecl;
  computed: { field: LineFieldDecl; program: Program }[];
}

export interface CompiledTransition {
  /** The classes its `doc` and `input` are built as. */
  shapes: CelShapes;
  guard?: Program;
  set: { field: FieldDecl; program: Program }[];
}

export interface CompiledRules {
  /** The classes `doc` and its lines are built as (undefined when the type has no expression). */
  shapes?: CelShapes;
  /** Computed fields of lines, evaluated before the document's. */
  lineComputed: LineComputed[];
  /** Computed fields, each after the computed fields it reads. */
  computed: ComputedField[];
  /** Defaults, in the order of the fields. */
  defaults: DefaultField[];
  /** `each`: the lines field whose every line the rule is evaluated on. */
  validations: { program: Program; index: number; each?: string }[];
  transitions: Map<string, CompiledTransition>;
  /** The rules of the type's topic conditions, in the order given. */
  conditions: Program[];
  /** Whether an expression reads `ref` (then a write gives it the referenced documents). */
  usesRef: boolean;
  /** What a write's rules read: the fields its CEL view is built with, and those of each referenced document read. */
  view?: { doc: readonly FieldDecl[]; refs: Map<string, readonly FieldDecl[]> };
}

const EMPTY: CompiledRules = { lineComputed: [], computed: [], defaults: [], validations: [], transitions: new Map(), conditions: [], usesRef: false };

/** Does the type declare any rule an expression states? (Most types declare none: they pay nothing.) */
export function hasExpressions(dt: DocumentTypeDecl): boolean {
  return (
    dt.fields.some((f) => f.compute !== undefined || f.default !== undefined || (f.fields ?? []).some((lf) => lf.compute !== undefined)) ||
    !!dt.validations?.length ||
    (dt.transitions ?? []).some((t) => t.guard || t.set)
  );
}

/** Every expression of the type. */
function expressionsOf(dt: DocumentTypeDecl): string[] {
  const out: string[] = [];
  for (const f of dt.fields) {
    if (f.compute) out.push(f.compute);
    if (f.default) out.push(f.default);
    for (const lf of f.fields ?? []) if (lf.compute) out.push(lf.compute);
  }
  for (const v of dt.validations ?? []) out.push(v.rule);
  for (const t of dt.transitions ?? []) out.push(...(t.guard ? [t.guard.rule] : []), ...Object.values(t.set ?? {}));
  return out;
}

const REF = /\bref\s*\./;

/** Whether an expression of the type reads `ref` (a referenced document). */
export const readsRef = (dt: DocumentTypeDecl): boolean => expressionsOf(dt).some((e) => REF.test(e));

/** The fields an expression reads of `doc` (`doc.x`, `doc.?x`), or of another variable. */
function readsOf(expr: string, variable = 'doc'): Set<string> {
  return new Set([...expr.matchAll(new RegExp(`\\b${variable}\\s*\\.\\s*\\??\\s*([A-Za-z_][A-Za-z0-9_]*)`, 'g'))].map((m) => m[1]));
}

/** `doc` read other than by a field name (`doc[k]`, or whole): any field may be read. */
const WHOLE_DOC = /\bdoc\b(?!\s*\.)/;
const WHOLE_REF = /\bref\b(?!\s*\.)/;

/** The fields of `doc` an expression reads, and the references it reads through `ref` (`ref.employeeId.x` reads `employeeId`); all of them when it may read any. */
function dependsOn(expr: string, dt: DocumentTypeDecl): ReadonlySet<string> {
  if (WHOLE_DOC.test(expr) || WHOLE_REF.test(expr)) return new Set(dt.fields.map((f) => f.name));
  return new Set([...readsOf(expr), ...readsOf(expr, 'ref')]);
}

/**
 * Whether a computed field or a validation of the type reads one of `fields` of `doc`, directly
 * or through the computed fields that read them: what must be evaluated again when only those
 * fields change (a parent's aggregates). A name written in a string counts as read: the answer
 * errs towards evaluating.
 */
export function rulesRead(rules: CompiledRules, fields: Iterable<string>): boolean {
  const read = new Set(fields);
  const reads = (p: Program) => {
    const text = p.source ?? p.ast.input;
    return WHOLE_DOC.test(text) || [...readsOf(text)].some((n) => read.has(n));
  };
  let any = false;
  // In dependency order: a computed field that reads a changed one changes too.
  for (const c of rules.computed) {
    if (reads(c.program)) {
      read.add(c.field.name);
      any = true;
    }
  }
  return any || rules.validations.some((v) => reads(v.program)) || rules.lineComputed.some((l) => l.computed.some((c) => reads(c.program)));
}

/** Parses and type-checks one expression; a problem, or the program with its result type. */
export function compileOne(env: Environment, expr: string, pointer: string, accepts: readonly string[], what: string, add: (p: RuleProblem) => void): Program | undefined {
  let program: Program;
  try {
    program = env.parse(expr);
  } catch (e) {
    add({ pointer, rule: 'expression', message: `${pointer}: the expression does not parse: ${(e as { summary?: string }).summary ?? (e as Error).message}` });
    return undefined;
  }
  const checked = program.check();
  if (!checked.valid) {
    add({ pointer, rule: 'expressionType', message: `${pointer}: the expression does not type-check: ${checked.error?.summary ?? checked.error?.message}` });
    return undefined;
  }
  // `dyn`: it reads a document of another app, typed at install against that app's fields.
  if (!accepts.includes(checked.type!) && checked.type !== 'dyn') {
    add({ pointer, rule: 'expressionType', message: `${pointer}: ${what} needs ${accepts.join(' or ')}, the expression gives ${checked.type}` });
    return undefined;
  }
  return compileProgram(env, withPresence(env, program));
}

type Node = ParseResult['ast'];

/**
 * The program with each `has(x.f)` run as `isSet(x, "f")`: a number left out reads as 0 (a
 * paper form's blank), which CEL's has() would see as set. Type-checked as written.
 */
function withPresence(env: Environment, program: Program): Program {
  const text = program.ast.input;
  const spans: { start: number; end: number; by: string }[] = [];
  const visit = (n: unknown): void => {
    if (Array.isArray(n)) return n.forEach(visit);
    if (!n || typeof n !== 'object' || !('op' in n)) return;
    const node = n as Node;
    if (node.op === 'call' && node.args[0] === 'has' && node.args[1][0]?.op === '.') {
      const [of, field] = (node.args[1][0] as Node & { op: '.' }).args;
      spans.push({ start: node.start, end: node.end, by: `isSet(${text.slice(of.start, of.end)}, "${field}")` });
      return;
    }
    visit(node.args);
  };
  visit(program.ast);
  if (!spans.length) return program;
  let out = '';
  let at = 0;
  for (const sp of spans) {
    out += text.slice(at, sp.start) + sp.by;
    at = sp.end;
  }
  const rewritten = env.parse(out + text.slice(at));
  // Checked too, as the program it stands for was (the evaluator then runs on the checked tree).
  if (!rewritten.check().valid) return program;
  return Object.assign(rewritten, { source: text });
}

/** Computed fields (of the document, or of a line) in dependency order; a cycle is a problem at each field on it. */
function order<F extends { name: string; compute?: string }>(fields: readonly F[], variable: string, pointerOf: (f: F) => string, add: (p: RuleProblem) => void): F[] {
  const computed = new Map(fields.filter((f) => f.compute !== undefined).map((f) => [f.name, f]));
  const out: F[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (f: F): void => {
    const s = state.get(f.name);
    if (s === 'done') return;
    if (s === 'visiting') {
      add({ pointer: pointerOf(f), rule: 'computeCycle', message: `${f.name} is computed from itself (through the fields it reads)` });
      return;
    }
    state.set(f.name, 'visiting');
    for (const name of readsOf(f.compute!, variable)) {
      const dep = computed.get(name);
      if (dep) visit(dep);
    }
    state.set(f.name, 'done');
    out.push(f);
  };
  for (const f of computed.values()) visit(f);
  return out;
}

function buildTransition(t: TransitionDecl, j: number, dt: DocumentTypeDecl, docEnv: Environment, docShapes: CelShapes, at: string, add: (p: RuleProblem) => void): CompiledTransition {
  const tat = `${at}/transitions/${j}`;
  // A transition with no input has no `input` to read: using it is a type error.
  const { env, shapes } = t.input ? transitionEnvironment(docEnv, docShapes, t.input) : { env: docEnv, shapes: docShapes };
  const guard = t.guard ? compileOne(env, t.guard.rule, `${tat}/guard/rule`, ['bool'], 'a guard', add) : undefined;
  const set: CompiledTransition['set'] = [];
  for (const [name, expr] of Object.entries(t.set ?? {})) {
    const pointer = `${tat}/set/${name}`;
    const field = dt.fields.find((f) => f.name === name);
    if (!field) add({ pointer, rule: 'field', message: `"${name}" is not a field of ${dt.name}` });
    else if (field.compute !== undefined || field.aggregate) add({ pointer, rule: 'computed', message: `${name} is computed: a transition cannot set it` });
    else if (field.type === 'lines') add({ pointer, rule: 'linesSet', message: `${name} is a lines field: a transition sets scalar fields only` });
    else {
      const program = compileOne(env, expr, pointer, RESULT_TYPES[field.type], `a ${field.type} field`, add);
      if (program) set.push({ field, program });
    }
  }
  return { shapes, guard, set };
}

/** The computed fields of each lines field: read-only, each after those of its line it reads, none reading a computed field of the document (not computed yet). */
function buildLineComputed(dt: DocumentTypeDecl, at: string, lineEnvOf: (f: FieldDecl) => Environment, add: (p: RuleProblem) => void): LineComputed[] {
  const out: LineComputed[] = [];
  const docComputed = new Set(dt.fields.filter((f) => f.compute !== undefined || f.aggregate).map((f) => f.name));
  dt.fields.forEach((f, j) => {
    const lfs = f.fields ?? [];
    if (f.type !== 'lines' || !lfs.some((lf) => lf.compute !== undefined)) return;
    const pointerOf = (lf: LineFieldDecl) => `${at}/fields/${j}/fields/${lfs.indexOf(lf)}/compute`;
    const computed: LineComputed['computed'] = [];
    for (const lf of order(lfs, 'line', pointerOf, add)) {
      const pointer = pointerOf(lf);
      const early = [...readsOf(lf.compute!)].filter((n) => docComputed.has(n));
      if (early.length) {
        add({ pointer, rule: 'computeOrder', message: `${pointer}: a line is computed before its document, so it cannot read doc.${early.join(', doc.')}` });
        continue;
      }
      const program = compileOne(lineEnvOf(f), lf.compute!, pointer, RESULT_TYPES[lf.type], `a ${lf.type} field`, add);
      if (program) computed.push({ field: lf, program });
    }
    out.push({ lines: f, computed });
  });
  return out;
}

/** Checks and compiles the rules of one document type (`at` is its pointer in the manifest; `conditions` its topics' rules). */
export function buildRules(dt: DocumentTypeDecl, at: string, opts: { targets?: Targets; conditions?: { rule: string; pointer: string }[] } = {}): { problems: RuleProblem[]; rules?: CompiledRules } {
  const problems: RuleProblem[] = [];
  const add = (p: RuleProblem) => problems.push(p);
  const conditionsDecl = opts.conditions ?? [];
  if (!hasExpressions(dt) && !conditionsDecl.length) return { problems, rules: EMPTY };
  const { env, shapes } = documentEnvironment(dt.fields, opts.targets);
  const lineEnvs = new Map<string, Environment>();
  const lineEnvOf = (f: FieldDecl) => lineEnvs.get(f.name) ?? lineEnvs.set(f.name, lineEnvironment(env, f)).get(f.name)!;

  const lineComputed = buildLineComputed(dt, at, lineEnvOf, add);
  const computed: ComputedField[] = [];
  for (const f of order(dt.fields, 'doc', (x) => `${at}/fields/${dt.fields.indexOf(x)}/compute`, add)) {
    const pointer = `${at}/fields/${dt.fields.indexOf(f)}/compute`;
    if (f.type === 'lines') {
      add({ pointer, rule: 'linesCompute', message: `${f.name} is a lines field: only scalar fields are computed` });
      continue;
    }
    if (f.aggregate) {
      add({ pointer, rule: 'computed', message: `${f.name} is an aggregate: it cannot also be computed` });
      continue;
    }
    const program = compileOne(env, f.compute!, pointer, RESULT_TYPES[f.type], `a ${f.type} field`, add);
    if (program) computed.push({ field: f, program });
  }

  const defaults: DefaultField[] = [];
  dt.fields.forEach((f, j) => {
    if (f.default === undefined) return;
    const pointer = `${at}/fields/${j}/default`;
    if (f.compute !== undefined || f.aggregate || f.readOnly) add({ pointer, rule: 'default', message: `${f.name} is read-only: a default is for a field the client may leave out` });
    else if (f.type === 'lines') add({ pointer, rule: 'default', message: `${f.name} is a lines field: only scalar fields have defaults` });
    else {
      const program = compileOne(env, f.default, pointer, RESULT_TYPES[f.type], `a ${f.type} field`, add);
      if (program) defaults.push({ field: f, program, dependsOn: dependsOn(f.default, dt) });
    }
  });

  const validations: CompiledRules['validations'] = [];
  (dt.validations ?? []).forEach((v, i) => {
    const vat = `${at}/validations/${i}`;
    let venv = env;
    if (v.each !== undefined) {
      const lines = dt.fields.find((f) => f.name === v.each);
      if (lines?.type !== 'lines') {
        add({ pointer: `${vat}/each`, rule: 'field', message: `"${v.each}" is not a lines field of ${dt.name}` });
        return;
      }
      if (v.field !== undefined && !(lines.fields ?? []).some((f) => f.name === v.field)) add({ pointer: `${vat}/field`, rule: 'field', message: `"${v.field}" is not a field of the lines of ${v.each}` });
      venv = lineEnvOf(lines);
    } else if (v.field !== undefined && !dt.fields.some((f) => f.name === v.field)) add({ pointer: `${vat}/field`, rule: 'field', message: `"${v.field}" is not a field of ${dt.name}` });
    const program = compileOne(venv, v.rule, `${vat}/rule`, ['bool'], 'a validation', add);
    if (program) validations.push({ program, index: i, ...(v.each !== undefined ? { each: v.each } : {}) });
  });

  const transitions = new Map<string, CompiledTransition>();
  (dt.transitions ?? []).forEach((t, j) => {
    if (t.guard || t.set) transitions.set(t.name, buildTransition(t, j, dt, env, shapes, at, add));
  });
  const conditions: Program[] = [];
  for (const c of conditionsDecl) {
    // An event's condition is evaluated on the stored document alone, with nothing more read.
    if (REF.test(c.rule)) {
      add({ pointer: c.pointer, rule: 'ref', message: `${c.pointer}: a topic's condition reads the document only, not ref` });
      continue;
    }
    const program = compileOne(env, c.rule, c.pointer, ['bool'], 'a condition', add);
    if (program) conditions.push(program);
  }
  const usesRef = readsRef(dt);
  const view = writeView(dt, shapes, [...lineComputed.flatMap((l) => l.computed), ...computed, ...defaults, ...validations].map((r) => r.program));
  return problems.length ? { problems } : { problems, rules: { shapes, lineComputed, computed, defaults, validations, transitions, conditions, usesRef, view } };
}

/** The fields a write's rules read of the document and of each document it references (all of a referenced document when `ref` is read whole). */
function writeView(dt: DocumentTypeDecl, shapes: CelShapes, programs: Program[]): CompiledRules['view'] {
  const read = fieldsRead(programs);
  const refsRead = read.get('References');
  const refs = new Map<string, readonly FieldDecl[]>();
  for (const [name, shape] of shapes.ref) {
    if (refsRead === null) refs.set(name, shape.fields);
    else if (refsRead?.has(name)) refs.set(name, narrowed(shape.fields, `Ref_${name}`, read));
  }
  return { doc: narrowed(dt.fields, 'Document', read), refs };
}
