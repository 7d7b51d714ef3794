// The event stream (`GET /api/v1/events/stream`, server-sent events) over a real port: served by
// the pipeline (refusals answer in the envelope before any stream starts); events committed in
// this process arrive at once, those of another process on the same database by polling; a
// stream resumes after `Last-Event-ID`; it outlives the request time-outs; it ends cleanly when
// the client goes away, when the key is revoked, and when the host closes.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Host } from '../core/host.ts';
import { CLI_ACTOR } from '../core/kernel/actor.ts';
import { encodeCursor } from '../core/events/event-log.ts';
import { SseParser } from '../cli/commands/listen.ts';
import { authHeaders, client, createCompany, createCustomer, expectError, makeHost, sleep, until, type TestCompany } from './webhooks-kit.ts';

interface Msg {
  id?: string;
  event?: string;
  data: string;
}

interface Stream {
  status: number;
  headers: http.IncomingHttpHeaders;
  messages: Msg[];
  ended: Promise<void>;
  isEnded(): boolean;
  waitFor(n: number, ms?: number): Promise<Msg[]>;
  close(): void;
}

function openStream(port: number, key: string, companyId: string, opts: { query?: string; headers?: Record<string, string> } = {}): Promise<Stream> {
  return new Promise((resolve, reject) => {
    const req = http.get(`http://127.0.0.1:${port}/api/v1/events/stream${opts.query ?? ''}`, { headers: { ...authHeaders(key, companyId), ...opts.headers } });
    req.on('error', reject);
    req.on('response', (res) => {
      const messages: Msg[] = [];
      let done = false;
      const parser = new SseParser((m) => messages.push(m));
      res.setEncoding('utf8');
      res.on('data', (c: string) => parser.push(c));
      const ended = new Promise<void>((r) => {
        res.on('end', () => ((done = true), r()));
        res.on('close', () => ((done = true), r()));
      });
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        messages,
        ended,
        isEnded: () => done,
        async waitFor(n, ms = 5000) {
          await until(() => messages.length >= n, ms, `${n} stream messages (got ${messages.length})`);
          return messages;
        },
        close: () => req.destroy(),
      });
    });
  });
}

