// The v1 webhook signature: `x-service-signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`.
// Same shape and computation as Stripe's, so verifiers written for that scheme work unchanged.
import { createHmac, randomBytes } from 'node:crypto';

export const SIGNATURE_HEADER = 'x-service-signature';
export const SECRET_PREFIX = 'whsec_';

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

/** `whsec_` + 32 random bytes in base64url (43 characters, no padding). */
export function generateSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64url');
}

/** Unix seconds of a millisecond instant (a Clock's `now()`). */
export function unixSeconds(ms: number): number {
  return Math.floor(ms / 1000);
}
