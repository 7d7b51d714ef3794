// Running a document type's compiled rules on one write. Each function answers the problems it
// found (as VALIDATION_ERROR details, pointer first) so that the caller lists them all at once.
import type { DocumentTypeDecl, FieldDecl, LineFieldDecl } from '../../../manifests/manifest.schema.ts';
import type { ErrorDetail } from '../../kernel/errors/diwan-error.ts';
import type { Lang, Translator } from '../../kernel/i18n/i18n.ts';
import type { CompiledRules, CompiledTransition } from './document-rules.ts';
import { fromCel, toCel } from './values.ts';

/** What every evaluation needs: the currency's minor digits, and the caller's language. */
export interface RuleScope {
  digits: number;
  lang: Lang;
  tr: Translator;
}

const summary = (e: unknown) => (e as { summary?: string }).summary ?? String((e as Error)?.message ?? e);

/** A rule reading a field the document does not have (an optional date left empty) is not broken. */
const isAbsentField = (e: unknown) => (e as { code?: string }).code === 'no_such_key';

/** The document as CEL sees it, converted once per write and kept in step by `computeInto`. */
export const celDocument = (rules: CompiledRules, dt: DocumentTypeDecl, doc: Record<string, unknown>, s: RuleScope) => toCel(dt.fields, doc, s.digits, rules.shapes!.doc, rules.shapes);

/**
 * Sets each computed field of `doc` and of its CEL view `cel` (in dependency order, each seeing those before it). A field
 * whose expression fails (a division by zero) is a problem at its pointer.
 */
export function computeInto(rules: CompiledRules, fields: readonly FieldDecl[], doc: Record<string, unknown>, cel: Record<string, unknown>, s: RuleScope): ErrorDetail[] {
  if (!rules.computed.length) return [];
  const problems: ErrorDetail[] = [];
  for (const { field, program } of rules.computed) {
    try {
      const value = program({ doc: cel });
      cel[field.name] = value;
      doc[field.name] = fromCel(field.type, value, s.digits);
    } catch (e) {
      delete cel[field.name];
      delete doc[field.name];
      problems.push({ in: 'body', pointer: `/${field.name}`, rule: 'compute', computed: true, error: summary(e), message: s.tr.t(s.lang, 'rule.compute', { field: field.name }) });
    }
  }
  return problems;
}

/** The validations the document (`cel`, as CEL sees it) breaks, each with its pointer and its message in the caller's language. */
export function brokenRules(rules: CompiledRules, dt: DocumentTypeDecl, cel: Record<string, unknown>, s: RuleScope): ErrorDetail[] {
  if (!rules.validations.length) return [];
  const activation = { doc: cel };
  const problems: ErrorDetail[] = [];
  for (const { program, index } of rules.validations) {
    const v = dt.validations![index];
    let holds: boolean;
    try {
      holds = program(activation) === true;
    } catch (e) {
      if (isAbsentField(e)) continue;
      holds = false;
    }
    if (!holds) problems.push({ in: 'body', pointer: v.field ? `/${v.field}` : '', rule: 'validation', validation: index, message: v.message[s.lang] });
  }
  return problems;
}

/** The activation of a transition's expressions: the document as it is, and the body sent. */
export function transitionScope(t: CompiledTransition, dt: DocumentTypeDecl, input: readonly LineFieldDecl[] | undefined, doc: Record<string, unknown>, body: Record<string, unknown>, s: RuleScope) {
  const doc_ = toCel(dt.fields, doc, s.digits, t.shapes.doc, t.shapes);
  return input && t.shapes.input ? { doc: doc_, input: toCel(input, body, s.digits, t.shapes.input) } : { doc: doc_ };
}

/** Does the guard hold? An expression that cannot be evaluated does not. */
export function guardHolds(t: CompiledTransition, activation: Record<string, unknown>): boolean {
  if (!t.guard) return true;
  try {
    return t.guard(activation) === true;
  } catch {
    return false;
  }
}

/** Applies a transition's `set` to `doc`; a value that cannot be computed is a problem at its field. */
export function applySet(t: CompiledTransition, activation: Record<string, unknown>, doc: Record<string, unknown>, s: RuleScope): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  for (const { field, program } of t.set) {
    try {
      doc[field.name] = fromCel(field.type, program(activation), s.digits);
    } catch (e) {
      problems.push({ in: 'body', pointer: `/${field.name}`, rule: 'compute', computed: true, error: summary(e), message: s.tr.t(s.lang, 'rule.compute', { field: field.name }) });
    }
  }
  return problems;
}