describe('the event stream', () => {
  let host: Host;
  let co: TestCompany;
  let port: number;
  let dir: string;
  const dbFile = () => path.join(dir, 'diwan.db');

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'diwan-stream-'));
    host = await makeHost({
      dbFile: dbFile(),
      config: { dataDir: dir, requestTimeoutMs: 1000, headersTimeoutMs: 500 },
      eventStream: { pollMs: 100, heartbeatMs: 100 },
    });
    co = await createCompany(host);
    await host.app.listen({ port: 0, host: '127.0.0.1' });
    port = (host.app.server.address() as { port: number }).port;
  });

  afterAll(async () => {
    await host?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const injectRefusal = (key: string, query = '', headers: Record<string, string> = {}) =>
    host.app.inject({ method: 'GET', url: `/api/v1/events/stream${query}`, headers: { ...authHeaders(key, co.company.id), ...headers } });

  it('answers refusals in the error envelope, before any stream starts', async () => {
    expectError(await host.app.inject({ method: 'GET', url: '/api/v1/events/stream', headers: { 'x-company-id': co.company.id } }), 401, 'UNAUTHENTICATED');
    expect(expectError(await injectRefusal(co.keys.Viewer), 403, 'FORBIDDEN').details[0]).toMatchObject({ permission: 'webhooks:read' });
    expect(expectError(await injectRefusal(co.keys.Admin, '?topics=nope.*'), 400, 'VALIDATION_ERROR').details[0]).toMatchObject({ pointer: '/topics/0', rule: 'unknown_family' });
    const old = encodeCursor({ id: 'evt_00000000000000000000', createdAt: '2020-01-01T00:00:00.000Z' });
    expect(expectError(await injectRefusal(co.keys.Admin, '', { 'last-event-id': old }), 410, 'CURSOR_EXPIRED').details[0]).toMatchObject({ in: 'headers', pointer: '/last-event-id' });
    expect(expectError(await injectRefusal(co.keys.Admin, '', { 'last-event-id': 'garbage' }), 400, 'VALIDATION_ERROR').details[0]).toMatchObject({ in: 'headers' });
    expect(host.streams.size).toBe(0);
  });

  it('streams the events committed after it opened, each its webhook body with its cursor as id, at once', async () => {
    await createCustomer(co.as(), 'Before');
    const s = await openStream(port, co.keys.Admin, co.company.id, { query: '?topics=customer.*' });
    expect(s.status).toBe(200);
    expect(s.headers['content-type']).toMatch(/^text\/event-stream/);
    const t = performance.now();
    await createCustomer(co.as(), 'After');
    const [m] = await s.waitFor(1, 2000);
    expect(performance.now() - t).toBeLessThan(1000);
    expect(m.event).toBe('customer.created');
    const body = JSON.parse(m.data);
    expect(body).toMatchObject({ type: 'customer.created', companyId: co.company.id, data: { name: 'After' } });
    expect(m.data).toBe((await co.as('Admin').get(`/api/v1/events/${body.id}`)).body.slice('{"data":'.length, -1));
    // Its id is a cursor of the events API.
    const after = await co.as('Admin').get(`/api/v1/events?topics=customer.*&cursor=${m.id}`);
    expect(after.json().data).toEqual([]);
    // Only what the topics ask for: no audit rows, no other families.
    expect(s.messages.every((x) => x.event === 'customer.created')).toBe(true);
    s.close();
    await until(() => host.streams.size === 0, 2000, 'the reader closed when the client went away');
  });

  it('resumes after Last-Event-ID without a gap', async () => {
    const s = await openStream(port, co.keys.Admin, co.company.id, { query: '?topics=customer.*' });
    await createCustomer(co.as(), 'R1');
    const [first] = await s.waitFor(1);
    s.close();
    await createCustomer(co.as(), 'R2');
    await createCustomer(co.as(), 'R3');
    const again = await openStream(port, co.keys.Admin, co.company.id, { query: '?topics=customer.*', headers: { 'last-event-id': first.id! } });
    await again.waitFor(2);
    expect(again.messages.map((m) => JSON.parse(m.data).data.name)).toEqual(['R2', 'R3']);
    await createCustomer(co.as(), 'R4');
    await again.waitFor(3);
    expect(JSON.parse(again.messages[2].data).data.name).toBe('R4');
    again.close();
  });

  it('delivers the events another process commits to the same database', async () => {
    const s = await openStream(port, co.keys.Admin, co.company.id, { query: '?topics=customer.*' });
    const other = await makeHost({ dbFile: dbFile(), config: { dataDir: dir } });
    try {
      const t = performance.now();
      // Written by the other host (its own connection): no commit of this process wakes the stream.
      await createCustomer(client(other, co.keys.Owner, co.company.id), 'From elsewhere');
      const [m] = await s.waitFor(1, 3000);
      expect(JSON.parse(m.data).data.name).toBe('From elsewhere');
      expect(performance.now() - t).toBeLessThan(2000);
    } finally {
      s.close();
      await other.close();
    }
  });

  it('outlives the request time-outs (1 s here): a stream is not a slow request', async () => {
    const s = await openStream(port, co.keys.Admin, co.company.id, { query: '?topics=customer.*' });
    await sleep(1600);
    expect(s.isEnded()).toBe(false);
    await createCustomer(co.as(), 'Late');
    await s.waitFor(1);
    s.close();
  });

  it('ends when the key is revoked (checked on each heartbeat)', async () => {
    const { key, record } = await host.keys.create({ companyId: co.company.id, actor: CLI_ACTOR, appId: 'core' }, { role: 'Admin', scopes: ['webhooks'], name: 'listener' });
    const s = await openStream(port, key, co.company.id);
    expect(s.status).toBe(200);
    await sleep(250);
    expect(s.isEnded()).toBe(false);
    await host.keys.revoke({ companyId: co.company.id, actor: CLI_ACTOR, appId: 'core' }, record.id);
    await Promise.race([s.ended, sleep(3000)]);
    expect(s.isEnded()).toBe(true);
    expect(s.messages.at(-1)).toMatchObject({ event: 'close', data: '{"reason":"credentials"}' });
  });

  it('ends every stream cleanly when the host closes, without holding the close up', async () => {
    const a = await openStream(port, co.keys.Admin, co.company.id);
    const b = await openStream(port, co.keys.Owner, co.company.id, { query: '?topics=audit.*' });
    await until(() => host.streams.size === 2, 2000, 'two readers');
    const t = performance.now();
    await host.close();
    expect(performance.now() - t).toBeLessThan(3000);
    await Promise.all([a.ended, b.ended]);
    for (const s of [a, b]) expect(s.messages.at(-1)).toMatchObject({ event: 'close', data: '{"reason":"host_closing"}' });
    expect(host.streams.size).toBe(0);
  });
});
