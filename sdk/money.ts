// Exact decimal arithmetic for amounts: numbers are read through their shortest decimal
// text (what JSON carried), multiplied as integers, and rounded half away from zero into the
// currency's minor units, so 1.005 × 1 is 1.01, not the 1.00 binary floating point gives.

const digitsOf = new Map<string, number>();

/** Minor-unit digits of an ISO 4217 currency (2 for USD, 3 for KWD, 0 for JPY). Memoised: Intl.NumberFormat is costly to build. */
export function minorDigits(currency: string): number {
  let d = digitsOf.get(currency);
  if (d === undefined) {
    d = new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
    digitsOf.set(currency, d);
  }
  return d;
}

/** A finite number as an integer scaled by 10^scale: `1.25` → `{ int: 125n, scale: 2 }`. */
function toScaled(n: number): { int: bigint; scale: number } {
  if (!Number.isFinite(n)) throw new RangeError(`not a finite amount: ${n}`);
  const [mant, expPart] = n.toExponential().split('e');
  const exp = Number(expPart);
  const [i, f = ''] = mant.replace('-', '').split('.');
  const digits = i + f;
  let scale = f.length - exp;
  let int = BigInt(digits);
  if (scale < 0) {
    int *= 10n ** BigInt(-scale);
    scale = 0;
  }
  return { int: n < 0 ? -int : int, scale };
}

/** Rounds a scaled integer to `digits` decimals, half away from zero. */
function roundScaled(int: bigint, scale: number, digits: number): bigint {
  if (scale <= digits) return int * 10n ** BigInt(digits - scale);
  const div = 10n ** BigInt(scale - digits);
  const q = int / div;
  const r = int % div;
  const twice = (r < 0n ? -r : r) * 2n;
  return twice >= div ? q + (int < 0n ? -1n : 1n) : q;
}

/** `quantity × unitPrice` in minor units, rounded once. */
export function multiplyToMinor(quantity: number, unitPrice: number, digits: number): bigint {
  const a = toScaled(quantity);
  const b = toScaled(unitPrice);
  return roundScaled(a.int * b.int, a.scale + b.scale, digits);
}

/** An amount in minor units. */
export function toMinor(amount: number, digits: number): bigint {
  const a = toScaled(amount);
  return roundScaled(a.int, a.scale, digits);
}

/** Minor units back to a JSON number: `12345n, 2` → `123.45`. */
export function fromMinor(minor: bigint, digits: number): number {
  return Number(minor) / 10 ** digits;
}

/** Minor units as exact decimal text, every minor digit written: `1128125n, 2` → `11281.25`, `-5n, 2` → `-0.05`. */
export function minorText(minor: bigint, digits: number): string {
  const sign = minor < 0n ? '-' : '';
  const abs = (minor < 0n ? -minor : minor).toString().padStart(digits + 1, '0');
  return digits === 0 ? `${sign}${abs}` : `${sign}${abs.slice(0, -digits)}.${abs.slice(-digits)}`;
}

/** An amount rounded to the currency's minor units. */
export const roundMoney = (amount: number, digits: number): number => fromMinor(toMinor(amount, digits), digits);

/**
 * `amount × part ÷ whole` in minor units, rounded half away from zero once: a month's pay for the
 * days of it worked (`prorate(6200, 16, 31, 2)` is 3200). `part` and `whole` are whole counts,
 * `whole` above zero.
 */
export function prorate(amount: number, part: number, whole: number, digits: number): number {
  if (!Number.isSafeInteger(part) || part < 0 || !Number.isSafeInteger(whole) || whole <= 0) throw new RangeError(`not a part of a whole: ${part} of ${whole}`);
  const num = toMinor(amount, digits) * BigInt(part);
  const den = BigInt(whole);
  const q = num / den;
  const r = num % den;
  return fromMinor((r < 0n ? -r : r) * 2n >= den ? q + (num < 0n ? -1n : 1n) : q, digits);
}
