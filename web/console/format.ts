// Numbers, money, dates and times for the person's language, with Intl.
import { lang } from './i18n.ts';

const cache = new Map<string, Intl.NumberFormat | Intl.DateTimeFormat | Intl.RelativeTimeFormat>();
function fmt<T extends Intl.NumberFormat | Intl.DateTimeFormat | Intl.RelativeTimeFormat>(key: string, make: () => T): T {
  let f = cache.get(key) as T | undefined;
  if (!f) cache.set(key, (f = make()));
  return f;
}

export function formatNumber(n: number | null | undefined): string {
  if (n === null || n === undefined || Number.isNaN(n)) return '';
  return fmt(`n|${lang()}`, () => new Intl.NumberFormat(lang(), { maximumFractionDigits: 6 })).format(n);
}

export function formatMoney(n: number | null | undefined, currency: string): string {
  if (n === null || n === undefined || Number.isNaN(n)) return '';
  try {
    return fmt(`m|${lang()}|${currency}`, () => new Intl.NumberFormat(lang(), { style: 'currency', currency })).format(n);
  } catch {
    return `${formatNumber(n)} ${currency}`;
  }
}

/** Minor-unit digits of a currency (2 for SAR, 3 for KWD, 0 for JPY). */
export function currencyDigits(currency: string): number {
  try {
    return new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
  } catch {
    return 2;
  }
}

/** A calendar date (`YYYY-MM-DD`), shown as the same day everywhere. */
export function formatDate(d: string | null | undefined): string {
  if (!d) return '';
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(d);
  if (!m) return d;
  const date = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return fmt(`d|${lang()}`, () => new Intl.DateTimeFormat(lang(), { dateStyle: 'medium', timeZone: 'UTC' })).format(date);
}

/** An instant (ISO 8601), in the person's time zone. */
export function formatDateTime(iso: string | null | undefined): string {
  if (!iso) return '';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return fmt(`dt|${lang()}`, () => new Intl.DateTimeFormat(lang(), { dateStyle: 'medium', timeStyle: 'short' })).format(date);
}

/** An instant relative to now (`5 days ago`, `in 2 hours`, `now`), in the person's language. */
export function formatRelative(iso: string | null | undefined, nowMs = Date.now()): string {
  if (!iso) return '';
  const ms = new Date(iso).getTime();
  if (Number.isNaN(ms)) return '';
  const diff = (ms - nowMs) / 1000;
  const abs = Math.abs(diff);
  const [value, unit]: [number, Intl.RelativeTimeFormatUnit] =
    abs < 45 ? [0, 'second']
    : abs < 45 * 60 ? [diff / 60, 'minute']
    : abs < 22 * 3600 ? [diff / 3600, 'hour']
    : abs < 26 * 86_400 ? [diff / 86_400, 'day']
    : abs < 320 * 86_400 ? [diff / (30.44 * 86_400), 'month']
    : [diff / (365.25 * 86_400), 'year'];
  const rounded = Math.round(value);
  return fmt(`rel|${lang()}`, () => new Intl.RelativeTimeFormat(lang(), { numeric: 'auto' })).format(rounded === 0 ? 0 : rounded, unit);
}

/** `<input type="datetime-local">` value ↔ ISO 8601. */
export function localInputToIso(v: string): string | undefined {
  if (!v) return undefined;
  const d = new Date(v);
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
}

export function isoToLocalInput(iso: string): string {
  const d = new Date(iso);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}
