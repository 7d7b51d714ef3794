// Two signature schemes on every delivery, from the same secrets:
//
// 1. The spec's `x-service-signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`,
//    keyed with the secret's whole UTF-8 string (`whsec_` included), whatever its form: the shape
//    and computation of Stripe's, so Stripe's library verifies it unchanged with the secret as shown.
// 2. Standard Webhooks (www.standardwebhooks.com): `webhook-id` (the event id), `webhook-timestamp`
//    (the same t) and `webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<t>.<raw body>">`, one per
//    active secret, space-separated, keyed with the secret's bytes (`secretKeyBytes`); and, for an
//    endpoint that asks for it, `v1a,<base64 ed25519 signature of the same text>`.
//
// Secret forms. Minted now: `whsec_` + padded standard base64 of 32 random bytes (the standard's
// form: its libraries take it as it is). Minted before: `whsec_` + unpadded base64url of 32 bytes;
// for the standard scheme such a secret is keyed with the 32 bytes it encodes, so a consumer gives
// the standard's libraries `standardSecret(secret)` (the same bytes in the standard's spelling).
// sign-worker.mjs computes the same on the signing threads (a test keeps the two in step).
import { createHmac, createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, sign as edSign, type KeyObject } from 'node:crypto';

export const SIGNATURE_HEADER = 'x-service-signature';
export const SECRET_PREFIX = 'whsec_';
/** Standard Webhooks headers. */
export const STANDARD_ID_HEADER = 'webhook-id';
export const STANDARD_TIMESTAMP_HEADER = 'webhook-timestamp';
export const STANDARD_SIGNATURE_HEADER = 'webhook-signature';
/** The standard's prefixes of an ed25519 key pair (base64 of the raw 32-byte keys). */
export const SIGNING_KEY_PREFIX = 'whsk_';
export const PUBLIC_KEY_PREFIX = 'whpk_';
/** Random bytes in a new secret (the standard allows 24 to 64). */
export const SECRET_BYTES = 32;

const STANDARD_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/**
 * The HMAC key of the standard scheme: the bytes after `whsec_` decoded from padded standard
 * base64 (the standard's form) or, for a secret minted before, from unpadded base64url; any other
 * string (none is minted so) is keyed with its whole UTF-8 string.
 */
export function secretKeyBytes(secret: string): Buffer {
  const rest = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  if (rest.length > 0 && rest.length % 4 === 0 && STANDARD_BASE64.test(rest)) return Buffer.from(rest, 'base64');
  if (rest.length > 0 && rest.length % 4 !== 1 && BASE64URL.test(rest)) return Buffer.from(rest, 'base64url');
  return Buffer.from(secret, 'utf8');
}

/** The secret in the standard's spelling (`whsec_` + padded base64 of its key bytes): what to give the standard's libraries. */
export function standardSecret(secret: string): string {
  return SECRET_PREFIX + secretKeyBytes(secret).toString('base64');
}

/**
 * Hex HMAC-SHA256 of `"<t>.<body>"`. The key is the secret's full UTF-8 string,
 * `whsec_` prefix included (not base64-decoded), as Stripe's libraries do.
 */
export function signOnce(secret: string, t: number, body: string | Uint8Array): string {
  return createHmac('sha256', secret).update(`${t}.`).update(body).digest('hex');
}

/** `t=<t>,v1=<d1>,v1=<d2>…`: one v1 per active secret during a rotation's grace period. */
export function signatureHeader(t: number, digests: readonly string[]): string {
  let header = `t=${t}`;
  for (const d of digests) header += `,v1=${d}`;
  return header;
}

/** The whole header for one delivery, signed inline on the calling thread. */
export function signHeader(secrets: readonly string[], t: number, body: string | Uint8Array): string {
  return signatureHeader(
    t,
    secrets.map((s) => signOnce(s, t, body)),
  );
}

/** Base64 HMAC-SHA256 of `"<id>.<t>.<body>"` keyed with the secret's bytes (Standard Webhooks `v1`). */
export function signStandardOnce(secret: string, id: string, t: number, body: string | Uint8Array): string {
  return createHmac('sha256', secretKeyBytes(secret)).update(`${id}.${t}.`).update(body).digest('base64');
}

const edKeys = new Map<string, KeyObject>();

/** The ed25519 private key of a `whsk_…` string. */
export function signingKeyObject(signingKey: string): KeyObject {
  let key = edKeys.get(signingKey);
  if (!key) {
    const seed = Buffer.from(signingKey.slice(SIGNING_KEY_PREFIX.length), 'base64');
    if (!signingKey.startsWith(SIGNING_KEY_PREFIX) || seed.length !== 32) throw new TypeError('a signing key is whsk_ and the base64 of 32 bytes');
    key = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
    if (edKeys.size >= 1000) edKeys.clear();
    edKeys.set(signingKey, key);
  }
  return key;
}

/**
 * The `webhook-signature` value: `v1,<base64>` per secret (newest first), then `v1a,<base64>` when
 * the endpoint signs with ed25519, space-separated.
 */
export function standardSignatureHeader(secrets: readonly string[], id: string, t: number, body: string | Uint8Array, signingKey?: string | null): string {
  const parts = secrets.map((s) => `v1,${signStandardOnce(s, id, t, body)}`);
  if (signingKey) {
    const data = Buffer.concat([Buffer.from(`${id}.${t}.`, 'utf8'), typeof body === 'string' ? Buffer.from(body, 'utf8') : body]);
    parts.push(`v1a,${edSign(null, data, signingKeyObject(signingKey)).toString('base64')}`);
  }
  return parts.join(' ');
}

/** `whsec_` + padded standard base64 of 32 random bytes: the Standard Webhooks form, used as a whole string by the spec's scheme. */
export function generateSecret(): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

/** DER prefix of an ed25519 private key (PKCS#8) before its 32-byte seed. */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** A new ed25519 key pair in the standard's form: `whsk_…` (kept sealed) and `whpk_…` (shown on the endpoint). */
export function generateSigningKeyPair(): { signingKey: string; publicKey: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const seed = privateKey.export({ format: 'der', type: 'pkcs8' }).subarray(ED25519_PKCS8_PREFIX.length);
  return { signingKey: SIGNING_KEY_PREFIX + seed.toString('base64'), publicKey: PUBLIC_KEY_PREFIX + rawPublicKey(publicKey).toString('base64') };
}

/** The `whpk_…` public key of a `whsk_…` signing key. */
export function publicKeyOf(signingKey: string): string {
  return PUBLIC_KEY_PREFIX + rawPublicKey(createPublicKey(signingKeyObject(signingKey))).toString('base64');
}

function rawPublicKey(key: KeyObject): Buffer {
  // SPKI DER of ed25519: a 12-byte prefix, then the 32 raw bytes.
  return key.export({ format: 'der', type: 'spki' }).subarray(12);
}

/** Unix seconds of a millisecond instant (a Clock's `now()`). */
export function unixSeconds(ms: number): number {
  return Math.floor(ms / 1000);
}
