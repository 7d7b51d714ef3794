// Exact arithmetic for the rules' money helpers: a double is read through its shortest decimal
// text (what JSON carried, `0.15` not 0.1499…), multiplied as integers and rounded half away
// from zero, so `percent(1000, 15.5)` is 155 and not whatever binary floating point gives.
// (The SDK has the same helpers for apps; the core may not import the SDK.)

const POW10 = [1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8];

/** A finite double as an integer scaled by 10^scale: `1.25` → `{ int: 125n, scale: 2 }`. */
export function scaled(n: number): { int: bigint; scale: number } {
  if (!Number.isFinite(n)) throw new RangeError(`not a finite number: ${n}`);
  // Nearly always a few decimals: the fewest k for which round(n·10^k) / 10^k is n again gives
  // the digits of n's shortest text. Below 2^50 no other k-decimal value is as near to n, so the
  // answer is the text's, without making the text.
  if (Math.abs(n) < 1e14) {
    for (let k = 0; k < POW10.length; k++) {
      const int = Math.round(n * POW10[k]);
      if (Math.abs(int) >= 2 ** 50) break;
      if (int / POW10[k] === n) return { int: BigInt(int), scale: k };
    }
  }
  return scaledByText(n);
}

/** `scaled` read from the shortest decimal text, for any finite double. */
export function scaledByText(n: number): { int: bigint; scale: number } {
  const [mant, expPart] = n.toExponential().split('e');
  const [i, f = ''] = mant.replace('-', '').split('.');
  let scale = f.length - Number(expPart);
  let int = BigInt(i + f);
  if (scale < 0) {
    int *= 10n ** BigInt(-scale);
    scale = 0;
  }
  return { int: n < 0 ? -int : int, scale };
}

/** `num ÷ den`, rounded half away from zero. */
export function divRound(num: bigint, den: bigint): bigint {
  if (den === 0n) throw new RangeError('division by zero');
  if (den < 0n) return divRound(-num, -den);
  const q = num / den;
  const r = num % den;
  const twice = (r < 0n ? -r : r) * 2n;
  return twice >= den ? q + (num < 0n ? -1n : 1n) : q;
}

/** A double rounded to an integer, half away from zero (2.5 → 3, −2.5 → −3). */
export function roundHalfAway(x: number): bigint {
  const s = scaled(x);
  return divRound(s.int, 10n ** BigInt(s.scale));
}

/** `amount × factor ÷ divisor`, exactly, rounded once: money (minor units) times a quantity or a rate. */
export function timesRound(amount: bigint, factor: number, divisor = 1n): bigint {
  const s = scaled(factor);
  return divRound(amount * s.int, divisor * 10n ** BigInt(s.scale));
}

/**
 * The UTC midnight of a `YYYY-MM-DD` date, in ms. Date.parse alone rolls 2025-02-30 over into
 * March and reads other shapes too: a date that does not read back the same is not a date.
 */
function dayMs(date: string): number {
  const ms = Date.parse(`${date}T00:00:00Z`);
  if (!Number.isFinite(ms) || new Date(ms).toISOString().slice(0, 10) !== date) throw new RangeError(`not a date: ${date}`);
  return ms;
}

/** Whole calendar days from one `YYYY-MM-DD` date to another (negative when `to` is before `from`). */
export function daysBetween(from: string, to: string): bigint {
  return BigInt(Math.round((dayMs(to) - dayMs(from)) / 86_400_000));
}

/** The `YYYY-MM-DD` date `days` calendar days after `date` (before it when negative), within years 0000–9999. */
export function addDays(date: string, days: bigint): string {
  const out = new Date(dayMs(date) + Number(days) * 86_400_000);
  const year = out.getUTCFullYear();
  if (!(year >= 0 && year <= 9999)) throw new RangeError(`not a date: ${days} days after ${date}`);
  return out.toISOString().slice(0, 10);
}

const isLeap = (y: number) => y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);

/**
 * The `YYYY-MM-DD` date `years` years after `date` (before it when negative), as a service
 * anniversary counts: 29 February in a year without one gives 28 February, the last day of the
 * same month, as ERPNext's `add_years` (dateutil's `relativedelta(years=n)`) gives it, so an
 * anniversary never moves into March and a leap-day joiner's year of service ends within February.
 */
export function addYears(date: string, years: bigint): string {
  dayMs(date);
  const year = Number(date.slice(0, 4)) + Number(years);
  if (!(year >= 0 && year <= 9999)) throw new RangeError(`not a date: ${years} years after ${date}`);
  const day = date.endsWith('-02-29') && !isLeap(year) ? '28' : date.slice(8);
  return `${String(year).padStart(4, '0')}${date.slice(4, 8)}${day}`;
}

/**
 * Years from one `YYYY-MM-DD` date to another as service counts them: the anniversaries passed
 * (as `addYears` gives them), then the days after the last one over 365, so that a period of
 * whole years is whole whatever its leap days (the Labour Law's art. 84 counts parts of a year in
 * proportion). Negative when `to` is before `from`.
 */
export function yearsBetween(from: string, to: string): number {
  if (dayMs(to) < dayMs(from)) return -yearsBetween(to, from);
  let whole = BigInt(Number(to.slice(0, 4)) - Number(from.slice(0, 4)));
  if (addYears(from, whole) > to) whole -= 1n;
  return Number(whole) + Number(daysBetween(addYears(from, whole), to)) / 365;
}
