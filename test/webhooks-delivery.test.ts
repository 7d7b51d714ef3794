// Signed webhook delivery end to end, on loopback receivers: a write → its event → a signed
// POST that verifies with the SDK and with a hand-written Stripe-style check; the retry ladder
// walked with a ManualClock; failure classes; `*` vs `audit.*`; disabled endpoints; isolation of
// a hanging endpoint; crash recovery on a file database; secret rotation; retry and recover.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../core/kernel/clock.ts';
import type { Host } from '../core/host.ts';
import type { HostConfig } from '../core/kernel/config.ts';
import { verifySignature } from '../sdk/verify-signature.ts';
import { unixSeconds } from '../core/webhooks/signature.ts';
import { column, createCompany, createCustomer, invoiceBody, makeHost, scalar, type TestCompany } from './webhook-helpers.ts';
import { ok200, receiver, type Behaviour, type Receiver } from './webhooks-kit.ts';

const WEBHOOKS: HostConfig['webhooks'] = { ladder: [1, 2, 3], timeoutMs: 300, allowLoopback: true, allowPrivate: false, maxInFlightPerEndpoint: 2, rotationGraceSeconds: 60, jitter: 0 };

/** Stripe-style verification written out by hand: HMAC-SHA256 of `${t}.${rawBody}`, any v1 matching. */
function stripeStyleCheck(raw: string, header: string, secret: string): boolean {
  const parts = header.split(',').map((p) => p.split('='));
  const t = parts.find(([k]) => k === 't')![1];
  const expected = createHmac('sha256', secret).update(`${t}.${raw}`).digest();
  return parts.filter(([k]) => k === 'v1').some(([, v]) => timingSafeEqual(Buffer.from(v, 'hex'), expected));
}

const v1Count = (header: string) => header.split(',').filter((p) => p.startsWith('v1=')).length;

async function addEndpoint(co: TestCompany, url: string, topics: string[], extra: Record<string, unknown> = {}) {
  const res = await co.as().post('/api/v1/webhook-endpoints', { url, topics, ...extra });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data as { id: string; secret: string };
}

