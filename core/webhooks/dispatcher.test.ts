import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../kernel/clock.ts';
import type { Host } from '../host.ts';
import { cliScope, createCompany, makeHost } from '../../test/webhook-helpers.ts';
import { eventBody, leaseLookIn } from './dispatcher.ts';
import { CLI_ACTOR } from '../kernel/actor.ts';

describe('eventBody', () => {
  it('is the JSON of { id, type, createdAt, companyId, data } (+ test), from the stored data text', () => {
    const r = { event_id: 'evt_1', topic: 'invoice.created', event_created_at: '2026-01-01T00:00:00.000Z', company_id: 'co_1', data: JSON.stringify({ a: [1, 'ب'] }), test: 0 };
    expect(JSON.parse(eventBody(r))).toEqual({ id: 'evt_1', type: 'invoice.created', createdAt: '2026-01-01T00:00:00.000Z', companyId: 'co_1', data: { a: [1, 'ب'] } });
    expect(Object.keys(JSON.parse(eventBody({ ...r, test: 1 })))).toEqual(['id', 'type', 'createdAt', 'companyId', 'data', 'test']);
  });
});

describe('leaseLookIn', () => {
  const leases = [{ until: 1000 }, { until: 3000 }];
  it('answers the first lease not reclaimed since its end: at its end, or at once once it has ended', () => {
    expect(leaseLookIn(leases, -Infinity, 400)).toBe(601);
    // Its timer fired with the clock a moment short of the end: the reclaim at 999 took nothing,
    // and the take after it ended at 1002. The lease still needs its look.
    expect(leaseLookIn(leases, 999, 1002)).toBe(1);
    // Reclaimed at or after its end: the next lease's end.
    expect(leaseLookIn(leases, 1000, 1002)).toBe(1999);
    expect(leaseLookIn(leases, 3000, 3500)).toBeUndefined();
    expect(leaseLookIn([], -Infinity, 0)).toBeUndefined();
  });
});

describe('Dispatcher', () => {
  let host: Host;
  let server: http.Server;
  let url: string;
  let hits = 0;
  beforeAll(async () => {
    host = await makeHost({ clock: new ManualClock(), config: { webhooks: { ladder: [1], timeoutMs: 1000, allowLoopback: true, allowPrivate: false, maxInFlightPerEndpoint: 4, rotationGraceSeconds: 0, jitter: 0 } } });
    server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        hits++;
        res.end('ok');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
  });
  afterAll(async () => {
    await host.close();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('signs the due deliveries of one tick in one batch', async () => {
    const co = await createCompany(host);
    for (let i = 0; i < 12; i++) await host.webhooks.endpoints.create(cliScope(co.company.id), { url, topics: ['invoice.overdue'] });
    await host.webhooks.dispatcher.fanOut(); // the endpoints' own audit events (no subscriber)
    await host.catalogue.trigger(co.company.id, 'invoice.overdue', CLI_ACTOR);
    const before = host.webhooks.dispatcher.signerStats;
    expect(await host.webhooks.tick()).toEqual({ events: 1, attempts: 12 });
    const after = host.webhooks.dispatcher.signerStats;
    expect(after.items - before.items).toBe(12);
    expect(after.roundTrips - before.roundTrips).toBeLessThanOrEqual(2); // one flush, split across at most 2 threads
    expect(hits).toBe(12);
  });

  it('rebuilds a company index when its endpoints change (a removed endpoint gets nothing)', async () => {
    const co = await createCompany(host);
    const ep = await host.webhooks.endpoints.create(cliScope(co.company.id), { url, topics: ['invoice.overdue'] });
    await host.webhooks.dispatcher.fanOut(); // builds the company's index, with the endpoint in it
    await host.webhooks.endpoints.remove(cliScope(co.company.id), ep.id);
    const n = hits;
    await host.catalogue.trigger(co.company.id, 'invoice.overdue', CLI_ACTOR);
    await host.webhooks.runDue();
    expect(hits).toBe(n);
  });
});
