// Effects: what a transition (or a create) does to related documents. Each effect runs a
// transition of the document a reference field names, sets fields on it, or creates a document,
// always through that type's own operations (its guards, locks, validations, audit entry and
// events), in the request's one unit of work: an effect that fails undoes the whole write, and
// the error says which effect and why. Checked and compiled with the type's other rules.
//
// The type acted on is the app's own or one of a dependency's (`app/type`, through a reference
// field to it), never another app's. Permission: an effect acts on behalf of the caller with the
// app's grant (Frappe's `ignore_permissions` in controller code, Odoo's server actions). The gate
// is the permission (and roles) of the operation that fires it, which the caller held; the
// target's resource permission is not asked again, since the manifest declares the dependency and
// the effect, reviewed at install. Everything else of the target applies to the caller: its
// transitions' `roles`, guards, locks, validations, hooks, audit entry (the caller is its actor)
// and events. So a Viewer, who cannot fire the transition, cannot move stock through it.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Environment, ParseResult } from '@marcbachmann/cel-js';
import type { DocumentTypeDecl, EffectDecl, FieldDecl, LineFieldDecl, TransitionDecl } from '../../../manifests/manifest.schema.ts';
import type { Doc } from '../../../sdk/define-app.ts';
import { DiwanError } from '../../kernel/errors/diwan-error.ts';
import { validationError } from '../../kernel/validation.ts';
import { isReadOnly } from '../doc-schemas.ts';
import { celType, documentEnvironment, lineEnvironment, transitionEnvironment, type CelShapes } from './environment.ts';
import { fromCel, RESULT_TYPES, toCel } from './values.ts';
import { compileOne, type RuleProblem } from './document-rules.ts';
import type { RuleScope } from './evaluate.ts';

type Program = ParseResult;
type Shape = new () => Record<string, unknown>;

interface Assign<F> {
  field: F;
  program: Program;
}

export interface CompiledEffect {
  index: number;
  decl: EffectDecl;
  /** The document type the effect acts on: a type of the app, or `app/type` of a dependency. */
  type: string;
  /** The lines field the effect runs once per line of. */
  forEach?: string;
  when?: Program;
  check?: Program;
  /** A transition effect's body. */
  input: Assign<LineFieldDecl>[];
  set: Assign<FieldDecl>[];
  values: Assign<FieldDecl>[];
  shapes: CelShapes & { target?: { doc: Shape; lines: Map<string, Shape> } };
}

export interface CompiledEffects {
  create: CompiledEffect[];
  delete: CompiledEffect[];
  transitions: Map<string, CompiledEffect[]>;
}

/** The types effects may act on: the app's own and its dependencies'. */
export interface EffectTypes {
  /** The type a name (the app's) or `app/type` (a dependency's) names, if any. */
  typeOf(ref: string): DocumentTypeDecl | undefined;
  /** Whether the app depends on `app`: `known` when that app's manifest is at hand, `unknown` when not (then typed at install). */
  dependency(app: string): 'known' | 'unknown' | false;
}

export const hasEffects = (dt: DocumentTypeDecl): boolean => !!dt.createEffects?.length || !!dt.deleteEffects?.length || (dt.transitions ?? []).some((t) => t.effects?.length);

/** Does any effect of the type act on a dependency's type (typed only once it is installed)? */
export function actsOnDependency(dt: DocumentTypeDecl): boolean {
  const refs = new Map(dt.fields.flatMap((f) => [f, ...(f.fields ?? [])]).filter((f) => f.type === 'reference').map((f) => [f.name, f.to ?? '']));
  const all = [...(dt.createEffects ?? []), ...(dt.deleteEffects ?? []), ...(dt.transitions ?? []).flatMap((t) => t.effects ?? [])];
  return all.some((e) => (e.create ?? refs.get(e.target ?? '') ?? '').includes('/'));
}

