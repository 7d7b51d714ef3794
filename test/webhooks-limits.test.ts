// Per-endpoint limits, set at creation or update: the in-flight cap (default
// DIWAN_WEBHOOK_MAX_IN_FLIGHT) and a throttle in deliveries per second. One slow or throttled
// endpoint never delays another: checked with the delivery loop running against two loopback
// receivers, one answering after 2 s (capped at one in flight), one fast; and the throttle's
// pace under a driven clock.
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../core/kernel/clock.ts';
import type { Host } from '../core/host.ts';
import { addEndpoint, createCompany, createCustomer, expectError, makeHost, receiver, until, type Receiver } from './webhooks-kit.ts';

const open: { hosts: Host[]; receivers: Receiver[] } = { hosts: [], receivers: [] };
afterEach(async () => {
  // Receivers first: an attempt still waiting on a slow one then ends at once.
  await Promise.all(open.receivers.splice(0).map((r) => r.close()));
  await Promise.all(open.hosts.splice(0).map((h) => h.close()));
});
const track = <T extends Host | Receiver>(x: T, list: T[]): T => (list.push(x), x);

describe('per-endpoint limits through the API', () => {
  it('takes maxInFlight and ratePerSecond at creation and update, shows them, and refuses values out of range', async () => {
    const host = track(await makeHost(), open.hosts);
    const co = await createCompany(host);
    const r = track(await receiver(), open.receivers);
    const ep = await addEndpoint(co.as(), { url: r.url, topics: ['customer.*'], maxInFlight: 2, ratePerSecond: 10 });
    expect(ep).toMatchObject({ maxInFlight: 2, ratePerSecond: 10 });

    let res = await co.as().patch(`/api/v1/webhook-endpoints/${ep.id}`, { ratePerSecond: null, maxInFlight: 7 });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({ maxInFlight: 7, ratePerSecond: null });
    res = await co.as().patch(`/api/v1/webhook-endpoints/${ep.id}`, { description: 'limits stay' });
    expect(res.json().data).toMatchObject({ maxInFlight: 7, ratePerSecond: null, description: 'limits stay' });

    const bad = expectError(await co.as().post('/api/v1/webhook-endpoints', { url: r.url, topics: ['customer.*'], maxInFlight: 0, ratePerSecond: 10_001 }), 400, 'VALIDATION_ERROR');
    expect(bad.details.map((d) => d.pointer).sort()).toEqual(['/maxInFlight', '/ratePerSecond']);
    expectError(await co.as().patch(`/api/v1/webhook-endpoints/${ep.id}`, { maxInFlight: 1.5 }), 400, 'VALIDATION_ERROR');
  });
});

describe('the throttle, under a driven clock', () => {
  it('starts at most ratePerSecond deliveries a second (a second’s worth at once) while another endpoint takes all of its own', async () => {
    const clock = new ManualClock();
    const host = track(await makeHost({ clock }), open.hosts);
    const co = await createCompany(host);
    const slow = track(await receiver(), open.receivers);
    const fast = track(await receiver(), open.receivers);
    await addEndpoint(co.as(), { url: slow.url, topics: ['customer.*'], ratePerSecond: 2 });
    await addEndpoint(co.as(), { url: fast.url, topics: ['customer.*'] });
    for (let i = 0; i < 5; i++) await createCustomer(co.as(), `C${i}`);

    await host.webhooks.runDue();
    expect(fast.got).toHaveLength(5);
    expect(slow.got).toHaveLength(2);
    await host.webhooks.runDue();
    expect(slow.got).toHaveLength(2);
    clock.advance(499);
    await host.webhooks.runDue();
    expect(slow.got).toHaveLength(2);
    clock.advance(1);
    await host.webhooks.runDue();
    expect(slow.got).toHaveLength(3);
    clock.advance(1000);
    await host.webhooks.runDue();
    expect(slow.got).toHaveLength(5);
    // In event order.
    expect(slow.got.map((g) => g.body.data.name)).toEqual(['C0', 'C1', 'C2', 'C3', 'C4']);
  });

  it('lets a changed limit take effect at once', async () => {
    const clock = new ManualClock();
    const host = track(await makeHost({ clock }), open.hosts);
    const co = await createCompany(host);
    const r = track(await receiver(), open.receivers);
    const ep = await addEndpoint(co.as(), { url: r.url, topics: ['customer.*'], ratePerSecond: 1 });
    for (let i = 0; i < 4; i++) await createCustomer(co.as(), `C${i}`);
    await host.webhooks.runDue();
    expect(r.got).toHaveLength(1);
    await co.as().patch(`/api/v1/webhook-endpoints/${ep.id}`, { ratePerSecond: null });
    await host.webhooks.runDue();
    expect(r.got).toHaveLength(4);
  });
});

