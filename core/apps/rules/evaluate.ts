// Running a document type's compiled rules on one write. Each function answers the problems it
// found (as VALIDATION_ERROR details, pointer first) so that the caller lists them all at once.
import type { DocumentTypeDecl, FieldDecl, LineFieldDecl } from '../../../manifests/manifest.schema.ts';
import type { ErrorDetail } from '../../kernel/errors/diwan-error.ts';
import type { Lang, Translator } from '../../kernel/i18n/i18n.ts';
import type { CompiledRules, CompiledTransition } from './document-rules.ts';
import { fromCel, toCel } from './values.ts';
import { setCel } from './presence.ts';
import type { CelShapes } from './environment.ts';

/** What every evaluation needs: the currency's minor digits, and the caller's language. */
export interface RuleScope {
  digits: number;
  /** The host's date at the write (`today` in expressions), from its clock. */
  today: string;
  lang: Lang;
  tr: Translator;
}

const summary = (e: unknown) => (e as { summary?: string }).summary ?? String((e as Error)?.message ?? e);

/** A rule reading a field the document does not have (an optional date left empty) is not broken. */
const isAbsentField = (e: unknown) => (e as { code?: string }).code === 'no_such_key';

/** What a write's expressions see: the document (`doc`) and, when they read it, the documents its references name (`ref`). */
export interface Activation {
  doc: Record<string, unknown>;
  today: string;
  ref?: Record<string, unknown>;
  input?: Record<string, unknown>;
}

/** Referenced documents, by the reference field that names them (a field left empty names none). */
export type Refs = Map<string, Record<string, unknown>>;

/** `ref` as CEL sees it: each referenced document's scalar fields (those `read`, when given), its id and state. */
export function celRefs(shapes: CelShapes, refs: Refs | undefined, digits: number, read?: ReadonlyMap<string, readonly FieldDecl[]>): Record<string, unknown> | undefined {
  if (!shapes.refs) return undefined;
  const out = new shapes.refs();
  for (const [name, doc] of refs ?? []) {
    const shape = shapes.ref.get(name);
    const fields = read ? read.get(name) : shape?.fields;
    if (!shape || !fields) continue;
    const cel = toCel(fields, doc, digits, shape.ctor);
    cel.id = doc.id;
    if (doc.state !== undefined) cel.state = doc.state;
    out[name] = cel;
  }
  return out;
}

/** The document as the write's rules see it (the fields they read), converted once per write and kept in step by `computeInto`. */
export function celActivation(rules: CompiledRules, dt: DocumentTypeDecl, doc: Record<string, unknown>, s: RuleScope, refs?: Refs): Activation {
  const doc_ = toCel(rules.view?.doc ?? dt.fields, doc, s.digits, rules.shapes!.doc, rules.shapes);
  return rules.usesRef ? { doc: doc_, today: s.today, ref: celRefs(rules.shapes!, refs, s.digits, rules.view?.refs) } : { doc: doc_, today: s.today };
}

const computeProblem = (pointer: string, name: string, e: unknown, s: RuleScope): ErrorDetail =>
  ({ in: 'body', pointer, rule: 'compute', computed: true, error: summary(e), message: s.tr.t(s.lang, 'rule.compute', { field: name }) });

/**
 * On create, gives each field the client left out that has a `default` its value (in the order
 * of the fields, each seeing the ones before). A default that cannot be evaluated (a reference
 * left empty) gives nothing: the field stays out. `again`: on an update, the defaults to propose
 * again whatever the field holds (what they read changed); one that cannot be evaluated leaves
 * the value as it was.
 */
export function applyDefaults(rules: CompiledRules, doc: Record<string, unknown>, a: Activation, s: RuleScope, again?: ReadonlySet<string>): void {
  for (const { field, program } of rules.defaults) {
    if (again ? !again.has(field.name) : doc[field.name] !== undefined) continue;
    try {
      const value = program(a);
      doc[field.name] = fromCel(field.type, value, s.digits);
      setCel(a.doc, field.name, value);
    } catch {
      // Left as the client left it.
    }
  }
}

/**
 * The defaults an update proposes again: those reading a field (or a reference) the update
 * changed, the update neither sending nor changing the field itself, in the order of the fields
 * (one proposed again counts as changed for those after it). As Odoo's editable computed fields
 * and Frappe's `fetch_from`: a typed value stays until what it was proposed from changes.
 */
export function defaultsToProposeAgain(rules: CompiledRules, sent: Record<string, unknown>, before: Record<string, unknown>, after: Record<string, unknown>): Set<string> | undefined {
  let again: Set<string> | undefined;
  const changed = (name: string) => again?.has(name) || !sameValue(before[name], after[name]);
  for (const { field, dependsOn } of rules.defaults) {
    if (field.name in sent || changed(field.name)) continue;
    for (const name of dependsOn) {
      if (!changed(name)) continue;
      (again ??= new Set()).add(field.name);
      break;
    }
  }
  return again;
}

const sameValue = (x: unknown, y: unknown) => x === y || (typeof x === 'object' && typeof y === 'object' && JSON.stringify(x) === JSON.stringify(y));