/** `target` typed as the target document type: its id, state and fields, each `lines` field a list of its own line type. */
function withTarget(env: Environment, fields: readonly FieldDecl[]): { doc: Shape; lines: Map<string, Shape> } {
  const shape = () => class {} as unknown as Shape;
  const lines = new Map<string, Shape>();
  const lineType = (f: FieldDecl) => `TargetLines_${f.name}`;
  for (const f of fields) {
    if (f.type !== 'lines') continue;
    const ctor = shape();
    lines.set(f.name, ctor);
    env.registerType(lineType(f), { ctor, fields: Object.fromEntries((f.fields ?? []).map((lf) => [lf.name, celType(lf)])) });
  }
  const doc = shape();
  env.registerType('Target', { ctor: doc, fields: { id: 'string', state: 'string', ...Object.fromEntries(fields.map((f) => [f.name, celType(f, f.type === 'lines' ? lineType(f) : undefined)])) } });
  env.registerVariable('target', 'Target');
  return { doc, lines };
}

/** Checks and compiles one list of effects; `input` is the transition's (none on create). */
function buildList(
  list: readonly EffectDecl[],
  at: string,
  dt: DocumentTypeDecl,
  input: readonly LineFieldDecl[] | undefined,
  types: EffectTypes,
  add: (p: RuleProblem) => void,
): CompiledEffect[] {
  const out: CompiledEffect[] = [];
  /** The type `ref` names, or `later` when it is a dependency's whose manifest is not at hand; undefined when refused. */
  const typeAt = (ref: string, pointer: string, field?: string): DocumentTypeDecl | 'later' | undefined => {
    if (!ref.includes('/')) return types.typeOf(ref);
    const app = ref.split('/')[0];
    const dep = types.dependency(app);
    if (!dep) {
      const what = field ? `${field} refers to ${ref},` : `${ref} is`;
      add({ pointer, rule: 'effectTarget', message: `${what} a type of ${app}, which the app does not depend on: effects act on the app's own types and its dependencies'` });
      return undefined;
    }
    if (dep === 'unknown') return 'later';
    const type = types.typeOf(ref);
    if (!type) add({ pointer, rule: 'effectTarget', message: `${app} has no document type "${ref.split('/')[1]}"` });
    return type;
  };
  list.forEach((e, index) => {
    const eat = `${at}/${index}`;
    const base = documentEnvironment(dt.fields);
    let { env, shapes } = input ? transitionEnvironment(base.env, base.shapes, input) : base;
    env.registerVariable('from', 'string');
    env.registerVariable('id', 'string');
    env.registerVariable('before', 'Document');
    const compiled: CompiledEffect = { index, decl: e, type: '', input: [], set: [], values: [], shapes };
    // With `forEach`, `line` is one of the lines and `target` (and `check.field`) name fields of it.
    let own: readonly (FieldDecl | LineFieldDecl)[] = dt.fields;
    if (e.forEach !== undefined) {
      const lines = dt.fields.find((f) => f.name === e.forEach);
      if (lines?.type !== 'lines') {
        add({ pointer: `${eat}/forEach`, rule: 'field', message: `"${e.forEach}" is not a lines field of ${dt.name}` });
        return;
      }
      env = lineEnvironment(env, lines);
      compiled.forEach = lines.name;
      own = lines.fields ?? [];
    }
    let type: DocumentTypeDecl | 'later' | undefined;
    if (e.target !== undefined) {
      if (e.create !== undefined || e.values !== undefined) add({ pointer: eat, rule: 'effect', message: `${eat}: an effect has either a target or create, not both` });
      if (e.transition !== undefined && e.set !== undefined) add({ pointer: eat, rule: 'effect', message: `${eat}: an effect on a target runs a transition or sets fields, not both` });
      if (e.transition === undefined && e.set === undefined && e.check === undefined) add({ pointer: eat, rule: 'effect', message: `${eat}: an effect on a target runs a transition, sets fields or checks a rule against it` });
      const ref = own.find((f) => f.name === e.target);
      if (!ref || ref.type !== 'reference' || !ref.to) {
        add({ pointer: `${eat}/target`, rule: 'effectTarget', message: `"${e.target}" is not a reference field of ${e.forEach ? `${dt.name}.${e.forEach}` : dt.name}` });
        return;
      }
      type = typeAt(ref.to, `${eat}/target`, e.target);
      compiled.type = ref.to;
      if (!type || type === 'later') return; // a local reference that does not resolve is reported elsewhere
      compiled.shapes = { ...shapes, target: withTarget(env, type.fields) };
    } else if (e.create !== undefined) {
      if (e.transition !== undefined || e.set !== undefined || e.input !== undefined || e.check !== undefined) {
        add({ pointer: eat, rule: 'effect', message: `${eat}: a create effect takes values only (no transition, input, set or check)` });
      }
      type = typeAt(e.create, `${eat}/create`);
      compiled.type = e.create;
      if (type === 'later') return;
      if (!type) {
        if (!e.create.includes('/')) add({ pointer: `${eat}/create`, rule: 'effectTarget', message: `"${e.create}" is not a document type of the app` });
        return;
      }
    } else {
      add({ pointer: eat, rule: 'effect', message: `${eat}: an effect needs a target (a reference field) or create (a document type)` });
      return;
    }
    const decl: DocumentTypeDecl = type;
    if (e.when !== undefined) compiled.when = compileOne(env, e.when, `${eat}/when`, ['bool'], 'a condition', add);
    if (e.check !== undefined) {
      compiled.check = compileOne(env, e.check.rule, `${eat}/check/rule`, ['bool'], 'a check', add);
      if (e.check.field !== undefined && !own.some((f) => f.name === e.check!.field)) add({ pointer: `${eat}/check/field`, rule: 'field', message: `"${e.check.field}" is not a field of ${e.forEach ? `${dt.name}.${e.forEach}` : dt.name}` });
    }
    if (e.transition !== undefined) {
      const t: TransitionDecl | undefined = (decl.transitions ?? []).find((x) => x.name === e.transition);
      if (!t) add({ pointer: `${eat}/transition`, rule: 'effectTransition', message: `${decl.name} has no transition "${e.transition}"` });
      else {
        for (const f of t.input ?? []) {
          if (f.required && e.input?.[f.name] === undefined) add({ pointer: `${eat}/input`, rule: 'required', message: `${decl.name}.${t.name} needs its input ${f.name}` });
        }
        for (const [name, expr] of Object.entries(e.input ?? {})) {
          const field = (t.input ?? []).find((f) => f.name === name);
          if (!field) add({ pointer: `${eat}/input/${name}`, rule: 'field', message: `"${name}" is not an input of ${decl.name}.${t.name}` });
          else {
            const program = compileOne(env, expr, `${eat}/input/${name}`, RESULT_TYPES[field.type], `a ${field.type} input`, add);
            if (program) compiled.input.push({ field, program });
          }
        }
      }
    } else if (e.input !== undefined) add({ pointer: `${eat}/input`, rule: 'effect', message: `${eat}: input goes with a transition` });
    const assign = (map: Record<string, string> | undefined, key: 'set' | 'values', writable: (f: FieldDecl) => string | undefined) => {
      for (const [name, expr] of Object.entries(map ?? {})) {
        const pointer = `${eat}/${key}/${name}`;
        const field = decl.fields.find((f) => f.name === name);
        const refused = field ? writable(field) : `"${name}" is not a field of ${decl.name}`;
        if (refused) add({ pointer, rule: 'field', message: refused });
        else {
          const program = compileOne(env, expr, pointer, RESULT_TYPES[field!.type], `a ${field!.type} field`, add);
          if (program) compiled[key].push({ field: field!, program });
        }
      }
    };
    // `set` writes as a transition's `set` does (read-only fields too); a created document's values are what a client could send.
    assign(e.set, 'set', (f) => (f.compute !== undefined ? `${f.name} is computed: an effect cannot set it` : f.type === 'lines' ? `${f.name} is a lines field: effects set scalar fields only` : undefined));
    assign(e.values, 'values', (f) => (isReadOnly(f) ? `${f.name} is read-only: a created document gets it from its rules` : f.type === 'lines' ? `${f.name} is a lines field: effects give scalar fields only` : undefined));
    if (e.create !== undefined) {
      for (const f of decl.fields) {
        if (f.required && !isReadOnly(f) && f.type !== 'lines' && e.values?.[f.name] === undefined) add({ pointer: `${eat}/values`, rule: 'required', message: `${decl.name} needs ${f.name}` });
      }
    }
    out.push(compiled);
  });
  return out;
}

