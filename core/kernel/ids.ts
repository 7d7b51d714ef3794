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

/**
 * `<prefix>_<9 characters of the time in ms><11 random characters>`: ids that sort by creation,
 * for the rows every write adds (documents, audit rows, events, deliveries). Their index entries
 * land beside each other instead of on a random page each, so a commit rewrites a few pages
 * rather than one per row and index. 57 random bits per millisecond keep them unique and
 * unguessable; the time they show is the row's `createdAt`, shown anyway.
 */
export const newSortableId = (prefix: string, ms: number): string => `${prefix}_${Math.max(0, Math.floor(ms)).toString(36).padStart(9, '0').slice(-9)}${randomToken(11)}`;

let lastMs = NaN;
let lastIso = '';

/** The ISO time of `ms`, the last one kept: the rows of one write (its document, its audit entry, the parents' totals it moves) mostly ask for the same millisecond. */
export function isoNow(ms: number): string {
  if (ms !== lastMs) {
    lastIso = new Date(ms).toISOString();
    lastMs = ms;
  }
  return lastIso;
}

const DAY_MS = 86_400_000;
let day = { from: 0, to: -1, text: '' };

/** The UTC date (`YYYY-MM-DD`) of `ms`, formatted once a day: every write with rules asks it. */
export function isoDay(ms: number): string {
  if (ms < day.from || ms >= day.to) {
    const from = Math.floor(ms / DAY_MS) * DAY_MS;
    day = { from, to: from + DAY_MS, text: new Date(from).toISOString().slice(0, 10) };
  }
  return day.text;
}
