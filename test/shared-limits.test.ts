// The per-key rate limit and the failed-authentication throttle: on one host (both databases),
// and on PostgreSQL shared by two hosts on one database, as several API processes behind a load
// balancer are: requests split across them meet one limit.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Host } from '../core/host.ts';
import { ManualClock } from '../core/kernel/clock.ts';
import { databases } from './db.ts';
import { pgHosts, type PgHosts } from './pg-hosts.ts';
import { ARABIC, authHeaders, createCompany, expectError, invoicingSources, type TestCompany } from './helpers.ts';

/** A minute boundary: both kinds of window (from the first request, or aligned) start here. */
const MINUTE = Date.UTC(2026, 0, 1, 12, 0, 0);
const unknownKey = (i: number) => `dwk_${String(i).padStart(16, '0')}_${'b'.repeat(32)}`;

const get = (host: Host, headers: Record<string, string>, ip = '198.51.100.40') =>
  host.app.inject({ method: 'GET', url: '/api/v1/customers', remoteAddress: ip, headers });

function expectRateLimited(res: Awaited<ReturnType<typeof get>>, limit: number, retryAfter: string): void {
  const err = expectError(res, 429, 'RATE_LIMITED');
  expect(err.details).toEqual([{ limit, windowSeconds: 60 }]);
  expect(res.headers['retry-after']).toBe(retryAfter);
  expect(err.message).toContain(retryAfter);
}

describe.each(databases())('per-key rate limit on one host ($name)', ({ buildHost }) => {
  let host: Host;
  let clock: ManualClock;
  let co: TestCompany;

  beforeAll(async () => {
    clock = new ManualClock(MINUTE);
    host = await buildHost({ clock, sources: invoicingSources(), config: { rateLimitPerMinute: 5 } });
    co = await createCompany(host);
  });
  afterAll(() => host?.close());

  it('answers 429 RATE_LIMITED with Retry-After past the limit, per key, until the window ends', async () => {
    const owner = authHeaders(co.keys.Owner, co.company.id);
    for (let i = 0; i < 5; i++) expect((await get(host, owner)).statusCode).toBe(200);
    clock.advance(20_000);
    expectRateLimited(await get(host, owner), 5, '40');
    const ar = await get(host, { ...owner, 'accept-language': 'ar' });
    expect(expectError(ar, 429, 'RATE_LIMITED').message).toMatch(ARABIC);
    // Another key of the same company has its own count.
    expect((await get(host, authHeaders(co.keys.Viewer, co.company.id))).statusCode).toBe(200);
    clock.advance(40_000);
    expect((await get(host, owner)).statusCode).toBe(200);
  });
});

