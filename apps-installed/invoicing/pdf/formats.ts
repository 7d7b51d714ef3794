// How numbers and dates are written on the document. Amounts come in minor units and are
// placed exactly (a string goes to Intl, so no binary rounding); digits are Latin in both
// languages, as Saudi tax invoices usually print them.
import { minorDigits, minorText } from 'diwan/sdk';

/** Saudi invoices state the time of issue in the kingdom's own time. */
export const TIME_ZONE = 'Asia/Riyadh';

const grouped = new Map<number, Intl.NumberFormat>();

/** `123450, 'SAR'` → `1,234.50` (check-view.ts has made sure it is an integer). */
export function formatAmount(minor: number, currency: string): string {
  const digits = minorDigits(currency);
  let nf = grouped.get(digits);
  if (!nf) grouped.set(digits, (nf = new Intl.NumberFormat('en', { minimumFractionDigits: digits, maximumFractionDigits: digits })));
  // Intl formats a decimal string exactly (ECMA-402 Intl.NumberFormat v3); the type says number.
  return nf.format(minorText(BigInt(minor), digits) as unknown as number);
}

/** `1,234.50 SAR`. */
export const formatMoney = (minor: number, currency: string): string => `${formatAmount(minor, currency)} ${currency}`;

const plain = new Intl.NumberFormat('en', { maximumFractionDigits: 6 });

/** A quantity or a rate as given, without trailing zeros: `2`, `1.5`. */
export const formatNumber = (n: number): string => plain.format(n);

/** `15 %`. */
export const formatRate = (percent: number): string => `${plain.format(percent)} %`;

const gregorian = new Intl.DateTimeFormat('en-GB', {
  timeZone: TIME_ZONE, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', hourCycle: 'h23',
});
const hijriAr = new Intl.DateTimeFormat('ar-SA-u-ca-islamic-umalqura-nu-latn', { timeZone: TIME_ZONE, dateStyle: 'long' });
const hijriEn = new Intl.DateTimeFormat('en-u-ca-islamic-umalqura', { timeZone: TIME_ZONE, dateStyle: 'long' });

export interface IssueDates {
  /** `2026-11-28 13:00` (Riyadh). */
  gregorian: string;
  /** The Umm al-Qura date in Arabic: `18 جمادى الآخرة 1448 هـ`. */
  hijriAr: string;
  /** The same in English: `Jumada II 18, 1448 AH`. */
  hijriEn: string;
}

/** The issue instant as both calendars write it, in Riyadh's time. */
export function issueDates(iso: string): IssueDates {
  const at = new Date(iso);
  const p = Object.fromEntries(gregorian.formatToParts(at).map((x) => [x.type, x.value]));
  return {
    gregorian: `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}`,
    hijriAr: hijriAr.format(at),
    hijriEn: hijriEn.format(at),
  };
}
