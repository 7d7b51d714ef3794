// /api/v1/webhook-endpoints: create (secret shown once), list/get (never the secret), patch,
// delete, rotate, test events; bad input with pointer and rule; 404 for unknown and other
// companies' endpoints; permissions; audit rows.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Host } from '../core/host.ts';
import type { HostConfig } from '../core/kernel/config.ts';
import { column, count, createCompany, expectError, makeHost, scalar, type TestCompany } from './webhook-helpers.ts';

const BASE = '/api/v1/webhook-endpoints';
const WEBHOOKS: HostConfig['webhooks'] = { ladder: [1, 2], timeoutMs: 300, allowLoopback: true, allowPrivate: false, maxInFlightPerEndpoint: 2, rotationGraceSeconds: 60, jitter: 0 };
const URL_OK = 'http://127.0.0.1:9/hook';

describe('webhook endpoints API', () => {
  let host: Host;
  let strict: Host;
  let a: TestCompany;
  let b: TestCompany;

  beforeAll(async () => {
    host = await makeHost({ config: { webhooks: WEBHOOKS } });
    strict = await makeHost({ config: { webhooks: { ...WEBHOOKS, allowLoopback: false } } });
    a = await createCompany(host, { name: 'A' });
    b = await createCompany(host, { name: 'B' });
  });
  afterAll(async () => {
    await host.close();
    await strict.close();
  });

  it('creates an endpoint (201, secret shown once), lists and gets it without the secret, audited', async () => {
    const res = await a.as().post(BASE, { url: URL_OK, topics: ['invoice.*', 'customer.created'], description: 'ERP sync' });
    expect(res.statusCode, res.body).toBe(201);
    const ep = res.json().data;
    expect(ep).toMatchObject({ id: expect.stringMatching(/^whe_/), url: URL_OK, topics: ['invoice.*', 'customer.created'], description: 'ERP sync', enabled: true, secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/), warnings: [] });
    const list = await a.as().get(BASE);
    expect(list.statusCode).toBe(200);
    expect(list.json()).toMatchObject({ total: 1, page: 1, pageSize: 20 });
    expect(list.body).not.toContain(ep.secret);
    expect(list.json().data[0]).not.toHaveProperty('secret');
    const one = await a.as().get(`${BASE}/${ep.id}`);
    expect(one.statusCode).toBe(200);
    expect(one.body).not.toContain(ep.secret);
    expect(one.json().data).toMatchObject({ id: ep.id, url: URL_OK });
    // The audit row does not hold the secret either.
    const auditRow = await scalar<string>(host, "SELECT after_json FROM audit_log WHERE resource = 'webhook-endpoints' AND action = 'create' AND resource_id = ?", ep.id);
    expect(auditRow).toBeTruthy();
    expect(auditRow).not.toContain(ep.secret);
  });

  it('patches, rotates and deletes, each audited', async () => {
    const ep = (await a.as().post(BASE, { url: URL_OK, topics: ['invoice.*'] })).json().data;
    const patched = await a.as().patch(`${BASE}/${ep.id}`, { topics: ['customer.*'], enabled: false, description: 'off' });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json().data).toMatchObject({ topics: ['customer.*'], enabled: false, description: 'off' });
    const rotated = await a.as().post(`${BASE}/${ep.id}/rotate-secret`);
    expect(rotated.statusCode, rotated.body).toBe(200);
    expect(rotated.json().data.secret).toMatch(/^whsec_/);
    expect(rotated.json().data.secret).not.toBe(ep.secret);
    expect(rotated.json().data.secretRotatedAt).toEqual(expect.any(String));
    const del = await a.as().delete(`${BASE}/${ep.id}`);
    expect(del.statusCode, del.body).toBe(200);
    expectError(await a.as().get(`${BASE}/${ep.id}`), 404, 'NOT_FOUND');
    const actions = await column(host, "SELECT action FROM audit_log WHERE resource = 'webhook-endpoints' AND resource_id = ? ORDER BY seq", ep.id);
    expect(actions).toEqual(['create', 'update', 'rotate', 'delete']);
  });

  it('refuses an invalid URL with pointer /url and the guard reason', async () => {
    for (const [url, rule] of [['not a url', 'scheme'], ['ftp://example.com/x', 'scheme'], ['http://user:pw@127.0.0.1/x', 'credentials'], ['http://169.254.169.254/latest', 'refused_address']] as const) {
      const err = expectError(await a.as().post(BASE, { url, topics: ['invoice.*'] }), 400, 'VALIDATION_ERROR');
      expect(err.details, url).toEqual([expect.objectContaining({ pointer: '/url', rule })]);
    }
  });

  it('refuses a loopback URL unless the host allows loopback', async () => {
    const s = await createCompany(strict);
    const err = expectError(await s.as().post(BASE, { url: 'http://127.0.0.1:8080/hook', topics: ['invoice.*'] }), 400, 'VALIDATION_ERROR');
    expect(err.details).toEqual([expect.objectContaining({ in: 'body', pointer: '/url', rule: 'refused_address' })]);
    // The refusal names the setting an operator would change.
    expect(err.details[0]).toMatchObject({ reason: 'loopback', setting: 'DIWAN_WEBHOOK_ALLOW_LOOPBACK' });
    expect(err.details[0].message).toContain('DIWAN_WEBHOOK_ALLOW_LOOPBACK=1');
    const v6 = expectError(await s.as().post(BASE, { url: 'http://[::1]:8080/hook', topics: ['invoice.*'] }), 400, 'VALIDATION_ERROR');
    expect(v6.details[0]).toMatchObject({ pointer: '/url', rule: 'refused_address' });
    const ep = await s.as().post(BASE, { url: 'http://127.0.0.1:8080/hook', topics: ['invoice.*'] });
    expect(ep.statusCode).toBe(400);
    // The same URL is fine where loopback is allowed; PATCH runs the guard too.
    const ok = (await a.as().post(BASE, { url: 'http://127.0.0.1:8080/hook', topics: ['invoice.*'] })).json().data;
    const patch = expectError(await a.as().patch(`${BASE}/${ok.id}`, { url: 'http://10.0.0.1/x' }), 400, 'VALIDATION_ERROR');
    expect(patch.details[0]).toMatchObject({ pointer: '/url', rule: 'refused_address', setting: 'DIWAN_WEBHOOK_ALLOW_PRIVATE' });
  });

  it('accepts a host name that does not resolve, with a warning: deliveries decide', async () => {
    const url = 'http://no-such-host.invalid/hook';
    const res = await a.as().post(BASE, { url, topics: ['invoice.*'] });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().data).toMatchObject({ url, warnings: [{ pointer: '/url', rule: 'dns', message: expect.any(String) }] });
    const patched = await a.as().patch(`${BASE}/${res.json().data.id}`, { url: 'http://still-no-host.invalid/x' });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json().data.warnings).toEqual([expect.objectContaining({ pointer: '/url', rule: 'dns' })]);
    expect((await a.as().patch(`${BASE}/${res.json().data.id}`, { description: 'no URL change' })).json().data.warnings).toEqual([]);
  });

  it('reports every bad pattern with its pointer and rule', async () => {
    const err = expectError(await a.as().post(BASE, { url: URL_OK, topics: ['crm', 'nope.*', 'invoice.*', 'invoice.*', 'a*b', 'invoice.nothing', 'crm lead'] }), 400, 'VALIDATION_ERROR');
    expect(err.details.map((d) => [d.pointer, d.rule])).toEqual([
      ['/topics/0', 'grammar'],
      ['/topics/1', 'unknown_family'],
      ['/topics/3', 'duplicate'],
      ['/topics/4', 'grammar'],
      ['/topics/5', 'unknown_topic'],
      ['/topics/6', 'whitespace'],
    ]);
    expect(err.details[0]).toMatchObject({ suggestion: 'crm.*' });
    // URL and pattern problems together.
    const both = expectError(await a.as().post(BASE, { url: 'gopher://x', topics: ['nope.*'] }), 400, 'VALIDATION_ERROR');
    expect(both.details.map((d) => d.pointer)).toEqual(['/url', '/topics/0']);
    expectError(await a.as().post(BASE, { url: URL_OK, topics: [] }), 400, 'VALIDATION_ERROR');
    expect(await count(host, "SELECT count(*) FROM webhook_endpoints WHERE url = 'gopher://x'")).toBe(0);
  });

  it("answers 404 NOT_FOUND for an unknown endpoint and for another company's", async () => {
    const ep = (await a.as().post(BASE, { url: URL_OK, topics: ['invoice.*'] })).json().data;
    expectError(await a.as().get(`${BASE}/whe_doesnotexist`), 404, 'NOT_FOUND');
    const other = b.as();
    expectError(await other.get(`${BASE}/${ep.id}`), 404, 'NOT_FOUND');
    expectError(await other.patch(`${BASE}/${ep.id}`, { enabled: false }), 404, 'NOT_FOUND');
    expectError(await other.delete(`${BASE}/${ep.id}`), 404, 'NOT_FOUND');
    expectError(await other.post(`${BASE}/${ep.id}/rotate-secret`), 404, 'NOT_FOUND');
    expectError(await other.post(`${BASE}/${ep.id}/test`, {}), 404, 'NOT_FOUND');
    expectError(await other.get(`${BASE}/${ep.id}/deliveries`), 404, 'NOT_FOUND');
    expectError(await other.get(`${BASE}/${ep.id}/recover?since=2026-01-01T00:00:00Z`), 404, 'NOT_FOUND');
    expectError(await a.as().get(`${BASE}/${ep.id}/deliveries/dlv_nope`), 404, 'NOT_FOUND');
    expectError(await a.as().post(`${BASE}/${ep.id}/deliveries/dlv_nope/retry`), 404, 'NOT_FOUND');
    expect((await other.get(BASE)).json().total).toBe(0);
    // Still there for its owner.
    expect((await a.as().get(`${BASE}/${ep.id}`)).statusCode).toBe(200);
  });

  it('needs webhooks:read to read and webhooks:manage to write (Admin)', async () => {
    expectError(await a.as('Manager').get(BASE), 403, 'FORBIDDEN');
    expectError(await a.as('Manager').post(BASE, { url: URL_OK, topics: ['invoice.*'] }), 403, 'FORBIDDEN');
    expect((await a.as('Admin').get(BASE)).statusCode).toBe(200);
  });

  it('emits a test event for a given topic or the first one the endpoint subscribes to', async () => {
    const ep = (await a.as().post(BASE, { url: URL_OK, topics: ['invoice.overdue', 'customer.*'] })).json().data;
    const res = await a.as().post(`${BASE}/${ep.id}/test`, {});
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json().data).toMatchObject({ eventId: expect.stringMatching(/^evt_/), topic: 'invoice.overdue', test: true });
    const row = await host.storage.db.get('SELECT topic, test FROM outbox WHERE id = ?', [res.json().data.eventId]);
    expect(row).toEqual({ topic: 'invoice.overdue', test: 1 });
    const fam = (await a.as().post(BASE, { url: URL_OK, topics: ['customer.*'] })).json().data;
    const r2 = await a.as().post(`${BASE}/${fam.id}/test`);
    expect(r2.statusCode, r2.body).toBe(202);
    expect(r2.json().data.topic).toMatch(/^customer\./);
    const explicit = await a.as().post(`${BASE}/${ep.id}/test`, { topic: 'customer.created' });
    expect(explicit.json().data.topic).toBe('customer.created');
    expectError(await a.as().post(`${BASE}/${ep.id}/test`, { topic: 'nope.nothing' }), 400, 'VALIDATION_ERROR');
    // A disabled endpoint would receive nothing: 409, and no event is written.
    await a.as().patch(`${BASE}/${fam.id}`, { enabled: false });
    const before = await host.storage.db.get<{ n: number }>('SELECT count(*) AS n FROM outbox');
    const off = expectError(await a.as().post(`${BASE}/${fam.id}/test`), 409, 'CONFLICT');
    expect(off.details).toEqual([{ reason: 'endpoint_disabled', id: fam.id, disabledReason: 'manual' }]);
    expect(await host.storage.db.get<{ n: number }>('SELECT count(*) AS n FROM outbox')).toEqual(before);
  });

  it('lists deliveries paged and filtered by state', async () => {
    await host.webhooks.dispatcher.fanOut();
    const ep = (await a.as().post(BASE, { url: URL_OK, topics: ['invoice.overdue'] })).json().data;
    for (let i = 0; i < 3; i++) await a.as().post(`${BASE}/${ep.id}/test`, {});
    await host.webhooks.dispatcher.fanOut();
    const page = (await a.as().get(`${BASE}/${ep.id}/deliveries?pageSize=2&state=pending`)).json();
    expect(page).toMatchObject({ total: 3, page: 1, pageSize: 2 });
    expect(page.data).toHaveLength(2);
    expect(page.data[0]).toMatchObject({ endpointId: ep.id, topic: 'invoice.overdue', state: 'pending', attemptCount: 0 });
    expect((await a.as().get(`${BASE}/${ep.id}/deliveries?state=dead`)).json().total).toBe(0);
    expectError(await a.as().get(`${BASE}/${ep.id}/deliveries?state=bogus`), 400, 'VALIDATION_ERROR');
  });
});
