// Endpoint health under a driven clock: an endpoint failing without a single success for
// DIWAN_WEBHOOK_DISABLE_AFTER (5 days) is disabled by the host, with the reason and time on it,
// audited as the system's `disable`; a success in between starts the streak afresh. The
// operational events `webhook.delivery.dead` and `webhook.endpoint.disabled` reach the other
// endpoints that subscribe (opt-in: `*` does not match them), never the endpoint they are about,
// and a dead delivery of a `webhook.*` event raises nothing (no loop). Re-enabled through PATCH
// `enabled: true` and POST …/enable, which clear the reason and the streak.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../core/kernel/clock.ts';
import type { Host } from '../core/host.ts';
import { addEndpoint, createCompany, createCustomer, expectError, makeHost, ok200, receiver, status, type Receiver, type TestCompany } from './webhooks-kit.ts';

const DAY = 86_400_000;
const HOUR = 3_600_000;

describe('endpoint health (driven clock)', () => {
  let host: Host;
  let clock: ManualClock;
  let co: TestCompany;
  let failing: Receiver;
  let watcher: Receiver;
  let star: Receiver;
  let sickWatcher: Receiver;
  let ep: { id: string };
  let watch: { id: string };
  let starEp: { id: string };
  let sick: { id: string };
  let t0: number;

  const run = () => host.webhooks.runDue();
  const topicsOf = (r: Receiver) => r.got.map((g) => g.body.type);
  /** Operational events a receiver got about its own endpoint: there must be none. */
  const aboutItself = (r: Receiver, id: string) => r.got.filter((g) => g.body.type.startsWith('webhook.') && g.body.data.endpointId === id);
  const endpoint = async (id: string) => (await co.as().get(`/api/v1/webhook-endpoints/${id}`)).json().data;

  beforeAll(async () => {
    clock = new ManualClock(Date.UTC(2026, 2, 1));
    t0 = clock.now();
    // One retry a minute later: a delivery dies on its second failure.
    host = await makeHost({ clock, config: { webhookDisableAfterSeconds: 5 * 86_400 }, webhooks: { ladder: [60] } });
    co = await createCompany(host);
    failing = await receiver(status(500));
    watcher = await receiver();
    star = await receiver();
    sickWatcher = await receiver(status(503));
    // The failing endpoint also subscribes to the operations: it must still never hear about itself.
    ep = await addEndpoint(co.as(), { url: failing.url, topics: ['customer.*', 'webhook.*'] });
    watch = await addEndpoint(co.as(), { url: watcher.url, topics: ['webhook.*'] });
    starEp = await addEndpoint(co.as(), { url: star.url, topics: ['*'] });
    sick = await addEndpoint(co.as(), { url: sickWatcher.url, topics: ['webhook.delivery.dead'] });
  });

  afterAll(async () => {
    await host?.close();
    await Promise.all([failing, watcher, star, sickWatcher].map((r) => r?.close()));
  });

  it('shows a new endpoint healthy, with the host defaults for its limits', async () => {
    expect(await endpoint(ep.id)).toMatchObject({ enabled: true, disabledReason: null, disabledAt: null, disabledDetail: null, failingSince: null, maxInFlight: null, ratePerSecond: null });
  });

  it('records the first failure as the start of a failing streak', async () => {
    await createCustomer(co.as(), 'First');
    await run();
    expect(failing.got.map((g) => g.body.type)).toEqual(['customer.created']);
    expect(await endpoint(ep.id)).toMatchObject({ enabled: true, failingSince: new Date(t0).toISOString() });
  });

  it('raises webhook.delivery.dead for a delivery that exhausts the ladder, to the subscribers other than the endpoint it is about', async () => {
    clock.advance(60_000);
    await run();
    await run();
    expect(failing.got).toHaveLength(2);
    const dead = watcher.got.filter((g) => g.body.type === 'webhook.delivery.dead');
    expect(dead).toHaveLength(1);
    expect(dead[0].body.data).toMatchObject({ endpointId: ep.id, url: failing.url, topic: 'customer.created', attempts: 2, lastStatus: 500, lastFailure: 'http_status' });
    expect(dead[0].body.data.deliveryId).toMatch(/^dlv_/);
    expect(dead[0].body.data.eventId).toBe(failing.got[0].body.id);
    // Opt-in: `*` does not reach the operations; the endpoint they are about never gets them.
    expect(topicsOf(star).filter((t) => t.startsWith('webhook.'))).toEqual([]);
    expect(aboutItself(failing, ep.id)).toEqual([]);
  });

  it('raises nothing for a dead delivery of a webhook.* event (two failing subscribers cannot feed each other)', async () => {
    // The sick watcher got the dead event, failed it twice: that delivery is dead too.
    clock.advance(60_000);
    await run();
    await run();
    expect(sickWatcher.got.filter((g) => g.body.type === 'webhook.delivery.dead').length).toBeGreaterThanOrEqual(2);
    const deliveries = (await co.as().get(`/api/v1/webhook-endpoints/${sick.id}/deliveries?state=dead`)).json().data;
    expect(deliveries.length).toBeGreaterThanOrEqual(1);
    expect(watcher.got.filter((g) => g.body.type === 'webhook.delivery.dead' && g.body.data.endpointId === sick.id)).toEqual([]);
    expect(aboutItself(sickWatcher, sick.id)).toEqual([]);
    // Out of the way of the timing below (it would fail for five days too).
    expect((await co.as().delete(`/api/v1/webhook-endpoints/${sick.id}`)).statusCode).toBe(200);
  });

  it('ends the streak on a success: the time without success counts from the next failure', async () => {
    failing.behave(ok200);
    await createCustomer(co.as(), 'Healed');
    await run();
    expect(await endpoint(ep.id)).toMatchObject({ enabled: true, failingSince: null });
    failing.behave(status(500));
  });

  it('keeps an endpoint failing for less than the set time enabled', async () => {
    clock.advance(DAY);
    const since = clock.now();
    await createCustomer(co.as(), 'Day 1');
    await run();
    expect(await endpoint(ep.id)).toMatchObject({ enabled: true, failingSince: new Date(since).toISOString() });
    clock.advance(5 * DAY - HOUR);
    await createCustomer(co.as(), 'Almost');
    await run();
    expect(await endpoint(ep.id)).toMatchObject({ enabled: true, failingSince: new Date(since).toISOString() });
  });

  it('disables an endpoint failing without a single success for the set time, with the reason and time on it', async () => {
    clock.advance(HOUR);
    const before = failing.got.length;
    await createCustomer(co.as(), 'Five days');
    await run();
    // The retry of the delivery before, and this one.
    expect(failing.got.slice(before).map((g) => g.body.type)).toEqual(['customer.created', 'customer.created']);
    const e = await endpoint(ep.id);
    expect(e).toMatchObject({ enabled: false, disabledReason: 'failing', disabledAt: new Date(clock.now()).toISOString() });
    expect(e.disabledDetail).toBe(`no successful delivery since ${e.failingSince} (120 h; the limit is 432000 s); last attempt: HTTP 500`);
    // In the caller's language, the list and the CLI alike.
    const ar = await co.as().get(`/api/v1/webhook-endpoints/${ep.id}`, { 'accept-language': 'ar' });
    expect(ar.json().data.disabledDetail).toBe(`لا تسليم ناجحًا منذ ${e.failingSince} (120 ساعة؛ والحد 432000 ثانية)؛ آخر محاولة: HTTP 500`);
    const list = await co.as().get('/api/v1/webhook-endpoints', { 'accept-language': 'ar' });
    expect(list.json().data.find((x: { id: string }) => x.id === ep.id).disabledDetail).toBe(ar.json().data.disabledDetail);

    const disabled = watcher.got.filter((g) => g.body.type === 'webhook.endpoint.disabled' && g.body.data.endpointId === ep.id);
    expect(disabled).toHaveLength(1);
    expect(disabled[0].body.data).toEqual({
      endpointId: ep.id, url: failing.url, reason: 'failing', failingSince: e.failingSince, disabledAt: e.disabledAt, disableAfterSeconds: 432_000, lastStatus: 500, lastFailure: 'http_status',
    });
    expect(aboutItself(failing, ep.id)).toEqual([]);
    expect(topicsOf(star).filter((t) => t.startsWith('webhook.'))).toEqual([]);

    const audit = (await co.as().get('/api/v1/audit-log?resource=webhook-endpoints')).json().data as { action: string; actor: unknown; resourceId: string }[];
    expect(audit.find((a) => a.action === 'disable' && a.resourceId === ep.id)).toMatchObject({ actor: { type: 'system', id: 'host' } });
  });

  it('sends a disabled endpoint nothing more; its pending retries wait', async () => {
    const before = failing.got.length;
    clock.advance(60_000);
    expect((await co.as().get(`/api/v1/webhook-endpoints/${ep.id}/deliveries?state=retrying`)).json().total).toBe(1);
    await createCustomer(co.as(), 'While disabled');
    await run();
    expect(failing.got.length).toBe(before);
  });

  it('lets an Admin enable it again through POST …/enable: reason and streak cleared, pending retries go out; a Member may not', async () => {
    expectError(await co.as('Member').post(`/api/v1/webhook-endpoints/${ep.id}/enable`), 403, 'FORBIDDEN');
    const res = await co.as('Admin').post(`/api/v1/webhook-endpoints/${ep.id}/enable`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({ enabled: true, disabledReason: null, disabledAt: null, disabledDetail: null, failingSince: null });
    failing.behave(ok200);
    const before = failing.got.length;
    await run();
    // The retry of the delivery that failed as it was disabled.
    expect(failing.got.length).toBe(before + 1);
    const audit = (await co.as().get('/api/v1/audit-log?resource=webhook-endpoints')).json().data as { action: string; resourceId: string }[];
    expect(audit.some((a) => a.action === 'enable' && a.resourceId === ep.id)).toBe(true);
  });

  it('records a manual disable as such, and PATCH enabled: true enables it again', async () => {
    let res = await co.as().patch(`/api/v1/webhook-endpoints/${ep.id}`, { enabled: false });
    expect(res.json().data).toMatchObject({ enabled: false, disabledReason: 'manual', disabledAt: new Date(clock.now()).toISOString(), disabledDetail: null });
    res = await co.as().patch(`/api/v1/webhook-endpoints/${ep.id}`, { enabled: true });
    expect(res.json().data).toMatchObject({ enabled: true, disabledReason: null, disabledAt: null, failingSince: null });
  });

  it('lists the webhook operations in the catalogue as an opt-in family of the core', async () => {
    const res = await co.as('Viewer').get('/api/v1/events/catalogue?family=webhook');
    const fam = res.json().data.families[0];
    expect(fam).toMatchObject({ prefix: 'webhook', owner: 'core', optIn: true, installed: true });
    expect(fam.topics.map((t: { topic: string }) => t.topic)).toEqual(['webhook.delivery.dead', 'webhook.endpoint.disabled']);
    for (const t of fam.topics) expect(t).toMatchObject({ source: { on: 'operation' }, optIn: true });
    const all = (await co.as('Viewer').get('/api/v1/events/catalogue?pattern=*')).json().data.families.map((f: { prefix: string }) => f.prefix);
    expect(all).not.toContain('webhook');
    expect(all).not.toContain('audit');
  });

  it('leaves watcher and star endpoints healthy all along', async () => {
    expect(await endpoint(watch.id)).toMatchObject({ enabled: true, failingSince: null });
    expect(await endpoint(starEp.id)).toMatchObject({ enabled: true, failingSince: null });
  });
});

describe('endpoint health, never disabling (DIWAN_WEBHOOK_DISABLE_AFTER=0)', () => {
  it('keeps a failing endpoint enabled however long it fails', async () => {
    const clock = new ManualClock(Date.UTC(2026, 2, 1));
    const host = await makeHost({ clock, config: { webhookDisableAfterSeconds: 0 }, webhooks: { ladder: [] } });
    const failing = await receiver(status(502));
    try {
      const co = await createCompany(host);
      const ep = await addEndpoint(co.as(), { url: failing.url, topics: ['customer.*'] });
      for (let day = 0; day < 8; day++) {
        await createCustomer(co.as(), `Day ${day}`);
        await host.webhooks.runDue();
        clock.advance(DAY);
      }
      expect(failing.got).toHaveLength(8);
      const e = (await co.as().get(`/api/v1/webhook-endpoints/${ep.id}`)).json().data;
      expect(e).toMatchObject({ enabled: true, failingSince: new Date(Date.UTC(2026, 2, 1)).toISOString() });
    } finally {
      await host.close();
      await failing.close();
    }
  });
});

describe('endpoint health never costs a delivery result', () => {
  it('keeps the recorded attempts when the health step fails (its own savepoint)', async () => {
    const clock = new ManualClock(Date.UTC(2026, 2, 1));
    const host = await makeHost({ clock });
    const r = await receiver();
    try {
      const co = await createCompany(host);
      const ep = await addEndpoint(co.as(), { url: r.url, topics: ['customer.*'] });
      await createCustomer(co.as(), 'Kept');
      await host.webhooks.dispatcher.fanOut();
      const { deliveries } = host.webhooks;
      const { rows: [row], token } = await deliveries.take(clock.now(), 10, { maxInFlightPerEndpoint: 1, leaseMs: 30_000 });
      expect(row.endpoint_id).toBe(ep.id);
      const item = {
        deliveryId: row.id, attemptNo: 1, nowMs: clock.now(), row, token,
        result: { ok: true, status: 200, durationMs: 3, responseExcerpt: 'ok', responseBytes: 2 },
        next: { state: 'delivered' as const, nextAttemptAt: null },
      };
      // What may fail goes in the savepoint the step is given (the health step's failures do).
      await deliveries.recordMany([item], {
        healedBy: () => [],
        observe: (_items, savepoint) =>
          savepoint(async () => {
            await host.storage.db.run('UPDATE webhook_endpoints SET failing_since = 1 WHERE id = ?', [ep.id]);
            throw new Error('health failed');
          }),
      });
      expect((await deliveries.get(ep.id, row.id)).state).toBe('delivered');
      // What the failing step wrote is undone with it.
      expect((await co.as().get(`/api/v1/webhook-endpoints/${ep.id}`)).json().data.failingSince).toBeNull();
    } finally {
      await host.close();
      await r.close();
    }
  });
});