/**
 * Checks and compiles a type's effects (`at` is its pointer). An effect on a dependency whose
 * manifest is not at hand is checked for all but what needs that type, and left uncompiled:
 * the runtime compiles it against the installed dependency at install (`DocType.checkEffects`).
 */
export function buildEffects(dt: DocumentTypeDecl, at: string, types: EffectTypes): { problems: RuleProblem[]; effects?: CompiledEffects } {
  const problems: RuleProblem[] = [];
  const add = (p: RuleProblem) => problems.push(p);
  const effects: CompiledEffects = { create: [], delete: [], transitions: new Map() };
  if (dt.createEffects) effects.create = buildList(dt.createEffects, `${at}/createEffects`, dt, undefined, types, add);
  if (dt.deleteEffects) effects.delete = buildList(dt.deleteEffects, `${at}/deleteEffects`, dt, undefined, types, add);
  dt.createEffects?.forEach((e, i) => {
    if (e.create === dt.name) add({ pointer: `${at}/createEffects/${i}/create`, rule: 'effectLoop', message: `creating a ${dt.name} would create another, without end` });
  });
  (dt.transitions ?? []).forEach((t, j) => {
    if (t.effects) effects.transitions.set(t.name, buildList(t.effects, `${at}/transitions/${j}/effects`, dt, t.input, types, add));
  });
  return problems.length ? { problems } : { problems, effects };
}

