import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

// Random bytes are drawn 4 KiB at a time: one randomBytes call per id costs more than the id.
let pool = Buffer.alloc(0);
let at = 0;

function nextByte(): number {
  if (at >= pool.length) {
    pool = randomBytes(4096);
    at = 0;
  }
  return pool[at++];
}

/** Unbiased random `[0-9a-z]` characters (bytes ≥ 252 are dropped, 252 = 7 × 36). */
export function randomToken(length: number): string {
  let out = '';
  while (out.length < length) {
    const b = nextByte();
    if (b < 252) out += ALPHABET[b % 36];
  }
  return out;
}

/** `<prefix>_<20 random characters>`: about 103 bits, unguessable across tenants. */
export const newId = (prefix: string): string => `${prefix}_${randomToken(20)}`;

export const isoNow = (ms: number): string => new Date(ms).toISOString();
