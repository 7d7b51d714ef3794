// What the console builds its pages from: GET /api/v1/document-types (fields, states and
// transitions in the caller's language, the caller's permissions), menu entries that open a
// document type, list sort, and the audit log filtered by actor and time.
import { CLI_ACTOR } from '../core/kernel/actor.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Host } from '../core/host.ts';
import { createCompany, createCustomer, expectError, invoiceBody, keyIdOf, makeHost, type TestCompany } from './helpers.ts';

describe('document types for clients', () => {
  let host: Host;
  let co: TestCompany;

  beforeAll(async () => {
    host = await makeHost();
    co = await createCompany(host);
  });
  afterAll(() => host.close());

  const types = async (role: Parameters<TestCompany['as']>[0], lang = 'en') => {
    const res = await co.as(role).get('/api/v1/document-types', { 'accept-language': lang });
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  };

  it("describes each type of the enabled apps in the caller's language", async () => {
    const en = await types('Viewer');
    expect(en).toMatchObject({ lang: 'en', dir: 'ltr' });
    const invoice = en.data.find((d: { name: string }) => d.name === 'invoice');
    expect(invoice).toMatchObject({ app: 'invoicing', resource: 'invoices', idPrefix: 'inv', label: 'Invoice', labelPlural: 'Invoices', initialState: 'draft', titleField: null });
    expect(invoice.states).toEqual([
      { name: 'draft', label: 'Draft' }, { name: 'sent', label: 'Sent' }, { name: 'paid', label: 'Paid' }, { name: 'void', label: 'Void' },
    ]);
    const field = (name: string) => invoice.fields.find((f: { name: string }) => f.name === name);
    expect(field('customerId')).toMatchObject({ type: 'reference', label: 'Customer', required: true, filterable: true, readOnly: false, target: { app: 'invoicing', type: 'customer', resource: 'customers', idPrefix: 'cus', titleField: 'name' } });
    // Read-only and required: the app's hooks always set it.
    expect(field('total')).toMatchObject({ type: 'money', readOnly: true, required: true });
    expect(field('lines')).toMatchObject({ type: 'lines', minItems: 1, maxItems: 500 });
    expect(field('lines').fields.map((f: { name: string; readOnly: boolean }) => [f.name, f.readOnly])).toEqual([
      ['description', false], ['quantity', false], ['unitPrice', false], ['taxCategory', false], ['exemptionReasonCode', false], ['exemptionReason', false],
      ['amount', true], ['taxRate', true], ['taxAmount', true], ['amountWithTax', true],
    ]);
    expect(field('lines').fields[1]).toMatchObject({ type: 'number', minimum: 0, label: 'Quantity' });
    expect(invoice.sort).toEqual(['createdAt', '-createdAt', 'customerId', '-customerId', 'number', '-number', 'counter', '-counter', 'zatcaStatus', '-zatcaStatus', 'state', '-state']);

    const ar = await types('Viewer', 'ar');
    expect(ar).toMatchObject({ lang: 'ar', dir: 'rtl' });
    const arInvoice = ar.data.find((d: { name: string }) => d.name === 'invoice');
    expect(arInvoice).toMatchObject({ label: 'فاتورة', labelPlural: 'الفواتير' });
    expect(arInvoice.states[0]).toEqual({ name: 'draft', label: 'مسودة' });
    expect(arInvoice.transitions.find((t: { name: string }) => t.name === 'send').label).toBe('إرسال');
  });

  it("says which permissions the caller holds: its role's, within its scopes", async () => {
    const perms = async (role: Parameters<TestCompany['as']>[0]) => {
      const inv = (await types(role)).data.find((d: { name: string }) => d.name === 'invoice');
      return { ...inv.permissions, ...Object.fromEntries(inv.transitions.map((t: { name: string; allowed: boolean }) => [t.name, t.allowed])) };
    };
    expect(await perms('Viewer')).toEqual({ read: true, create: false, update: false, delete: false, send: false, pay: false, void: false });
    expect(await perms('Member')).toEqual({ read: true, create: true, update: true, delete: false, send: true, pay: false, void: false });
    expect(await perms('Manager')).toEqual({ read: true, create: true, update: true, delete: true, send: true, pay: true, void: true });
    const scoped = (await host.keys.create({ companyId: co.company.id, actor: CLI_ACTOR, appId: 'core' }, { role: 'Owner', scopes: ['customers', 'apps'] })).key;
    const res = await host.app.inject({ method: 'GET', url: '/api/v1/document-types', headers: { authorization: `Bearer ${scoped}`, 'x-company-id': co.company.id } });
    const byName = Object.fromEntries(res.json().data.map((d: { name: string; permissions: unknown }) => [d.name, d.permissions]));
    expect(byName.customer).toEqual({ read: true, create: true, update: true, delete: true });
    expect(byName.invoice).toEqual({ read: false, create: false, update: false, delete: false });
  });

  it('lists only the types of enabled apps, and is in the OpenAPI document', async () => {
    await host.lifecycle.disable(co.company.id, 'invoicing', { type: 'cli', id: 'test' });
    expect((await types('Owner')).data).toEqual([]);
    await host.lifecycle.enable(co.company.id, 'invoicing', { type: 'cli', id: 'test' });
    // customers, invoices, credit notes, debit notes, payments
    expect((await types('Owner')).data).toHaveLength(5);
    const doc = (await host.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    const op = doc.paths['/api/v1/document-types'].get;
    expect(op.operationId).toBe('core.listDocumentTypes');
    expect(JSON.stringify(op.responses['200'])).toContain('transitions');
  });

  it('gives menu entries the document type they open, and says which apps have a web bundle', async () => {
    const menu = (await co.as('Viewer').get('/api/v1/menu')).json().data;
    expect(menu.map((m: { id: string; documentType: string; resource: string }) => [m.id, m.documentType, m.resource])).toEqual([
      ['customers', 'customer', 'customers'], ['invoices', 'invoice', 'invoices'], ['creditNotes', 'creditNote', 'credit-notes'], ['debitNotes', 'debitNote', 'debit-notes'], ['payments', 'payment', 'payments'],
    ]);
    const apps = (await co.as('Viewer').get('/api/v1/apps?installed=true')).json().data;
    expect(apps[0]).toMatchObject({ id: 'invoicing', web: true });
  });
});

describe('list sort and audit filters', () => {
  let host: Host;
  let co: TestCompany;
  const names = ['Charlie', 'Alpha', 'Bravo'];

  beforeAll(async () => {
    host = await makeHost();
    co = await createCompany(host);
    for (const n of names) await createCustomer(co.as('Member'), n);
  });
  afterAll(() => host.close());

  it('sorts lists by creation (either way) or by a filterable field, and refuses any other sort', async () => {
    const order = async (sort?: string) => (await co.as().get(`/api/v1/customers${sort ? `?sort=${sort}` : ''}`)).json().data.map((c: { name: string }) => c.name);
    expect(await order()).toEqual(names);
    expect(await order('createdAt')).toEqual(names);
    expect(await order('-createdAt')).toEqual([...names].reverse());
    expect(await order('name')).toEqual(['Alpha', 'Bravo', 'Charlie']);
    expect(await order('-name')).toEqual(['Charlie', 'Bravo', 'Alpha']);
    expectError(await co.as().get('/api/v1/customers?sort=phone'), 400, 'VALIDATION_ERROR');
    // Filters and sort together, paged.
    const cus = (await co.as().get('/api/v1/customers?name=Alpha')).json().data[0];
    for (const d of ['2026-01-01', '2026-03-01', '2026-02-01']) {
      expect((await co.as('Member').post('/api/v1/invoices', invoiceBody(cus.id, { date: d, dueDate: '2026-12-31' }))).statusCode).toBe(201);
    }
    const page = (await co.as().get(`/api/v1/invoices?customerId=${cus.id}&sort=-createdAt&pageSize=2`)).json();
    expect(page.total).toBe(3);
    expect(page.data.map((i: { date: string }) => i.date)).toEqual(['2026-02-01', '2026-03-01']);
  });

  it('filters the audit log by actor and by time', async () => {
    const member = keyIdOf(co.keys.Member);
    const all = (await co.as('Admin').get('/api/v1/audit-log?pageSize=100')).json();
    const mine = (await co.as('Admin').get(`/api/v1/audit-log?actorType=key&actorId=${member}&pageSize=100`)).json();
    expect(mine.total).toBe(6); // three customers, three invoices
    expect(mine.data.every((r: { actor: { id: string } }) => r.actor.id === member)).toBe(true);
    expect(all.total).toBeGreaterThan(mine.total);
    const cli = (await co.as('Admin').get('/api/v1/audit-log?actorType=cli')).json();
    expect(cli.data.every((r: { actor: { type: string } }) => r.actor.type === 'cli')).toBe(true);

    const times = all.data.map((r: { at: string }) => r.at).sort();
    const future = new Date(Date.parse(times.at(-1)) + 60_000).toISOString();
    expect((await co.as('Admin').get(`/api/v1/audit-log?since=${encodeURIComponent(future)}`)).json().total).toBe(0);
    expect((await co.as('Admin').get(`/api/v1/audit-log?until=${encodeURIComponent(future)}`)).json().total).toBe(all.total);
    expect((await co.as('Admin').get(`/api/v1/audit-log?since=${encodeURIComponent(times[0])}&until=${encodeURIComponent(future)}`)).json().total).toBe(all.total);
    expectError(await co.as('Admin').get('/api/v1/audit-log?since=yesterday'), 400, 'VALIDATION_ERROR');
  });
});
