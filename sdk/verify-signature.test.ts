import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { standardSecret, verifySignature, verifyStandardSignature, verifyWebhook, type VerifyResult } from './verify-signature.ts';
import { generateSecret, generateSigningKeyPair, signHeader, standardSignatureHeader } from '../core/webhooks/signature.ts';

interface Vectors {
  sign: { name: string; secrets: string[]; t: number; body: string; header: string }[];
  verify: { name: string; secrets: string[]; body: string; header: string; now: number; toleranceSeconds?: number; expect: VerifyResult }[];
  standard: { name: string; secrets: string[]; id: string; t: number; body: string; signature: string }[];
}
const vectors: Vectors = JSON.parse(readFileSync(new URL('./signature-test-vectors.json', import.meta.url), 'utf8'));

describe('published test vectors', () => {
  it('has both passing and failing verify cases for every reason', () => {
    const reasons = new Set(vectors.verify.map((v) => (v.expect.ok ? 'ok' : v.expect.reason)));
    expect([...reasons].sort()).toEqual(['malformed', 'mismatch', 'no_v1', 'ok', 'timestamp_out_of_tolerance']);
  });

  it.each(vectors.verify.map((v) => [v.name, v] as const))('verify: %s', (_name, v) => {
    const opts = { now: v.now, ...(v.toleranceSeconds !== undefined ? { toleranceSeconds: v.toleranceSeconds } : {}) };
    expect(verifySignature(v.body, v.header, v.secrets, opts)).toEqual(v.expect);
    // The raw body as bytes gives the same answer as the string.
    expect(verifySignature(Buffer.from(v.body, 'utf8'), v.header, v.secrets, opts)).toEqual(v.expect);
  });

  it.each(vectors.sign.map((v) => [v.name, v] as const))('sign vector verifies with each of its secrets: %s', (_name, v) => {
    for (const secret of v.secrets) {
      expect(verifySignature(v.body, v.header, secret, { now: v.t })).toEqual({ ok: true, timestamp: v.t });
    }
  });
});

// A transcription of the algorithm of Stripe's Node library (Webhooks.ts: parseHeader, makeHMACContent,
// NodeCryptoProvider.computeHMACSignature, secureCompare of hex strings), to show that verifiers
// written for `Stripe-Signature` accept Diwan's header unchanged.
function stripeStyleVerify(payload: string, header: string, secret: string, tolerance: number, nowSeconds: number): boolean {
  let timestamp = -1;
  const signatures: string[] = [];
  for (const item of header.split(',')) {
    const kv = item.split('=');
    if (kv[0] === 't') timestamp = parseInt(kv[1], 10);
    if (kv[0] === 'v1') signatures.push(kv[1]);
  }
  if (timestamp === -1 || signatures.length === 0) return false;
  const expected = createHmac('sha256', secret).update(`${timestamp}.${payload}`, 'utf8').digest('hex');
  if (!signatures.includes(expected)) return false;
  return !(tolerance > 0 && nowSeconds - timestamp > tolerance);
}

describe('Stripe-style verifiers', () => {
  it.each(vectors.sign.map((v) => [v.name, v] as const))('accept the signing vector: %s', (_name, v) => {
    for (const secret of v.secrets) expect(stripeStyleVerify(v.body, v.header, secret, 300, v.t)).toBe(true);
  });

  it('refuse the mismatch and stale vectors as well', () => {
    for (const v of vectors.verify.filter((x) => !x.expect.ok && (x.expect.reason === 'mismatch' || x.name.startsWith('too old')))) {
      expect(v.secrets.some((s) => stripeStyleVerify(v.body, v.header, s, 300, v.now)), v.name).toBe(false);
    }
  });
});

