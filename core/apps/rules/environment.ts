// The CEL environment of one document type: `doc` typed from its declared fields (each `lines`
// field a list of its own line type), `input` typed from a transition's input, and the few
// functions business rules need. Built once per document type (the environment is the costly
// part); expressions are parsed and checked against it once.
import { Environment } from '@marcbachmann/cel-js';
import type { FieldDecl, LineFieldDecl } from '../../../manifests/manifest.schema.ts';
import { addDays, addYears, daysBetween, divRound, roundHalfAway, timesRound, yearsBetween } from './decimal.ts';
import { isSet } from './presence.ts';

/**
 * What one expression may cost: its text is bounded by the manifest schema (2,000 characters),
 * its syntax tree and nesting here. CEL has no loops but its macros over a document's lines,
 * which are bounded by the lines' `maxItems` (at most 1,000).
 */
export const LIMITS = { maxAstNodes: 400, maxDepth: 24, maxListElements: 100, maxMapEntries: 50, maxCallArguments: 8 };

/** The CEL type a field's value has inside an expression: amounts of money are integers in minor units. */
export function celType(f: FieldDecl | LineFieldDecl, lineType?: string): string {
  switch (f.type) {
    case 'number':
      return 'double';
    case 'integer':
    case 'money':
      return 'int';
    case 'boolean':
      return 'bool';
    case 'lines':
      return `list<${lineType}>`;
    default:
      // string, date (YYYY-MM-DD, so comparisons order dates), enum, reference
      return 'string';
  }
}

const sumInts = (l: bigint[]) => {
  let s = 0n;
  for (const x of l) s += x;
  return s;
};
const sumDoubles = (l: number[]) => {
  let s = 0;
  for (const x of l) s += x;
  return s;
};

/** The functions every rule may call (besides CEL's own: size, has, map, filter, all, exists, …). */
function withFunctions(env: Environment): Environment {
  return env
    .registerFunction('sum(list<int>): int', sumInts, { description: 'The sum of a list of integers (amounts in minor units)' })
    .registerFunction('sum(list<double>): double', sumDoubles, { description: 'The sum of a list of numbers' })
    .registerFunction('round(double): int', roundHalfAway, { description: 'To the nearest integer, half away from zero' })
    .registerFunction('times(int, double): int', (a: bigint, f: number) => timesRound(a, f), { description: 'An amount times a quantity or factor, exactly, rounded half away from zero' })
    .registerFunction('percent(int, double): int', (a: bigint, p: number) => timesRound(a, p, 100n), { description: 'A percentage of an amount, exactly, rounded half away from zero' })
    .registerFunction('percent(int, int): int', (a: bigint, p: bigint) => divRound(a * p, 100n), { description: 'A percentage of an amount, rounded half away from zero' })
    .registerFunction('fraction(int, int, int): int', (a: bigint, n: bigint, d: bigint) => divRound(a * n, d), { description: 'amount × n ÷ d, rounded half away from zero (two thirds: fraction(x, 2, 3))' })
    .registerFunction('min(int, int): int', (a: bigint, b: bigint) => (a < b ? a : b))
    .registerFunction('max(int, int): int', (a: bigint, b: bigint) => (a > b ? a : b))
    .registerFunction('min(double, double): double', (a: number, b: number) => Math.min(a, b))
    .registerFunction('max(double, double): double', (a: number, b: number) => Math.max(a, b))
    .registerFunction('daysBetween(string, string): int', daysBetween, { description: 'Calendar days from the first date to the second (negative when it is before)' })
    .registerFunction('addDays(string, int): string', addDays, { description: 'The date so many calendar days after (before, when negative) a date' })
    .registerFunction('addYears(string, int): string', addYears, { description: 'The date so many years after (before, when negative) a date; 29 February gives 28 February in a year without one' })
    .registerFunction('yearsBetween(string, string): double', yearsBetween, { description: 'Years from the first date to the second as service counts them: anniversaries passed, then the days after the last one over 365' })
    // What has(x.f) runs as: a number left out is not set, though it reads as 0.
    .registerFunction('isSet(dyn, string): bool', isSetHandler, { description: 'Whether the field is set (has(x.f))' });
}

/** The evaluator cel-js last called isSet with (its handlers get it as `this`). */
let caught: unknown;
function isSetHandler(this: unknown, obj: Parameters<typeof isSet>[0], name: string): boolean {
  caught = this;
  return isSet(obj, name);
}

const evaluators = new WeakMap<Environment, unknown>();

