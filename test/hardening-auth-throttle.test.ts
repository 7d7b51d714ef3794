// Failed authentications are throttled per client address: after N failures in a window the
// address gets 429 RATE_LIMITED with Retry-After before its key is looked at.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Host } from '../core/host.ts';
import { ManualClock } from '../core/kernel/clock.ts';
import { loadConfig } from '../core/kernel/config.ts';
import { clientKey, createAuthThrottle } from '../core/http/auth-throttle.ts';
import { ARABIC, authHeaders, createCompany, expectError, makeHost, type TestCompany } from './helpers.ts';

const unknownKey = (i: number) => `dwk_${String(i).padStart(16, '0')}_${'a'.repeat(32)}`;

describe('auth throttle (unit)', () => {
  const make = (limit = 3, windowMs = 10_000, maxTracked = 100) => {
    let t = 1_000_000;
    const throttle = createAuthThrottle({ limit, windowMs, maxTracked, now: () => t });
    return { throttle, advance: (ms: number) => (t += ms) };
  };

  it('refuses an address after `limit` failures until its window ends', () => {
    const { throttle, advance } = make();
    for (let i = 0; i < 3; i++) {
      expect(throttle.check('198.51.100.1')).toBe(0);
      throttle.fail('198.51.100.1');
    }
    expect(throttle.check('198.51.100.1')).toBe(10);
    advance(4_500);
    expect(throttle.check('198.51.100.1')).toBe(6);
    expect(throttle.check('198.51.100.2'), 'another address is not affected').toBe(0);
    advance(5_500);
    expect(throttle.check('198.51.100.1')).toBe(0);
    throttle.fail('198.51.100.1');
    expect(throttle.check('198.51.100.1'), 'a new window starts from zero').toBe(0);
  });

  it('treats IPv4-mapped IPv6 as IPv4 and an IPv6 /64 as one client', () => {
    expect(clientKey('::ffff:198.51.100.7')).toBe('198.51.100.7');
    expect(clientKey('2001:db8:1:2::1')).toBe(clientKey('2001:db8:1:2:ffff:ffff:ffff:ffff'));
    expect(clientKey('2001:db8:1:2::1')).not.toBe(clientKey('2001:db8:1:3::1'));
    const { throttle } = make(2);
    throttle.fail('2001:db8:1:2::1');
    throttle.fail('2001:db8:1:2::99');
    expect(throttle.check('2001:db8:1:2::abcd')).toBeGreaterThan(0);
  });

  it('keeps memory bounded: expired windows go, and at most maxTracked addresses are kept', () => {
    const { throttle, advance } = make(3, 10_000, 50);
    for (let i = 0; i < 500; i++) throttle.fail(`10.0.${i >> 8}.${i & 255}`);
    expect(throttle.size()).toBe(50);
    // The stalest were dropped, the latest kept.
    throttle.fail('10.0.1.243');
    throttle.fail('10.0.1.243');
    expect(throttle.check('10.0.1.243')).toBeGreaterThan(0);
    advance(10_000);
    throttle.fail('192.0.2.1');
    expect(throttle.size()).toBe(1);
  });

  it('turns off with limit 0', () => {
    const { throttle } = make(0);
    for (let i = 0; i < 100; i++) throttle.fail('198.51.100.1');
    expect(throttle.check('198.51.100.1')).toBe(0);
    expect(throttle.size()).toBe(0);
  });
});

describe('auth throttle on the API', () => {
  let host: Host;
  let clock: ManualClock;
  let co: TestCompany;

  beforeAll(async () => {
    clock = new ManualClock();
    host = await makeHost({ clock, config: { authFailLimit: 5, authFailWindowSeconds: 60 } });
    co = await createCompany(host);
  });
  afterAll(() => host.close());

  const get = (ip: string, headers: Record<string, string>) => host.app.inject({ method: 'GET', url: '/api/v1/customers', remoteAddress: ip, headers });
  const goodHeaders = () => authHeaders(co.keys.Owner, co.company.id);

  it('answers 429 with Retry-After after 5 failures, even to a valid key, and only for that address', async () => {
    const ip = '203.0.113.10';
    for (let i = 0; i < 5; i++) expectError(await get(ip, authHeaders(unknownKey(i), co.company.id)), 401, 'UNAUTHENTICATED');
    const res = await get(ip, goodHeaders());
    const err = expectError(res, 429, 'RATE_LIMITED');
    expect(err.details).toEqual([{ reason: 'authentication_failures', limit: 5, windowSeconds: 60 }]);
    expect(res.headers['retry-after']).toBe('60');
    const ar = await get(ip, { ...goodHeaders(), 'accept-language': 'ar' });
    expect(expectError(ar, 429, 'RATE_LIMITED').message).toMatch(ARABIC);
    // Another address with the same valid key is served.
    expect((await get('203.0.113.11', goodHeaders())).statusCode).toBe(200);
    // Routes without a key are not throttled.
    expect((await host.app.inject({ method: 'GET', url: '/api/v1/openapi.json', remoteAddress: ip })).statusCode).toBe(200);
    clock.advance(30_000);
    expect((await get(ip, goodHeaders())).headers['retry-after']).toBe('30');
    clock.advance(30_000);
    expect((await get(ip, goodHeaders())).statusCode).toBe(200);
  });

  it("does not reset an address's count on a success, nor count a missing key", async () => {
    const ip = '203.0.113.20';
    for (let i = 0; i < 4; i++) await get(ip, authHeaders(unknownKey(i), co.company.id));
    expect((await get(ip, goodHeaders())).statusCode).toBe(200);
    for (let i = 0; i < 10; i++) expectError(await get(ip, { 'x-company-id': co.company.id }), 401, 'UNAUTHENTICATED');
    await get(ip, authHeaders(unknownKey(99), co.company.id));
    expectError(await get(ip, goodHeaders()), 429, 'RATE_LIMITED');
  });
});

describe('auth throttle defaults', () => {
  it('lets through at most 30 failures a minute from one address (3,000 unknown keys used to get 3,000 × 401)', async () => {
    const c = loadConfig({});
    expect([c.authFailLimit, c.authFailWindowSeconds, c.authFailMaxTracked]).toEqual([30, 60, 50_000]);
    const host = await makeHost();
    try {
      const co = await createCompany(host);
      const counts: Record<number, number> = {};
      for (let i = 0; i < 300; i++) {
        const res = await host.app.inject({ method: 'GET', url: '/api/v1/customers', remoteAddress: '198.51.100.99', headers: authHeaders(unknownKey(i), co.company.id) });
        counts[res.statusCode] = (counts[res.statusCode] ?? 0) + 1;
      }
      expect(counts).toEqual({ 401: 30, 429: 270 });
    } finally {
      await host.close();
    }
  });
});
