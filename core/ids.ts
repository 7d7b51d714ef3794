import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

/** Unbiased random `[0-9a-z]` characters (bytes ≥ 252 are dropped, 252 = 7 × 36). */
export function randomToken(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const b of randomBytes(length * 2)) {
      if (b < 252) out += ALPHABET[b % 36];
      if (out.length === length) break;
    }
  }
  return out;
}

/** `<prefix>_<20 random characters>`: about 103 bits, unguessable across tenants. */
export const newId = (prefix: string): string => `${prefix}_${randomToken(20)}`;

export const isoNow = (ms: number): string => new Date(ms).toISOString();
