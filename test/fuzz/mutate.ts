// Mutations of a valid JSON body, guided by its schema: a wrong type, a missing required field,
// an unknown field, numbers out of range (as raw JSON text: 1e400, -0, 2^53+1, …), very long
// strings, nested values, too many items. Each yields the raw text sent; whether the result
// still validates is decided afterwards by the oracle's ajv, not guessed here.
import fc from 'fast-check';
import { flatten, jsonType, typesOf, type GenContext, type Schema, type SchemaObject } from './schema-arbitrary.ts';

export interface Location {
  /** JSON pointer tokens from the body root. */
  at: string[];
  schema: SchemaObject;
  value: unknown;
}

/** Every place in `value` with the schema that governs it. */
export function locations(value: unknown, schema: Schema, ctx: Pick<GenContext, 'resolve'>, at: string[] = [], out: Location[] = []): Location[] {
  const s = flatten(schema, ctx);
  out.push({ at, schema: s, value });
  if (Array.isArray(value)) {
    value.forEach((v, i) => locations(v, (s.items as Schema) ?? true, ctx, [...at, String(i)], out));
  } else if (value && typeof value === 'object') {
    const props = (s.properties ?? {}) as Record<string, Schema>;
    for (const [k, v] of Object.entries(value)) {
      const sub = props[k] ?? (typeof s.additionalProperties === 'object' ? (s.additionalProperties as Schema) : true);
      locations(v, sub, ctx, [...at, k], out);
    }
  }
  return out;
}

const MARK = '\u0000__fuzz_raw__\u0000';

/** `value` with the thing at `at` replaced (or removed, for `undefined`). */
export function setAt(value: unknown, at: string[], replacement: unknown): unknown {
  if (at.length === 0) return replacement;
  const copy: unknown = Array.isArray(value) ? [...value] : { ...(value as object) };
  const [head, ...rest] = at;
  const c = copy as Record<string, unknown>;
  if (rest.length === 0) {
    if (replacement === undefined) {
      if (Array.isArray(copy)) copy.splice(Number(head), 1);
      else delete c[head];
    } else c[head] = replacement;
  } else c[head] = setAt(c[head], rest, replacement);
  return copy;
}

/** JSON text of `value` with the thing at `at` replaced by raw text (which may be no valid JS value, e.g. 1e400). */
export function withRaw(value: unknown, at: string[], raw: string): string {
  return JSON.stringify(setAt(value, at, MARK)).replace(JSON.stringify(MARK), raw);
}

const SAMPLE_OF_TYPE: Record<string, fc.Arbitrary<unknown>> = {
  string: fc.constantFrom('', 'x', '0', 'true', 'null', '٣', '2026-01-15'),
  number: fc.constantFrom(1.5, -1, 0, 1e21),
  integer: fc.constantFrom(0, 1, -7, 42),
  boolean: fc.boolean(),
  null: fc.constant(null),
  array: fc.constantFrom([], [1], ['a', null], [{}]),
  object: fc.constantFrom({}, { a: 1 }, { id: 'x' }),
};

function wrongTypeArb(s: SchemaObject): fc.Arbitrary<unknown> | undefined {
  const allowed = typesOf(s);
  if (allowed.length === 0) return undefined;
  const wrong = Object.keys(SAMPLE_OF_TYPE).filter((t) => !allowed.includes(t) && !(t === 'integer' && allowed.includes('number')));
  if (wrong.length === 0) return undefined;
  return fc.constantFrom(...wrong).chain((t) => SAMPLE_OF_TYPE[t]).filter((v) => !allowed.includes(jsonType(v)) && !(jsonType(v) === 'integer' && allowed.includes('number')));
}

const NUMBER_TOKENS = ['1e400', '-1e400', '-0', '-0.0', '1e308', '-1e308', '9007199254740993', '1e-400', '4.9e-324', '1E+2', '0.1', '123456789012345678901234567890', '1e15', '1000000000000001'];

