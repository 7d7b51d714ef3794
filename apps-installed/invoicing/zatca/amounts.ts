import { minorText } from 'diwan/sdk';

/** Minor units → the decimal string UBL carries ("460" halalas → "4.60"); exact, no floats. */
export function formatAmount(minor: number, digits = 2): string {
  if (!Number.isSafeInteger(minor)) throw new RangeError(`amount must be an integer in minor units, got ${minor}`);
  return minorText(BigInt(minor), digits);
}

/** 15 → "15.00": ZATCA's samples write VAT rates with two decimals. */
export function formatPercent(p: number): string {
  return p.toFixed(2);
}
