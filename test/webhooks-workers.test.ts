// Several delivery workers on one database, as `diwan worker` processes are (here, hosts in one
// test process, each with its own connections; test/multi-process.test.ts runs real processes):
// an API-only host's events wake the workers at once; each delivery is taken by one worker; an
// endpoint's in-flight cap and throttle hold across workers; a worker whose lease ended records
// nothing (the delivery goes to another, same delivery id).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { buildHost, type Host } from '../core/host.ts';
import type { HostConfig } from '../core/kernel/config.ts';
import { databases, type Location } from './db.ts';
import { WEBHOOKS, addEndpoint, createCompany, createCustomer, invoicingSources, receiver, until, type Receiver } from './webhooks-kit.ts';

const open: { hosts: Host[]; receivers: Receiver[]; locations: Location[]; dirs: string[] } = { hosts: [], receivers: [], locations: [], dirs: [] };
afterEach(async () => {
  await Promise.all(open.receivers.splice(0).map((r) => r.close()));
  await Promise.all(open.hosts.splice(0).map((h) => h.close()));
  await Promise.all(open.locations.splice(0).map((l) => l.drop()));
  for (const d of open.dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

type Role = 'api' | 'worker';

describe.each(databases())('delivery workers side by side ($name)', (db) => {
  /** Hosts on one fresh database, one per role list; the workers' loops started. */
  async function hosts(roles: Role[][], webhooks: Partial<HostConfig['webhooks']> = {}): Promise<Host[]> {
    const loc = await db.location();
    open.locations.push(loc);
    const made: Host[] = [];
    for (const r of roles) {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'diwan-worker-'));
      open.dirs.push(dataDir);
      const host = await buildHost({
        ...(loc.url ? { databaseUrl: loc.url } : { dbFile: loc.file }),
        sources: invoicingSources(),
        config: { dataDir, roles: { api: r.includes('api'), worker: r.includes('worker') }, webhooks: { ...WEBHOOKS, ...webhooks } },
      });
      open.hosts.push(host);
      made.push(host);
    }
    for (const h of made) if (h.config.roles.worker) h.start();
    return made;
  }

  it("delivers an API-only host's events through two workers, each once, woken by the commit rather than the 5 s poll", async () => {
    const [api] = await hosts([['api'], ['worker'], ['worker']]);
    const co = await createCompany(api);
    const r = await receiver();
    open.receivers.push(r);
    await addEndpoint(co.as(), { url: r.url, topics: ['customer.*'], maxInFlight: 8 });
    const t0 = performance.now();
    await Promise.all(Array.from({ length: 40 }, (_, i) => createCustomer(co.as(), `C${i}`)));
    await r.waitFor(40, 4000);
    // Well inside the workers' 5 s poll: they were told.
    expect(performance.now() - t0).toBeLessThan(4000);
    const ids = r.got.map((g) => g.headers['x-diwan-delivery-id']);
    expect(new Set(ids).size).toBe(40);
    await until(async () => (await api.storage.db.get<{ n: number }>("SELECT count(*) AS n FROM webhook_deliveries WHERE state = 'delivered'"))!.n == 40, 3000);
    // The attempts that delivered are kept in their deliveries' rows; no other attempt was made.
    const attempts = await api.storage.db.get<{ n: number }>(
      'SELECT (SELECT count(*) FROM webhook_attempts) + (SELECT count(*) FROM webhook_deliveries WHERE delivered_duration_ms IS NOT NULL) AS n',
    );
    expect(Number(attempts!.n)).toBe(40);
  });

  it('matches an event written just after an endpoint was added against it, though the worker built its index of the company before (the change heard before the fan-out)', async () => {
    const [api, worker] = await hosts([['api'], ['api']]);
    // Not started: no timer or notice tells this one of the other's writes; only its fan-out asks.
    const co = await createCompany(api);
    const fanOut = () => worker.webhooks.dispatcher.fanOut();
    await fanOut(); // the company's own events: its index built, with no endpoint in it
    const r = await receiver();
    open.receivers.push(r);
    const ep = await addEndpoint(co.as(), { url: r.url, topics: ['customer.*'] });
    await createCustomer(co.as(), 'Al-Rashid Trading');
    // PostgreSQL tells the other connection by a notice, which may take a moment to arrive.
    if (db.name !== 'sqlite') await new Promise((r) => setTimeout(r, 300));
    await fanOut();
    const made = await api.storage.db.all<{ topic: string }>('SELECT topic FROM webhook_deliveries WHERE endpoint_id = ?', [ep.id]);
    expect(made.map((d) => d.topic)).toEqual(['customer.created']);
  });

  it("matches events against endpoints committed before them whose change the worker has not heard yet (the endpoints' version read with the events), in a fan-out and in a take's", async () => {
    // The window the check before a fan-out leaves open: on PostgreSQL the endpoint's notice may
    // still be on its way when a timer wakes the fan-out after the events' commit (on SQLite, the
    // turn's data_version read may come just before it). Here the worker hears nothing at all.
    const [api, worker] = await hosts([['api'], ['api']]);
    const co = await createCompany(api);
    const d = worker.webhooks.dispatcher;
    await d.fanOut(); // the company's own events: its index built, with no endpoint in it
    vi.spyOn(worker.storage.changes, 'check').mockReturnValue(undefined);
    const r = await receiver();
    open.receivers.push(r);
    const first = await addEndpoint(co.as(), { url: r.url, topics: ['customer.*'] });
    for (const name of ['A', 'B', 'C']) await createCustomer(co.as(), name);
    await d.fanOut();
    // A second endpoint, and an event fanned out in the take's transaction.
    const second = await addEndpoint(co.as(), { url: r.url, topics: ['customer.*'] });
    await createCustomer(co.as(), 'D');
    await d.pump(true, true);
    const count = async (id: string) => Number((await api.storage.db.get<{ n: number }>('SELECT count(*) AS n FROM webhook_deliveries WHERE endpoint_id = ?', [id]))!.n);
    expect([await count(first.id), await count(second.id)]).toEqual([4, 1]);
    // The fan-outs did ask (and heard nothing).
    expect(worker.storage.changes.check).toHaveBeenCalled();
  });

  it("holds an endpoint's in-flight cap across workers", async () => {
    const [api] = await hosts([['api'], ['worker'], ['worker']]);
    const co = await createCompany(api);
    let now = 0;
    let most = 0;
    const r = await receiver((_req, res) => {
      most = Math.max(most, ++now);
      setTimeout(() => {
        now--;
        res.writeHead(200).end('ok');
      }, 150);
    });
    open.receivers.push(r);
    await addEndpoint(co.as(), { url: r.url, topics: ['customer.*'], maxInFlight: 2 });
    for (let i = 0; i < 10; i++) await createCustomer(co.as(), `C${i}`);
    await r.waitFor(10, 8000);
    expect(most).toBe(2);
    expect(new Set(r.got.map((g) => g.headers['x-diwan-delivery-id'])).size).toBe(10);
  });

  it("holds an endpoint's throttle across workers (one bucket, a second's worth at once)", async () => {
    const [api] = await hosts([['api'], ['worker'], ['worker']]);
    const co = await createCompany(api);
    const r = await receiver();
    open.receivers.push(r);
    await addEndpoint(co.as(), { url: r.url, topics: ['customer.*'], ratePerSecond: 2 });
    // Nothing is taken before the first event: the bucket's first tokens go after this instant.
    const before = performance.now();
    for (let i = 0; i < 6; i++) await createCustomer(co.as(), `C${i}`);
    await r.waitFor(6, 6000);
    // Two at once, then one every 500 ms: the fourth goes 1 s and the sixth 2 s after the first
    // was taken. Two buckets (one per worker) would have let four go at once and the sixth within
    // a second. Measured from before the first event, not from the first arrival, which a slow
    // first connection on a loaded machine delays more than the rest.
    const at = r.got.map((g) => g.at - before).sort((a, b) => a - b);
    expect(at[3]).toBeGreaterThanOrEqual(950);
    expect(at[5]).toBeGreaterThanOrEqual(1950);
  });

  it.runIf(db.name === 'postgres')('recovers ended leases around a row another transaction holds (a worker frozen mid-transaction)', async () => {
    const loc = await db.location();
    open.locations.push(loc);
    const s = await loc.open();
    const frozen = new pg.Client({ connectionString: loc.url });
    try {
      const now = Date.now();
      for (const id of ['dl_held', 'dl_free']) {
        await s.deliveries.insertMany([{ id, companyId: 'co_a', endpointId: 'we_1', eventId: `ev_${id}`, topic: 'invoice.created' }], now, new Date(now).toISOString());
        await s.deliveries.leaseDue('we_1', now, 1, `lse_${id}`, now - 1, new Date(now).toISOString());
      }
      await frozen.connect();
      await frozen.query('BEGIN');
      await frozen.query("SELECT id FROM webhook_deliveries WHERE id = 'dl_held' FOR UPDATE");
      // Without SKIP LOCKED this would wait for the frozen transaction.
      expect(await s.deliveries.reclaimExpired(now, new Date(now).toISOString())).toBe(1);
      expect((await s.deliveries.get('we_1', 'dl_free'))!.state).toBe('pending');
      expect((await s.deliveries.get('we_1', 'dl_held'))!.state).toBe('in_flight');
      await frozen.query('ROLLBACK');
      expect(await s.deliveries.reclaimExpired(now, new Date(now).toISOString())).toBe(1);
    } finally {
      await frozen.end();
      await s.close();
    }
  });

  it('gives a delivery whose lease ended to another attempt, and records nothing of the late one (fencing)', async () => {
    // A lease shorter than the attempt's time-out, which loadConfig refuses, makes the case happen.
    const [api, w1, w2] = await hosts([['api'], ['worker'], ['worker']], { timeoutMs: 4000, leaseMs: 400, maxInFlightPerEndpoint: 1 });
    const co = await createCompany(api);
    let calls = 0;
    const r = await receiver((_req, res) => {
      // The first attempt answers after its lease has ended; the next at once.
      if (++calls === 1) setTimeout(() => res.writeHead(200).end('late'), 1500);
      else res.writeHead(200).end('ok');
    });
    open.receivers.push(r);
    const ep = await addEndpoint(co.as(), { url: r.url, topics: ['customer.*'] });
    await createCustomer(co.as(), 'Once');
    await r.waitFor(2, 4000);
    expect(r.got[0].headers['x-diwan-delivery-id']).toBe(r.got[1].headers['x-diwan-delivery-id']);
    const fenced = () => (w1.webhooks.dispatcher.attemptsByResult.get('fenced') ?? 0) + (w2.webhooks.dispatcher.attemptsByResult.get('fenced') ?? 0);
    // The late answer comes 1.5 s after its POST; a loaded machine may record it later still.
    await until(async () => fenced() === 1, 10_000);
    const list = (await co.as().get(`/api/v1/webhook-endpoints/${ep.id}/deliveries`)).json();
    expect(list.data).toHaveLength(1);
    expect(list.data[0]).toMatchObject({ state: 'delivered', attemptCount: 1 });
    const one = (await co.as().get(`/api/v1/webhook-endpoints/${ep.id}/deliveries/${list.data[0].id}`)).json().data;
    expect(one.attempts.map((a: { responseExcerpt: string }) => a.responseExcerpt)).toEqual(['ok']);
  });

  it('records a result within moments though another attempt of the same event is still out', async () => {
    const [host] = await hosts([['api', 'worker']], { timeoutMs: 20_000 });
    const co = await createCompany(host);
    let answer: (() => void) | undefined;
    const slow = await receiver((_req, res) => void (answer = () => res.writeHead(200).end('late')));
    const fast = await receiver();
    open.receivers.push(slow, fast);
    const a = await addEndpoint(co.as(), { url: slow.url, topics: ['customer.*'] });
    const b = await addEndpoint(co.as(), { url: fast.url, topics: ['customer.*'] });
    await createCustomer(co.as(), 'Waiting');
    await Promise.all([slow.waitFor(1, 3000), fast.waitFor(1, 3000)]);
    const state = async (endpointId: string) => (await co.as().get(`/api/v1/webhook-endpoints/${endpointId}/deliveries`)).json().data[0]?.state;
    const t0 = performance.now();
    await until(async () => (await state(b.id)) === 'delivered', 3000);
    expect(performance.now() - t0).toBeLessThan(1000);
    expect(await state(a.id)).toBe('in_flight');
    answer!();
    await until(async () => (await state(a.id)) === 'delivered', 3000);
  });

  it('writes what a fan-out sends at once in flight, committed before the POST, and sends it again with the same ids once its lease ends', async () => {
    // The worker's take fans out and leases in one transaction: the row is written in flight
    // under the take's lease, never pending. The first attempt never gets an answer (its worker
    // as good as dead); when the lease ends the same delivery goes again.
    // The lease is long enough for the receiver to read the row while it holds (a loaded machine);
    // the first attempt's time-out is past the wait, so the second request can only be the
    // lease's end at work. Two of seven full runs of the suite saw no second request within 8 and
    // 12 s (never alone, under CPU load, or beside the browser and multi-process suites): the
    // wait is 30 s, and a miss reports the worker's loop and the row.
    const [api, worker] = await hosts([['api'], ['worker']], { timeoutMs: 40_000, leaseMs: 2000 });
    const co = await createCompany(api);
    const seen: { state: string; lease: string | null; attempts: number }[] = [];
    let calls = 0;
    const r = await receiver(async (req, res) => {
      const row = await api.storage.db.get<{ state: string; lease_token: string | null; attempts: number }>(
        'SELECT state, lease_token, attempts FROM webhook_deliveries WHERE id = ?',
        [String(req.headers['x-diwan-delivery-id'])],
      );
      seen.push({ state: row!.state, lease: row!.lease_token, attempts: Number(row!.attempts) });
      if (++calls > 1) res.writeHead(200).end('ok');
    });
    open.receivers.push(r);
    const ep = await addEndpoint(co.as(), { url: r.url, topics: ['customer.*'] });
    await createCustomer(co.as(), 'Once');
    await r.waitFor(2, 30_000).catch(async (e: Error) => {
      // What the worker's loop and the row were when the second request did not come.
      const d = worker.webhooks.dispatcher as unknown as Record<string, unknown> & { running: Set<unknown>; leaseEnds: Map<string, unknown> };
      const rows = await api.storage.db.all('SELECT state, attempts, next_attempt_at, lease_until, lease_token FROM webhook_deliveries', []);
      const loop = { now: Date.now(), timer: !!d.timer, timerAt: d.timerAt, taking: d.taking, running: d.running.size, leaseEnds: [...d.leaseEnds.values()], wakeScheduled: d.wakeScheduled, reclaim: d.reclaim };
      throw new Error(`${e.message}; loop ${JSON.stringify(loop)}; rows ${JSON.stringify(rows)}`);
    });
    await until(async () => seen.length === 2, 3000);
    expect(seen[0]).toMatchObject({ state: 'in_flight', attempts: 0 });
    expect(seen[0].lease).not.toBeNull();
    expect(seen[1]).toMatchObject({ state: 'in_flight', attempts: 0 });
    expect(seen[1].lease).not.toBe(seen[0].lease);
    expect(r.got[1].headers['x-diwan-delivery-id']).toBe(r.got[0].headers['x-diwan-delivery-id']);
    expect(r.got[1].headers['x-diwan-event-id']).toBe(r.got[0].headers['x-diwan-event-id']);
    await until(async () => (await co.as().get(`/api/v1/webhook-endpoints/${ep.id}/deliveries`)).json().data[0]?.state === 'delivered', 3000);
  }, 60_000);

  it("looks again when a lease ends even if an earlier timer fired while the attempt ran (a retry due first)", async () => {
    // The loop's timer, set for another endpoint's retry due before the lease ends, used to leave
    // no timer behind once it fired during the attempt, and then one set for the retry's own
    // lease (2 s later than the first's end): either way the lease's end went unnoticed and the
    // late result was recorded as if the lease still held.
    const [host] = await hosts([['api', 'worker']], { timeoutMs: 6000, leaseMs: 3000, ladder: [2, 3, 4] });
    const co = await createCompany(host);
    let failing = 1;
    const retried = await receiver((_req, res) => res.writeHead(failing-- > 0 ? 500 : 200).end());
    let calls = 0;
    const slow = await receiver((_req, res) => {
      // 1.5 s after its lease's end, 0.5 s before the retry's.
      if (++calls === 1) setTimeout(() => res.writeHead(200).end('late'), 4500);
      else res.writeHead(200).end('ok');
    });
    open.receivers.push(retried, slow);
    await addEndpoint(co.as(), { url: retried.url, topics: ['customer.*'] });
    await createCustomer(co.as(), 'First');
    // Failed: its retry is due in 2 s (the ladder's first step), the loop's timer set for it.
    await retried.waitFor(1, 3000);
    const ep = await addEndpoint(co.as(), { url: slow.url, topics: ['customer.*'] });
    await createCustomer(co.as(), 'Second');
    await slow.waitFor(2, 8000);
    expect(slow.got[0].headers['x-diwan-delivery-id']).toBe(slow.got[1].headers['x-diwan-delivery-id']);
    await until(async () => (host.webhooks.dispatcher.attemptsByResult.get('fenced') ?? 0) === 1, 3000);
    const list = (await co.as().get(`/api/v1/webhook-endpoints/${ep.id}/deliveries`)).json();
    expect(list.data[0]).toMatchObject({ state: 'delivered', attemptCount: 1 });
  });
});
