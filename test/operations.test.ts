// What a load balancer and a monitoring system ask: /healthz, /readyz, /metrics — outside the
// key check — and a drain on close. Worker-only processes serve these and not the API.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Host } from '../core/host.ts';
import { buildHost } from './db.ts';
import { loadConfig } from '../core/kernel/config.ts';
import { createCompany, invoicingSources, makeHost, type TestCompany } from './helpers.ts';

describe('operations endpoints', () => {
  let host: Host;
  let a: TestCompany;

  beforeAll(async () => {
    host = await makeHost();
    a = await createCompany(host);
  });
  afterAll(() => host.close());

  it('/healthz answers without a key', async () => {
    const res = await host.app.inject({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok' });
  });

  it('/readyz checks the database, the schema and draining', async () => {
    const res = await host.app.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ status: 'ready', checks: { database: 'ok', migrations: 'ok', draining: 'no' } });
  });

  it('/metrics exposes requests by route and status, outbox lag, deliveries, attempts, signing queue and scheduler lag', async () => {
    await a.as().get('/api/v1/customers');
    await a.as().post('/api/v1/customers', { name: 'Metered' });
    await host.app.inject({ method: 'GET', url: '/api/v1/customers' });
    const res = await host.app.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    const text = res.body;
    expect(text).toMatch(/diwan_http_request_duration_seconds_count\{route="invoicing.listCustomer",method="GET",status="200"\} 1/);
    expect(text).toMatch(/diwan_http_request_duration_seconds_count\{route="invoicing.createCustomer",method="POST",status="201"\} 1/);
    expect(text).toMatch(/diwan_http_request_duration_seconds_count\{route="invoicing.listCustomer",method="GET",status="401"\} 1/);
    expect(text).toMatch(/^diwan_outbox_lag_seconds \d/m);
    expect(text).toMatch(/^diwan_webhook_deliveries\{state="pending"\} \d+/m);
    expect(text).toMatch(/^# TYPE diwan_webhook_attempts_total counter/m);
    expect(text).toMatch(/^diwan_signing_queue_depth 0/m);
    expect(text).toMatch(/^diwan_scheduler_lag_seconds \d/m);
    expect(text).toMatch(/^diwan_process_cpu_seconds_total /m);
  });
});

describe('roles and draining', () => {
  it('a worker-only process serves health and metrics, not the API', async () => {
    const host = await buildHost({ dbFile: ':memory:', sources: invoicingSources(), config: { roles: { api: false, worker: true } } });
    try {
      expect((await host.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
      const api = await host.app.inject({ method: 'GET', url: '/api/v1/company' });
      expect(api.statusCode).toBe(404);
      expect(api.json().error.code).toBe('NOT_FOUND');
    } finally {
      await host.close();
    }
  });

  it('DIWAN_ROLES is read and checked', () => {
    expect(loadConfig({ DIWAN_ROLES: 'worker' }).roles).toEqual({ api: false, worker: true });
    expect(loadConfig({}).roles).toEqual({ api: true, worker: true });
    expect(() => loadConfig({ DIWAN_ROLES: 'cook' })).toThrow(/DIWAN_ROLES/);
  });

  it('/readyz answers 503 once the host drains', async () => {
    const host = await makeHost();
    await host.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (host.app.server.address() as { port: number }).port;
    const closing = host.close();
    expect(host.draining).toBe(true);
    await closing;
    await expect(fetch(`http://127.0.0.1:${port}/readyz`)).rejects.toThrow();
  });
});
