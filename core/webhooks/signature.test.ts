import { createHmac, createPublicKey, verify as edVerify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import {
  generateSecret, generateSigningKeyPair, publicKeyOf, secretKeyBytes, signatureHeader, signHeader, signOnce, signStandardOnce, standardSecret, standardSignatureHeader, unixSeconds,
} from './signature.ts';

const vectors: {
  sign: { name: string; secrets: string[]; t: number; body: string; header: string }[];
  standard: { name: string; secrets: string[]; id: string; t: number; body: string; signature: string }[];
} = JSON.parse(
  readFileSync(new URL('../../sdk/signature-test-vectors.json', import.meta.url), 'utf8'),
);

describe('signature', () => {
  it.each(vectors.sign.map((v) => [v.name, v] as const))('reproduces the published vector: %s', (_name, v) => {
    expect(signHeader(v.secrets, v.t, v.body)).toBe(v.header);
    expect(signatureHeader(v.t, v.secrets.map((s) => signOnce(s, v.t, v.body)))).toBe(v.header);
  });

  it.each(vectors.standard.map((v) => [v.name, v] as const))('reproduces the published Standard Webhooks vector: %s', (_name, v) => {
    expect(standardSignatureHeader(v.secrets, v.id, v.t, v.body)).toBe(v.signature);
    // Written out: base64 HMAC-SHA256 of "<id>.<t>.<body>" keyed with the base64-decoded bytes after whsec_.
    const decoded = (s: string) => Buffer.from(s.slice(6), s.endsWith('=') ? 'base64' : 'base64url');
    expect(v.secrets.map((s) => `v1,${createHmac('sha256', decoded(s)).update(`${v.id}.${v.t}.${v.body}`).digest('base64')}`).join(' ')).toBe(v.signature);
  });

  it('signOnce is HMAC-SHA256 of "<t>.<body>" keyed by the whole secret string', () => {
    const secret = 'whsec_abc';
    expect(signOnce(secret, 1700000000, '{"a":1}')).toBe(createHmac('sha256', Buffer.from(secret, 'utf8')).update('1700000000.{"a":1}').digest('hex'));
    expect(signOnce(secret, 1700000000, Buffer.from('{"a":1}'))).toBe(signOnce(secret, 1700000000, '{"a":1}'));
  });

  it('signatureHeader puts one v1 per digest after t', () => {
    expect(signatureHeader(12, ['aa', 'bb'])).toBe('t=12,v1=aa,v1=bb');
    expect(signatureHeader(12, [])).toBe('t=12');
  });

  it('generateSecret gives the Standard Webhooks form: whsec_ and 32 random bytes in padded standard base64', () => {
    const a = generateSecret();
    const b = generateSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(a.slice(6), 'base64')).toHaveLength(32);
    expect(secretKeyBytes(a)).toEqual(Buffer.from(a.slice(6), 'base64'));
    expect(standardSecret(a)).toBe(a);
    expect(a).not.toBe(b);
  });

  it('keys a secret minted before (unpadded base64url) with the bytes it encodes, and spells them in the standard form', () => {
    const legacy = 'whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8';
    const bytes = Buffer.from(Array.from({ length: 32 }, (_, i) => i));
    expect(secretKeyBytes(legacy)).toEqual(bytes);
    expect(standardSecret(legacy)).toBe(`whsec_${bytes.toString('base64')}`);
    // A legacy secret with the url-safe letters decodes the same way.
    const urlSafe = `whsec_${Buffer.alloc(32, 0xfb).toString('base64url')}`;
    expect(urlSafe).toMatch(/[-_]/);
    expect(secretKeyBytes(urlSafe)).toEqual(Buffer.alloc(32, 0xfb));
  });

  it('signs the standard scheme as the standardwebhooks library verifies it, for new and older secrets', () => {
    const body = '{"id":"evt_1","type":"invoice.created","data":{"name":"شركة"}}';
    const t = unixSeconds(Date.now());
    for (const secret of [generateSecret(), 'whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8']) {
      const sig = `v1,${signStandardOnce(secret, 'evt_1', t, body)}`;
      const headers = { 'webhook-id': 'evt_1', 'webhook-timestamp': String(t), 'webhook-signature': sig };
      expect(new Webhook(standardSecret(secret)).verify(body, headers)).toEqual(JSON.parse(body));
      expect(() => new Webhook(standardSecret(generateSecret())).verify(body, headers)).toThrow();
      // The standard's input is "<id>.<t>.<body>", keyed with the secret's bytes.
      expect(signStandardOnce(secret, 'evt_1', t, Buffer.from(body))).toBe(createHmac('sha256', secretKeyBytes(secret)).update(`evt_1.${t}.${body}`).digest('base64'));
    }
  });

  it('standardSignatureHeader: one v1 per secret, then a v1a ed25519 signature that the public key verifies', () => {
    const [s1, s2] = [generateSecret(), generateSecret()];
    const { signingKey, publicKey } = generateSigningKeyPair();
    expect(signingKey).toMatch(/^whsk_[A-Za-z0-9+/]{43}=$/);
    expect(publicKey).toMatch(/^whpk_[A-Za-z0-9+/]{43}=$/);
    expect(publicKeyOf(signingKey)).toBe(publicKey);
    const header = standardSignatureHeader([s1, s2], 'evt_9', 1767225600, '{}', signingKey);
    const parts = header.split(' ');
    expect(parts.map((p) => p.split(',')[0])).toEqual(['v1', 'v1', 'v1a']);
    expect(parts[0]).toBe(`v1,${signStandardOnce(s1, 'evt_9', 1767225600, '{}')}`);
    expect(parts[1]).toBe(`v1,${signStandardOnce(s2, 'evt_9', 1767225600, '{}')}`);
    const spki = Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), Buffer.from(publicKey.slice(5), 'base64')]);
    const key = createPublicKey({ key: spki, format: 'der', type: 'spki' });
    expect(edVerify(null, Buffer.from('evt_9.1767225600.{}'), key, Buffer.from(parts[2].slice(4), 'base64'))).toBe(true);
    expect(edVerify(null, Buffer.from('evt_9.1767225600.{ }'), key, Buffer.from(parts[2].slice(4), 'base64'))).toBe(false);
  });

  it('unixSeconds floors milliseconds', () => {
    expect(unixSeconds(Date.UTC(2026, 0, 1) + 999)).toBe(1767225600);
  });
});