/**
 * Sets each computed field of every line (`line` in scope), then of `doc`, and of its CEL view
 * (in dependency order, each seeing those before it). A field whose expression fails (a division
 * by zero) is a problem at its pointer (`/lines/3/amount`, `/total`).
 */
export function computeInto(rules: CompiledRules, doc: Record<string, unknown>, a: Activation, s: RuleScope): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  for (const { lines, computed } of rules.lineComputed) {
    const rows = doc[lines.name];
    if (!Array.isArray(rows)) continue;
    const celRows = a.doc[lines.name] as Record<string, unknown>[];
    // One activation for all the lines: a program does not keep it.
    const activation = { ...a, line: undefined as unknown };
    for (let i = 0; i < rows.length; i++) {
      const line = rows[i] as Record<string, unknown>;
      activation.line = celRows[i];
      for (const { field, program } of computed) {
        try {
          const value = program(activation);
          setCel(celRows[i], field.name, value);
          line[field.name] = fromCel(field.type, value, s.digits);
        } catch (e) {
          delete celRows[i][field.name];
          delete line[field.name];
          problems.push(computeProblem(`/${lines.name}/${i}/${field.name}`, `${lines.name}[${i}].${field.name}`, e, s));
        }
      }
    }
  }
  for (const { field, program } of rules.computed) {
    try {
      const value = program(a);
      setCel(a.doc, field.name, value);
      doc[field.name] = fromCel(field.type, value, s.digits);
    } catch (e) {
      delete a.doc[field.name];
      delete doc[field.name];
      problems.push(computeProblem(`/${field.name}`, field.name, e, s));
    }
  }
  return problems;
}

/** Does a rule hold? One that reads a field the document does not have (an optional date left empty) is not applied. */
function ruleHolds(program: (a: Record<string, unknown>) => unknown, a: Record<string, unknown>): boolean {
  try {
    return program(a) === true;
  } catch (e) {
    return isAbsentField(e);
  }
}

/** The validations the document (as CEL sees it) breaks, each with its pointer (a line's: `/lines/3/quantity`) and its message in the caller's language. */
export function brokenRules(rules: CompiledRules, dt: DocumentTypeDecl, a: Activation, s: RuleScope): ErrorDetail[] {
  if (!rules.validations.length) return [];
  const problems: ErrorDetail[] = [];
  for (const { program, index, each } of rules.validations) {
    const v = dt.validations![index];
    if (each === undefined) {
      if (!ruleHolds(program, a as unknown as Record<string, unknown>)) problems.push({ in: 'body', pointer: v.field ? `/${v.field}` : '', rule: 'validation', validation: index, message: v.message[s.lang] });
      continue;
    }
    const rows = (a.doc[each] ?? []) as Record<string, unknown>[];
    const activation = { ...a, line: undefined as unknown };
    for (let i = 0; i < rows.length; i++) {
      activation.line = rows[i];
      if (ruleHolds(program, activation)) continue;
      problems.push({ in: 'body', pointer: `/${each}/${i}${v.field ? `/${v.field}` : ''}`, rule: 'validation', validation: index, message: v.message[s.lang] });
    }
  }
  return problems;
}

/** Does a topic's rule hold of a stored document? One that cannot be evaluated does not. */
export function conditionHolds(rules: CompiledRules, index: number, dt: DocumentTypeDecl, doc: Record<string, unknown>, s: { digits: number; today: string }): boolean {
  try {
    return rules.conditions[index]({ doc: toCel(dt.fields, doc, s.digits, rules.shapes!.doc, rules.shapes), today: s.today }) === true;
  } catch {
    return false;
  }
}

/** The activation of a transition's expressions: the document as it is (and what it references), and the body sent. */
export function transitionScope(t: CompiledTransition, dt: DocumentTypeDecl, input: readonly LineFieldDecl[] | undefined, doc: Record<string, unknown>, body: Record<string, unknown>, s: RuleScope, refs?: Refs): Activation {
  const a: Activation = { doc: toCel(dt.fields, doc, s.digits, t.shapes.doc, t.shapes), today: s.today };
  if (refs) a.ref = celRefs(t.shapes, refs, s.digits);
  if (input && t.shapes.input) a.input = toCel(input, body, s.digits, t.shapes.input);
  return a;
}

/** Does the guard hold? An expression that cannot be evaluated does not. */
export function guardHolds(t: CompiledTransition, activation: Activation): boolean {
  if (!t.guard) return true;
  try {
    return t.guard(activation) === true;
  } catch {
    return false;
  }
}

/** Applies a transition's `set` to `doc`; a value that cannot be computed is a problem at its field. */
export function applySet(t: CompiledTransition, activation: Activation, doc: Record<string, unknown>, s: RuleScope): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  for (const { field, program } of t.set) {
    try {
      doc[field.name] = fromCel(field.type, program(activation), s.digits);
    } catch (e) {
      problems.push(computeProblem(`/${field.name}`, field.name, e, s));
    }
  }
  return problems;
}