/**
 * The evaluator of an environment of these rules (undefined for another environment): what
 * compile.ts calls cel-js's handlers with. cel-js keeps it private; a call of isSet shows it.
 */
export function catchEvaluator(env: Environment): unknown {
  if (evaluators.has(env)) return evaluators.get(env);
  caught = undefined;
  try {
    env.parse('isSet(null, "")')({});
  } catch {
    // Not an environment with isSet: its programs stay cel-js's.
  }
  evaluators.set(env, caught);
  return caught;
}

const fieldTypes = (fields: readonly (FieldDecl | LineFieldDecl)[], lineType: (f: FieldDecl) => string) =>
  Object.fromEntries(fields.map((f) => [f.name, celType(f, f.type === 'lines' ? lineType(f as FieldDecl) : undefined)]));

/**
 * The classes a document, its lines, the documents it references and a transition's input are
 * built as for CEL. Values of a registered class are taken as they are; a plain object would be
 * converted, field by field, at every evaluation (twice the cost of a write's rules).
 */
export interface CelShapes {
  doc: new () => Record<string, unknown>;
  lines: Map<string, new () => Record<string, unknown>>;
  /** `ref` (when the type has reference fields) and, per reference field whose target is known, its document's class and fields. */
  refs?: new () => Record<string, unknown>;
  ref: Map<string, { ctor: new () => Record<string, unknown>; fields: readonly FieldDecl[] }>;
  input?: new () => Record<string, unknown>;
}

const shape = () => class {} as unknown as new () => Record<string, unknown>;

/** The fields of a document type: `targets(to)` answers a referenced type's fields, or undefined where it is not known (another app, at validate time). */
export type Targets = (to: string) => readonly FieldDecl[] | undefined;

/**
 * The environment of a document type's rules (`doc` is the document, `ref.<field>` the document a
 * reference field names), and the classes its values are built as. A referenced document has its
 * scalar fields, `id` and `state`; one of a type not known here is `dyn` (checked at install).
 */
export function documentEnvironment(fields: readonly FieldDecl[], targets: Targets = () => undefined): { env: Environment; shapes: CelShapes } {
  const env = new Environment({ limits: LIMITS, enableOptionalTypes: true });
  const shapes: CelShapes = { doc: shape(), lines: new Map(), ref: new Map() };
  const lineType = (f: FieldDecl) => `Lines_${f.name}`;
  for (const f of fields) {
    if (f.type !== 'lines') continue;
    const ctor = shape();
    shapes.lines.set(f.name, ctor);
    env.registerType(lineType(f), { ctor, fields: fieldTypes(f.fields ?? [], lineType) });
  }
  env.registerType('Document', { ctor: shapes.doc, fields: fieldTypes(fields, lineType) });
  env.registerVariable('doc', 'Document');
  // The host's date (YYYY-MM-DD, UTC) at the write: overdue, days so far.
  env.registerVariable('today', 'string');
  const refFields = fields.filter((f) => f.type === 'reference');
  if (refFields.length) {
    const refTypes: Record<string, string> = {};
    for (const f of refFields) {
      const target = targets(f.to!);
      if (!target) {
        refTypes[f.name] = 'dyn';
        continue;
      }
      const scalars = target.filter((t) => t.type !== 'lines');
      const ctor = shape();
      shapes.ref.set(f.name, { ctor, fields: scalars });
      env.registerType(`Ref_${f.name}`, { ctor, fields: { id: 'string', state: 'string', ...fieldTypes(scalars, lineType) } });
      refTypes[f.name] = `Ref_${f.name}`;
    }
    shapes.refs = shape();
    env.registerType('References', { ctor: shapes.refs, fields: refTypes });
    env.registerVariable('ref', 'References');
  }
  return { env: withFunctions(env), shapes };
}

/** The environment of a `lines` field's per-line expressions: its document's, and `line`, one of its lines. */
export function lineEnvironment(docEnv: Environment, lines: FieldDecl): Environment {
  const env = docEnv.clone();
  env.registerVariable('line', `Lines_${lines.name}`);
  return env;
}

/** A transition's environment: its document's, and `input`, the body it takes. */
export function transitionEnvironment(docEnv: Environment, docShapes: CelShapes, input: readonly LineFieldDecl[]): { env: Environment; shapes: CelShapes } {
  const env = docEnv.clone();
  const ctor = shape();
  env.registerType('Input', { ctor, fields: fieldTypes(input, () => '') });
  env.registerVariable('input', 'Input');
  return { env, shapes: { ...docShapes, input: ctor } };
}
