// Requests Node's HTTP parser refuses, or that lack Host, answered in the one envelope over a
// real loopback socket: never Fastify's `{"error":"Bad Request","statusCode":400}`, never an
// empty body. Each exchange is bounded in time and the server closes the connection.
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Host } from '../core/host.ts';
import { errorCodes } from '../core/kernel/errors/codes.ts';
import { parserReason } from '../core/http/client-errors.ts';
import { ARABIC, createCompany, makeHost, type TestCompany } from './helpers.ts';
import { envelopeOf, exchange, type RawAnswer } from './hardening-socket.ts';

describe('requests refused below Fastify', () => {
  let host: Host;
  let port: number;
  let co: TestCompany;

  beforeAll(async () => {
    host = await makeHost();
    co = await createCompany(host);
    await host.app.listen({ port: 0, host: '127.0.0.1' });
    port = (host.app.server.address() as AddressInfo).port;
  });
  afterAll(() => host.close());

  const expectEnvelope = (a: RawAnswer, status: number, code: string) => {
    expect(a.status, a.text).toBe(status);
    expect(errorCodes[code as keyof typeof errorCodes].status).toBe(status);
    expect(a.headers['content-type']).toMatch(/^application\/json/);
    expect(a.text).not.toContain('"statusCode"');
    const e = envelopeOf(a);
    expect(e, a.text).toBeDefined();
    expect(e!.code).toBe(code);
    expect(a.closed, 'the server closes the connection').toBe(true);
    return e!;
  };

  const post = (headers: string, body = '') => `POST /api/v1/customers HTTP/1.1\r\nHost: 127.0.0.1\r\n${headers}\r\n${body}`;

  it.each([
    ['Content-Length: abc', 'content_length'],
    ['Content-Length: -1', 'content_length'],
    ['Content-Length: 1\r\nContent-Length: 2', 'content_length'],
    ['Content-Length: 5\r\nTransfer-Encoding: chunked', 'content_length_and_transfer_encoding'],
    ['Transfer-Encoding: chunked\r\nContent-Length: 5', 'content_length_and_transfer_encoding'],
    ['Transfer-Encoding: gzip', 'transfer_encoding'],
  ])('answers %j with 400 BAD_REQUEST (%s)', async (headers, reason) => {
    const a = await exchange(port, [post(`${headers}\r\n`, '0\r\n\r\n')]);
    const e = expectEnvelope(a, 400, 'BAD_REQUEST');
    expect(e.details).toEqual([{ reason }]);
  });

  it('answers a malformed chunk with 400 BAD_REQUEST in the language of the request', async () => {
    // A valid key, so the server is waiting for the body when the bad chunk arrives.
    const head = post(`Authorization: Bearer ${co.keys.Owner}\r\nX-Company-Id: ${co.company.id}\r\nAccept-Language: ar\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n`);
    const a = await exchange(port, [head, 100, 'zz\r\n{}\r\n0\r\n\r\n']);
    const e = expectEnvelope(a, 400, 'BAD_REQUEST');
    expect(e.details).toEqual([{ reason: 'chunk' }]);
    expect(e.message).toMatch(ARABIC);
    expect(a.headers['content-language']).toBe('ar');
  });

  it('answers bare-LF line endings with 400 BAD_REQUEST', async () => {
    for (const request of ['GET /api/v1/customers HTTP/1.1\nHost: 127.0.0.1\n\n', 'GET /api/v1/customers HTTP/1.1\r\nHost: 127.0.0.1\nX-A: 1\r\n\r\n']) {
      const e = expectEnvelope(await exchange(port, [request]), 400, 'BAD_REQUEST');
      expect(e.details).toEqual([{ reason: 'line_ending' }]);
    }
  });

  it('answers other unreadable requests with 400 BAD_REQUEST naming the parser error', async () => {
    const e = expectEnvelope(await exchange(port, ['G@T / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n']), 400, 'BAD_REQUEST');
    expect(e.details).toEqual([{ reason: 'malformed_http', parserError: 'HPE_INVALID_METHOD' }]);
  });

  it('answers an HTTP/1.1 request without Host with 400 BAD_REQUEST, not an empty body', async () => {
    const a = await exchange(port, ['GET /api/v1/openapi.json HTTP/1.1\r\nAccept-Language: ar\r\n\r\n']);
    const e = expectEnvelope(a, 400, 'BAD_REQUEST');
    expect(e.details).toEqual([{ reason: 'missing_host', header: 'Host' }]);
    expect(e.message).toMatch(ARABIC);
    // HTTP/1.0 has no Host requirement.
    const old = await exchange(port, ['GET /api/v1/openapi.json HTTP/1.0\r\n\r\n']);
    expect(old.status, old.text.slice(0, 200)).toBe(200);
  });

  it('answers a URL or headers over 16 KB with 431 HEADERS_TOO_LARGE', async () => {
    for (const request of [
      `GET /api/v1/${'a'.repeat(17_000)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`,
      `GET /api/v1/customers HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'b'.repeat(17_000)}\r\n\r\n`,
      `GET /api/v1/customers HTTP/1.1\r\nHost: 127.0.0.1\r\n${Array.from({ length: 400 }, (_, i) => `X-H${i}: ${'c'.repeat(40)}\r\n`).join('')}\r\n`,
    ]) {
      const e = expectEnvelope(await exchange(port, [request]), 431, 'HEADERS_TOO_LARGE');
      expect(e.details).toEqual([{ limit: 16_384 }]);
    }
  });

  it('still serves well-formed requests on the same server', async () => {
    const a = await exchange(port, [`GET /api/v1/customers HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${co.keys.Owner}\r\nX-Company-Id: ${co.company.id}\r\nConnection: close\r\n\r\n`]);
    expect(a.status, a.text.slice(0, 300)).toBe(200);
  });
});

describe('parserReason', () => {
  it('reads llhttp text before its code', () => {
    expect(parserReason({ code: 'HPE_INVALID_VERSION', reason: 'Expected CRLF after version' })[0]).toBe('line_ending');
    expect(parserReason({ code: 'HPE_INVALID_TRANSFER_ENCODING', reason: "Transfer-Encoding can't be present with Content-Length" })[0]).toBe('content_length_and_transfer_encoding');
    expect(parserReason({ code: 'HPE_STRICT', reason: 'Expected LF after chunk data' })[0]).toBe('chunk');
    expect(parserReason({ code: 'HPE_SOMETHING_NEW' })[0]).toBe('malformed_http');
  });
});
