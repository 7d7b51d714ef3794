// The console's server side: the same page for each client route (revalidated, with a CSP),
// its hashed assets from memory (immutable, brotli or gzip as accepted), the first page's
// script budget, and the API's own 404 left as it was.
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Host } from '../core/host.ts';
import { pickEncoding } from '../core/http/static-assets.ts';
import { expectError, makeHost } from './helpers.ts';

describe('the web console, served by the host', () => {
  let host: Host;
  let script: string;
  let style: string;
  const get = (url: string, headers: Record<string, string> = {}) => host.app.inject({ method: 'GET', url, headers });

  beforeAll(async () => {
    host = await makeHost();
    const page = await get('/');
    script = /<script type="module" src="([^"]+)"/.exec(page.body)![1];
    style = /<link rel="stylesheet" href="([^"]+)"/.exec(page.body)![1];
  });
  afterAll(() => host.close());

  it('answers its page for every client route, revalidated every time, in the asked language', async () => {
    for (const url of ['/', '/signin', '/sign-in', '/invite', '/d/invoices', '/d/invoices/new', '/d/invoices/inv_x/edit', '/a/invoicing', '/settings', '/settings/developers/api-keys', '/settings/developers/webhooks/whe_x', '/settings/members']) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.headers['content-security-policy']).toContain("script-src 'self'");
      expect(res.body).toContain('<div id="app"></div>');
    }
    expect((await get('/')).body).toContain('<html lang="en" dir="ltr">');
    expect((await get('/', { 'accept-language': 'ar-SA,en;q=0.5' })).body).toContain('<html lang="ar" dir="rtl">');
    expect((await get('/d/invoices?lang=ar')).body).toContain('<html lang="ar" dir="rtl">');
    const first = await get('/');
    expect((await get('/', { 'if-none-match': String(first.headers.etag) })).statusCode).toBe(304);
  });

  it('serves content-hashed assets from memory, immutable, precompressed as the client accepts', async () => {
    expect(script).toMatch(/^\/assets\/console-[A-Z0-9]{8}\.js$/);
    expect(style).toMatch(/^\/assets\/console-[A-Z0-9]{8}\.css$/);
    const plain = await host.app.inject({ method: 'GET', url: script, headers: { 'accept-encoding': 'identity' } });
    expect(plain.statusCode).toBe(200);
    expect(plain.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(plain.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(plain.headers['content-encoding']).toBeUndefined();
    const br = await host.app.inject({ method: 'GET', url: script, headers: { 'accept-encoding': 'gzip, deflate, br' } });
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers.vary).toBe('accept-encoding');
    expect(zlib.brotliDecompressSync(br.rawPayload).equals(plain.rawPayload)).toBe(true);
    const gz = await host.app.inject({ method: 'GET', url: script, headers: { 'accept-encoding': 'gzip' } });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(zlib.gunzipSync(gz.rawPayload).equals(plain.rawPayload)).toBe(true);
    expect((await host.app.inject({ method: 'GET', url: script, headers: { 'if-none-match': String(plain.headers.etag) } })).statusCode).toBe(304);
    expect((await host.app.inject({ method: 'HEAD', url: style })).statusCode).toBe(200);
  });

  it('ships the first page in less than 250 KB of compressed script and style', async () => {
    let br = 0;
    let gzip = 0;
    for (const url of [script, style]) {
      br += (await host.app.inject({ method: 'GET', url, headers: { 'accept-encoding': 'br' } })).rawPayload.length;
      gzip += (await host.app.inject({ method: 'GET', url, headers: { 'accept-encoding': 'gzip' } })).rawPayload.length;
    }
    expect(br).toBeLessThan(250 * 1024);
    expect(gzip).toBeLessThan(250 * 1024);
  });

  it('leaves unknown paths and assets to the API error envelope', async () => {
    expectError(await get('/nothing'), 404, 'NOT_FOUND');
    expectError(await get('/assets/console-NOPE.js'), 404, 'NOT_FOUND');
    expectError(await get('/apps/nothing/'), 404, 'NOT_FOUND');
    expect((await get('/apps/invoicing/')).statusCode).toBe(200);
  });

  it('picks brotli, then gzip, honouring q-values', () => {
    expect(pickEncoding('gzip, deflate, br')).toBe('br');
    expect(pickEncoding('br;q=0.5, gzip')).toBe('gzip');
    expect(pickEncoding('gzip;q=0, br;q=0')).toBe('identity');
    expect(pickEncoding('*')).toBe('br');
    expect(pickEncoding(undefined)).toBe('identity');
  });
});