describe('on PostgreSQL, two hosts on one database', () => {
  let two: PgHosts;
  let clock: ManualClock;
  let co: TestCompany;

  beforeAll(async () => {
    clock = new ManualClock(MINUTE);
    two = await pgHosts(2, { clock, sources: invoicingSources(), config: { rateLimitPerMinute: 6, authFailLimit: 4, authFailWindowSeconds: 60 } });
    co = await createCompany(two.hosts[0]);
  });
  afterAll(() => two?.close());

  it('counts one rate limit for a key whose requests are split across both hosts', async () => {
    const [a, b] = two.hosts;
    const owner = authHeaders(co.keys.Owner, co.company.id);
    // Alternating: three each, six in all, the shared limit.
    for (let i = 0; i < 6; i++) expect((await get(i % 2 ? b : a, owner)).statusCode, `request ${i + 1}`).toBe(200);
    clock.advance(15_000);
    expectRateLimited(await get(a, owner), 6, '45');
    expectRateLimited(await get(b, owner), 6, '45');
    // At once from both: all refused, none slips through on either host.
    const burst = await Promise.all(Array.from({ length: 10 }, (_, i) => get(i % 2 ? b : a, owner)));
    expect(burst.map((r) => r.statusCode)).toEqual(Array(10).fill(429));
    // The next window is a new count, for both.
    clock.advance(45_000);
    const next = await Promise.all(Array.from({ length: 10 }, (_, i) => get(i % 2 ? b : a, owner)));
    expect(next.filter((r) => r.statusCode === 200).length).toBe(6);
    expect(next.filter((r) => r.statusCode === 429).length).toBe(4);
    // Windows that ended are pruned: what remains is this window's and the one before.
    const rows = await a.storage.db.all<{ window_start: number }>('SELECT DISTINCT window_start FROM rate_windows ORDER BY window_start');
    expect(rows.map((r) => Number(r.window_start)).every((w) => w >= MINUTE)).toBe(true);
    // Unlogged: a count per request waits for no disk flush.
    expect((await a.storage.db.get<{ p: string }>("SELECT relpersistence AS p FROM pg_class WHERE relname = 'rate_windows'"))?.p).toBe('u');
    clock.advance(120_000);
    expect((await get(b, owner)).statusCode).toBe(200);
    // The prune runs beside the request (nothing waits for it).
    const left = async () => (await a.storage.db.all<{ window_start: number }>('SELECT DISTINCT window_start FROM rate_windows')).map((r) => Number(r.window_start));
    await expect.poll(left, { timeout: 5_000, interval: 20 }).toEqual([MINUTE + 180_000]);
  });

  it('with a larger limit, counts requests in batches far from it and each one near it: past the limit by at most a batch per other host', async () => {
    const big = await pgHosts(2, { clock, sources: invoicingSources(), config: { rateLimitPerMinute: 1000 } });
    try {
      const [a, b] = big.hosts;
      const c = await createCompany(a);
      const owner = authHeaders(c.keys.Owner, c.company.id);
      clock.set(MINUTE + 10 * 60_000);
      const codes: number[] = [];
      for (let i = 0; i < 1100; i++) codes.push((await get(i % 2 ? b : a, owner)).statusCode);
      const served = codes.filter((x) => x === 200).length;
      // A batch is a hundredth of the limit (10): the other host may hold up to 9 not yet written.
      expect(served).toBeGreaterThanOrEqual(1000);
      expect(served).toBeLessThanOrEqual(1009);
      expect(codes.slice(served)).toEqual(Array(1100 - served).fill(429));
      // Far from the limit the hosts wrote a batch at a time: the database holds every request counted so far.
      const row = await a.storage.db.get<{ count: number }>('SELECT count FROM rate_windows WHERE window_start = ?', [MINUTE + 10 * 60_000]);
      expect(Number(row!.count)).toBeGreaterThan(1000);
      expect(Number(row!.count)).toBeLessThanOrEqual(1100);
    } finally {
      await big.close();
    }
  }, 120_000);

  it('throttles an address whose failed authentications are split across both hosts', async () => {
    const [a, b] = two.hosts;
    const ip = '203.0.113.77';
    const good = authHeaders(co.keys.Manager, co.company.id);
    // Four failures, two on each host: the shared limit.
    for (let i = 0; i < 4; i++) expectError(await get(i % 2 ? b : a, authHeaders(unknownKey(i), co.company.id), ip), 401, 'UNAUTHENTICATED');
    // The host that saw the fourth failure refuses at once, even a valid key.
    const refused = expectError(await get(b, good, ip), 429, 'RATE_LIMITED');
    expect(refused.details).toEqual([{ reason: 'authentication_failures', limit: 4, windowSeconds: 60 }]);
    // The other learns it at the address's next failure there (one beyond the limit per other host).
    expectError(await get(a, authHeaders(unknownKey(9), co.company.id), ip), 401, 'UNAUTHENTICATED');
    const res = await get(a, good, ip);
    expectError(res, 429, 'RATE_LIMITED');
    expect(res.headers['retry-after']).toBe('60');
    // Another address is served by both.
    expect((await get(a, good, '203.0.113.78')).statusCode).toBe(200);
    expect((await get(b, good, '203.0.113.78')).statusCode).toBe(200);
    clock.advance(60_000);
    expect((await get(a, good, ip)).statusCode).toBe(200);
    expect((await get(b, good, ip)).statusCode).toBe(200);
    // Ended windows are pruned (by the next failure counted once a window has passed), the new one counted.
    clock.advance(1_000);
    expectError(await get(a, authHeaders(unknownKey(10), co.company.id), '203.0.113.79'), 401, 'UNAUTHENTICATED');
    const keys = async () => (await a.storage.db.all<{ key: string }>("SELECT key FROM throttles WHERE key LIKE 'auth:%' ORDER BY key")).map((r) => r.key);
    await expect.poll(keys, { timeout: 5_000, interval: 20 }).toEqual(['auth:address:203.0.113.79']);
  });
});
