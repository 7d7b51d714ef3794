// Security regressions found by probing the API from outside: identity decided from the
// route that matched (not the raw request line), and nobody granting or revoking beyond
// what they hold.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Host } from '../core/host.ts';
import { client, createCompany, expectError, makeHost, type TestCompany } from './helpers.ts';

/** Sends one raw HTTP/1.1 request and answers the status and the parsed JSON body. */
function rawRequest(port: number, requestLine: string, headers: string[] = []): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write(`${requestLine}\r\nHost: 127.0.0.1:${port}\r\n${headers.map((h) => `${h}\r\n`).join('')}Connection: close\r\n\r\n`);
    });
    let out = '';
    socket.setEncoding('utf8');
    socket.on('data', (d) => (out += d));
    socket.on('error', reject);
    socket.on('end', () => {
      const [head, ...rest] = out.split('\r\n\r\n');
      const status = Number(head.split(' ')[1]);
      const text = rest.join('\r\n\r\n');
      resolve({ status, body: text ? JSON.parse(text) : null });
    });
  });
}

describe('identity comes from the matched route, not the raw URL', () => {
  let host: Host;
  let a: TestCompany;
  let port: number;

  beforeAll(async () => {
    host = await makeHost();
    a = await createCompany(host, { name: 'Alpha' });
    await host.app.listen({ port: 0, host: '127.0.0.1' });
    port = (host.app.server.address() as net.AddressInfo).port;
  });
  afterAll(() => host.close());

  it('percent-encoded spellings of a core path need a key (401, not 500)', async () => {
    for (const line of ['GET /%61pi/v1/company HTTP/1.1', 'GET /api/%761/company HTTP/1.1', 'GET /api/v1/%63ompany HTTP/1.1']) {
      const res = await rawRequest(port, line);
      expect(res.status, line).toBe(401);
      expect(res.body.error.code).toBe('UNAUTHENTICATED');
    }
  });

  it('percent-encoded spellings of an app path need a key', async () => {
    const res = await rawRequest(port, 'GET /api/v1/%63ustomers HTTP/1.1');
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('UNAUTHENTICATED');
  });

  it('an absolute-form request line is authenticated like the origin form', async () => {
    const auth = [`Authorization: Bearer ${a.keys.Viewer}`, `X-Company-Id: ${a.company.id}`];
    const anonymous = await rawRequest(port, `GET http://127.0.0.1:${port}/api/v1/company HTTP/1.1`);
    expect(anonymous.status).toBe(401);
    const withKey = await rawRequest(port, `GET http://127.0.0.1:${port}/api/v1/company HTTP/1.1`, auth);
    expect(withKey.status).toBe(200);
    expect(withKey.body.data.id).toBe(a.company.id);
    const appRoute = await rawRequest(port, `GET http://127.0.0.1:${port}/api/v1/customers HTTP/1.1`, auth);
    expect(appRoute.status).toBe(200);
    expect(appRoute.body).toMatchObject({ data: [], total: 0 });
  });

  it('an encoded slash stays inside its path parameter: it never reaches another route', async () => {
    const created = await a.as('Owner').post('/api/v1/customers', { name: 'Slash' });
    const id = created.json().data.id;
    const auth = [`Authorization: Bearer ${a.keys.Owner}`, `X-Company-Id: ${a.company.id}`];
    expect((await rawRequest(port, `GET /api/v1/customers/${id}/balance HTTP/1.1`, auth)).status).toBe(200);
    const encoded = await rawRequest(port, `GET /api/v1/customers/${id}%2Fbalance HTTP/1.1`, auth);
    // The customer route, with the id `<id>/balance`: no such customer.
    expect(encoded.status).toBe(404);
    expect(encoded.body.error).toMatchObject({ code: 'NOT_FOUND', details: [{ resource: 'customers', id: `${id}/balance` }] });
  });

  it('the permission check applies to every spelling: a Viewer cannot reach api-keys', async () => {
    const auth = [`Authorization: Bearer ${a.keys.Viewer}`, `X-Company-Id: ${a.company.id}`];
    for (const line of ['GET /%61pi/v1/api-keys HTTP/1.1', `GET http://127.0.0.1:${port}/api/v1/api-keys HTTP/1.1`]) {
      const res = await rawRequest(port, line, auth);
      expect(res.status, line).toBe(403);
      expect(res.body.error.code).toBe('FORBIDDEN');
    }
  });
});

