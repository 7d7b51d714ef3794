// Tenant isolation: a key of company A never reads, changes or points at company B's rows,
// and each company's audit log holds only its own writes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Host } from '../core/host.ts';
import { createCompany, createCustomer, expectError, invoiceBody, makeHost, type TestCompany } from './helpers.ts';

describe('tenant isolation', () => {
  let host: Host;
  let a: TestCompany;
  let b: TestCompany;
  let aCustomer: { id: string };
  let bCustomer: { id: string };
  let bInvoice: { id: string };

  beforeAll(async () => {
    host = await makeHost();
    a = await createCompany(host, { name: 'Alpha' });
    b = await createCompany(host, { name: 'Beta' });
    aCustomer = await createCustomer(a.as(), 'Alpha customer');
    bCustomer = await createCustomer(b.as(), 'Beta customer');
    const res = await b.as().post('/api/v1/invoices', invoiceBody(bCustomer.id));
    expect(res.statusCode, res.body).toBe(201);
    bInvoice = res.json().data;
    expect((await a.as().post('/api/v1/invoices', invoiceBody(aCustomer.id))).statusCode).toBe(201);
  });
  afterAll(() => host.close());

  it("lists only the caller's customers and invoices", async () => {
    const customers = (await a.as().get('/api/v1/customers')).json();
    expect(customers.total).toBe(1);
    expect(customers.data.map((c: { id: string }) => c.id)).toEqual([aCustomer.id]);
    const invoices = (await a.as().get('/api/v1/invoices')).json();
    expect(invoices.total).toBe(1);
    expect(invoices.data[0].customerId).toBe(aCustomer.id);
    expect(JSON.stringify(invoices)).not.toContain(bInvoice.id);
    // A filter naming B's customer finds nothing either.
    const filtered = (await a.as().get(`/api/v1/invoices?customerId=${bCustomer.id}`)).json();
    expect(filtered).toMatchObject({ data: [], total: 0 });
  });

  it("answers 404 NOT_FOUND for another company's record by id", async () => {
    expectError(await a.as().get(`/api/v1/customers/${bCustomer.id}`), 404, 'NOT_FOUND');
    expectError(await a.as().get(`/api/v1/invoices/${bInvoice.id}`), 404, 'NOT_FOUND');
    expectError(await a.as().get(`/api/v1/customers/${bCustomer.id}/balance`), 404, 'NOT_FOUND');
    // ... the same answer as for an id that exists nowhere.
    const none = await a.as().get('/api/v1/invoices/inv_doesnotexist0000000');
    expectError(none, 404, 'NOT_FOUND');
    // B still sees its own.
    expect((await b.as().get(`/api/v1/invoices/${bInvoice.id}`)).statusCode).toBe(200);
  });

  it("cannot change, move or delete another company's records", async () => {
    expectError(await a.as().patch(`/api/v1/customers/${bCustomer.id}`, { name: 'Taken' }), 404, 'NOT_FOUND');
    expectError(await a.as().post(`/api/v1/invoices/${bInvoice.id}/send`), 404, 'NOT_FOUND');
    expectError(await a.as().delete(`/api/v1/invoices/${bInvoice.id}`), 404, 'NOT_FOUND');
    expectError(await a.as().delete(`/api/v1/customers/${bCustomer.id}`), 404, 'NOT_FOUND');
    const still = (await b.as().get(`/api/v1/customers/${bCustomer.id}`)).json().data;
    expect(still.name).toBe('Beta customer');
    expect((await b.as().get(`/api/v1/invoices/${bInvoice.id}`)).json().data.state).toBe('draft');
  });

  it("refuses an invoice for another company's customer with rule 'exists'", async () => {
    const before = (await a.as().get('/api/v1/invoices')).json().total;
    const res = await a.as().post('/api/v1/invoices', invoiceBody(bCustomer.id));
    const err = expectError(res, 400, 'VALIDATION_ERROR');
    expect(err.details).toEqual([expect.objectContaining({ in: 'body', pointer: '/customerId', rule: 'exists', value: bCustomer.id })]);
    expect((await a.as().get('/api/v1/invoices')).json().total).toBe(before);
    // Changing an own invoice to point at B's customer is refused the same way. (The patch
    // carries its lines: see the PATCH test in api-invoices.test.ts for why.)
    const own = (await a.as().get('/api/v1/invoices')).json().data[0];
    const lines = [{ description: 'x', quantity: 1, unitPrice: 1 }];
    const patch = await a.as().patch(`/api/v1/invoices/${own.id}`, { customerId: bCustomer.id, lines });
    expect(expectError(patch, 400, 'VALIDATION_ERROR').details[0]).toMatchObject({ pointer: '/customerId', rule: 'exists' });
  });

  it('keeps audit logs per company', async () => {
    const logA = (await a.as('Admin').get('/api/v1/audit-log?pageSize=100')).json();
    const logB = (await b.as('Admin').get('/api/v1/audit-log?pageSize=100')).json();
    expect(logA.total).toBeGreaterThan(0);
    expect(logB.total).toBeGreaterThan(0);
    expect(logA.data.every((r: { companyId: string }) => r.companyId === a.company.id)).toBe(true);
    expect(logB.data.every((r: { companyId: string }) => r.companyId === b.company.id)).toBe(true);
    const textA = JSON.stringify(logA);
    expect(textA).not.toContain(bCustomer.id);
    expect(textA).not.toContain(bInvoice.id);
    expect(textA).not.toContain(b.company.id);
    expect(JSON.stringify(logB)).not.toContain(aCustomer.id);
    // Filtering A's log by B's record finds nothing.
    const probe = (await a.as('Admin').get(`/api/v1/audit-log?resourceId=${bInvoice.id}`)).json();
    expect(probe).toMatchObject({ data: [], total: 0 });
  });

  it("keeps the company endpoint and key list to the caller's company", async () => {
    expect((await a.as().get('/api/v1/company')).json().data.id).toBe(a.company.id);
    const keys = (await a.as('Admin').get('/api/v1/api-keys')).json().data as { companyId: string }[];
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.every((k) => k.companyId === a.company.id)).toBe(true);
  });
});
