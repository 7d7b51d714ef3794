// What the console's launcher and palette read across apps: GET /api/v1/home (documents that
// wait for the caller, the latest documents) and GET /api/v1/search (by id, or by the exact
// value of a filterable text field), each only over the types the caller may read.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Host } from '../core/host.ts';
import { createCompany, createCustomer, createKey, client, expectError, invoiceBody, makeHost, type TestCompany } from './helpers.ts';

describe('home and search across apps', () => {
  let host: Host;
  let co: TestCompany;
  let customer: { id: string };
  const invoices: { id: string }[] = [];

  beforeAll(async () => {
    host = await makeHost();
    co = await createCompany(host);
    const member = co.as('Member');
    customer = await createCustomer(member, 'Noura Trading');
    await createCustomer(member, 'Zahra Foods');
    for (let i = 0; i < 3; i++) {
      const res = await member.post('/api/v1/invoices', invoiceBody(customer.id));
      expect(res.statusCode, res.body).toBe(201);
      invoices.push(res.json().data);
    }
    // Two sent (waiting for whoever may mark them paid or void them), one left a draft.
    for (const inv of invoices.slice(0, 2)) expect((await member.post(`/api/v1/invoices/${inv.id}/send`)).statusCode).toBe(200);
  });
  afterAll(() => host.close());

  it('counts what waits for the caller: states past the initial one that the caller may move on', async () => {
    const manager = (await co.as('Manager').get('/api/v1/home')).json().data;
    // A Manager may mark a sent invoice paid; a draft is its author's work, not something handed on.
    expect(manager.waiting).toEqual([{ app: 'invoicing', resource: 'invoices', state: 'sent', count: 2 }]);
    // A Member may only send (from draft, the initial state): nothing waits for them.
    expect((await co.as('Member').get('/api/v1/home')).json().data.waiting).toEqual([]);
  });

  it('lists the latest documents across types, newest first, with their title and state', async () => {
    const res = await co.as('Viewer').get('/api/v1/home', { 'accept-language': 'ar' });
    expect(res.statusCode, res.body).toBe(200);
    const { data, lang, dir } = res.json();
    expect({ lang, dir }).toEqual({ lang: 'ar', dir: 'rtl' });
    const times = data.recent.map((d: { createdAt: string }) => d.createdAt);
    expect(times).toEqual([...times].sort().reverse());
    expect(data.recent.map((d: { id: string }) => d.id).slice(0, 3).sort()).toEqual(invoices.map((i) => i.id).sort());
    expect(data.recent.find((d: { id: string }) => d.id === invoices[0].id)).toMatchObject({ app: 'invoicing', resource: 'invoices', title: null, state: 'sent' });
    expect(data.recent.find((d: { id: string }) => d.id === customer.id)).toMatchObject({ resource: 'customers', title: 'Noura Trading' });
  });

  it('finds a document by its id, or by the exact value of a filterable text field', async () => {
    const search = async (q: string, c = co.as('Viewer')) => {
      const res = await c.get(`/api/v1/search?q=${encodeURIComponent(q)}`);
      expect(res.statusCode, res.body).toBe(200);
      return res.json().data as { id: string; resource: string; title: string | null }[];
    };
    expect(await search(invoices[1].id)).toEqual([expect.objectContaining({ id: invoices[1].id, resource: 'invoices', state: 'sent' })]);
    expect(await search('Zahra Foods')).toEqual([expect.objectContaining({ resource: 'customers', title: 'Zahra Foods' })]);
    // Equality, not a substring: the lists' indexed filters.
    expect(await search('Zahra')).toEqual([]);
    expect(await search('inv_doesnotexist')).toEqual([]);
    // Only what the caller may read: a key scoped to customers finds no invoice.
    const scoped = client(host, (await createKey(host, co.company.id, { role: 'Owner', scopes: ['customers', 'apps'] })).key, co.company.id);
    expect(await search(invoices[1].id, scoped)).toEqual([]);
    expect(await search('Noura Trading', scoped)).toHaveLength(1);
  });

  it('refuses a search without a query, listing the problem', async () => {
    const res = await co.as('Viewer').get('/api/v1/search');
    expect(expectError(res, 400, 'VALIDATION_ERROR').details.some((d) => String(d.pointer ?? '').includes('q'))).toBe(true);
  });
});