describe('verifySignature', () => {
  const secret = 'whsec_test_secret';
  const body = '{"id":"evt_1"}';
  const sign = (t: number, b = body, s = secret) => createHmac('sha256', s).update(`${t}.${b}`).digest('hex');

  it('defaults to the system clock and a 300 s window', () => {
    const now = Math.floor(Date.now() / 1000);
    expect(verifySignature(body, `t=${now},v1=${sign(now)}`, secret)).toEqual({ ok: true, timestamp: now });
    expect(verifySignature(body, `t=${now - 1000},v1=${sign(now - 1000)}`, secret)).toEqual({ ok: false, reason: 'timestamp_out_of_tolerance' });
    expect(verifySignature(body, `t=${now - 1000},v1=${sign(now - 1000)}`, secret, { toleranceSeconds: Infinity })).toMatchObject({ ok: true });
  });

  it('accepts a matching v1 anywhere among several, and a stray comma', () => {
    const t = 1_000_000;
    const other = sign(t, body, 'whsec_other');
    expect(verifySignature(body, `t=${t},v1=${other},v1=${sign(t)},`, secret, { now: t })).toEqual({ ok: true, timestamp: t });
  });

  it('signs t exactly as sent (leading zeros are part of the signed text)', () => {
    const t = 1_000_000;
    const header = `t=0${t},v1=${createHmac('sha256', secret).update(`0${t}.${body}`).digest('hex')}`;
    expect(verifySignature(body, header, secret, { now: t })).toEqual({ ok: true, timestamp: t });
    expect(verifySignature(body, `t=0${t},v1=${sign(t)}`, secret, { now: t })).toEqual({ ok: false, reason: 'mismatch' });
  });

  it('treats a missing header as malformed rather than throwing', () => {
    expect(verifySignature(body, undefined, secret)).toEqual({ ok: false, reason: 'malformed' });
    expect(verifySignature(body, null, secret)).toEqual({ ok: false, reason: 'malformed' });
    expect(verifySignature(body, 'x'.repeat(10_000), secret)).toEqual({ ok: false, reason: 'malformed' });
  });

  it('refuses to run without a secret, so a missing setting is loud', () => {
    expect(() => verifySignature(body, 't=1,v1=00', [])).toThrow(TypeError);
    expect(() => verifySignature(body, 't=1,v1=00', '')).toThrow(TypeError);
  });

  it('refuses options that would turn the timestamp check off by accident', () => {
    const header = `t=5,v1=${sign(5)}`;
    expect(() => verifySignature(body, header, secret, { toleranceSeconds: NaN })).toThrow(TypeError);
    expect(() => verifySignature(body, header, secret, { toleranceSeconds: -1 })).toThrow(TypeError);
    expect(() => verifySignature(body, header, secret, { now: NaN })).toThrow(TypeError);
  });
});

