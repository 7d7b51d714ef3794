// What the consumer says back, under a driven clock: a 410 Gone disables the endpoint at once
// (reason `gone`, audited, `webhook.endpoint.disabled`); a 429 or 503 with Retry-After (seconds
// or an HTTP-date) puts the next attempt at the time asked, capped at an hour, without using a
// ladder step, at most MAX_DEFERRALS times per delivery; retry times get bounded jitter and keep
// the ladder's order; per-endpoint custom headers arrive with every delivery, and bad ones are
// refused with every problem listed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../core/kernel/clock.ts';
import { CLI_ACTOR } from '../core/kernel/actor.ts';
import type { Host } from '../core/host.ts';
import { MAX_DEFERRALS, RETRY_AFTER_CAP_MS } from '../core/webhooks/ladder.ts';
import { MAX_CUSTOM_HEADERS } from '../core/webhooks/endpoints.ts';
import { addEndpoint, createCompany, expectError, makeHost, ok200, receiver, type Behaviour, type Receiver, type TestCompany } from './webhooks-kit.ts';

const T0 = Date.UTC(2026, 2, 1, 9, 0, 0);

const answer = (code: number, headers: Record<string, string> = {}): Behaviour => (_req, res) => {
  res.writeHead(code, { 'content-type': 'text/plain', ...headers });
  res.end(`status ${code}`);
};

