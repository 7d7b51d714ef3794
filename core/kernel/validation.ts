// ajv, compiled once per schema. Bodies are validated strictly (no coercion, unknown fields
// refused); query strings and path parameters are coerced from text. Errors become the
// envelope's `details`: the JSON pointer of the field, the rule, its limit, a message in the
// caller's language.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { Lang, Translator } from './i18n/i18n.ts';
import { DiwanError, type ErrorDetail } from './errors/diwan-error.ts';

// ajv-formats ships CJS with a default export; under ESM interop it may arrive wrapped.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (a: Ajv) => Ajv;

export type RequestPart = 'body' | 'query' | 'params' | 'headers';

function makeAjv(coerce: boolean): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    coerceTypes: coerce ? 'array' : false,
    useDefaults: true,
    removeAdditional: false,
    strict: false,
  });
  addFormats(ajv);
  // JSON.parse turns 1e400 into Infinity, which `type: number` lets through.
  ajv.addKeyword({
    keyword: 'finite',
    type: 'number',
    schemaType: 'boolean',
    validate: (on: boolean, data: number) => !on || Number.isFinite(data),
    errors: false,
  });
  return ajv;
}

export const bodyAjv = makeAjv(false);
export const queryAjv = makeAjv(true);

export const compileFor = (part: RequestPart, schema: object): ValidateFunction =>
  (part === 'body' ? bodyAjv : queryAjv).compile(schema);

/** `/lines/0/quantity` → `lines[0].quantity`, the name a person reads in a message. */
export function fieldName(pointer: string, part: RequestPart): string {
  const segs = pointer.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (segs.length === 0) return part === 'body' ? '' : part;
  return segs.reduce((acc, s) => (/^\d+$/.test(s) ? `${acc}[${s}]` : acc ? `${acc}.${s}` : s), '');
}

export function ajvDetails(errors: ErrorObject[], part: RequestPart, lang: Lang, tr: Translator): ErrorDetail[] {
  const out: ErrorDetail[] = [];
  const seen = new Set<string>();
  for (const e of errors) {
    const p = e.params as Record<string, unknown>;
    let pointer = e.instancePath;
    if (e.keyword === 'required') pointer += `/${p.missingProperty}`;
    if (e.keyword === 'additionalProperties') pointer += `/${p.additionalProperty}`;
    // `if`/`anyOf` wrappers repeat what their branches already said.
    if (['if', 'anyOf', 'oneOf'].includes(e.keyword)) continue;
    const key = `${pointer}|${e.keyword}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const limit = p.limit ?? p.allowedValues ?? p.format ?? p.type ?? p.allowedValue;
    const name = fieldName(pointer, part) || tr.t(lang, 'body');
    const known = tr.hasKey('en', `rule.${e.keyword}`, 'core') || tr.hasKey('en', `rule.${e.keyword}_other`, 'core');
    const message = tr.t(lang, known ? `rule.${e.keyword}` : 'rule.other', {
      field: name,
      limit,
      count: typeof p.limit === 'number' ? p.limit : undefined,
      type: p.type,
      format: p.format,
      values: Array.isArray(p.allowedValues) ? p.allowedValues.join(', ') : p.allowedValue,
    });
    const detail: ErrorDetail = { in: part, pointer, rule: e.keyword, message };
    if (limit !== undefined) detail.limit = limit;
    out.push(detail);
  }
  return out;
}

// Node 20 has String.prototype.isWellFormed (ES2024); the project's lib is ES2022.
const wellFormed = (s: string) => (s as string & { isWellFormed(): boolean }).isWellFormed();

/** Whether both databases store the string: no U+0000, no lone surrogate (the walk's fast test). */
const storable = (s: string) => !s.includes('\0') && wellFormed(s);

/** Each thing that keeps a string out of some database: a string may hold both, and each is named. */
function unstorableRules(s: string): ('nul' | 'surrogate')[] {
  const rules: ('nul' | 'surrogate')[] = [];
  if (s.includes('\0')) rules.push('nul');
  if (!wellFormed(s)) rules.push('surrogate');
  return rules;
}

/**
 * A detail for each string (or object key) in `value` that holds U+0000 or a lone surrogate.
 * PostgreSQL stores neither (no text holds U+0000; a document's JSON with `\udfff` fails its
 * jsonb indexes), while SQLite takes both: the API refuses them on every database alike, as it
 * refuses any other bad value. A key is reported at its own pointer and not entered.
 */
export function unstorableDetails(value: unknown, part: RequestPart, lang: Lang, tr: Translator): ErrorDetail[] {
  // Every request passes through here: look first, build pointers only when something is found.
  if (!hasUnstorable(value)) return [];
  const out: ErrorDetail[] = [];
  const esc = (k: string) => k.replace(/~/g, '~0').replace(/\//g, '~1');
  const found = (pointer: string, rule: 'nul' | 'surrogate') =>
    out.push({ in: part, pointer, rule, message: tr.t(lang, `rule.${rule}`, { field: fieldName(pointer, part) || tr.t(lang, 'body') }) });
  const stack: [unknown, string][] = [[value, '']];
  while (stack.length) {
    const [v, pointer] = stack.pop()!;
    if (typeof v === 'string') {
      for (const rule of unstorableRules(v)) found(pointer, rule);
    } else if (Array.isArray(v)) v.forEach((x, i) => stack.push([x, `${pointer}/${i}`]));
    else if (v !== null && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        const rules = unstorableRules(k);
        for (const rule of rules) found(`${pointer}/${esc(k)}`, rule);
        if (!rules.length) stack.push([x, `${pointer}/${esc(k)}`]);
      }
    }
  }
  return out;
}

/** Whether any string or key in `value` is unstorable (a stack, not recursion: bodies may nest deeply). */
function hasUnstorable(value: unknown): boolean {
  const stack = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (!storable(v)) return true;
    } else if (Array.isArray(v)) for (const x of v) stack.push(x);
    else if (v !== null && typeof v === 'object') {
      for (const k of Object.keys(v)) {
        if (!storable(k)) return true;
        stack.push((v as Record<string, unknown>)[k]);
      }
    }
  }
  return false;
}

/** One VALIDATION_ERROR carrying every problem; its message repeats the first. */
export function validationError(details: ErrorDetail[]): DiwanError {
  return new DiwanError('VALIDATION_ERROR', details, { summary: String(details[0]?.message ?? '') });
}

/**
 * Validates and returns the (coerced, defaulted) value, or throws VALIDATION_ERROR with every
 * problem, unstorable text included: what app code writes (`ctx.docs`) never passed the pipeline.
 */
export function check<T>(validate: ValidateFunction, value: unknown, part: RequestPart, lang: Lang, tr: Translator): T {
  const details = validate(value) ? [] : ajvDetails(validate.errors ?? [], part, lang, tr);
  details.push(...unstorableDetails(value, part, lang, tr));
  if (details.length) throw validationError(details);
  return value as T;
}
