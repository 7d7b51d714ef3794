// Verifies Diwan's webhook signature header `x-service-signature: t=<unix seconds>,v1=<hex>[,v1=<hex>…]`.
// Self-contained (node:crypto only) so a consumer can copy this one file into their own service.
import { createHmac, timingSafeEqual } from 'node:crypto';

export type VerifyFailure = 'malformed' | 'no_v1' | 'timestamp_out_of_tolerance' | 'mismatch';
export type VerifyResult = { ok: true; timestamp: number } | { ok: false; reason: VerifyFailure };

export interface VerifyOptions {
  /** Largest allowed distance between t and now, either way, in seconds. Default 300; Infinity turns the check off. */
  toleranceSeconds?: number;
  /** Current Unix time in seconds (tests); defaults to the system clock. */
  now?: number;
}

export const SIGNATURE_HEADER = 'x-service-signature';
const HEX_SHA256 = /^[0-9a-fA-F]{64}$/;

/**
 * `rawBody` must be the body exactly as received (not re-serialised JSON). `secrets` may list
 * several during a rotation; each is used as its full UTF-8 string, `whsec_` prefix included.
 * Order of checks: header shape, then the timestamp window, then the digests.
 */
export function verifySignature(
  rawBody: string | Uint8Array,
  header: string | undefined | null,
  secrets: string | readonly string[],
  opts: VerifyOptions = {},
): VerifyResult {
  const keys = typeof secrets === 'string' ? [secrets] : secrets;
  if (keys.length === 0 || keys.some((k) => typeof k !== 'string' || k === '')) {
    throw new TypeError('verifySignature needs at least one non-empty secret');
  }
  if (typeof header !== 'string' || header.length === 0 || header.length > 8192) return { ok: false, reason: 'malformed' };

  let t: string | undefined;
  const digests: Buffer[] = [];
  for (const part of header.split(',')) {
    if (part.trim() === '') continue; // a stray comma is harmless
    const eq = part.indexOf('=');
    if (eq <= 0) return { ok: false, reason: 'malformed' };
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't') {
      if (t !== undefined || !/^\d{1,15}$/.test(value)) return { ok: false, reason: 'malformed' };
      t = value;
    } else if (key === 'v1' && HEX_SHA256.test(value)) {
      digests.push(Buffer.from(value, 'hex'));
    }
    // Other schemes (v0=, a future v2=) and v1 values that cannot be SHA-256 digests are skipped.
  }
  if (t === undefined) return { ok: false, reason: 'malformed' };
  if (digests.length === 0) return { ok: false, reason: 'no_v1' };

  const timestamp = Number(t);
  const now = opts.now ?? Math.floor(Date.now() / 1000);
  const tolerance = opts.toleranceSeconds ?? 300;
  // A NaN here would silently turn the replay check off.
  if (!Number.isFinite(now) || !(tolerance >= 0)) throw new TypeError('verifySignature: now must be finite and toleranceSeconds ≥ 0');
  if (Math.abs(now - timestamp) > tolerance) return { ok: false, reason: 'timestamp_out_of_tolerance' };

  // The signed text uses t exactly as sent. Every pair is compared, so timing says nothing about which matched.
  let matched = false;
  for (const key of keys) {
    const expected = createHmac('sha256', key).update(`${t}.`).update(rawBody).digest();
    for (const d of digests) {
      if (d.length === expected.length && timingSafeEqual(d, expected)) matched = true;
    }
  }
  return matched ? { ok: true, timestamp } : { ok: false, reason: 'mismatch' };
}
