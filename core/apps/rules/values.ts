// Between stored documents and CEL values. Money enters an expression as an integer in the
// company currency's minor units (1,234.50 SAR is 123450) and a money result is read back from
// minor units, so sums and rates are exact; integers are CEL ints (bigint), numbers doubles.
// An amount, number or integer the document does not have counts as zero, as on a paper form,
// and `has(doc.field)` still tells it was left out; any other absent field is absent.
import type { FieldDecl, LineFieldDecl } from '../../../manifests/manifest.schema.ts';
import { timesRound } from './decimal.ts';
import type { CelShapes } from './environment.ts';
import { UNSET } from './presence.ts';

type Field = FieldDecl | LineFieldDecl;

const SCALE = [1, 10, 100, 1000, 10_000];

/** The minor units of an amount: `toMinor(1234.5, 2)` is 123450n. */
export function toMinor(amount: number, digits: number): bigint {
  // An amount with no more decimals than the currency has (nearly always) scales within a hair
  // of an integer: that integer is exact. Anything else is rounded on its decimal text.
  const x = amount * (SCALE[digits] ?? 10 ** digits);
  const r = Math.round(x);
  if (Math.abs(x - r) < 1e-6 && Number.isSafeInteger(r)) return BigInt(r);
  return timesRound(10n ** BigInt(digits), amount);
}

/** A type's fields (those of its CEL view) converted by a function written for them: what toCel runs. */
type Converter = (obj: Record<string, unknown>, digits: number) => Record<string, unknown>;
const converters = new WeakMap<readonly Field[], Map<new () => Record<string, unknown>, Converter>>();

/** An object of declared fields as CEL sees it, built as `ctor` (the class its CEL type was registered with). */
export function toCel(fields: readonly Field[], obj: Record<string, unknown>, digits: number, ctor: new () => Record<string, unknown>, shapes?: CelShapes): Record<string, unknown> {
  let byClass = converters.get(fields);
  if (!byClass) converters.set(fields, (byClass = new Map()));
  let convert = byClass.get(ctor);
  if (!convert) byClass.set(ctor, (convert = converter(fields, ctor, shapes)));
  return convert(obj, digits);
}

/**
 * The conversion of `fields` as straight-line code, field by field as `toCelEach` does it (one
 * function per view, rather than one loop over every type's fields, runs in half the time). Field
 * names are written as JSON string literals, classes and helpers passed in. (The host generates
 * code already: ajv's validators and the responses' serializers are made the same way.)
 */
function converter(fields: readonly Field[], ctor: new () => Record<string, unknown>, shapes?: CelShapes): Converter {
  const consts: unknown[] = [ctor, toMinor, UNSET];
  const code = ['const out = new k0();', 'let unset, v;'];
  for (const f of fields) {
    const k = JSON.stringify(f.name);
    const absent = `{ out[${k}] = ${f.type === 'number' ? '0' : '0n'}; (unset ??= []).push(${k}); }`;
    switch (f.type) {
      case 'money':
        code.push(`v = obj[${k}]; if (typeof v === "number") out[${k}] = k1(v, digits); else ${absent}`);
        break;
      case 'integer':
        code.push(`v = obj[${k}]; if (typeof v === "number") out[${k}] = BigInt(v); else ${absent}`);
        break;
      case 'number':
        code.push(`v = obj[${k}]; if (typeof v === "number") out[${k}] = v; else ${absent}`);
        break;
      case 'lines': {
        const lineCtor = shapes?.lines.get(f.name);
        // Without its class a line cannot be built (as toCelEach, it fails only when there are lines).
        const line = lineCtor ? converter((f as FieldDecl).fields ?? [], lineCtor) : () => { throw new TypeError(`no class for the lines of ${f.name}`); };
        const at = consts.push(line) - 1;
        code.push(`v = obj[${k}]; if (Array.isArray(v)) { const l = new Array(v.length); for (let i = 0; i < v.length; i++) l[i] = k${at}(v[i], digits); out[${k}] = l; } else out[${k}] = [];`);
        break;
      }
      default:
        code.push(`v = obj[${k}]; if (v !== undefined && v !== null) out[${k}] = v;`);
    }
  }
  code.push('if (unset) out[k2] = unset;', 'return out;');
  const names = consts.map((_, i) => `k${i}`);
  return new Function(...names, `return function toCel(obj, digits) {\n${code.join('\n')}\n};`)(...consts) as Converter;
}

/** The same conversion, a loop over the fields: what the written functions are held to (values.test.ts). */
export function toCelEach(fields: readonly Field[], obj: Record<string, unknown>, digits: number, ctor: new () => Record<string, unknown>, shapes?: CelShapes): Record<string, unknown> {
  const out = new ctor();
  let unset: string[] | undefined;
  for (const f of fields) {
    const v = obj[f.name];
    switch (f.type) {
      case 'money':
      case 'integer':
      case 'number':
        if (typeof v === 'number') out[f.name] = f.type === 'money' ? toMinor(v, digits) : f.type === 'integer' ? BigInt(v) : v;
        else {
          out[f.name] = f.type === 'number' ? 0 : 0n;
          (unset ??= []).push(f.name);
        }
        break;
      case 'lines':
        if (Array.isArray(v)) {
          const lineCtor = shapes!.lines.get(f.name)!;
          out[f.name] = v.map((line) => toCelEach((f as FieldDecl).fields ?? [], line as Record<string, unknown>, digits, lineCtor));
        } else out[f.name] = [];
        break;
      default:
        if (v !== undefined && v !== null) out[f.name] = v;
    }
  }
  if (unset) (out as Record<symbol, unknown>)[UNSET] = unset;
  return out;
}

/** A CEL result as the stored value of a field of type `type`. */
export function fromCel(type: Field['type'], value: unknown, digits: number): unknown {
  if (typeof value === 'bigint') return type === 'money' ? Number(value) / 10 ** digits : Number(value);
  return value;
}

/** The CEL result types a field of each type accepts (a number field takes an int too). */
export const RESULT_TYPES: Record<Field['type'], readonly string[]> = {
  money: ['int'],
  integer: ['int'],
  number: ['double', 'int'],
  boolean: ['bool'],
  string: ['string'],
  date: ['string'],
  enum: ['string'],
  reference: ['string'],
  lines: [],
};