describe('webhook delivery', () => {
  let host: Host;
  let clock: ManualClock;
  let co: TestCompany;
  const receivers: Receiver[] = [];
  const rcv = async (b?: Behaviour) => {
    const r = await receiver(b);
    receivers.push(r);
    return r;
  };

  beforeAll(async () => {
    clock = new ManualClock(Date.UTC(2026, 0, 15, 9, 0, 0));
    host = await makeHost({ clock, config: { webhooks: WEBHOOKS } });
  });
  afterAll(async () => {
    await host.close();
    await Promise.all(receivers.map((r) => r.close()));
  });

  const company = () => createCompany(host, { name: 'Hooks Co' });

  it('delivers a created invoice to an invoice.* consumer, signed so both the SDK and a hand-written check verify it', async () => {
    co = await company();
    const r = await rcv();
    const ep = await addEndpoint(co, r.url, ['invoice.*']);
    expect(ep.secret).toMatch(/^whsec_/);
    // The server runs the delivery loop once it listens.
    expect(host.webhooks.dispatcher.isRunning).toBe(false);
    await host.app.listen({ port: 0, host: '127.0.0.1' });
    expect(host.webhooks.dispatcher.isRunning).toBe(true);
    try {
      const customer = await createCustomer(co.as());
      const inv = await co.as().post('/api/v1/invoices', invoiceBody(customer.id));
      expect(inv.statusCode, inv.body).toBe(201);
      const [got] = await r.waitFor(1);
      expect(got.body).toMatchObject({ type: 'invoice.created', companyId: co.company.id, data: { id: inv.json().data.id } });
      expect(Object.keys(got.body)).toEqual(['id', 'type', 'createdAt', 'companyId', 'data']);
      expect(got.headers['content-type']).toBe('application/json');
      expect(got.headers['x-diwan-event-id']).toBe(got.body.id);
      expect(got.headers['x-diwan-delivery-id']).toMatch(/^dlv_/);
      const header = String(got.headers['x-service-signature']);
      expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
      expect(Number(header.slice(2, header.indexOf(',')))).toBe(unixSeconds(clock.now()));
      expect(verifySignature(got.raw, header, ep.secret, { now: unixSeconds(clock.now()) })).toEqual({ ok: true, timestamp: unixSeconds(clock.now()) });
      expect(stripeStyleCheck(got.raw, header, ep.secret)).toBe(true);
      expect(stripeStyleCheck(got.raw, header, 'whsec_wrong')).toBe(false);

      // The delivery log shows it delivered, with its one attempt.
      const deadline = Date.now() + 3000;
      let list;
      do {
        list = (await co.as().get(`/api/v1/webhook-endpoints/${ep.id}/deliveries?state=delivered`)).json();
        if (list.total === 1) break;
        await new Promise((res) => setTimeout(res, 10));
      } while (Date.now() < deadline);
      expect(list.total).toBe(1);
      expect(list.data[0]).toMatchObject({ id: got.headers['x-diwan-delivery-id'], eventId: got.body.id, topic: 'invoice.created', state: 'delivered', attemptCount: 1, lastStatus: 200 });
      const one = (await co.as().get(`/api/v1/webhook-endpoints/${ep.id}/deliveries/${list.data[0].id}`)).json().data;
      expect(one.attempts).toEqual([expect.objectContaining({ attempt: 1, status: 200, failure: null, responseExcerpt: 'thanks', responseBytes: 6 })]);
    } finally {
      await host.webhooks.dispatcher.stop();
    }
  });

  describe('driven by tick()', () => {
    let h: Host;
    let c: ManualClock;
    let cc: TestCompany;
    beforeAll(async () => {
      c = new ManualClock(Date.UTC(2026, 0, 15, 9, 0, 0));
      h = await makeHost({ clock: c, config: { webhooks: WEBHOOKS } });
    });
    afterAll(() => h.close());

    const add = async (url: string, topics: string[], extra: Record<string, unknown> = {}) => {
      const res = await cc.as().post('/api/v1/webhook-endpoints', { url, topics, ...extra });
      expect(res.statusCode, res.body).toBe(201);
      return res.json().data as { id: string; secret: string };
    };
    const trigger = async (epId: string, topic = 'invoice.overdue') => {
      const res = await cc.as().post(`/api/v1/webhook-endpoints/${epId}/test`, { topic });
      expect(res.statusCode, res.body).toBe(202);
      return res.json().data.eventId as string;
    };
    const deliveriesOf = async (epId: string, q = '') => (await cc.as().get(`/api/v1/webhook-endpoints/${epId}/deliveries${q}`)).json();

    it('walks a 500-answering receiver pending → pending → … → dead after 1 + ladder.length attempts, every attempt logged', async () => {
      cc = await createCompany(h);
      const r = await rcv((_req, res) => {
        res.writeHead(500);
        res.end('boom');
      });
      const ep = await add(r.url, ['invoice.overdue']);
      const eventId = await trigger(ep.id);
      expect(await h.webhooks.tick()).toMatchObject({ attempts: 1 });
      let d = (await deliveriesOf(ep.id)).data[0];
      expect(d).toMatchObject({ eventId, state: 'pending', attemptCount: 1, lastStatus: 500, lastFailure: 'http_status', nextAttemptAt: new Date(c.now() + 1000).toISOString() });

      // Not due yet: nothing is attempted.
      c.advance(999);
      expect((await h.webhooks.tick()).attempts).toBe(0);
      for (const [step, expected] of [[1, 2], [2, 3], [3, 4]] as const) {
        c.advance(step === 1 ? 1 : step * 1000);
        expect((await h.webhooks.tick()).attempts).toBe(1);
        d = (await deliveriesOf(ep.id)).data[0];
        expect(d.attemptCount).toBe(expected);
        expect(d.state).toBe(expected === 4 ? 'dead' : 'pending');
      }
      expect(d).toMatchObject({ state: 'dead', nextAttemptAt: null });
      c.advance(3_600_000);
      expect((await h.webhooks.tick()).attempts).toBe(0);
      expect(r.got).toHaveLength(4);
      // Same delivery and event id on every attempt.
      expect(new Set(r.got.map((g) => g.headers['x-diwan-delivery-id']))).toEqual(new Set([d.id]));
      expect(new Set(r.got.map((g) => g.body.id))).toEqual(new Set([eventId]));
      expect(r.got.every((g) => g.body.test === true)).toBe(true);

      const dead = await deliveriesOf(ep.id, '?state=dead');
      expect(dead.total).toBe(1);
      const one = (await cc.as().get(`/api/v1/webhook-endpoints/${ep.id}/deliveries/${d.id}`)).json().data;
      expect(one.attempts).toHaveLength(4);
      expect(one.attempts.map((a: { attempt: number }) => a.attempt)).toEqual([1, 2, 3, 4]);
      for (const a of one.attempts) expect(a).toMatchObject({ status: 500, failure: 'http_status', responseExcerpt: 'boom', responseBytes: 4 });

      // Manual retry of the dead delivery: a new attempt now, same ids.
      r.behave(ok200);
      const retry = await cc.as().post(`/api/v1/webhook-endpoints/${ep.id}/deliveries/${d.id}/retry`);
      expect(retry.statusCode, retry.body).toBe(202);
      expect(retry.json().data).toMatchObject({ id: d.id, state: 'pending' });
      expect((await h.webhooks.tick()).attempts).toBe(1);
      const after = (await cc.as().get(`/api/v1/webhook-endpoints/${ep.id}/deliveries/${d.id}`)).json().data;
      expect(after).toMatchObject({ state: 'delivered', attemptCount: 5, lastStatus: 200 });
      expect(r.got[4].headers['x-diwan-delivery-id']).toBe(d.id);
    });

    it('counts a 3xx as a failure (never followed) and a hanging receiver as a timeout', async () => {
      cc = await createCompany(h);
      const redirect = await rcv((_req, res) => {
        res.writeHead(302, { location: 'http://127.0.0.1:1/elsewhere' });
        res.end();
      });
      const hanging = await rcv(() => {});
      const ep1 = await add(redirect.url, ['invoice.overdue']);
      const ep2 = await add(hanging.url, ['invoice.overdue']);
      await trigger(ep1.id);
      const t0 = Date.now();
      expect((await h.webhooks.tick()).attempts).toBe(2);
      expect(Date.now() - t0).toBeLessThan(3000);
      expect((await deliveriesOf(ep1.id)).data[0]).toMatchObject({ state: 'pending', attemptCount: 1, lastStatus: 302, lastFailure: 'redirect' });
      expect((await deliveriesOf(ep2.id)).data[0]).toMatchObject({ state: 'pending', attemptCount: 1, lastFailure: 'timeout' });
      expect(redirect.got).toHaveLength(1);
    });

    it('delivers audit events only to audit.*, never to *; a disabled endpoint gets nothing', async () => {
      cc = await createCompany(h);
      await h.webhooks.tick();
      const all = await rcv();
      const audit = await rcv();
      const off = await rcv();
      const epAll = await add(all.url, ['*']);
      const epAudit = await add(audit.url, ['audit.*']);
      const epOff = await add(off.url, ['*', 'audit.*'], { enabled: false });
      await createCustomer(cc.as(), 'Audited');
      await h.webhooks.runDue();
      const types = (r: Receiver) => r.got.map((g) => g.body.type);
      expect(types(all)).toContain('customer.created');
      expect(types(all).some((t) => t.startsWith('audit.'))).toBe(false);
      expect(types(audit)).toContain('audit.customers.create');
      // Audit topics are snake_case: the endpoint registered after this one is in its trail.
      expect(types(audit)).toContain('audit.webhook_endpoints.create');
      expect(types(audit).every((t) => t.startsWith('audit.'))).toBe(true);
      expect(off.got).toHaveLength(0);
      expect((await deliveriesOf(epOff.id)).total).toBe(0);
      expect(epAll.id).not.toBe(epAudit.id);

      // Enabling it later reaches it from the next event on.
      expect((await cc.as().patch(`/api/v1/webhook-endpoints/${epOff.id}`, { enabled: true })).statusCode).toBe(200);
      await createCustomer(cc.as(), 'Second');
      await h.webhooks.runDue();
      expect(types(off)).toEqual(expect.arrayContaining(['customer.created', 'audit.customers.create']));
    });

    it('signs with both secrets during a rotation grace period, with the new one only after it', async () => {
      cc = await createCompany(h);
      const r = await rcv();
      const ep = await add(r.url, ['invoice.overdue']);
      const rot = await cc.as().post(`/api/v1/webhook-endpoints/${ep.id}/rotate-secret`);
      expect(rot.statusCode, rot.body).toBe(200);
      const fresh = rot.json().data.secret as string;
      expect(fresh).toMatch(/^whsec_/);
      expect(fresh).not.toBe(ep.secret);
      expect(rot.json().data.previousSecretValidUntil).toBe(new Date(c.now() + 60_000).toISOString());

      await trigger(ep.id);
      await h.webhooks.tick();
      const during = r.got[0];
      const h1 = String(during.headers['x-service-signature']);
      expect(v1Count(h1)).toBe(2);
      const now = () => unixSeconds(c.now());
      expect(verifySignature(during.raw, h1, ep.secret, { now: now() }).ok).toBe(true);
      expect(verifySignature(during.raw, h1, fresh, { now: now() }).ok).toBe(true);
      expect(stripeStyleCheck(during.raw, h1, ep.secret)).toBe(true);
      expect(stripeStyleCheck(during.raw, h1, fresh)).toBe(true);

      c.advance(60_001);
      await trigger(ep.id);
      await h.webhooks.tick();
      const afterGrace = r.got[1];
      const h2 = String(afterGrace.headers['x-service-signature']);
      expect(v1Count(h2)).toBe(1);
      expect(verifySignature(afterGrace.raw, h2, fresh, { now: now() }).ok).toBe(true);
      expect(verifySignature(afterGrace.raw, h2, ep.secret, { now: now() })).toEqual({ ok: false, reason: 'mismatch' });
    });

    it('previews and applies recover-since: failed and dead deliveries since T are rescheduled', async () => {
      cc = await createCompany(h);
      const r = await rcv((_req, res) => {
        res.writeHead(503);
        res.end();
      });
      const ep = await add(r.url, ['invoice.overdue']);
      const before = new Date(c.now() - 1000).toISOString();
      await trigger(ep.id);
      await trigger(ep.id);
      await h.webhooks.tick();
      // Walk the first two to dead.
      for (const s of [1, 2, 3]) {
        c.advance(s * 1000);
        await h.webhooks.tick();
      }
      expect((await deliveriesOf(ep.id, '?state=dead')).total).toBe(2);
      await trigger(ep.id);
      await h.webhooks.tick();
      expect((await deliveriesOf(ep.id, '?state=retrying')).total).toBe(1);

      const preview = await cc.as().get(`/api/v1/webhook-endpoints/${ep.id}/recover?since=${encodeURIComponent(before)}`);
      expect(preview.statusCode, preview.body).toBe(200);
      expect(preview.json().data).toEqual({ since: before, count: 3, dead: 2, retrying: 1 });
      const future = await cc.as().get(`/api/v1/webhook-endpoints/${ep.id}/recover?since=${encodeURIComponent(new Date(c.now() + 1000).toISOString())}`);
      expect(future.json().data.count).toBe(0);
      const bad = await cc.as().get(`/api/v1/webhook-endpoints/${ep.id}/recover?since=yesterday`);
      expect(bad.statusCode).toBe(400);

      r.behave(ok200);
      const apply = await cc.as().post(`/api/v1/webhook-endpoints/${ep.id}/recover`, { since: before });
      expect(apply.statusCode, apply.body).toBe(202);
      expect(apply.json().data).toMatchObject({ count: 3 });
      // Two at a time per endpoint (maxInFlightPerEndpoint), so two rounds.
      expect((await h.webhooks.tick()).attempts).toBe(2);
      expect(await h.webhooks.runDue()).toBe(1);
      expect((await deliveriesOf(ep.id, '?state=delivered')).total).toBe(3);
      expect((await cc.as().get(`/api/v1/webhook-endpoints/${ep.id}/recover?since=${encodeURIComponent(before)}`)).json().data.count).toBe(0);
    });

    it('fans out and marks the outbox in one step: a second fan-out adds nothing', async () => {
      cc = await createCompany(h);
      const r = await rcv();
      const ep = await add(r.url, ['invoice.overdue']);
      await trigger(ep.id);
      expect(await h.webhooks.dispatcher.fanOut()).toBeGreaterThan(0);
      const n = (await deliveriesOf(ep.id)).total;
      expect(n).toBe(1);
      expect(await scalar(h, 'SELECT count(*) AS n FROM outbox WHERE dispatched_at IS NULL')).toBe(0);
      expect(await h.webhooks.dispatcher.fanOut()).toBe(0);
      expect((await deliveriesOf(ep.id)).total).toBe(1);
      await h.webhooks.tick();
      expect(r.got).toHaveLength(1);
    });
  });

  it('does not let a hanging endpoint delay another endpoint', async () => {
    const c = new ManualClock(Date.UTC(2026, 0, 15, 9, 0, 0));
    const h = await makeHost({ clock: c, config: { webhooks: { ...WEBHOOKS, timeoutMs: 4000, maxInFlightPerEndpoint: 1 } } });
    const hanging = await receiver(() => {});
    const fast = await receiver();
    try {
      const cc = await createCompany(h);
      const post = async (url: string) => (await cc.as().post('/api/v1/webhook-endpoints', { url, topics: ['invoice.overdue'] })).json().data;
      const slow = await post(hanging.url);
      await post(fast.url);
      h.webhooks.start();
      const started = Date.now();
      for (let i = 0; i < 5; i++) expect((await cc.as().post(`/api/v1/webhook-endpoints/${slow.id}/test`, { topic: 'invoice.overdue' })).statusCode).toBe(202);
      await fast.waitFor(5, 3000);
      expect(Date.now() - started).toBeLessThan(2500);
      // The hanging endpoint holds at most maxInFlightPerEndpoint attempts.
      await hanging.waitFor(1, 2000);
      await new Promise((r) => setTimeout(r, 100));
      expect(hanging.got).toHaveLength(1);
      // One at a time per endpoint: events reach the fast endpoint in event order.
      const ids = fast.got.map((g) => g.body.id);
      const order = await column(h, "SELECT id FROM outbox WHERE topic = 'invoice.overdue' ORDER BY seq");
      expect(ids).toEqual(order.slice(-5));
    } finally {
      await hanging.close();
      await fast.close();
      await h.close();
    }
  });
});

