// Gap-free counters (`ctx.sequences.next`): fifty requests taking a number at once get exactly
// 1..50, a request that fails after taking one gives it back, and one app's counter is not
// another's, nor one company's another's. On SQLite, and on PostgreSQL with its connection pool.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Host } from '../core/host.ts';
import { buildHost } from './db.ts';
import { createCompany, expectError, type Client, type TestCompany } from './helpers.ts';
import { tempDir } from './fixtures.ts';
import { sequenceSources } from './sequences-app.ts';

describe('gap-free sequences', () => {
  let host: Host;
  let co: TestCompany;
  let api: Client;

  beforeAll(async () => {
    host = await buildHost({ sources: sequenceSources(tempDir()), config: { rateLimitPerMinute: 0 } });
    co = await createCompany(host, { apps: ['tickets', 'stubs'] });
    api = co.as();
  });
  afterAll(() => host.close());

  const numbers = async (c: Client, resource = 'tickets') =>
    ((await c.get(`/api/v1/${resource}?pageSize=100`)).json().data as { number: number }[]).map((t) => t.number).sort((a, b) => a - b);

  it('fifty concurrent requests get 1..50: no gap, no duplicate', async () => {
    const answers = await Promise.all(Array.from({ length: 50 }, () => api.post('/api/v1/tickets/take', { pauseMs: 2 })));
    for (const r of answers) expect(r.statusCode, r.body).toBe(200);
    const taken = answers.map((r) => r.json().data.number as number).sort((a, b) => a - b);
    expect(taken).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(await numbers(api)).toEqual(taken);
  });

  it('a request that fails after taking a number gives it back', async () => {
    const e = expectError(await api.post('/api/v1/tickets/take', { fail: true }), 409, 'CONFLICT');
    expect(e.details[0]).toMatchObject({ reason: 'told_to_fail', number: 51 });
    expect((await api.post('/api/v1/tickets/take', {})).json().data.number).toBe(51);
    // Failures mixed with successes, all at once: the successes still number 52.. without a gap.
    const mixed = await Promise.all(Array.from({ length: 20 }, (_, i) => api.post('/api/v1/tickets/take', { fail: i % 3 === 0, pauseMs: 1 })));
    const ok = mixed.filter((r) => r.statusCode === 200).map((r) => r.json().data.number as number).sort((a, b) => a - b);
    expect(mixed.filter((r) => r.statusCode === 409)).toHaveLength(7);
    expect(ok).toEqual(Array.from({ length: 13 }, (_, i) => 52 + i));
    expect(await numbers(api)).toEqual(Array.from({ length: 64 }, (_, i) => i + 1));
  });

  it("one app cannot advance another's counter, nor one company another's", async () => {
    expect((await api.post('/api/v1/stubs/take', {})).json().data.number).toBe(1);
    const other = await createCompany(host, { apps: ['tickets'] });
    expect((await other.as().post('/api/v1/tickets/take', {})).json().data.number).toBe(1);
    expect((await api.post('/api/v1/tickets/take', {})).json().data.number).toBe(65);
    // A purged app's counters go with its documents: installed again, it numbers from 1.
    const o = other.as();
    for (const step of ['disable', 'uninstall', 'purge']) expect((await o.post(`/api/v1/apps/tickets/${step}`, {})).statusCode).toBe(200);
    expect((await o.post('/api/v1/apps', { appId: 'tickets' })).statusCode).toBeLessThan(300);
    expect((await o.post('/api/v1/tickets/take', {})).json().data.number).toBe(1);
    expect((await api.post('/api/v1/tickets/take', {})).json().data.number).toBe(66);
  });
});