describe('the consumer’s signals (driven clock)', () => {
  let host: Host;
  let clock: ManualClock;
  const receivers: Receiver[] = [];
  const rcv = async (b?: Behaviour) => {
    const r = await receiver(b);
    receivers.push(r);
    return r;
  };

  beforeAll(async () => {
    clock = new ManualClock(T0);
    // A three-step ladder (1 s, 2 s, 3 s), no jitter: the times below are exact.
    host = await makeHost({ clock, config: { webhookDisableAfterSeconds: 5 * 86_400 }, webhooks: { ladder: [1, 2, 3] } });
  });
  afterAll(async () => {
    await host.close();
    await Promise.all(receivers.map((r) => r.close()));
  });

  const trigger = async (co: TestCompany, epId: string) => {
    const res = await co.as().post(`/api/v1/webhook-endpoints/${epId}/test`, { topic: 'invoice.overdue' });
    expect(res.statusCode, res.body).toBe(202);
    return res.json().data.eventId as string;
  };
  const deliveryOf = async (co: TestCompany, epId: string) => {
    const list = (await co.as().get(`/api/v1/webhook-endpoints/${epId}/deliveries`)).json().data;
    expect(list).toHaveLength(1);
    return (await co.as().get(`/api/v1/webhook-endpoints/${epId}/deliveries/${list[0].id}`)).json().data;
  };
  const endpoint = async (co: TestCompany, id: string) => (await co.as().get(`/api/v1/webhook-endpoints/${id}`)).json().data;

  it('a 410 Gone disables the endpoint at once: reason and detail shown, audited, webhook.endpoint.disabled raised; nothing more is sent', async () => {
    const co = await createCompany(host);
    const gone = await rcv(answer(410));
    const watcher = await rcv(ok200);
    const ep = await addEndpoint(co.as(), { url: gone.url, topics: ['invoice.overdue'] });
    await addEndpoint(co.as(), { url: watcher.url, topics: ['webhook.*'] });
    await trigger(co, ep.id);
    await host.webhooks.runDue();
    expect(gone.got).toHaveLength(1);
    const e = await endpoint(co, ep.id);
    expect(e).toMatchObject({ enabled: false, disabledReason: 'gone', disabledAt: new Date(T0).toISOString() });
    expect(e.disabledDetail).toBe(`the endpoint answered 410 Gone at ${new Date(T0).toISOString()}: it asked for no more deliveries`);
    const ar = (await co.as().get(`/api/v1/webhook-endpoints/${ep.id}`, { 'accept-language': 'ar' })).json().data;
    expect(ar.disabledDetail).toContain('410 Gone');
    expect(ar.disabledDetail).not.toBe(e.disabledDetail);
    const disabled = watcher.got.filter((g) => g.body.type === 'webhook.endpoint.disabled');
    expect(disabled).toHaveLength(1);
    expect(disabled[0].body.data).toMatchObject({ endpointId: ep.id, url: gone.url, reason: 'gone', lastStatus: 410, lastFailure: 'http_status', disabledAt: new Date(T0).toISOString() });
    const audited = await host.storage.db.all<{ action: string; actor_id: string }>('SELECT action, actor_id FROM audit_log WHERE resource = ? AND resource_id = ? ORDER BY seq', ['webhook-endpoints', ep.id]);
    expect(audited.map((a) => a.action)).toEqual(['create', 'disable']);

    // Its retry waits while it is disabled (past the ladder's step), and new events skip it.
    clock.advance(10_000);
    await host.catalogue.trigger(co.company.id, 'invoice.overdue', CLI_ACTOR);
    await host.webhooks.runDue();
    expect(gone.got).toHaveLength(1);
    expect(await deliveryOf(co, ep.id)).toMatchObject({ state: 'pending', attemptCount: 1, lastStatus: 410 });
    // Enabled again, the waiting retry goes out (and, answered 410 again, disables it again).
    expect((await co.as().post(`/api/v1/webhook-endpoints/${ep.id}/enable`)).statusCode).toBe(200);
    await host.webhooks.runDue();
    expect(gone.got).toHaveLength(2);
    expect(await endpoint(co, ep.id)).toMatchObject({ enabled: false, disabledReason: 'gone', disabledAt: new Date(clock.now()).toISOString() });
  });

  it('a 503 with Retry-After in seconds: the next attempt at the time asked, same ids, without using a ladder step', async () => {
    const co = await createCompany(host);
    const r = await rcv(answer(503, { 'retry-after': '120' }));
    const ep = await addEndpoint(co.as(), { url: r.url, topics: ['invoice.overdue'] });
    const start = clock.now();
    await trigger(co, ep.id);
    await host.webhooks.runDue();
    let d = await deliveryOf(co, ep.id);
    expect(d).toMatchObject({ state: 'pending', attemptCount: 1, lastStatus: 503, nextAttemptAt: new Date(start + 120_000).toISOString() });
    expect(d.attempts[0].detail).toMatch(/^Retry-After: 120 honoured; this attempt does not use a retry step$/);

    // Not before the time asked, though the ladder's first step (1 s) has long passed.
    clock.advance(119_999);
    expect((await host.webhooks.tick()).attempts).toBe(0);
    // Then a plain failure: the ladder's FIRST step (1 s), not its second.
    r.behave(answer(500));
    clock.advance(1);
    expect((await host.webhooks.tick()).attempts).toBe(1);
    d = await deliveryOf(co, ep.id);
    expect(d).toMatchObject({ state: 'pending', attemptCount: 2, lastStatus: 500, nextAttemptAt: new Date(clock.now() + 1000).toISOString() });
    // Every attempt carries the same event and delivery ids (webhook-id is the event id).
    expect(r.got).toHaveLength(2);
    expect(r.got[1].headers['webhook-id']).toBe(r.got[0].headers['webhook-id']);
    expect(r.got[0].headers['webhook-id']).toBe(r.got[0].body.id);
    expect(r.got[1].headers['x-diwan-delivery-id']).toBe(r.got[0].headers['x-diwan-delivery-id']);
    // Then the ladder on: 2 s, 3 s, and dead after 1 + 3 ladder attempts + the one deferred.
    clock.advance(1000);
    await host.webhooks.tick();
    expect(await deliveryOf(co, ep.id)).toMatchObject({ state: 'pending', attemptCount: 3, nextAttemptAt: new Date(clock.now() + 2000).toISOString() });
    clock.advance(2000);
    await host.webhooks.tick();
    clock.advance(3000);
    await host.webhooks.tick();
    expect(await deliveryOf(co, ep.id)).toMatchObject({ state: 'dead', attemptCount: 5 });
  });

  it('a 429 with Retry-After as an HTTP-date, and a wait over the cap is capped at an hour', async () => {
    const co = await createCompany(host);
    const at = new Date(clock.now() + 90_000).toUTCString();
    const r = await rcv(answer(429, { 'retry-after': at }));
    const ep = await addEndpoint(co.as(), { url: r.url, topics: ['invoice.overdue'] });
    await trigger(co, ep.id);
    await host.webhooks.runDue();
    // The date has whole seconds; the clock started on one.
    expect(await deliveryOf(co, ep.id)).toMatchObject({ state: 'pending', attemptCount: 1, lastStatus: 429, nextAttemptAt: new Date(Date.parse(at)).toISOString() });

    r.behave(answer(503, { 'retry-after': String(5 * 86_400) }));
    clock.set(Date.parse(at));
    await host.webhooks.tick();
    const d = await deliveryOf(co, ep.id);
    expect(d).toMatchObject({ state: 'pending', attemptCount: 2, nextAttemptAt: new Date(clock.now() + RETRY_AFTER_CAP_MS).toISOString() });
    expect(d.attempts[1].detail).toBe('Retry-After: 432000 honoured (capped at 3600 s); this attempt does not use a retry step');
    // A Retry-After on another status (a 500) is not honoured: the ladder.
    r.behave(answer(500, { 'retry-after': '600' }));
    clock.advance(RETRY_AFTER_CAP_MS);
    await host.webhooks.tick();
    expect(await deliveryOf(co, ep.id)).toMatchObject({ attemptCount: 3, nextAttemptAt: new Date(clock.now() + 1000).toISOString() });
  });

  it(`honours at most ${MAX_DEFERRALS} Retry-After answers per delivery, so a delivery always ends`, async () => {
    const co = await createCompany(host);
    const r = await rcv(answer(503, { 'retry-after': '1' }));
    const ep = await addEndpoint(co.as(), { url: r.url, topics: ['invoice.overdue'] });
    await trigger(co, ep.id);
    let d;
    for (let i = 0; i < 20; i++) {
      await host.webhooks.tick();
      d = await deliveryOf(co, ep.id);
      if (d.state === 'dead') break;
      clock.set(Date.parse(d.nextAttemptAt));
    }
    // 1 + 3 ladder attempts, plus the deferred ones.
    expect(d).toMatchObject({ state: 'dead', attemptCount: 1 + 3 + MAX_DEFERRALS });
    const details = d.attempts.map((a: { detail: string }) => a.detail);
    expect(details.filter((x: string) => x.endsWith('does not use a retry step'))).toHaveLength(MAX_DEFERRALS);
    expect(details.slice(MAX_DEFERRALS)).toEqual(Array(4).fill(`Retry-After: 1 not honoured: ${MAX_DEFERRALS} already were for this delivery`));
  });

  it('custom headers arrive with every delivery, beside the signature headers; PATCH replaces them, null removes them', async () => {
    const co = await createCompany(host);
    const r = await rcv(ok200);
    const ep = await addEndpoint(co.as(), {
      url: r.url, topics: ['invoice.overdue'], headers: { 'X-Tenant': 'acme', authorization: 'Bearer for-the-receiver', 'user-agent': 'Acme-Hooks', constructor: 'a plain name too' },
    });
    expect(ep.headers).toEqual({ 'x-tenant': 'acme', authorization: 'Bearer for-the-receiver', 'user-agent': 'Acme-Hooks', constructor: 'a plain name too' });
    expect((await endpoint(co, ep.id)).headers).toEqual(ep.headers);
    await trigger(co, ep.id);
    await host.webhooks.runDue();
    expect(r.got[0].headers).toMatchObject({ 'x-tenant': 'acme', authorization: 'Bearer for-the-receiver', 'user-agent': 'Acme-Hooks', constructor: 'a plain name too', 'content-type': 'application/json' });
    expect(r.got[0].headers['x-service-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(r.got[0].headers['webhook-signature']).toMatch(/^v1,/);

    const patched = await co.as().patch(`/api/v1/webhook-endpoints/${ep.id}`, { headers: { 'x-region': 'me-central' } });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json().data.headers).toEqual({ 'x-region': 'me-central' });
    await trigger(co, ep.id);
    await host.webhooks.runDue();
    expect(r.got[1].headers['x-region']).toBe('me-central');
    expect(r.got[1].headers['x-tenant']).toBeUndefined();

    expect((await co.as().patch(`/api/v1/webhook-endpoints/${ep.id}`, { headers: null })).json().data.headers).toEqual({});
    await trigger(co, ep.id);
    await host.webhooks.runDue();
    expect(r.got[2].headers['x-region']).toBeUndefined();
  });

  it('refuses bad custom headers with VALIDATION_ERROR listing every one, on create and on PATCH', async () => {
    const co = await createCompany(host);
    const r = await rcv(ok200);
    const bad = {
      'x-service-signature': 'forged', 'Webhook-Signature': 'v1,forged', 'webhook-id': 'x', 'x-diwan-delivery-id': 'x',
      Connection: 'close', 'keep-alive': 'x', 'transfer-encoding': 'chunked', te: 'trailers', trailer: 'x', upgrade: 'h2c', 'Proxy-Authorization': 'x',
      host: 'evil.example', 'content-length': '1', 'Content-Type': 'text/plain',
      'bad name': 'x', 'x-ok': 'line\r\nbreak', 'x-fine': 'kept',
    };
    const err = expectError(await co.as().post('/api/v1/webhook-endpoints', { url: r.url, topics: ['invoice.overdue'], headers: bad }), 400, 'VALIDATION_ERROR');
    const named = err.details.map((d) => d.header);
    expect(named.sort()).toEqual(Object.keys(bad).filter((k) => k !== 'x-fine').sort());
    expect(err.details.find((d) => d.header === 'Connection')).toMatchObject({ in: 'body', pointer: '/headers/Connection', rule: 'header_refused' });
    expect(err.details.find((d) => d.header === 'Webhook-Signature')).toMatchObject({ rule: 'header_refused' });
    expect(err.details.find((d) => d.header === 'bad name')).toMatchObject({ rule: 'header_name' });
    expect(err.details.find((d) => d.header === 'x-ok')).toMatchObject({ rule: 'header_value' });
    expect((await co.as().get('/api/v1/webhook-endpoints')).json().total).toBe(0);

    // The count and size caps, with the bad ones beside them.
    const many = Object.fromEntries(Array.from({ length: MAX_CUSTOM_HEADERS + 1 }, (_, i) => [`x-h${i}`, 'v'.repeat(250)]));
    const capped = expectError(await co.as().post('/api/v1/webhook-endpoints', { url: r.url, topics: ['invoice.overdue'], headers: { ...many, host: 'x' } }), 400, 'VALIDATION_ERROR');
    expect(capped.details.map((d) => d.rule).sort()).toEqual(['header_refused', 'maxBytes', 'maxProperties']);
    // Names are case-insensitive: the same one twice is refused.
    const twice = expectError(await co.as().post('/api/v1/webhook-endpoints', { url: r.url, topics: ['invoice.overdue'], headers: { 'X-A': '1', 'x-a': '2' } }), 400, 'VALIDATION_ERROR');
    expect(twice.details).toEqual([expect.objectContaining({ rule: 'duplicate', header: 'x-a' })]);

    const ep = await addEndpoint(co.as(), { url: r.url, topics: ['invoice.overdue'], headers: { 'x-fine': 'kept' } });
    const onPatch = expectError(await co.as().patch(`/api/v1/webhook-endpoints/${ep.id}`, { headers: { upgrade: 'websocket', 'webhook-timestamp': '1' } }), 400, 'VALIDATION_ERROR');
    expect(onPatch.details.map((d) => d.header).sort()).toEqual(['upgrade', 'webhook-timestamp']);
    expect((await endpoint(co, ep.id)).headers).toEqual({ 'x-fine': 'kept' });
  });
});

describe('retry jitter (driven clock)', () => {
  it('moves each retry within ±10 % of its step, differently per delivery, and step n+1 always comes after step n', async () => {
    const clock = new ManualClock(T0);
    const ladder = [10, 60, 300];
    const host = await makeHost({ clock, webhooks: { ladder, jitter: 0.1 } });
    const r = await receiver(answer(500));
    try {
      const co = await createCompany(host);
      const eps: { id: string }[] = [];
      for (let i = 0; i < 12; i++) eps.push(await addEndpoint(co.as(), { url: r.url, topics: ['invoice.overdue'] }));
      await host.catalogue.trigger(co.company.id, 'invoice.overdue', CLI_ACTOR);
      // waits[step][endpoint]: how long after its failed attempt each delivery was scheduled.
      const waits: number[][] = ladder.map(() => []);
      const pending = async () => {
        const out = [];
        for (const ep of eps) out.push((await co.as().get(`/api/v1/webhook-endpoints/${ep.id}/deliveries`)).json().data[0]);
        return out;
      };
      await host.webhooks.runDue();
      for (let step = 0; step < ladder.length; step++) {
        const now = clock.now();
        const ds = await pending();
        for (const d of ds) {
          expect(d).toMatchObject({ state: 'pending', attemptCount: step + 1 });
          waits[step].push(Date.parse(d.nextAttemptAt) - now);
        }
        // Every delivery goes once the latest is due.
        clock.set(now + Math.max(...waits[step]));
        await host.webhooks.runDue();
      }
      expect((await pending()).every((d) => d.state === 'dead')).toBe(true);
      ladder.forEach((s, i) => {
        for (const w of waits[i]) {
          expect(w).toBeGreaterThanOrEqual(s * 1000 * 0.9);
          expect(w).toBeLessThanOrEqual(s * 1000 * 1.1);
        }
        // Not all the same instant: the herd is spread.
        expect(new Set(waits[i]).size).toBeGreaterThan(1);
        if (i > 0) expect(Math.min(...waits[i])).toBeGreaterThan(Math.max(...waits[i - 1]));
      });
    } finally {
      await host.close();
      await r.close();
    }
  });
});
