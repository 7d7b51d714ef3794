// JSON Schema (the OAS 3.1 dialect the served document uses) → fast-check arbitraries of values
// that validate against it. Covers the keywords the document uses: type (and type lists), enum,
// const, properties / required / additionalProperties, items, min/maxItems, min/maxLength,
// pattern, format (date, date-time, email, uri), minimum / maximum (and the exclusive forms),
// the host's `finite`, minProperties, $ref (into the document), allOf (merged), anyOf / oneOf.
// Unknown keywords are ignored; a schema it cannot satisfy falls back to something plausible,
// which at worst makes a "valid" case invalid (the oracle's universal checks still apply).
import fc from 'fast-check';

export type Schema = boolean | { [keyword: string]: unknown };
export type SchemaObject = { [keyword: string]: unknown };

export interface GenContext {
  /** Resolves a `$ref` of the document (e.g. `#/components/schemas/X`). */
  resolve(ref: string): Schema;
  /**
   * Domain knowledge that reaches deeper paths: ids of records that exist, URLs the address guard
   * accepts, topics of the catalogue. Return undefined to use the schema alone.
   */
  hint?(schema: SchemaObject, path: readonly string[]): fc.Arbitrary<unknown> | undefined;
}

const isObj = (v: unknown): v is SchemaObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Longest string or array generated when the schema allows more; keeps cases small and fast. */
const MAX_STRING = 80;
const MAX_ITEMS = 4;
const MAX_DEPTH = 8;

/** Follows `$ref`s and merges `allOf` into one schema object (shallow, enough for the document). */
export function flatten(schema: Schema, ctx: Pick<GenContext, 'resolve'>, seen = 0): SchemaObject {
  if (schema === true || schema === undefined) return {};
  if (schema === false) return { not: {} };
  let s: SchemaObject = schema;
  if (typeof s.$ref === 'string') {
    if (seen > 20) throw new Error(`$ref loop at ${s.$ref}`);
    const { $ref, ...rest } = s;
    s = { ...flatten(ctx.resolve($ref as string), ctx, seen + 1), ...rest };
  }
  if (Array.isArray(s.allOf)) {
    const { allOf, ...rest } = s;
    let merged: SchemaObject = flatten(rest, ctx, seen + 1);
    for (const part of allOf as Schema[]) merged = mergeSchemas(merged, flatten(part, ctx, seen + 1));
    s = merged;
  }
  return s;
}

function mergeSchemas(a: SchemaObject, b: SchemaObject): SchemaObject {
  const out: SchemaObject = { ...a, ...b };
  if (isObj(a.properties) && isObj(b.properties)) {
    const props: SchemaObject = { ...a.properties };
    for (const [k, v] of Object.entries(b.properties)) props[k] = isObj(props[k]) && isObj(v) ? mergeSchemas(props[k] as SchemaObject, v) : v;
    out.properties = props;
  }
  if (Array.isArray(a.required) || Array.isArray(b.required)) {
    out.required = [...new Set([...((a.required as string[]) ?? []), ...((b.required as string[]) ?? [])])];
  }
  return out;
}

export function typesOf(s: SchemaObject): string[] {
  if (typeof s.type === 'string') return [s.type];
  if (Array.isArray(s.type)) return s.type as string[];
  if (s.const !== undefined) return [jsonType(s.const)];
  if (Array.isArray(s.enum)) return [...new Set((s.enum as unknown[]).map(jsonType))];
  if (isObj(s.properties) || s.required || s.additionalProperties !== undefined || s.minProperties !== undefined) return ['object'];
  if (s.items !== undefined || s.minItems !== undefined || s.maxItems !== undefined) return ['array'];
  if (s.minLength !== undefined || s.maxLength !== undefined || s.pattern !== undefined || s.format !== undefined) return ['string'];
  if (s.minimum !== undefined || s.maximum !== undefined) return ['number'];
  return [];
}

export function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

