// Authentication and permissions, end to end: bearer key, company header, role, scopes,
// revocation, expiry, and keys never readable after creation.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Host } from '../core/host.ts';
import { ManualClock } from '../core/kernel/clock.ts';
import { authHeaders, client, cliScope, createCompany, createCustomer, createKey, expectError, invoiceBody, makeHost, type TestCompany } from './helpers.ts';

const keyId = (key: string) => key.split('_')[1];

describe('authentication', () => {
  let host: Host;
  let clock: ManualClock;
  let a: TestCompany;
  let b: TestCompany;

  beforeAll(async () => {
    clock = new ManualClock();
    host = await makeHost({ clock });
    a = await createCompany(host, { name: 'Alpha' });
    b = await createCompany(host, { name: 'Beta' });
  });
  afterAll(() => host.close());

  it('answers 401 UNAUTHENTICATED without a key', async () => {
    const res = await host.app.inject({ method: 'GET', url: '/api/v1/customers', headers: { 'x-company-id': a.company.id } });
    const err = expectError(res, 401, 'UNAUTHENTICATED');
    expect(err.details).toEqual([{ reason: 'missing' }]);
    expect(res.headers['www-authenticate']).toBe('Bearer');
  });

  it('answers 401 for an unknown, a malformed or a wrongly-signed key', async () => {
    const wellFormed = `dwk_${'0'.repeat(16)}_${'a'.repeat(32)}`;
    const [, id] = a.keys.Owner.split('_');
    const wrongSecret = `dwk_${id}_${'b'.repeat(32)}`;
    for (const key of [wellFormed, 'not-a-key', 'dwk_short', wrongSecret, `${a.keys.Owner}x`]) {
      const res = await host.app.inject({ method: 'GET', url: '/api/v1/customers', headers: authHeaders(key, a.company.id) });
      const err = expectError(res, 401, 'UNAUTHENTICATED');
      expect(err.details).toEqual([{ reason: 'unknown' }]);
    }
    // A scheme other than Bearer is no key at all.
    const basic = await host.app.inject({ method: 'GET', url: '/api/v1/customers', headers: { authorization: `Basic ${a.keys.Owner}`, 'x-company-id': a.company.id } });
    expectError(basic, 401, 'UNAUTHENTICATED');
  });

  it('answers 401 with reason "revoked" once a key is revoked', async () => {
    const { key, record } = await createKey(host, a.company.id, { role: 'Member', scopes: ['*'] });
    const c = client(host, key, a.company.id);
    expect((await c.get('/api/v1/customers')).statusCode).toBe(200);
    await host.keys.revoke(cliScope(a.company.id), record.id);
    const err = expectError(await c.get('/api/v1/customers'), 401, 'UNAUTHENTICATED');
    expect(err.details).toEqual([{ reason: 'revoked' }]);
  });

  it('answers 401 with reason "revoked" after a revoke through the API', async () => {
    const { key, record } = await createKey(host, a.company.id, { role: 'Member', scopes: ['*'] });
    const res = await a.as('Admin').delete(`/api/v1/api-keys/${record.id}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.revokedAt).toEqual(expect.any(String));
    const err = expectError(await client(host, key, a.company.id).get('/api/v1/customers'), 401, 'UNAUTHENTICATED');
    expect(err.details[0].reason).toBe('revoked');
  });

  it('answers 401 with reason "expired" once the clock passes expiresAt', async () => {
    const expiresAt = new Date(clock.now() + 3_600_000).toISOString();
    const { key } = await createKey(host, a.company.id, { role: 'Viewer', scopes: ['*'], expiresAt });
    const c = client(host, key, a.company.id);
    clock.advance(3_600_000 - 1);
    expect((await c.get('/api/v1/customers')).statusCode).toBe(200);
    clock.advance(1);
    const err = expectError(await c.get('/api/v1/customers'), 401, 'UNAUTHENTICATED');
    expect(err.details).toEqual([{ reason: 'expired' }]);
  });

  it('refuses to create a key that is already expired', async () => {
    const past = new Date(clock.now() - 1).toISOString();
    await expect(createKey(host, a.company.id, { role: 'Viewer', scopes: ['*'], expiresAt: past })).rejects.toThrow(
      expect.objectContaining({ code: 'VALIDATION_ERROR', details: [expect.objectContaining({ pointer: '/expiresAt' })] }),
    );
    const res = await a.as('Admin').post('/api/v1/api-keys', { role: 'Viewer', scopes: ['*'], expiresAt: past });
    expect(expectError(res, 400, 'VALIDATION_ERROR').details[0]).toMatchObject({ pointer: '/expiresAt' });
  });

  it('answers 400 COMPANY_REQUIRED without X-Company-Id', async () => {
    for (const headers of [{ authorization: `Bearer ${a.keys.Owner}` }, { authorization: `Bearer ${a.keys.Owner}`, 'x-company-id': '  ' }]) {
      const res = await host.app.inject({ method: 'GET', url: '/api/v1/customers', headers });
      const err = expectError(res, 400, 'COMPANY_REQUIRED');
      expect(err.details).toEqual([{ header: 'X-Company-Id' }]);
    }
  });

  it("answers 403 FORBIDDEN for another company's X-Company-Id, or one that does not exist", async () => {
    for (const company of [b.company.id, 'co_doesnotexist']) {
      const res = await client(host, a.keys.Owner, company).get('/api/v1/customers');
      const err = expectError(res, 403, 'FORBIDDEN');
      expect(err.details[0]).toMatchObject({ reason: 'company', header: 'X-Company-Id' });
    }
  });

  it('answers 403 naming invoices:create when a Viewer creates an invoice', async () => {
    const customer = await createCustomer(a.as('Member'));
    const res = await a.as('Viewer').post('/api/v1/invoices', invoiceBody(customer.id));
    const err = expectError(res, 403, 'FORBIDDEN');
    expect(err.details[0]).toMatchObject({ permission: 'invoices:create', requiredRole: 'Member', keyRole: 'Viewer', reason: 'role' });
    // The permission is checked before the body, so a Viewer learns nothing of the rules.
    const invalid = await a.as('Viewer').post('/api/v1/invoices', { nonsense: true });
    expect(expectError(invalid, 403, 'FORBIDDEN').details[0].permission).toBe('invoices:create');
    // A Member may.
    expect((await a.as('Member').post('/api/v1/invoices', invoiceBody(customer.id))).statusCode).toBe(201);
  });

  it('gives each role what the matrix says for invoices', async () => {
    const customer = await createCustomer(a.as('Owner'));
    for (const role of ['Viewer', 'Member', 'Manager', 'Admin', 'Owner'] as const) {
      expect((await a.as(role).get('/api/v1/invoices')).statusCode, role).toBe(200);
    }
    const inv = (await a.as('Member').post('/api/v1/invoices', invoiceBody(customer.id))).json().data;
    const del = await a.as('Member').delete(`/api/v1/invoices/${inv.id}`);
    expect(expectError(del, 403, 'FORBIDDEN').details[0]).toMatchObject({ permission: 'invoices:delete', requiredRole: 'Manager' });
    expect((await a.as('Manager').delete(`/api/v1/invoices/${inv.id}`)).statusCode).toBe(200);
  });

  it("limits a key scoped to ['customers'] to customers", async () => {
    const { key } = await createKey(host, a.company.id, { role: 'Owner', scopes: ['customers'] });
    const c = client(host, key, a.company.id);
    const customers = await c.get('/api/v1/customers');
    expect(customers.statusCode, customers.body).toBe(200);
    expect(customers.json().total).toBeGreaterThan(0);
    const created = await c.post('/api/v1/customers', { name: 'Scoped' });
    expect(created.statusCode).toBe(201);

    const invoices = await c.get('/api/v1/invoices');
    const err = expectError(invoices, 403, 'FORBIDDEN');
    expect(err.details[0]).toMatchObject({ permission: 'invoices:read', resource: 'invoices', reason: 'scope', keyScopes: ['customers'] });
    expectError(await c.post('/api/v1/invoices', invoiceBody(created.json().data.id)), 403, 'FORBIDDEN');
    // The balance route needs invoices:read, though its path is under customers.
    expectError(await c.get(`/api/v1/customers/${created.json().data.id}/balance`), 403, 'FORBIDDEN');
  });

  it('never lists a full key, and stores only a hash that is not the key', async () => {
    const made = await a.as('Admin').post('/api/v1/api-keys', { name: 'CI', role: 'Member', scopes: ['invoices', 'customers'] });
    expect(made.statusCode, made.body).toBe(201);
    const shown = made.json().data;
    expect(shown.key).toMatch(/^dwk_[0-9a-z]{16}_[0-9a-z]{32}$/);
    expect(shown.hint).not.toContain(shown.key.split('_')[2]);
    // The key it shows works.
    expect((await client(host, shown.key, a.company.id).get('/api/v1/invoices')).statusCode).toBe(200);

    const list = await a.as('Admin').get('/api/v1/api-keys');
    expect(list.statusCode).toBe(200);
    const text = list.body;
    const fullKeys = [shown.key, ...Object.values(a.keys)];
    for (const k of fullKeys) {
      expect(text).not.toContain(k);
      expect(text).not.toContain(k.split('_')[2]); // the secret part
    }
    const rows = list.json().data as Record<string, unknown>[];
    expect(rows.length).toBeGreaterThanOrEqual(6);
    for (const r of rows) {
      expect(r).not.toHaveProperty('key');
      expect(r).not.toHaveProperty('secretHash');
      expect(r.companyId).toBe(a.company.id);
    }
    expect(rows.find((r) => r.id === shown.id)).toMatchObject({ name: 'CI', role: 'Member', scopes: ['invoices', 'customers'] });

    const stored = (await host.storage.db.get<{ id: string; secret_hash: string }>('SELECT id, secret_hash FROM api_keys WHERE id = ?', [shown.id]))!;
    const secret = shown.key.split('_')[2];
    expect(stored.secret_hash).not.toBe(shown.key);
    expect(stored.secret_hash).not.toContain(secret);
    expect(stored.secret_hash).toBe(createHash('sha256').update(secret).digest('hex'));
    // No column of any key row holds a full key or a secret.
    const all = JSON.stringify(await host.storage.db.all('SELECT * FROM api_keys'));
    for (const k of fullKeys) {
      expect(all).not.toContain(k);
      expect(all).not.toContain(k.split('_')[2]);
    }
  });

  it('lets no key mint a key above its own role, and keeps key admin to Admin and up', async () => {
    const above = await a.as('Admin').post('/api/v1/api-keys', { role: 'Owner', scopes: ['*'] });
    expect(expectError(above, 403, 'FORBIDDEN').details[0]).toMatchObject({ reason: 'role_above_own', requested: 'Owner' });
    expectError(await a.as('Manager').get('/api/v1/api-keys'), 403, 'FORBIDDEN');
    expectError(await a.as('Manager').post('/api/v1/api-keys', { role: 'Viewer', scopes: ['*'] }), 403, 'FORBIDDEN');
  });

  it("cannot revoke another company's key", async () => {
    const res = await a.as('Owner').delete(`/api/v1/api-keys/${keyId(b.keys.Viewer)}`);
    expectError(res, 404, 'NOT_FOUND');
    expect((await b.as('Viewer').get('/api/v1/customers')).statusCode).toBe(200);
  });
});
