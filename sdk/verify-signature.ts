// Verifies Diwan's webhook signatures, either scheme (every delivery carries both):
// - the spec's `x-service-signature: t=<unix seconds>,v1=<hex>[,v1=<hex>…]` (verifySignature),
//   HMAC keyed with the secret's whole string;
// - Standard Webhooks' `webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64> …`
//   (verifyStandardSignature), HMAC keyed with the secret's bytes, and `v1a,<base64>` ed25519
//   signatures checked against `whpk_…` public keys.
// `verifyWebhook` takes the request's headers and checks whichever scheme they carry.
// Self-contained (node:crypto only) so a consumer can copy this one file into their own service.
import { createHmac, createPublicKey, timingSafeEqual, verify as edVerify } from 'node:crypto';

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

export const STANDARD_HEADERS = { id: 'webhook-id', timestamp: 'webhook-timestamp', signature: 'webhook-signature' } as const;

export interface StandardVerifyOptions extends VerifyOptions {
  /** `whpk_…` ed25519 public keys: a `v1a` signature made with one of them also verifies. */
  publicKeys?: string | readonly string[];
}

const STANDARD_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/**
 * The Standard Webhooks HMAC key of a secret: the bytes after `whsec_` in padded standard base64
 * (secrets minted now), or in unpadded base64url (secrets minted before); any other string as its UTF-8 bytes.
 */
export function standardKey(secret: string): Buffer {
  const rest = secret.startsWith('whsec_') ? secret.slice(6) : secret;
  if (rest.length > 0 && rest.length % 4 === 0 && STANDARD_BASE64.test(rest)) return Buffer.from(rest, 'base64');
  if (rest.length > 0 && rest.length % 4 !== 1 && BASE64URL.test(rest)) return Buffer.from(rest, 'base64url');
  return Buffer.from(secret, 'utf8');
}

/** A secret in the Standard Webhooks spelling (`whsec_` + padded base64), for the `standardwebhooks` and `svix` libraries. */
export function standardSecret(secret: string): string {
  return `whsec_${standardKey(secret).toString('base64')}`;
}

const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/**
 * Verifies the Standard Webhooks headers: `id` and `timestamp` as sent, `signature` the
 * space-separated `v1,<base64>` (and `v1a,<base64>`) list. Same answers and order of checks as
 * verifySignature (`no_v1`: no signature this verifier can check).
 */
export function verifyStandardSignature(
  rawBody: string | Uint8Array,
  headers: { id: string | undefined | null; timestamp: string | undefined | null; signature: string | undefined | null },
  secrets: string | readonly string[],
  opts: StandardVerifyOptions = {},
): VerifyResult {
  const keys = typeof secrets === 'string' ? [secrets] : secrets;
  const publicKeys = opts.publicKeys === undefined ? [] : typeof opts.publicKeys === 'string' ? [opts.publicKeys] : opts.publicKeys;
  if ((keys.length === 0 && publicKeys.length === 0) || keys.some((k) => typeof k !== 'string' || k === '')) {
    throw new TypeError('verifyStandardSignature needs at least one non-empty secret or public key');
  }
  const { id, timestamp: t, signature } = headers;
  if (typeof id !== 'string' || id === '' || typeof t !== 'string' || !/^\d{1,15}$/.test(t)) return { ok: false, reason: 'malformed' };
  if (typeof signature !== 'string' || signature.length === 0 || signature.length > 8192) return { ok: false, reason: 'malformed' };
  const macs: Buffer[] = [];
  const eds: Buffer[] = [];
  for (const part of signature.split(' ')) {
    const comma = part.indexOf(',');
    if (comma <= 0) continue;
    const version = part.slice(0, comma);
    const value = Buffer.from(part.slice(comma + 1), 'base64');
    if (version === 'v1' && value.length === 32) macs.push(value);
    else if (version === 'v1a' && value.length === 64) eds.push(value);
  }
  if (macs.length === 0 && (eds.length === 0 || publicKeys.length === 0)) return { ok: false, reason: 'no_v1' };

  const timestamp = Number(t);
  const now = opts.now ?? Math.floor(Date.now() / 1000);
  const tolerance = opts.toleranceSeconds ?? 300;
  if (!Number.isFinite(now) || !(tolerance >= 0)) throw new TypeError('verifyStandardSignature: now must be finite and toleranceSeconds ≥ 0');
  if (Math.abs(now - timestamp) > tolerance) return { ok: false, reason: 'timestamp_out_of_tolerance' };

  const signed = Buffer.concat([Buffer.from(`${id}.${t}.`, 'utf8'), typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody]);
  let matched = false;
  for (const key of keys) {
    const expected = createHmac('sha256', standardKey(key)).update(signed).digest();
    for (const m of macs) if (timingSafeEqual(m, expected)) matched = true;
  }
  for (const pk of publicKeys) {
    const raw = Buffer.from(pk.startsWith('whpk_') ? pk.slice(5) : pk, 'base64');
    if (raw.length !== 32) throw new TypeError('a public key is whpk_ and the base64 of 32 bytes');
    const key = createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, raw]), format: 'der', type: 'spki' });
    for (const e of eds) if (edVerify(null, signed, key, e)) matched = true;
  }
  return matched ? { ok: true, timestamp } : { ok: false, reason: 'mismatch' };
}

type HeaderBag = Record<string, string | string[] | undefined> | { get(name: string): string | null };

function headerOf(headers: HeaderBag, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') return (headers as { get(n: string): string | null }).get(name) ?? undefined;
  const bag = headers as Record<string, string | string[] | undefined>;
  let v = bag[name];
  if (v === undefined) {
    const key = Object.keys(bag).find((k) => k.toLowerCase() === name);
    v = key === undefined ? undefined : bag[key];
  }
  return Array.isArray(v) ? v[0] : v;
}

/**
 * Verifies a delivery from its headers (Node's `req.headers`, or a fetch `Headers`): the Standard
 * Webhooks headers when present, else `x-service-signature`. The same secrets serve both.
 */
export function verifyWebhook(rawBody: string | Uint8Array, headers: HeaderBag, secrets: string | readonly string[], opts: StandardVerifyOptions = {}): VerifyResult {
  const signature = headerOf(headers, STANDARD_HEADERS.signature);
  if (signature !== undefined) {
    return verifyStandardSignature(rawBody, { id: headerOf(headers, STANDARD_HEADERS.id), timestamp: headerOf(headers, STANDARD_HEADERS.timestamp), signature }, secrets, opts);
  }
  return verifySignature(rawBody, headerOf(headers, SIGNATURE_HEADER), secrets, opts);
}