/**
 * One code point from the whole range (controls, Arabic, emoji, RTL marks), lone surrogates
 * excepted. Shared and without an unmapper: fast-check's own 'binary' unit builds a map of all
 * 1.1M code points each time a string arbitrary is made, which made seeding slow.
 */
export const CODE_POINT = fc
  .oneof({ weight: 3, arbitrary: fc.integer({ min: 0, max: 0x7f }) }, { weight: 2, arbitrary: fc.integer({ min: 0x80, max: 0x10ffff }).filter((c) => c < 0xd800 || c > 0xdfff) })
  .map((c) => String.fromCodePoint(c));

const byPattern = new Map<string, fc.Arbitrary<string>>();
/** Strings matching a pattern; one arbitrary per pattern, as making one costs milliseconds. */
export function matching(pattern: string): fc.Arbitrary<string> {
  let arb = byPattern.get(pattern);
  if (!arb) byPattern.set(pattern, (arb = fc.stringMatching(new RegExp(pattern, 'u'), { size: 'xsmall' })));
  return arb;
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');
const DAY_MS = 86_400_000;
const dateArb = fc.integer({ min: Date.UTC(1970, 0, 1) / DAY_MS, max: Date.UTC(2199, 11, 31) / DAY_MS }).map((d) => {
  const t = new Date(d * DAY_MS);
  return `${pad(t.getUTCFullYear(), 4)}-${pad(t.getUTCMonth() + 1)}-${pad(t.getUTCDate())}`;
});
const dateTimeArb = fc
  .integer({ min: Date.UTC(1970, 0, 1), max: Date.UTC(2199, 11, 31) })
  .chain((ms) => fc.constantFrom(new Date(ms).toISOString(), new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z'), new Date(ms).toISOString().replace('Z', '+03:00')));

function stringArb(s: SchemaObject): fc.Arbitrary<string> {
  const minLength = typeof s.minLength === 'number' ? s.minLength : 0;
  const maxLength = typeof s.maxLength === 'number' ? s.maxLength : Infinity;
  const fits = (v: string) => {
    const n = [...v].length; // ajv counts code points
    return n >= minLength && n <= maxLength;
  };
  switch (s.format) {
    case 'date':
      return dateArb.filter(fits);
    case 'date-time':
      return dateTimeArb.filter(fits);
    case 'email':
      return fc.emailAddress().filter(fits);
    case 'uri':
    case 'url':
      return fc.webUrl().filter(fits);
  }
  if (typeof s.pattern === 'string') return matching(s.pattern).filter(fits);
  const max = Math.min(maxLength, Math.max(minLength, MAX_STRING));
  return fc.oneof(
    { weight: 3, arbitrary: fc.string({ minLength, maxLength: max, unit: 'grapheme-ascii' }) },
    // single code points from the whole range: Arabic, emoji, controls, RTL marks
    { weight: 2, arbitrary: fc.string({ minLength, maxLength: max, unit: CODE_POINT }) },
  ).filter(fits);
}

function numberArb(s: SchemaObject, integer: boolean): fc.Arbitrary<number> {
  let min = typeof s.minimum === 'number' ? s.minimum : -Number.MAX_VALUE;
  let max = typeof s.maximum === 'number' ? s.maximum : Number.MAX_VALUE;
  const exMin = typeof s.exclusiveMinimum === 'number' ? s.exclusiveMinimum : undefined;
  const exMax = typeof s.exclusiveMaximum === 'number' ? s.exclusiveMaximum : undefined;
  if (integer) {
    if (exMin !== undefined) min = Math.max(min, Math.floor(exMin) + 1);
    if (exMax !== undefined) max = Math.min(max, Math.ceil(exMax) - 1);
    return fc.integer({ min: Math.max(Math.ceil(min), Number.MIN_SAFE_INTEGER), max: Math.min(Math.floor(max), Number.MAX_SAFE_INTEGER) });
  }
  const base = fc.double({ min, max, noNaN: true, noDefaultInfinity: true, minExcluded: exMin !== undefined && exMin >= min, maxExcluded: exMax !== undefined && exMax <= max });
  return base.filter((v) => Number.isFinite(v) && (exMin === undefined || v > exMin) && (exMax === undefined || v < exMax));
}

/** Values that validate against `schema`. */
export function valueArb(schema: Schema, ctx: GenContext, path: readonly string[] = [], depth = 0): fc.Arbitrary<unknown> {
  const s = flatten(schema, ctx);
  const hinted = ctx.hint?.(s, path);
  if (hinted) return hinted;
  if (s.const !== undefined) return fc.constant(s.const);
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
  for (const kw of ['anyOf', 'oneOf'] as const) {
    if (Array.isArray(s[kw])) {
      const { [kw]: branches, ...rest } = s;
      return fc.oneof(...(branches as Schema[]).map((b) => valueArb(mergeSchemas(rest, flatten(b, ctx)), ctx, path, depth)));
    }
  }
  const types = typesOf(s);
  if (types.length === 0) return depth >= MAX_DEPTH ? fc.constant(null) : fc.jsonValue({ maxDepth: 2 });
  if (types.length > 1) return fc.oneof(...types.map((t) => valueArb({ ...s, type: t }, ctx, path, depth)));
  switch (types[0]) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
      return numberArb(s, true);
    case 'number':
      return numberArb(s, false);
    case 'string':
      return stringArb(s);
    case 'array': {
      const minLength = typeof s.minItems === 'number' ? s.minItems : 0;
      const maxLength = Math.max(minLength, Math.min(typeof s.maxItems === 'number' ? s.maxItems : MAX_ITEMS, MAX_ITEMS));
      if (depth >= MAX_DEPTH && minLength === 0) return fc.constant([]);
      const item = s.items === undefined ? fc.jsonValue({ maxDepth: 1 }) : valueArb(s.items as Schema, ctx, [...path, '*'], depth + 1);
      return fc.array(item, { minLength, maxLength });
    }
    case 'object':
      return objectArb(s, ctx, path, depth);
  }
  return fc.constant(null);
}

function objectArb(s: SchemaObject, ctx: GenContext, path: readonly string[], depth: number): fc.Arbitrary<unknown> {
  const props = isObj(s.properties) ? (s.properties as Record<string, Schema>) : {};
  const required = new Set(Array.isArray(s.required) ? (s.required as string[]) : []);
  const names = Object.keys(props);
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const name of names) model[name] = valueArb(props[name], ctx, [...path, name], depth + 1);
  // Required names the schema does not describe still have to be there.
  for (const name of required) if (!(name in model)) model[name] = fc.jsonValue({ maxDepth: 1 });
  let arb: fc.Arbitrary<Record<string, unknown>> = fc.record(model, { requiredKeys: [...required] }) as fc.Arbitrary<Record<string, unknown>>;
  const extra = s.additionalProperties;
  if (isObj(extra) && depth < MAX_DEPTH) {
    const value = valueArb(extra, ctx, [...path, '*'], depth + 1);
    const dict = fc.dictionary(fc.string({ minLength: 1, maxLength: 12, unit: 'grapheme-ascii' }).filter((k) => !(k in props) && k !== '__proto__'), value, { maxKeys: 3 });
    arb = fc.tuple(arb, dict).map(([a, b]) => ({ ...b, ...a }));
  } else if (names.length === 0 && extra === undefined && depth < 2) {
    // A free-form object (`{ type: 'object' }`): some JSON inside.
    arb = fc.dictionary(fc.string({ minLength: 1, maxLength: 8, unit: 'grapheme-ascii' }).filter((k) => k !== '__proto__'), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 });
  }
  const minProperties = typeof s.minProperties === 'number' ? s.minProperties : 0;
  const maxProperties = typeof s.maxProperties === 'number' ? s.maxProperties : Infinity;
  if (minProperties > required.size || maxProperties < Infinity) {
    arb = arb.filter((o) => Object.keys(o).length >= minProperties && Object.keys(o).length <= maxProperties);
  }
  return arb;
}
