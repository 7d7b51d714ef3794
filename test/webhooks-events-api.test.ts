// The events API (`GET /api/v1/events` with cursors, `GET /api/v1/events/{id}`) and retention
// under a driven clock: each event is its webhook body byte for byte; cursor paging oldest first
// with topic patterns (subscription semantics) and times; `webhooks:read` needed; events older
// than DIWAN_EVENT_RETENTION_DAYS answer 404 saying so, a cursor from before the window 410
// CURSOR_EXPIRED (en, ar), never a 500; the retention loop prunes payloads, deliveries and
// attempts in small batches, each its own transaction, with writes going on between them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../core/kernel/clock.ts';
import type { Host } from '../core/host.ts';
import { Retention } from '../core/webhooks/retention.ts';
import { newId, isoNow } from '../core/kernel/ids.ts';
import { addEndpoint, createCompany, createCustomer, expectError, makeHost, receiver, until, type Receiver, type TestCompany } from './webhooks-kit.ts';

const DAY = 86_400_000;

interface Page {
  data: { id: string; type: string; createdAt: string; companyId: string; data: any; test?: boolean }[];
  next: string | null;
  hasMore: boolean;
}

const count = async (host: Host, table: string) => Number((await host.storage.db.get<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))!.n);

describe('the events API', () => {
  let host: Host;
  let clock: ManualClock;
  let co: TestCompany;
  let other: TestCompany;
  let r: Receiver;

  const list = async (query = '', c: TestCompany = co): Promise<Page> => {
    const res = await c.as('Admin').get(`/api/v1/events${query}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  };

  beforeAll(async () => {
    clock = new ManualClock(Date.UTC(2026, 3, 1));
    host = await makeHost({ clock });
    co = await createCompany(host, 'Events Co');
    other = await createCompany(host, 'Other Co');
    r = await receiver();
    await addEndpoint(co.as(), { url: r.url, topics: ['*', 'audit.*'] });
    for (let i = 0; i < 5; i++) {
      await createCustomer(co.as(), `C${i}`);
      clock.advance(60_000);
    }
    await createCustomer(other.as(), 'Not yours');
    await host.webhooks.runDue();
  });

  afterAll(async () => {
    await host?.close();
    await r?.close();
  });

  it('answers each event exactly as its webhook body, oldest first; `*` leaves the audit trail out', async () => {
    const everything = await list();
    expect(new Set(everything.data.map((e) => e.type))).toEqual(new Set(['app.installed', 'customer.created']));
    expect(everything.hasMore).toBe(false);
    const page = await list('?topics=customer.*');
    expect(page.data.map((e) => e.data.name)).toEqual(['C0', 'C1', 'C2', 'C3', 'C4']);
    const raw = (await co.as('Admin').get('/api/v1/events')).body;
    for (const e of page.data) {
      const delivered = r.got.find((g) => g.body.id === e.id)!;
      expect(raw).toContain(delivered.raw);
      expect(e.companyId).toBe(co.company.id);
    }
    const one = await co.as('Admin').get(`/api/v1/events/${page.data[0].id}`);
    expect(one.statusCode).toBe(200);
    expect(one.body).toBe(`{"data":${r.got.find((g) => g.body.id === page.data[0].id)!.raw}}`);
  });

  it('pages with an opaque cursor until hasMore is false, and the last `next` finds newer events later', async () => {
    const all = (await list('?topics=*,audit.*')).data;
    expect(all.length).toBeGreaterThan(5);
    const seen: string[] = [];
    let next: string | null = null;
    for (let i = 0; i < 50; i++) {
      const page: Page = await list(`?topics=*,audit.*&limit=2${next ? `&cursor=${next}` : ''}`);
      seen.push(...page.data.map((e) => e.id));
      expect(page.data.length).toBeLessThanOrEqual(2);
      next = page.next;
      if (!page.hasMore) break;
    }
    expect(seen).toEqual(all.map((e) => e.id));
    expect(next).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(next).not.toContain('evt_');

    expect((await list(`?topics=*,audit.*&cursor=${next}`)).data).toEqual([]);
    await createCustomer(co.as(), 'Newer');
    const newer = await list(`?topics=customer.*&cursor=${next}`);
    expect(newer.data.map((e) => e.data.name)).toEqual(['Newer']);
  });

  it('filters by topic patterns as subscriptions do, and by time', async () => {
    const audit = await list('?topics=audit.*');
    expect(audit.data.length).toBeGreaterThan(0);
    expect(audit.data.every((e) => e.type.startsWith('audit.'))).toBe(true);
    const exact = await list('?topics=customer.created');
    expect(exact.data.length).toBe(6);
    expect((await list('?topics=invoice.*')).data).toEqual([]);

    const t2 = new Date(Date.UTC(2026, 3, 1) + 2 * 60_000).toISOString();
    const t4 = new Date(Date.UTC(2026, 3, 1) + 4 * 60_000).toISOString();
    expect((await list(`?topics=customer.created&from=${t2}&to=${t4}`)).data.map((e) => e.data.name)).toEqual(['C2', 'C3']);

    const bad = expectError(await co.as('Admin').get('/api/v1/events?topics=customer,nope.*'), 400, 'VALIDATION_ERROR');
    expect(bad.details.map((d) => [d.in, d.pointer, d.rule])).toEqual([
      ['query', '/topics/0', 'grammar'],
      ['query', '/topics/1', 'unknown_family'],
    ]);
    expect(expectError(await co.as('Admin').get('/api/v1/events?from=yesterday'), 400, 'VALIDATION_ERROR').details[0]).toMatchObject({ pointer: '/from' });
  });

  it("keeps companies apart: another company's events, ids and cursors are not found", async () => {
    const theirs = await list('?topics=customer.*', other);
    expect(theirs.data.map((e) => e.data.name)).toEqual(['Not yours']);
    expectError(await co.as('Admin').get(`/api/v1/events/${theirs.data[0].id}`), 404, 'NOT_FOUND');
    const cursor = theirs.next!;
    expect(expectError(await co.as('Admin').get(`/api/v1/events?cursor=${cursor}`), 400, 'VALIDATION_ERROR').details[0]).toMatchObject({ pointer: '/cursor', rule: 'cursor' });
    expect(expectError(await co.as('Admin').get('/api/v1/events?cursor=not-a-cursor'), 400, 'VALIDATION_ERROR').details[0]).toMatchObject({ pointer: '/cursor' });
  });

  it('needs webhooks:read (payloads carry every app’s documents): a Viewer or Manager may not read them', async () => {
    expectError(await co.as('Viewer').get('/api/v1/events'), 403, 'FORBIDDEN');
    expect(expectError(await co.as('Manager').get('/api/v1/events'), 403, 'FORBIDDEN').details[0]).toMatchObject({ permission: 'webhooks:read' });
    expectError(await co.as('Viewer').get('/api/v1/events/evt_00000000000000000000'), 403, 'FORBIDDEN');
  });

  it('answers an unknown event 404 with a detail saying events older than the retention are pruned', async () => {
    const err = expectError(await co.as('Admin').get('/api/v1/events/evt_00000000000000000000'), 404, 'NOT_FOUND');
    expect(err.details[0]).toMatchObject({ resource: 'events', id: 'evt_00000000000000000000', retentionDays: 30, message: 'events older than 30 days are pruned' });
  });

  describe('past the retention window (30 days, the default)', () => {
    let oldId: string;
    let oldCursor: string;

    beforeAll(async () => {
      const page = await list('?limit=1');
      oldId = page.data[0].id;
      oldCursor = page.next!;
      clock.advance(30 * DAY + 1000);
      await createCustomer(co.as(), 'Recent');
      await host.webhooks.runDue();
    });

    it('answers 404 for an event older than the window, before and after the loop prunes it', async () => {
      for (const phase of ['before', 'after']) {
        if (phase === 'after') await host.webhooks.retention.prune();
        const err = expectError(await co.as('Admin').get(`/api/v1/events/${oldId}`), 404, 'NOT_FOUND');
        expect(err.details[0], phase).toMatchObject({ id: oldId, retentionDays: 30, message: 'events older than 30 days are pruned' });
        expect(err.details[0].oldestKept).toBe(isoNow(clock.now() - 30 * DAY));
      }
    });

    it('answers 410 CURSOR_EXPIRED for a cursor from before the window, in English and Arabic', async () => {
      const err = expectError(await co.as('Admin').get(`/api/v1/events?cursor=${oldCursor}`), 410, 'CURSOR_EXPIRED');
      expect(err.message).toBe('The cursor has expired: events older than 30 days are pruned.');
      expect(err.details[0]).toMatchObject({ in: 'query', pointer: '/cursor', retentionDays: 30 });
      const ar = await co.as('Admin').get(`/api/v1/events?cursor=${oldCursor}`, { 'accept-language': 'ar' });
      expect(ar.statusCode).toBe(410);
      expect(ar.json().error.message).toBe('انتهت صلاحية المؤشر: تُحذف الأحداث الأقدم من 30 يومًا.');
    });

    it('lists only what is kept, and has pruned the payloads, deliveries and attempts', async () => {
      expect((await list('?topics=customer.*')).data.map((e) => e.data.name)).toEqual(['Recent']);
      const left = await host.storage.db.all<{ created_at: string }>('SELECT created_at FROM outbox');
      expect(left.every((e) => e.created_at >= isoNow(clock.now() - 30 * DAY))).toBe(true);
      const kept = await host.storage.db.all<{ event_id: string }>('SELECT event_id FROM webhook_deliveries');
      expect(kept.length).toBeGreaterThan(0);
      const keptEvents = new Set((await host.storage.db.all<{ id: string }>('SELECT id FROM outbox')).map((e) => e.id));
      expect(kept.every((d) => keptEvents.has(d.event_id))).toBe(true);
      const orphans = await host.storage.db.get<{ n: number }>('SELECT count(*) AS n FROM webhook_attempts WHERE delivery_id NOT IN (SELECT id FROM webhook_deliveries)');
      expect(Number(orphans!.n)).toBe(0);
    });
  });
});

describe('retention in batches', () => {
  it('prunes in small transactions, oldest first, skipping an event whose delivery is in flight', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const host = await makeHost({ clock });
    const r = await receiver();
    try {
      const co = await createCompany(host);
      await addEndpoint(co.as(), { url: r.url, topics: ['customer.*'] });
      for (let i = 0; i < 12; i++) await createCustomer(co.as(), `C${i}`);
      await host.webhooks.runDue();
      // Each delivered at once: the attempt is kept in its delivery's row.
      expect(await count(host, 'webhook_deliveries WHERE delivered_duration_ms IS NOT NULL')).toBe(12);
      // One delivery is being attempted (by a process that has not stored its result yet).
      const busy = (await host.storage.db.get<{ id: string; event_id: string }>("SELECT id, event_id FROM webhook_deliveries ORDER BY seq LIMIT 1 OFFSET 3"))!;
      await host.storage.db.run("UPDATE webhook_deliveries SET state = 'in_flight' WHERE id = ?", [busy.id]);

      clock.advance(31 * DAY);
      const retention = new Retention({ ...deps(host), clock, retentionDays: 30, batch: 5, pauseMs: 0 });
      const first = await retention.prune();
      const events = await count(host, 'outbox');
      expect(first.batches).toBeGreaterThan(1);
      expect(first.deliveries).toBe(11);
      expect(first.attempts).toBe(11);
      expect(await count(host, 'webhook_deliveries')).toBe(1);
      expect((await host.storage.db.get<{ id: string }>('SELECT id FROM outbox WHERE id = ?', [busy.event_id]))?.id).toBe(busy.event_id);
      expect(events).toBeGreaterThan(0);

      await host.storage.db.run("UPDATE webhook_deliveries SET state = 'delivered' WHERE id = ?", [busy.id]);
      const second = await retention.prune();
      expect(second.deliveries).toBe(1);
      expect(await count(host, 'outbox')).toBe(0);
      expect(await count(host, 'webhook_deliveries')).toBe(0);
      expect(await count(host, 'webhook_attempts')).toBe(0);
    } finally {
      await host.close();
      await r.close();
    }
  });

  it('lets writes through between its batches: a large backlog never holds them up', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const host = await makeHost({ clock });
    try {
      const co = await createCompany(host);
      // 3,000 old events, written straight to the outbox.
      await host.storage.db.transaction(async () => {
        for (let i = 0; i < 3000; i++) {
          await host.storage.db.run('INSERT INTO outbox (id, company_id, topic, data, test, created_at, dispatched_at) VALUES (?, ?, ?, ?, 0, ?, ?)', [
            newId('evt'), co.company.id, 'customer.created', '{"name":"old"}', isoNow(clock.now()), isoNow(clock.now()),
          ]);
        }
      });
      clock.advance(31 * DAY);
      const retention = new Retention({ ...deps(host), clock, retentionDays: 30, batch: 100, pauseMs: 1 });
      let done = false;
      const pruning = retention.prune().finally(() => (done = true));
      const latencies: number[] = [];
      let whileRunning = 0;
      while (!done) {
        const t = performance.now();
        await createCustomer(co.as(), 'Meanwhile');
        latencies.push(performance.now() - t);
        if (!done) whileRunning++;
      }
      const result = await pruning;
      // The backlog, and the company's own first events (its creation, its keys), as old.
      expect(result.events).toBeGreaterThanOrEqual(3000);
      expect(result.batches).toBeGreaterThanOrEqual(30);
      // Writes went in between the batches, not after the whole backlog.
      expect(whileRunning).toBeGreaterThan(1);
      expect(Math.max(...latencies)).toBeLessThan(500);
      expect(await count(host, 'outbox')).toBeGreaterThanOrEqual(whileRunning);
    } finally {
      await host.close();
    }
  });

  it('runs as a loop on the worker side, its cutoff from the driven clock; 0 days keeps everything', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const host = await makeHost({ clock });
    try {
      const co = await createCompany(host);
      await createCustomer(co.as(), 'Old');
      const loop = new Retention({ ...deps(host), clock, retentionDays: 30, intervalMs: 20, firstDelayMs: 5 });
      const never = new Retention({ ...deps(host), clock, retentionDays: 0, intervalMs: 20, firstDelayMs: 5 });
      loop.start();
      never.start();
      await new Promise((res) => setTimeout(res, 100));
      const before = await count(host, 'outbox');
      expect(before).toBeGreaterThan(0);
      expect(await never.prune()).toMatchObject({ events: 0, batches: 0 });
      clock.advance(30 * DAY + 1);
      await until(async () => (await count(host, 'outbox')) === 0, 3000, 'the loop pruning');
      await loop.stop();
      await never.stop();
    } finally {
      await host.close();
    }
  });
});

const deps = (host: Host) => ({ db: host.storage.db, outbox: host.storage.outbox, deliveries: host.storage.deliveries, endpoints: host.storage.endpoints });
