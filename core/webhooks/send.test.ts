import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifySignature } from '../../sdk/verify-signature.ts';
import { sendDelivery, webhookAgent, type SendOptions } from './send.ts';
import { SIGNATURE_HEADER, signHeader } from './signature.ts';

// One loopback server whose behaviour is picked by the request path.
const received: { path: string; headers: http.IncomingHttpHeaders; body: string; port?: number }[] = [];
const hanging: http.ServerResponse[] = [];
let server: http.Server;
let base: string;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push({ path: req.url ?? '', headers: req.headers, body, port: req.socket.remotePort });
      switch (req.url) {
        case '/verify': {
          const v = verifySignature(body, req.headers[SIGNATURE_HEADER] as string, 'whsec_receiver');
          res.writeHead(v.ok ? 204 : 400).end(v.ok ? '' : v.reason);
          break;
        }
        case '/ok':
          res.writeHead(200, { 'content-type': 'text/plain' }).end('thanks');
          break;
        case '/created':
          res.writeHead(201).end();
          break;
        case '/fail':
          res.writeHead(500).end('boom');
          break;
        case '/redirect':
          res.writeHead(302, { location: '/ok' }).end();
          break;
        case '/hang':
          hanging.push(res); // never answers
          break;
        case '/reset':
          req.socket.resetAndDestroy();
          break;
        case '/huge': {
          res.writeHead(200);
          const block = Buffer.alloc(64 * 1024, 'a');
          let sent = 0;
          const pump = () => {
            while (sent < 8 * 1024 * 1024) {
              sent += block.length;
              if (!res.write(block)) return void res.once('drain', pump);
            }
            res.end();
          };
          res.on('close', () => (sent = Infinity));
          pump();
          break;
        }
        case '/drip': {
          res.writeHead(200);
          const timer = setInterval(() => res.write('.'), 20);
          res.on('close', () => clearInterval(timer));
          hanging.push(res);
          break;
        }
        case '/midbody-reset':
          res.writeHead(200, { 'content-length': '1000' });
          res.write('partial', () => req.socket.resetAndDestroy());
          break;
        default:
          res.writeHead(404).end();
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const res of hanging) res.destroy();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const opts = (path: string, extra: Partial<SendOptions> = {}): SendOptions => ({
  url: `${base}${path}`,
  headers: { 'x-service-signature': 't=1,v1=abc' },
  body: '{"hello":"مرحبا"}',
  allowLoopback: true,
  timeoutMs: 2_000,
  ...extra,
});

