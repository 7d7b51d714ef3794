// Deliveries made by a running host verify with the consumers' own libraries, unchanged: the
// Standard Webhooks headers with `standardwebhooks` and `svix`, the spec's x-service-signature
// with Stripe's `webhooks.constructEvent`, and the optional ed25519 `v1a` with the endpoint's
// public key; during a rotation's grace period both secrets' signatures are present and each
// verifies with its own secret; a secret minted before keeps working (the spec's scheme as it
// is, the standard's through `standardSecret`), and rotating it gives one of the standard's form.
//
// The libraries compare the timestamp with the system clock, so the host's driven clock starts
// at the real time and the test steps it only within their 5-minute tolerance.
import { createPublicKey, verify as edVerify } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import Stripe from 'stripe';
import { ManualClock } from '../core/kernel/clock.ts';
import { SecretBox, generateKey } from '../core/kernel/secret-box.ts';
import type { Host } from '../core/host.ts';
import { verifySignature, verifyWebhook, standardSecret } from '../sdk/verify-signature.ts';
import { addEndpoint, createCompany, makeHost, receiver, type Received, type Receiver, type TestCompany } from './webhooks-kit.ts';

const stripe = new Stripe('sk_test_not_used_offline');

/** The headers a library reads, as plain strings (Node gives string | string[]). */
const flat = (h: Received['headers']): Record<string, string> => Object.fromEntries(Object.entries(h).map(([k, v]) => [k, Array.isArray(v) ? v[0] : String(v)]));

/** Every check a consumer could make with `secret`; each throws or fails on its own. */
function verifiesWith(got: Received, secret: string): void {
  const headers = flat(got.headers);
  // Standard Webhooks: the standard's own library and svix, given the secret in the standard's spelling.
  expect(new StandardWebhook(standardSecret(secret)).verify(got.raw, headers)).toEqual(got.body);
  expect(new SvixWebhook(standardSecret(secret)).verify(got.raw, headers)).toEqual(got.body);
  // The spec's scheme: Stripe's library, with the secret string as shown.
  const event = stripe.webhooks.constructEvent(got.raw, headers['x-service-signature'], secret);
  expect(event).toEqual(got.body);
  // The SDK, either scheme.
  expect(verifySignature(got.raw, headers['x-service-signature'], secret)).toMatchObject({ ok: true });
  expect(verifyWebhook(got.raw, headers, secret)).toMatchObject({ ok: true });
}

function refusedWith(got: Received, secret: string): void {
  const headers = flat(got.headers);
  expect(() => new StandardWebhook(standardSecret(secret)).verify(got.raw, headers)).toThrow();
  expect(() => new SvixWebhook(standardSecret(secret)).verify(got.raw, headers)).toThrow();
  expect(() => stripe.webhooks.constructEvent(got.raw, headers['x-service-signature'], secret)).toThrow();
}

