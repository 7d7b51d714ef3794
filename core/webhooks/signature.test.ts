import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generateSecret, signatureHeader, signHeader, signOnce, unixSeconds } from './signature.ts';

const vectors: { sign: { name: string; secrets: string[]; t: number; body: string; header: string }[] } = JSON.parse(
  readFileSync(new URL('../../sdk/signature-test-vectors.json', import.meta.url), 'utf8'),
);

describe('signature', () => {
  it.each(vectors.sign.map((v) => [v.name, v] as const))('reproduces the published vector: %s', (_name, v) => {
    expect(signHeader(v.secrets, v.t, v.body)).toBe(v.header);
    expect(signatureHeader(v.t, v.secrets.map((s) => signOnce(s, v.t, v.body)))).toBe(v.header);
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

  it('generateSecret gives whsec_ and 32 random bytes in base64url', () => {
    const a = generateSecret();
    const b = generateSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(a.slice(6), 'base64url')).toHaveLength(32);
    expect(a).not.toBe(b);
  });

  it('unixSeconds floors milliseconds', () => {
    expect(unixSeconds(Date.UTC(2026, 0, 1) + 999)).toBe(1767225600);
  });
});