describe('nobody grants or revokes beyond what they hold', () => {
  let host: Host;
  let a: TestCompany;

  beforeAll(async () => {
    host = await makeHost();
    a = await createCompany(host, { name: 'Alpha' });
  });
  afterAll(() => host.close());

  async function keyWith(role: string, scopes: string[]) {
    const res = await a.as('Owner').post('/api/v1/api-keys', { role, scopes, name: `${role} ${scopes.join(',')}` });
    expect(res.statusCode, res.body).toBe(201);
    return client(host, res.json().data.key, a.company.id);
  }

  it('a key scoped to api-keys cannot mint an all-resources key (403 scope_beyond_own)', async () => {
    const scoped = await keyWith('Admin', ['api-keys']);
    const err = expectError(await scoped.post('/api/v1/api-keys', { role: 'Admin', scopes: ['*'] }), 403, 'FORBIDDEN');
    expect(err.details[0]).toMatchObject({ reason: 'scope_beyond_own', requested: ['*'], keyScopes: ['api-keys'] });
    const other = expectError(await scoped.post('/api/v1/api-keys', { role: 'Viewer', scopes: ['api-keys', 'webhook-endpoints'] }), 403, 'FORBIDDEN');
    expect(other.details[0]).toMatchObject({ reason: 'scope_beyond_own', requested: ['webhook-endpoints'] });
    // Within its own scopes and role it may still grant.
    const ok = await scoped.post('/api/v1/api-keys', { role: 'Member', scopes: ['api-keys'] });
    expect(ok.statusCode, ok.body).toBe(201);
    expect(ok.json().data.scopes).toEqual(['api-keys']);
  });

  it('a key cannot mint a role above its own', async () => {
    const err = expectError(await a.as('Admin').post('/api/v1/api-keys', { role: 'Owner', scopes: ['*'] }), 403, 'FORBIDDEN');
    expect(err.details[0]).toMatchObject({ reason: 'role_above_own', requested: 'Owner' });
  });

  it("an Admin cannot revoke the Owner's key (403); an Owner can revoke an Admin's", async () => {
    const list = await a.as('Owner').get('/api/v1/api-keys');
    const ownerKey = list.json().data.find((k: { role: string }) => k.role === 'Owner');
    const adminKey = list.json().data.find((k: { role: string; revokedAt: string | null }) => k.role === 'Admin' && !k.revokedAt);
    const err = expectError(await a.as('Admin').delete(`/api/v1/api-keys/${ownerKey.id}`), 403, 'FORBIDDEN');
    expect(err.details[0]).toMatchObject({ reason: 'role_above_own', targetRole: 'Owner' });
    expect((await a.as('Owner').get('/api/v1/company')).statusCode).toBe(200);
    const extra = await keyWith('Admin', ['*']);
    void extra;
    const res = await a.as('Owner').delete(`/api/v1/api-keys/${adminKey.id}`);
    expect(res.statusCode, res.body).toBe(200);
  });

  it('revoking a revoked key answers it again and writes no second audit row', async () => {
    const created = await a.as('Owner').post('/api/v1/api-keys', { role: 'Viewer', scopes: ['*'] });
    const id = created.json().data.id;
    expect((await a.as('Owner').delete(`/api/v1/api-keys/${id}`)).statusCode).toBe(200);
    const again = await a.as('Owner').delete(`/api/v1/api-keys/${id}`);
    expect(again.statusCode).toBe(200);
    expect(again.json().data.revokedAt).toEqual(expect.any(String));
    const audit = await a.as('Owner').get(`/api/v1/audit-log?resource=api-keys&action=revoke&resourceId=${id}`);
    expect(audit.json().total).toBe(1);
  });
});
