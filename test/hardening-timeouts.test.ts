// Slow clients: a request whose headers or body trickle in is cut with 408 REQUEST_TIMEOUT in
// the envelope, and the connection closed, within a bound (limits set small for the test).
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Host } from '../core/host.ts';
import { loadConfig } from '../core/kernel/config.ts';
import { checkingIntervalMs } from '../core/http/server-options.ts';
import { createCompany, makeHost, type TestCompany } from './helpers.ts';
import { envelopeOf, exchange } from './hardening-socket.ts';

const HEADERS_MS = 300;
const REQUEST_MS = 900;
// Node checks every max(50, min limit / 10) ms; the rest is scheduling slack on a busy machine.
const SLACK_MS = 700;

describe('request time-outs', () => {
  let host: Host;
  let port: number;
  let co: TestCompany;

  beforeAll(async () => {
    host = await makeHost({ config: { headersTimeoutMs: HEADERS_MS, requestTimeoutMs: REQUEST_MS } });
    co = await createCompany(host);
    await host.app.listen({ port: 0, host: '127.0.0.1' });
    port = (host.app.server.address() as AddressInfo).port;
  });
  afterAll(() => host.close());

  const expect408 = (a: Awaited<ReturnType<typeof exchange>>, reason: string, limitMs: number, atLeastMs: number) => {
    expect(a.status, a.text).toBe(408);
    const e = envelopeOf(a);
    expect(e, a.text).toBeDefined();
    expect(e!.code).toBe('REQUEST_TIMEOUT');
    expect(e!.details).toEqual([{ reason, limitMs }]);
    expect(a.closed, 'the server closed the connection').toBe(true);
    expect(a.closedAfterMs).toBeGreaterThanOrEqual(atLeastMs - 50);
    expect(a.closedAfterMs).toBeLessThan(limitMs + SLACK_MS);
  };

  it('cuts a connection that sends nothing after the headers limit', async () => {
    expect408(await exchange(port, [], { timeoutMs: 5000 }), 'headers', HEADERS_MS, HEADERS_MS);
  });

  it('cuts headers that trickle in, however steadily', async () => {
    const a = await exchange(port, ['GET /api/v1/customers HTTP/1.1\r\nHost: 127.0.0.1\r\n'], { timeoutMs: 5000, repeat: 'X-Slow: 1\r\n', repeatEveryMs: 50 });
    expect408(a, 'headers', HEADERS_MS, HEADERS_MS);
  });

  it('cuts a body sent a byte at a time after the whole-request limit', async () => {
    const head = `POST /api/v1/customers HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${co.keys.Owner}\r\nX-Company-Id: ${co.company.id}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n`;
    const a = await exchange(port, [head, '{"name":"'], { timeoutMs: 5000, repeat: 'x', repeatEveryMs: 50 });
    expect408(a, 'request', REQUEST_MS, REQUEST_MS);
  });

  it('lets a prompt request through, and an idle kept-alive connection is not answered 408', async () => {
    const get = `GET /api/v1/customers HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${co.keys.Owner}\r\nX-Company-Id: ${co.company.id}\r\n\r\n`;
    const a = await exchange(port, [get, HEADERS_MS * 3], { timeoutMs: HEADERS_MS * 3 + 200 });
    expect(a.status, a.text.slice(0, 200)).toBe(200);
    expect(a.text).not.toContain('REQUEST_TIMEOUT');
  });
});

describe('time-out settings', () => {
  it('defaults to 10 s for headers and 30 s for the whole request, checked every second', async () => {
    const c = loadConfig({});
    expect([c.headersTimeoutMs, c.requestTimeoutMs]).toEqual([10_000, 30_000]);
    expect(checkingIntervalMs({ headersTimeoutMs: 10_000, requestTimeoutMs: 30_000 })).toBe(1000);
    expect(checkingIntervalMs({ headersTimeoutMs: 300, requestTimeoutMs: 900 })).toBe(50);
    const host = await makeHost();
    try {
      expect(host.app.server.headersTimeout).toBe(10_000);
      expect(host.app.server.requestTimeout).toBe(30_000);
    } finally {
      await host.close();
    }
  });
});