describe('sendDelivery', () => {
  it('delivers on 200 and sends the body and headers', async () => {
    const r = await sendDelivery(opts('/ok'));
    expect(r).toMatchObject({ ok: true, status: 200, responseExcerpt: 'thanks', responseBytes: 6, address: '127.0.0.1' });
    expect(r.failure).toBeUndefined();
    const got = received.find((x) => x.path === '/ok')!;
    expect(got.body).toBe('{"hello":"مرحبا"}');
    expect(got.headers['x-service-signature']).toBe('t=1,v1=abc');
    expect(got.headers['content-type']).toBe('application/json');
    expect(Number(got.headers['content-length'])).toBe(Buffer.byteLength('{"hello":"مرحبا"}'));
  });

  it('a signed delivery verifies at the receiver with the SDK; a wrong secret does not', async () => {
    const body = '{"topic":"invoice.created","data":{"name":"شركة"}}';
    const t = Math.floor(Date.now() / 1000);
    const good = await sendDelivery(opts('/verify', { body, headers: { [SIGNATURE_HEADER]: signHeader(['whsec_receiver'], t, body) } }));
    expect(good).toMatchObject({ ok: true, status: 204 });
    const bad = await sendDelivery(opts('/verify', { body, headers: { [SIGNATURE_HEADER]: signHeader(['whsec_wrong'], t, body) } }));
    expect(bad).toMatchObject({ ok: false, status: 400, failure: 'http_status', responseExcerpt: 'mismatch' });
  });

  it('counts any 2xx as delivered', async () => {
    expect(await sendDelivery(opts('/created'))).toMatchObject({ ok: true, status: 201 });
  });

  it('fails on 500 with the status and an excerpt', async () => {
    const r = await sendDelivery(opts('/fail'));
    expect(r).toMatchObject({ ok: false, status: 500, failure: 'http_status', responseExcerpt: 'boom' });
  });

  it('does not follow a 302', async () => {
    const before = received.filter((x) => x.path === '/ok').length;
    const r = await sendDelivery(opts('/redirect'));
    expect(r).toMatchObject({ ok: false, status: 302, failure: 'redirect' });
    expect(received.filter((x) => x.path === '/ok').length).toBe(before);
  });

  it('times out a server that never answers', async () => {
    const r = await sendDelivery(opts('/hang', { timeoutMs: 200 }));
    expect(r).toMatchObject({ ok: false, failure: 'timeout' });
    expect(r.status).toBeUndefined();
    expect(r.durationMs).toBeGreaterThanOrEqual(190);
    expect(r.durationMs).toBeLessThan(1_500);
  });

  it('times out a body that drips past the deadline, keeping the status', async () => {
    const r = await sendDelivery(opts('/drip', { timeoutMs: 300 }));
    expect(r).toMatchObject({ ok: false, failure: 'timeout', status: 200 });
    expect(r.responseBytes).toBeGreaterThan(0);
    expect(r.responseExcerpt).toMatch(/^\.+$/);
  });

  it('reports a reset socket', async () => {
    const r = await sendDelivery(opts('/reset'));
    expect(r).toMatchObject({ ok: false, failure: 'connection_reset' });
  });

  it('reports a connection reset in the middle of the body', async () => {
    const r = await sendDelivery(opts('/midbody-reset'));
    expect(r).toMatchObject({ ok: false, status: 200, failure: 'connection_reset' });
  });

  it('reports a closed port as connection refused', async () => {
    const probe = net.createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((r) => probe.close(r));
    const r = await sendDelivery(opts('', { url: `http://127.0.0.1:${port}/x` }));
    expect(r).toMatchObject({ ok: false, failure: 'connection_refused' });
  });

  it('keeps a bounded excerpt of a huge body and stops reading at the hard cap', async () => {
    const r = await sendDelivery(opts('/huge', { maxResponseBytes: 1024, hardCapBytes: 256 * 1024 }));
    expect(r).toMatchObject({ ok: true, status: 200, responseBytes: 256 * 1024, responseTruncated: true });
    expect(r.responseExcerpt).toBe('a'.repeat(1024));
  });

  it('refuses 127.0.0.1 unless loopback is allowed, without connecting', async () => {
    const before = received.length;
    const r = await sendDelivery(opts('/ok', { allowLoopback: false }));
    expect(r).toMatchObject({ ok: false, failure: 'refused_address', guardReason: 'refused_address', address: '127.0.0.1' });
    expect(received.length).toBe(before);
  });

  it('reports a name that does not resolve as dns', async () => {
    const r = await sendDelivery(opts('', { url: 'http://nowhere.invalid/x', lookup: async () => Promise.reject(Object.assign(new Error('nx'), { code: 'ENOTFOUND' })) }));
    expect(r).toMatchObject({ ok: false, failure: 'dns', guardReason: 'dns' });
  });

  it('connects to the guarded address, not to a fresh resolution of the name', async () => {
    // The name exists only in the guard's answer; the request must use that pinned answer.
    const port = new URL(base).port;
    const r = await sendDelivery(opts('', { url: `http://pinned.test:${port}/ok`, lookup: async () => [{ address: '127.0.0.1', family: 4 }] }));
    expect(r).toMatchObject({ ok: true, status: 200, address: '127.0.0.1' });
    expect(received.at(-1)!.headers.host).toBe(`pinned.test:${port}`);
  });

  it('reports TLS failures as tls', async () => {
    const r = await sendDelivery(opts('/ok', { url: base.replace('http:', 'https:') + '/ok' }));
    expect(r).toMatchObject({ ok: false, failure: 'tls' });
  });

  it('through a shared agent, keeps the connection for the next attempt', async () => {
    const agent = webhookAgent({ allowLoopback: true });
    try {
      for (let i = 0; i < 3; i++) {
        expect(await sendDelivery(opts('/ok', { agent }))).toMatchObject({ ok: true, status: 200 });
        // The pool hears that the connection is free a moment after the body ends.
        await new Promise((r) => setImmediate(r));
      }
      expect(new Set(received.slice(-3).map((x) => x.port)).size).toBe(1);
    } finally {
      await agent.destroy();
    }
  });

  it('through a shared agent, a name is resolved once per connection, not once per attempt', async () => {
    let resolved = 0;
    const agent = webhookAgent({ allowLoopback: true, lookup: async () => (resolved++, [{ address: '127.0.0.1', family: 4 }]) });
    let perAttempt = 0;
    try {
      const port = new URL(base).port;
      for (let i = 0; i < 3; i++) {
        const r = await sendDelivery(opts('', { url: `http://pooled.test:${port}/ok`, agent, lookup: async () => (perAttempt++, [{ address: '127.0.0.1', family: 4 }]) }));
        expect(r).toMatchObject({ ok: true, status: 200 });
        await new Promise((r) => setImmediate(r));
      }
      expect({ resolved, perAttempt }).toEqual({ resolved: 1, perAttempt: 0 });
      expect(received.at(-1)!.headers.host).toBe(`pooled.test:${port}`);
    } finally {
      await agent.destroy();
    }
  });

  it('a shared agent guards each new connection: a name that resolves to a refused address is not connected to', async () => {
    const agent = webhookAgent({ allowLoopback: false, lookup: async () => [{ address: '127.0.0.1', family: 4 }] });
    const before = received.length;
    try {
      const port = new URL(base).port;
      const r = await sendDelivery(opts('', { url: `http://rebound.test:${port}/ok`, agent }));
      expect(r).toMatchObject({ ok: false, failure: 'refused_address', guardReason: 'refused_address', address: '127.0.0.1', detail: 'loopback' });
      expect(received.length).toBe(before);
    } finally {
      await agent.destroy();
    }
  });

  it('refuses other schemes and URLs with credentials', async () => {
    expect(await sendDelivery(opts('', { url: 'ftp://127.0.0.1/x' }))).toMatchObject({ ok: false, failure: 'refused_address', guardReason: 'scheme' });
    expect(await sendDelivery(opts('', { url: `http://u:p@127.0.0.1:1/x` }))).toMatchObject({ ok: false, failure: 'refused_address', guardReason: 'credentials' });
  });
});