/** What an effect needs of the document type it acts on (a DocType). */
export interface EffectTarget {
  readonly decl: DocumentTypeDecl;
  /** The document, locked to the end of the transaction. */
  getLocked(companyId: string, id: string): Promise<Doc | undefined>;
  transition(caller: never, id: string, name: string, input?: Record<string, unknown>): Promise<Doc>;
  setFields(caller: never, id: string, patchOf: (current: Doc) => Record<string, unknown>): Promise<Doc>;
  create(caller: never, data: Record<string, unknown>): Promise<Doc>;
}

export interface EffectRun<C> {
  appId: string;
  caller: C;
  companyId: string;
  dt: DocumentTypeDecl;
  /** This document as written. */
  doc: Doc;
  /** This document before the transition (on create, as written): what a disposal takes out of stock. */
  before?: Doc;
  input: Record<string, unknown>;
  inputFields?: readonly LineFieldDecl[];
  /** The state the document left (its state, on create). */
  from: string;
  scope: RuleScope;
  resolve(type: string): EffectTarget;
}

const describe = (e: EffectDecl): string =>
  e.create !== undefined ? `create ${e.create}` : e.transition !== undefined ? `${e.target} → ${e.transition}` : `${e.target}: set ${Object.keys(e.set ?? {}).join(', ')}`;

/** The target's error, saying which effect failed: the same code, each detail naming the effect. */
function blame(err: unknown, c: CompiledEffect, s: RuleScope, line?: number): unknown {
  if (!(err instanceof DiwanError)) return err;
  const what = describe(c.decl);
  const why = String(err.params.reason ?? err.params.summary ?? err.details[0]?.message ?? s.tr.t(s.lang, `error.${err.code}`));
  const reason = s.tr.t(s.lang, 'reason.effect', { effect: c.index, what, reason: why });
  const on = line === undefined ? {} : { effectLine: line };
  const details = (err.details.length ? err.details : [{}]).map((d) => ({ ...d, effect: c.index, effectOn: c.decl.target ?? c.decl.create, effectDoes: what, ...on }));
  return new DiwanError(err.code, details, { ...err.params, reason, summary: reason }, err.headers);
}

/** The values of an effect's expressions; one that cannot be computed (a division by zero) is a VALIDATION_ERROR at its field. */
function run<F extends FieldDecl | LineFieldDecl>(list: Assign<F>[], activation: Record<string, unknown>, s: RuleScope): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { field, program } of list) {
    try {
      out[field.name] = fromCel(field.type, program(activation), s.digits);
    } catch (e) {
      throw validationError([{ in: 'body', pointer: `/${field.name}`, rule: 'compute', computed: true, error: String((e as Error)?.message ?? e), message: s.tr.t(s.lang, 'rule.compute', { field: field.name }) }]);
    }
  }
  return out;
}

/** Does an effect's `when` hold? One that cannot be evaluated does not, as a guard. */
function applies(c: CompiledEffect, activation: Record<string, unknown>): boolean {
  if (!c.when) return true;
  try {
    return c.when(activation) === true;
  } catch {
    return false;
  }
}

