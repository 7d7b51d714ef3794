// The list envelope and its paging: `{ data, total, page, pageSize }`, pages from 1, 20 per
// page unless asked, at most 100, and a stable order across pages.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Host } from '../core/host.ts';
import { createCompany, expectError, makeHost, type TestCompany } from './helpers.ts';

describe('list envelopes and paging', () => {
  let host: Host;
  let co: TestCompany;
  const created: string[] = [];

  beforeAll(async () => {
    host = await makeHost();
    co = await createCompany(host);
    for (let i = 0; i < 45; i++) {
      // Names out of alphabetical order, so an order by name would show.
      const res = await co.as('Member').post('/api/v1/customers', { name: `Customer ${String((i * 17) % 45).padStart(2, '0')}` });
      expect(res.statusCode, res.body).toBe(201);
      created.push(res.json().data.id);
    }
  });
  afterAll(() => host.close());

  it('answers exactly { data, total, page, pageSize } with defaults page 1, pageSize 20', async () => {
    const res = await co.as('Viewer').get('/api/v1/customers');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['data', 'page', 'pageSize', 'total']);
    expect(body).toMatchObject({ total: 45, page: 1, pageSize: 20 });
    expect(body.data).toHaveLength(20);
    for (const c of body.data) expect(c).toMatchObject({ id: expect.stringMatching(/^cus_[0-9a-z]+$/), name: expect.any(String), createdAt: expect.any(String), updatedAt: expect.any(String) });
  });

  it('pages in a stable order, creation order, with no gaps or repeats', async () => {
    const seen: string[] = [];
    for (let page = 1; page <= 3; page++) {
      const body = (await co.as().get(`/api/v1/customers?page=${page}`)).json();
      expect(body).toMatchObject({ total: 45, page, pageSize: 20 });
      expect(body.data).toHaveLength(page < 3 ? 20 : 5);
      seen.push(...body.data.map((c: { id: string }) => c.id));
    }
    expect(seen).toEqual(created);
    // The same page twice is the same page.
    const again = (await co.as().get('/api/v1/customers?page=2')).json();
    expect(again.data.map((c: { id: string }) => c.id)).toEqual(created.slice(20, 40));
    // Other page sizes cut the same sequence.
    const bySeven: string[] = [];
    for (let page = 1; page <= 7; page++) bySeven.push(...(await co.as().get(`/api/v1/customers?page=${page}&pageSize=7`)).json().data.map((c: { id: string }) => c.id));
    expect(bySeven).toEqual(created);
  });

  it('answers an empty page past the end, with the total', async () => {
    const body = (await co.as().get('/api/v1/customers?page=4')).json();
    expect(body).toEqual({ data: [], total: 45, page: 4, pageSize: 20 });
  });

  it('takes pageSize up to 100', async () => {
    const body = (await co.as().get('/api/v1/customers?pageSize=100')).json();
    expect(body).toMatchObject({ total: 45, page: 1, pageSize: 100 });
    expect(body.data).toHaveLength(45);
    const one = (await co.as().get('/api/v1/customers?pageSize=1&page=45')).json();
    expect(one.data.map((c: { id: string }) => c.id)).toEqual([created[44]]);
  });

  it('refuses pageSize 101 with VALIDATION_ERROR naming the limit 100', async () => {
    const err = expectError(await co.as().get('/api/v1/customers?pageSize=101'), 400, 'VALIDATION_ERROR');
    expect(err.details).toEqual([expect.objectContaining({ in: 'query', pointer: '/pageSize', rule: 'maximum', limit: 100 })]);
    expect(err.message).toContain('100');
  });

  it.each([
    ['pageSize=0', '/pageSize', 'minimum'],
    ['pageSize=-5', '/pageSize', 'minimum'],
    ['page=0', '/page', 'minimum'],
    ['page=-1', '/page', 'minimum'],
    ['page=1.5', '/page', 'type'],
    ['pageSize=2.5', '/pageSize', 'type'],
    ['pageSize=abc', '/pageSize', 'type'],
    ['page=1e2x', '/page', 'type'],
    ['page=', '/page', 'type'],
  ])('refuses %s', async (query, pointer, rule) => {
    const err = expectError(await co.as().get(`/api/v1/customers?${query}`), 400, 'VALIDATION_ERROR');
    expect(err.details[0]).toMatchObject({ in: 'query', pointer, rule });
  });

  it('refuses an unknown query parameter rather than ignoring it', async () => {
    const err = expectError(await co.as().get('/api/v1/customers?limit=5'), 400, 'VALIDATION_ERROR');
    expect(err.details[0]).toMatchObject({ in: 'query', pointer: '/limit', rule: 'additionalProperties' });
  });

  it('pages the audit log and the invoices list with the same envelope and bounds', async () => {
    const audit = (await co.as('Admin').get('/api/v1/audit-log?pageSize=10&page=2')).json();
    expect(Object.keys(audit).sort()).toEqual(['data', 'page', 'pageSize', 'total']);
    expect(audit).toMatchObject({ page: 2, pageSize: 10 });
    expect(audit.total).toBeGreaterThanOrEqual(45);
    expect(audit.data).toHaveLength(10);
    expectError(await co.as('Admin').get('/api/v1/audit-log?pageSize=101'), 400, 'VALIDATION_ERROR');
    expectError(await co.as('Admin').get('/api/v1/audit-log?page=0'), 400, 'VALIDATION_ERROR');
    expect((await co.as().get('/api/v1/invoices')).json()).toEqual({ data: [], total: 0, page: 1, pageSize: 20 });
    expectError(await co.as().get('/api/v1/invoices?pageSize=101'), 400, 'VALIDATION_ERROR');
  });
});
