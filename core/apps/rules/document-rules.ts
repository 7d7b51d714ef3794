// A document type's rules, checked and compiled together: computed fields (in dependency order),
// validations, and each transition's guard and `set`. `buildRules` answers every problem with its
// JSON pointer (what `checkManifest` lists, so a manifest whose expressions cannot be checked is
// refused at install) or the compiled rules, which a DocType builds once per manifest version.
import type { Environment, ParseResult } from '@marcbachmann/cel-js';
import type { DocumentTypeDecl, FieldDecl, TransitionDecl } from '../../../manifests/manifest.schema.ts';
import { documentEnvironment, transitionEnvironment, type CelShapes } from './environment.ts';
import { RESULT_TYPES } from './values.ts';

export interface RuleProblem {
  pointer: string;
  rule: string;
  message: string;
}

type Program = ParseResult;

export interface ComputedField {
  field: FieldDecl;
  program: Program;
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
  /** Computed fields, each after the computed fields it reads. */
  computed: ComputedField[];
  validations: { program: Program; index: number }[];
  transitions: Map<string, CompiledTransition>;
}

/** Does the type declare any rule an expression states? (Most types declare none: they pay nothing.) */
export function hasExpressions(dt: DocumentTypeDecl): boolean {
  return dt.fields.some((f) => f.compute !== undefined) || !!dt.validations?.length || (dt.transitions ?? []).some((t) => t.guard || t.set);
}

/** The fields an expression reads of `doc` (`doc.x`, `doc.?x`). */
function readsOf(expr: string): Set<string> {
  return new Set([...expr.matchAll(/\bdoc\s*\.\s*\??\s*([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]));
}

/** Parses and type-checks one expression; a problem, or the program with its result type. */
function compileOne(env: Environment, expr: string, pointer: string, accepts: readonly string[], what: string, add: (p: RuleProblem) => void): Program | undefined {
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
  if (!accepts.includes(checked.type!)) {
    add({ pointer, rule: 'expressionType', message: `${pointer}: ${what} needs ${accepts.join(' or ')}, the expression gives ${checked.type}` });
    return undefined;
  }
  return program;
}

/** Computed fields in dependency order; a cycle is a problem at each field on it. */
function order(dt: DocumentTypeDecl, at: string, add: (p: RuleProblem) => void): FieldDecl[] {
  const computed = new Map(dt.fields.filter((f) => f.compute !== undefined).map((f) => [f.name, f]));
  const out: FieldDecl[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (f: FieldDecl): void => {
    const s = state.get(f.name);
    if (s === 'done') return;
    if (s === 'visiting') {
      add({ pointer: `${at}/fields/${dt.fields.indexOf(f)}/compute`, rule: 'computeCycle', message: `${f.name} is computed from itself (through the fields it reads)` });
      return;
    }
    state.set(f.name, 'visiting');
    for (const name of readsOf(f.compute!)) {
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
    else if (field.compute !== undefined) add({ pointer, rule: 'computed', message: `${name} is computed: a transition cannot set it` });
    else if (field.type === 'lines') add({ pointer, rule: 'linesSet', message: `${name} is a lines field: a transition sets scalar fields only` });
    else {
      const program = compileOne(env, expr, pointer, RESULT_TYPES[field.type], `a ${field.type} field`, add);
      if (program) set.push({ field, program });
    }
  }
  return { shapes, guard, set };
}

/** Checks and compiles the rules of one document type (`at` is its pointer in the manifest). */
export function buildRules(dt: DocumentTypeDecl, at: string): { problems: RuleProblem[]; rules?: CompiledRules } {
  const problems: RuleProblem[] = [];
  const add = (p: RuleProblem) => problems.push(p);
  if (!hasExpressions(dt)) return { problems, rules: { computed: [], validations: [], transitions: new Map() } };
  const { env, shapes } = documentEnvironment(dt.fields);
  const computed: ComputedField[] = [];
  for (const f of order(dt, at, add)) {
    const pointer = `${at}/fields/${dt.fields.indexOf(f)}/compute`;
    if (f.type === 'lines') {
      add({ pointer, rule: 'linesCompute', message: `${f.name} is a lines field: only scalar fields are computed` });
      continue;
    }
    const program = compileOne(env, f.compute!, pointer, RESULT_TYPES[f.type], `a ${f.type} field`, add);
    if (program) computed.push({ field: f, program });
  }
  const validations: CompiledRules['validations'] = [];
  (dt.validations ?? []).forEach((v, i) => {
    const vat = `${at}/validations/${i}`;
    if (v.field !== undefined && !dt.fields.some((f) => f.name === v.field)) add({ pointer: `${vat}/field`, rule: 'field', message: `"${v.field}" is not a field of ${dt.name}` });
    const program = compileOne(env, v.rule, `${vat}/rule`, ['bool'], 'a validation', add);
    if (program) validations.push({ program, index: i });
  });
  const transitions = new Map<string, CompiledTransition>();
  (dt.transitions ?? []).forEach((t, j) => {
    if (t.guard || t.set) transitions.set(t.name, buildTransition(t, j, dt, env, shapes, at, add));
  });
  return problems.length ? { problems } : { problems, rules: { shapes, computed, validations, transitions } };
}