describe('verifyStandardSignature and verifyWebhook (Standard Webhooks headers)', () => {
  const t = 1767225600;
  const body = '{"id":"evt_1","type":"invoice.created","data":{"name":"شركة"}}';

  it.each(vectors.standard.map((v) => [v.name, v] as const))('standard vector verifies with each of its secrets, and not with another: %s', (_name, v) => {
    const headers = { id: v.id, timestamp: String(v.t), signature: v.signature };
    for (const secret of v.secrets) expect(verifyStandardSignature(v.body, headers, secret, { now: v.t })).toEqual({ ok: true, timestamp: v.t });
    expect(verifyStandardSignature(v.body, headers, 'whsec_' + Buffer.alloc(32, 9).toString('base64'), { now: v.t })).toEqual({ ok: false, reason: 'mismatch' });
  });

  it('accepts a v1 of any secret it holds, new-form and older secrets alike, and a v1a of a public key it holds', () => {
    const [newer, older] = [generateSecret(), 'whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8'];
    const pair = generateSigningKeyPair();
    const signature = standardSignatureHeader([newer, older], 'evt_1', t, body, pair.signingKey);
    const headers = { id: 'evt_1', timestamp: String(t), signature };
    expect(verifyStandardSignature(body, headers, newer, { now: t })).toEqual({ ok: true, timestamp: t });
    expect(verifyStandardSignature(Buffer.from(body), headers, [older], { now: t })).toEqual({ ok: true, timestamp: t });
    // The older secret in the standard's spelling is the same key.
    expect(standardSecret(older)).toBe(`whsec_${Buffer.from(Array.from({ length: 32 }, (_, i) => i)).toString('base64')}`);
    expect(verifyStandardSignature(body, headers, standardSecret(older), { now: t })).toEqual({ ok: true, timestamp: t });
    // Only the v1a: the public key verifies it, another does not.
    const onlyEd = { ...headers, signature: signature.split(' ').filter((p) => p.startsWith('v1a,')).join(' ') };
    expect(verifyStandardSignature(body, onlyEd, [], { now: t, publicKeys: pair.publicKey })).toEqual({ ok: true, timestamp: t });
    expect(verifyStandardSignature(body, onlyEd, [], { now: t, publicKeys: [generateSigningKeyPair().publicKey] })).toEqual({ ok: false, reason: 'mismatch' });
    expect(verifyStandardSignature(body, onlyEd, [newer], { now: t })).toEqual({ ok: false, reason: 'no_v1' });
  });

  it('refuses another secret, a changed body or id, an old or future timestamp, and malformed headers', () => {
    const secret = generateSecret();
    const headers = { id: 'evt_1', timestamp: String(t), signature: standardSignatureHeader([secret], 'evt_1', t, body) };
    expect(verifyStandardSignature(body, headers, generateSecret(), { now: t })).toEqual({ ok: false, reason: 'mismatch' });
    expect(verifyStandardSignature(`${body}\n`, headers, secret, { now: t })).toEqual({ ok: false, reason: 'mismatch' });
    expect(verifyStandardSignature(body, { ...headers, id: 'evt_2' }, secret, { now: t })).toEqual({ ok: false, reason: 'mismatch' });
    expect(verifyStandardSignature(body, headers, secret, { now: t + 301 })).toEqual({ ok: false, reason: 'timestamp_out_of_tolerance' });
    expect(verifyStandardSignature(body, headers, secret, { now: t - 301 })).toEqual({ ok: false, reason: 'timestamp_out_of_tolerance' });
    expect(verifyStandardSignature(body, { ...headers, timestamp: 'soon' }, secret, { now: t })).toEqual({ ok: false, reason: 'malformed' });
    expect(verifyStandardSignature(body, { ...headers, id: undefined }, secret, { now: t })).toEqual({ ok: false, reason: 'malformed' });
    expect(verifyStandardSignature(body, { ...headers, signature: 'v2,abc' }, secret, { now: t })).toEqual({ ok: false, reason: 'no_v1' });
    expect(() => verifyStandardSignature(body, headers, [], { now: t })).toThrow(TypeError);
  });

  it('verifyWebhook checks the Standard Webhooks headers when present, else x-service-signature, with the same secret', () => {
    const secret = generateSecret();
    const standard = { 'webhook-id': 'evt_1', 'webhook-timestamp': String(t), 'webhook-signature': standardSignatureHeader([secret], 'evt_1', t, body) };
    const spec = { 'x-service-signature': signHeader([secret], t, body) };
    expect(verifyWebhook(body, standard, secret, { now: t })).toEqual({ ok: true, timestamp: t });
    expect(verifyWebhook(body, spec, secret, { now: t })).toEqual({ ok: true, timestamp: t });
    expect(verifyWebhook(body, new Headers({ ...standard, ...spec }), secret, { now: t })).toEqual({ ok: true, timestamp: t });
    expect(verifyWebhook(body, { 'Webhook-Id': 'evt_1', 'Webhook-Timestamp': String(t), 'Webhook-Signature': standard['webhook-signature'] }, secret, { now: t })).toEqual({ ok: true, timestamp: t });
    expect(verifyWebhook(body, spec, generateSecret(), { now: t })).toEqual({ ok: false, reason: 'mismatch' });
    expect(verifyWebhook(body, {}, secret, { now: t })).toEqual({ ok: false, reason: 'malformed' });
  });
});