describe('deliveries verify with standardwebhooks, svix and Stripe, unchanged', () => {
  let host: Host;
  let clock: ManualClock;
  let co: TestCompany;
  let r: Receiver;
  const box = new SecretBox([generateKey()]);

  beforeAll(async () => {
    clock = new ManualClock(Date.now());
    host = await makeHost({ clock, secretBox: box, webhooks: { rotationGraceSeconds: 3600 } });
    co = await createCompany(host);
    r = await receiver();
  });
  afterAll(async () => {
    await host.close();
    await r.close();
  });

  /** Each test's endpoint goes at its end, so the next test's deliveries are its own. */
  const remove = async (id: string) => expect((await co.as().delete(`/api/v1/webhook-endpoints/${id}`)).statusCode).toBe(200);

  /** One real delivery of a created customer to the receiver (the host's dispatcher, its signing pool and sender). */
  const deliverOne = async (name: string): Promise<Received> => {
    const before = r.got.length;
    const res = await co.as().post('/api/v1/customers', { name });
    expect(res.statusCode, res.body).toBe(201);
    await host.webhooks.runDue();
    const got = await r.waitFor(before + 1);
    expect(got).toHaveLength(before + 1);
    return got[before];
  };

  it('a new endpoint: a standard-form secret, every library verifies, another secret is refused; the v1a verifies with the public key shown', async () => {
    const ep = await addEndpoint(co.as(), { url: r.url, topics: ['customer.created'], asymmetric: true });
    expect(ep.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(ep.publicKey).toMatch(/^whpk_[A-Za-z0-9+/]{43}=$/);
    const got = await deliverOne('Standard Co');
    expect(got.headers['webhook-id']).toBe(got.body.id);
    expect(got.headers['webhook-timestamp']).toBe(String(Math.floor(clock.now() / 1000)));
    expect(String(got.headers['x-service-signature'])).toBe(`t=${got.headers['webhook-timestamp']},v1=${/v1=([0-9a-f]{64})/.exec(String(got.headers['x-service-signature']))![1]}`);
    expect(String(got.headers['webhook-signature'])).toMatch(/^v1,[A-Za-z0-9+/]{43}= v1a,[A-Za-z0-9+/]{86}==$/);
    verifiesWith(got, ep.secret);
    refusedWith(got, `whsec_${Buffer.alloc(32, 7).toString('base64')}`);

    // The public key on the endpoint verifies the v1a over "<id>.<t>.<body>".
    const shown = (await co.as().get(`/api/v1/webhook-endpoints/${ep.id}`)).json().data;
    expect(shown.publicKey).toBe(ep.publicKey);
    const key = createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), Buffer.from(ep.publicKey.slice(5), 'base64')]), format: 'der', type: 'spki' });
    const v1a = String(got.headers['webhook-signature']).split(' ').find((p) => p.startsWith('v1a,'))!.slice(4);
    const signed = Buffer.from(`${got.headers['webhook-id']}.${got.headers['webhook-timestamp']}.${got.raw}`);
    expect(edVerify(null, signed, key, Buffer.from(v1a, 'base64'))).toBe(true);
    expect(verifyWebhook(got.raw, flat(got.headers), [], { publicKeys: ep.publicKey })).toMatchObject({ ok: true });
    // The signing key is sealed at rest, never stored in clear.
    const stored = (await host.storage.db.get<{ signing_key: string }>('SELECT signing_key FROM webhook_endpoints WHERE id = ?', [ep.id]))!;
    expect(stored.signing_key).not.toMatch(/^whsk_/);
    expect(box.decrypt(stored.signing_key, ep.id)).toMatch(/^whsk_/);
    await remove(ep.id);
  });

  it('during a rotation: both signatures in both headers, each secret verifies with every library; afterwards only the new one', async () => {
    const ep = await addEndpoint(co.as(), { url: r.url, topics: ['customer.created'] });
    const rotated = (await co.as().post(`/api/v1/webhook-endpoints/${ep.id}/rotate-secret`)).json().data;
    expect(rotated.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const got = await deliverOne('Rotating Co');
    expect(String(got.headers['x-service-signature']).match(/v1=/g)).toHaveLength(2);
    expect(String(got.headers['webhook-signature']).split(' ').map((p) => p.split(',')[0])).toEqual(['v1', 'v1']);
    verifiesWith(got, rotated.secret);
    verifiesWith(got, ep.secret);

    // After the grace period (an hour here) the old secret signs no more. The clock moves past it,
    // then the libraries' own clock is caught up by re-basing the host's: a fresh delivery is signed now.
    clock.advance(3601 * 1000);
    const before = r.got.length;
    await co.as().post('/api/v1/customers', { name: 'After grace' });
    await host.webhooks.runDue();
    const [after] = (await r.waitFor(before + 1)).slice(before);
    expect(String(after.headers['x-service-signature']).match(/v1=/g)).toHaveLength(1);
    expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1);
    // Verified with the timestamp as signed (an hour ahead of the system clock here): no tolerance.
    const headers = flat(after.headers);
    expect(verifyWebhook(after.raw, headers, rotated.secret, { toleranceSeconds: Infinity })).toMatchObject({ ok: true });
    expect(verifyWebhook(after.raw, headers, ep.secret, { toleranceSeconds: Infinity })).toEqual({ ok: false, reason: 'mismatch' });
    expect(verifySignature(after.raw, headers['x-service-signature'], ep.secret, { toleranceSeconds: Infinity })).toEqual({ ok: false, reason: 'mismatch' });
    clock.set(Date.now());
    await remove(ep.id);
  });

  it('a secret minted before (unpadded base64url) keeps verifying; rotating it gives a standard one, and in the grace period both verify', async () => {
    const ep = await addEndpoint(co.as(), { url: r.url, topics: ['customer.created'] });
    const legacy = 'whsec_' + Buffer.alloc(32, 0xfb).toString('base64url');
    expect(legacy).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    await host.storage.db.run('UPDATE webhook_endpoints SET secret = ? WHERE id = ?', [box.encrypt(legacy, ep.id), ep.id]);
    const got = await deliverOne('Legacy Co');
    verifiesWith(got, legacy);
    // The standard's libraries take it in their spelling only (a legacy secret as it is does not decode).
    expect(() => new StandardWebhook(legacy)).toThrow();

    const rotated = (await co.as().post(`/api/v1/webhook-endpoints/${ep.id}/rotate-secret`)).json().data;
    expect(rotated.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(standardSecret(rotated.secret)).toBe(rotated.secret);
    const during = await deliverOne('Legacy Co, rotating');
    verifiesWith(during, rotated.secret);
    verifiesWith(during, legacy);
    // The new secret as it is, for the standard's libraries.
    expect(new StandardWebhook(rotated.secret).verify(during.raw, flat(during.headers))).toEqual(during.body);
    await remove(ep.id);
  });
});