describe('one slow or throttled endpoint never delays another (the delivery loop running)', () => {
  it('delivers to a fast endpoint at once while a slow one (2 s a reply, one in flight) works through its backlog', async () => {
    const host = track(await makeHost({ webhooks: { timeoutMs: 5000, maxInFlightPerEndpoint: 4 } }), open.hosts);
    const co = await createCompany(host);
    let slowInFlight = 0;
    let slowMax = 0;
    const slow = track(
      await receiver((_req, res) => {
        slowMax = Math.max(slowMax, ++slowInFlight);
        setTimeout(() => {
          slowInFlight--;
          res.writeHead(200).end('slow');
        }, 2000);
      }),
      open.receivers,
    );
    const fast = track(await receiver(), open.receivers);
    await addEndpoint(co.as(), { url: slow.url, topics: ['customer.*'], maxInFlight: 1 });
    await addEndpoint(co.as(), { url: fast.url, topics: ['customer.*'] });
    host.start();

    const sent: number[] = [];
    for (let i = 0; i < 6; i++) {
      await createCustomer(co.as(), `C${i}`);
      sent.push(performance.now());
    }
    await fast.waitFor(6, 3000);
    // Each fast delivery arrived within a short while of its commit, while the slow endpoint was still on its first.
    const lags = fast.got.map((g) => g.at - sent[Number(g.body.data.name.slice(1))]);
    expect(Math.max(...lags)).toBeLessThan(1000);
    expect(slow.got.length).toBe(1);
    expect(slowInFlight).toBe(1);

    // The slow one goes on, one at a time, in order.
    await slow.waitFor(2, 4000);
    expect(slow.got.map((g) => g.body.data.name)).toEqual(['C0', 'C1']);
    expect(slowMax).toBe(1);
    // And the fast one still gets new events at once.
    const t = performance.now();
    await createCustomer(co.as(), 'Later');
    await fast.waitFor(7, 2000);
    expect(fast.got[6].at - t).toBeLessThan(1000);
  });

  it('delivers to a fast endpoint at once while a throttled one (1 a second) is paced, and wakes for the throttled one by itself', async () => {
    const host = track(await makeHost(), open.hosts);
    const co = await createCompany(host);
    const paced = track(await receiver(), open.receivers);
    const fast = track(await receiver(), open.receivers);
    await addEndpoint(co.as(), { url: paced.url, topics: ['customer.*'], ratePerSecond: 1 });
    await addEndpoint(co.as(), { url: fast.url, topics: ['customer.*'] });
    host.start();

    const start = performance.now();
    for (let i = 0; i < 4; i++) await createCustomer(co.as(), `C${i}`);
    await fast.waitFor(4, 2000);
    expect(fast.got[3].at - start).toBeLessThan(1000);
    expect(paced.got.length).toBeLessThanOrEqual(2);

    await paced.waitFor(4, 6000);
    const at = paced.got.map((g) => g.at);
    // One a second: no two within 0.9 s of each other (the first may arrive late, its batch starting the signing pool).
    for (let i = 2; i < at.length; i++) expect(at[i] - at[i - 1]).toBeGreaterThan(900);
    expect(at[3] - at[0]).toBeGreaterThan(2000);
    expect(paced.got.map((g) => g.body.data.name)).toEqual(['C0', 'C1', 'C2', 'C3']);
  });
});