describe('crash recovery on a file database', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'diwan-webhooks-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('delivers an event committed before a crash, before any dispatch', async () => {
    const dbFile = path.join(dir, 'a.db');
    const r = await receiver();
    try {
      const h1 = await makeHost({ dbFile, config: { webhooks: WEBHOOKS } });
      const co = await createCompany(h1);
      const ep = (await co.as().post('/api/v1/webhook-endpoints', { url: r.url, topics: ['invoice.*'] })).json().data;
      const customer = await createCustomer(co.as());
      const inv = (await co.as().post('/api/v1/invoices', invoiceBody(customer.id))).json().data;
      await h1.close(); // the dispatcher never ran

      const h2 = await makeHost({ dbFile, config: { webhooks: WEBHOOKS } });
      try {
        h2.webhooks.start();
        const [got] = await r.waitFor(1);
        expect(got.body).toMatchObject({ type: 'invoice.created', data: { id: inv.id } });
        expect(verifySignature(got.raw, String(got.headers['x-service-signature']), ep.secret).ok).toBe(true);
      } finally {
        await h2.close();
      }
    } finally {
      await r.close();
    }
  });

  it('re-sends a delivery left in flight with the same event id and delivery id', async () => {
    const dbFile = path.join(dir, 'b.db');
    const r = await receiver();
    try {
      const h1 = await makeHost({ dbFile, config: { webhooks: WEBHOOKS } });
      const co = await createCompany(h1);
      const ep = (await co.as().post('/api/v1/webhook-endpoints', { url: r.url, topics: ['invoice.overdue'] })).json().data;
      const eventId = (await co.as().post(`/api/v1/webhook-endpoints/${ep.id}/test`, {})).json().data.eventId;
      await h1.webhooks.dispatcher.fanOut();
      // The process "died" after sending, before storing the result.
      await h1.storage.db.run("UPDATE webhook_deliveries SET state = 'in_flight' WHERE endpoint_id = ?", [ep.id]);
      const deliveryId = await scalar(h1, 'SELECT id FROM webhook_deliveries WHERE endpoint_id = ?', ep.id);
      await h1.close();

      const h2 = await makeHost({ dbFile, config: { webhooks: WEBHOOKS } });
      try {
        h2.webhooks.start();
        const [got] = await r.waitFor(1);
        expect(got.headers['x-diwan-delivery-id']).toBe(deliveryId);
        expect(got.headers['x-diwan-event-id']).toBe(eventId);
        expect(got.body.id).toBe(eventId);
        const deadline = Date.now() + 3000;
        let state;
        do {
          state = await scalar(h2, 'SELECT state FROM webhook_deliveries WHERE id = ?', deliveryId);
          if (state === 'delivered') break;
          await new Promise((res) => setTimeout(res, 10));
        } while (Date.now() < deadline);
        expect(state).toBe('delivered');
      } finally {
        await h2.close();
      }
    } finally {
      await r.close();
    }
  });
});