function nested(depth: number, kind: 'array' | 'object'): string {
  return kind === 'array' ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

/**
 * Lone surrogates (half of a UTF-16 pair): high and low, alone, at either end, in the middle, two
 * halves in the wrong order. JSON carries them only escaped (`"\udfff"`); UTF-8 cannot.
 */
export const LONE_SURROGATES = ['\ud800', '\udfff', 'a\udfffb', 'x\ud83d', '\ude00y', '\udc00\ud800'];

/** `text` with `lone` put in its middle. */
const withLone = (text: string, lone: string) => text.slice(0, text.length >> 1) + lone + text.slice(text.length >> 1);
/** JSON.stringify escapes a lone surrogate in lower case; a client may write capitals. */
const upperEscapes = (json: string) => json.replace(/\\u(d[89a-f][0-9a-f]{2})/g, (_m, hex: string) => `\\u${hex.toUpperCase()}`);

/** A lone surrogate in a string value (in place) or in a key of an object. */
export interface LoneSurrogateMutation {
  label: string;
  payload: string;
  /** The JSON pointer the server must name. */
  pointer: string;
}

/** Every string of `value`, and a new key in every object, with a lone surrogate: what a body can carry that one database stores and the other refuses. */
export function loneSurrogateMutations(value: unknown, schema: Schema, ctx: Pick<GenContext, 'resolve'>, lone: string, upper = false): LoneSurrogateMutation[] {
  const esc = (k: string) => k.replace(/~/g, '~0').replace(/\//g, '~1');
  const ptr = (at: string[]) => at.map((k) => `/${esc(k)}`).join('');
  const show = JSON.stringify(lone);
  const out: LoneSurrogateMutation[] = [];
  for (const l of locations(value, schema, ctx)) {
    if (typeof l.value === 'string') {
      const text = JSON.stringify(setAt(value, l.at, withLone(l.value, lone)));
      out.push({ label: `body.loneSurrogate ${ptr(l.at) || '/'} ${show}${upper ? ' (capitals)' : ''}`, payload: upper ? upperEscapes(text) : text, pointer: ptr(l.at) });
    } else if (l.value && typeof l.value === 'object' && !Array.isArray(l.value)) {
      const key = `k${lone}`;
      const text = withRaw(value, l.at, `{${JSON.stringify(key)}:"v"${Object.keys(l.value).length ? `,${JSON.stringify(l.value).slice(1)}` : '}'}`);
      out.push({ label: `body.loneSurrogateKey ${ptr(l.at) || '/'} ${show}${upper ? ' (capitals)' : ''}`, payload: upper ? upperEscapes(text) : text, pointer: `${ptr(l.at)}/${esc(key)}` });
    }
  }
  return out;
}

/** Raw JSON texts of mutated bodies, each with the mutation's name. */
export function bodyMutationArb(value: unknown, schema: Schema, ctx: Pick<GenContext, 'resolve'>, maxDepth = 64): fc.Arbitrary<{ label: string; payload: string }> {
  const locs = locations(value, schema, ctx);
  const ptr = (at: string[]) => `/${at.join('/')}`;
  const options: fc.Arbitrary<{ label: string; payload: string }>[] = [];

  const typed = locs.map((l) => ({ l, arb: wrongTypeArb(l.schema) })).filter((x) => x.arb);
  if (typed.length) {
    options.push(fc.constantFrom(...typed).chain(({ l, arb }) => arb!.map((v) => ({ label: `body.wrongType ${ptr(l.at)}`, payload: JSON.stringify(setAt(value, l.at, v)) }))));
  }
  const withRequired = locs.filter((l) => Array.isArray(l.schema.required) && l.value && typeof l.value === 'object' && !Array.isArray(l.value) && (l.schema.required as string[]).some((k) => k in (l.value as object)));
  if (withRequired.length) {
    options.push(
      fc.constantFrom(...withRequired).chain((l) =>
        fc.constantFrom(...(l.schema.required as string[]).filter((k) => k in (l.value as object))).map((k) => ({ label: `body.missingRequired ${ptr([...l.at, k])}`, payload: JSON.stringify(setAt(value, [...l.at, k], undefined)) })),
      ),
    );
  }
  const objects = locs.filter((l) => l.value && typeof l.value === 'object' && !Array.isArray(l.value));
  if (objects.length) {
    const key = fc.oneof(fc.string({ minLength: 1, maxLength: 10, unit: 'grapheme-ascii' }), fc.constantFrom('__proto__', 'constructor', 'prototype', '', 'id', 'createdAt', 'state', 'companyId', ' name'));
    options.push(
      fc.tuple(fc.constantFrom(...objects), key, fc.jsonValue({ maxDepth: 1 })).map(([l, k, v]) => {
        const text = JSON.stringify(l.value);
        const raw = `{${JSON.stringify(k)}:${JSON.stringify(v ?? null)}${text.length > 2 ? `,${text.slice(1)}` : '}'}`;
        return { label: `body.unknownField ${ptr([...l.at, k])}`, payload: withRaw(value, l.at, raw) };
      }),
    );
  }
  const numbers = locs.filter((l) => typeof l.value === 'number');
  if (numbers.length) {
    options.push(
      fc.tuple(fc.constantFrom(...numbers), fc.oneof(fc.constantFrom(...NUMBER_TOKENS), fc.constantFrom('min-1', 'max+1'))).map(([l, tok]) => {
        let raw = tok;
        if (tok === 'min-1') raw = typeof l.schema.minimum === 'number' ? String(l.schema.minimum - 1) : '-1e400';
        if (tok === 'max+1') raw = typeof l.schema.maximum === 'number' ? String(l.schema.maximum + 1) : '1e400';
        return { label: `body.outOfRange ${ptr(l.at)} = ${raw}`, payload: withRaw(value, l.at, raw) };
      }),
    );
  }
  const strings = locs.filter((l) => typeof l.value === 'string');
  if (strings.length) {
    options.push(
      fc.tuple(fc.constantFrom(...strings), fc.constantFrom<'max+1' | number>('max+1', 10_000, 200_000), fc.constantFrom('x', 'ع', '😀', '\u202e', '\\', '"')).map(([l, n, ch]) => {
        const len: number = n === 'max+1' ? (typeof l.schema.maxLength === 'number' ? l.schema.maxLength + 1 : 70_000) : n;
        return { label: `body.longString ${ptr(l.at)} (${len} × ${JSON.stringify(ch)})`, payload: JSON.stringify(setAt(value, l.at, ch.repeat(len))) };
      }),
    );
  }
  if (strings.length || objects.length) {
    options.push(
      fc.tuple(fc.constantFrom(...LONE_SURROGATES), fc.boolean(), fc.nat()).map(([lone, upper, i]) => {
        const all = loneSurrogateMutations(value, schema, ctx, lone, upper);
        const m = all[i % all.length];
        return { label: m.label, payload: m.payload };
      }),
    );
  }
  const arrays = locs.filter((l) => Array.isArray(l.value) && (l.value as unknown[]).length > 0);
  if (arrays.length) {
    options.push(
      fc.tuple(fc.constantFrom(...arrays), fc.constantFrom<'max+1' | number>('max+1', 5000)).map(([l, n]) => {
        const arr = l.value as unknown[];
        const len: number = n === 'max+1' ? (typeof l.schema.maxItems === 'number' ? l.schema.maxItems + 1 : 2000) : n;
        return { label: `body.manyItems ${ptr(l.at)} (${len})`, payload: JSON.stringify(setAt(value, l.at, Array.from({ length: len }, (_, i) => arr[i % arr.length]))) };
      }),
    );
  }
  options.push(
    fc.tuple(fc.constantFrom(...locs), fc.integer({ min: 2, max: maxDepth }), fc.constantFrom('array' as const, 'object' as const)).map(([l, d, kind]) => ({
      label: `body.deepNesting ${ptr(l.at)} (${d} ${kind}s)`,
      payload: withRaw(value, l.at, nested(d, kind)),
    })),
  );
  return fc.oneof(...options);
}

/** Texts that are not JSON, derived from a valid one. */
export function malformedJsonArb(text: string): fc.Arbitrary<{ label: string; payload: string }> {
  const cut = text.length > 1 ? fc.integer({ min: 1, max: text.length - 1 }).map((i) => ({ label: `json.truncated at ${i}`, payload: text.slice(0, i) })) : fc.constant({ label: 'json.truncated', payload: '{' });
  return fc.oneof(
    cut,
    fc.constantFrom(
      { label: 'json.trailingGarbage', payload: `${text}x` },
      { label: 'json.trailingComma', payload: text.replace(/}$/, ',}') },
      { label: 'json.singleQuotes', payload: text.replace(/"/g, "'") },
      { label: 'json.NaN', payload: '{"a":NaN}' },
      { label: 'json.comment', payload: `/* c */${text}` },
      { label: 'json.loneQuote', payload: '"' },
      { label: 'json.controlChar', payload: '{"a":"\u0001\n"}' },
      { label: 'json.badEscape', payload: '{"a":"\\x41"}' },
      { label: 'json.loneSurrogateEscape', payload: '{"a":"\\ud800"}' },
      { label: 'json.twoValues', payload: `${text} ${text}` },
      { label: 'json.protoKey', payload: '{"__proto__":{"polluted":true}}' },
      { label: 'json.constructorPrototype', payload: '{"constructor":{"prototype":{"polluted":true}}}' },
      { label: 'json.whitespaceOnly', payload: '   ' },
      { label: 'json.utf16', payload: Buffer.from(text, 'utf16le').toString('latin1') },
    ),
  );
}
