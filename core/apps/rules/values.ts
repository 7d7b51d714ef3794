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

/** An object of declared fields as CEL sees it, built as `ctor` (the class its CEL type was registered with). */
export function toCel(fields: readonly Field[], obj: Record<string, unknown>, digits: number, ctor: new () => Record<string, unknown>, shapes?: CelShapes): Record<string, unknown> {
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
          out[f.name] = v.map((line) => toCel((f as FieldDecl).fields ?? [], line as Record<string, unknown>, digits, lineCtor));
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