/** How deep effects nest (an effect's write running effects of its own): a manifest whose effects loop stops here. */
const nesting = new AsyncLocalStorage<number>();
export const MAX_EFFECT_DEPTH = 8;

/** Runs a list of compiled effects in order; the first that fails throws, naming itself. */
export async function runEffects<C>(list: readonly CompiledEffect[], r: EffectRun<C>): Promise<void> {
  if (!list.length) return;
  const depth = (nesting.getStore() ?? 0) + 1;
  if (depth > MAX_EFFECT_DEPTH) {
    throw new DiwanError('APP_ERROR', [{ app: r.appId, rule: 'effectDepth', type: r.dt.name, depth: MAX_EFFECT_DEPTH }], { app: r.appId, reason: `effects nest deeper than ${MAX_EFFECT_DEPTH} writes (do ${r.dt.name}'s effects loop?)` });
  }
  await nesting.run(depth, () => runList(list, r));
}

async function runList<C>(list: readonly CompiledEffect[], r: EffectRun<C>): Promise<void> {
  const s = r.scope;
  const activation: Record<string, unknown> = { from: r.from, id: r.doc.id, today: s.today };
  for (const c of list) {
    // Each effect's environment registered its own classes: the values are built as its classes.
    const doc = toCel(r.dt.fields, r.doc, s.digits, c.shapes.doc, c.shapes);
    const before = r.before ? toCel(r.dt.fields, r.before, s.digits, c.shapes.doc, c.shapes) : doc;
    const own: Record<string, unknown> = { ...activation, doc, before };
    if (r.inputFields && c.shapes.input) own.input = toCel(r.inputFields, r.input, s.digits, c.shapes.input);
    if (c.forEach === undefined) {
      await runOne(c, r, own, r.doc);
      continue;
    }
    // Once per line: `line` is the line as CEL sees it, its reference read from the line as stored.
    const lines = (r.doc[c.forEach] ?? []) as Record<string, unknown>[];
    const celLines = (own.doc as Record<string, unknown[]>)[c.forEach];
    for (let i = 0; i < lines.length; i++) await runOne(c, r, { ...own, line: celLines[i] }, lines[i], i);
  }
}

/** One effect (on one line, `at` its index, with `forEach`); `holder` holds the target's reference. */
async function runOne<C>(c: CompiledEffect, r: EffectRun<C>, own: Record<string, unknown>, holder: Record<string, unknown>, at?: number): Promise<void> {
  const s = r.scope;
  try {
    const target = r.resolve(c.type);
    const caller = r.caller as never;
    if (c.decl.create !== undefined) {
      if (applies(c, own)) await target.create(caller, run(c.values, own, s));
      return;
    }
    const id = holder[c.decl.target!];
    // An empty reference names nothing to act on (a rule of the type requires it where it must be given).
    if (typeof id !== 'string') return;
    const withTarget = (doc: Doc) => {
      const t = toCel(target.decl.fields, doc, s.digits, c.shapes.target!.doc, { ...c.shapes, lines: c.shapes.target!.lines });
      t.id = doc.id;
      if (doc.state !== undefined) t.state = doc.state;
      return { ...own, target: t };
    };
    // `when` sees the target as it is, locked (its state: free a bed only if it is occupied).
    const current = await target.getLocked(r.companyId, id);
    if (!current) {
      if (!applies(c, own)) return;
      throw new DiwanError('NOT_FOUND', [{ resource: target.decl.resource, id }]);
    }
    if (!applies(c, withTarget(current))) return;
    if (c.check) {
      const holds = (() => {
        try {
          return c.check!(withTarget(current)) === true;
        } catch {
          return false;
        }
      })();
      if (!holds) {
        const field = c.decl.check!.field;
        const pointer = (at === undefined ? '' : `/${c.forEach}/${at}`) + (field ? `/${field}` : '');
        throw validationError([{ in: 'body', pointer, rule: 'effectCheck', message: c.decl.check!.message[s.lang] }]);
      }
    }
    if (c.decl.transition !== undefined) await target.transition(caller, id, c.decl.transition, run(c.input, withTarget(current), s));
    else if (c.decl.set !== undefined) await target.setFields(caller, id, (fresh) => run(c.set, withTarget(fresh), s));
  } catch (err) {
    throw blame(err, c, s, at);
  }
}
