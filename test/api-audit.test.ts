// The audit log: every write has a row naming actor, company, action, resource, before and
// after, written in the write's transaction together with its outbox events; a refused or
// failed write leaves no trace. Readable by Admin and Owner only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Host } from '../core/host.ts';
import { count, createCompany, createCustomer, expectError, invoiceBody, keyIdOf, makeHost, writeTempApp, type TestCompany } from './helpers.ts';

interface AuditRow {
  id: string;
  companyId: string;
  actor: { type: string; id: string };
  appId: string;
  action: string;
  resource: string;
  resourceId: string | null;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
  requestId: string | null;
  at: string;
}

// A server bundle whose route inserts a gadget, then fails inside the same transaction.
const FAILING_SERVER = `
export default {
  id: 'gadgets',
  routes: [
    {
      method: 'POST',
      url: '/gadgets-then-fail',
      permission: 'gadgets:create',
      summary: 'Creates a gadget, then fails in the same transaction',
      schema: { body: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } }, response: { 201: { type: 'object' } } },
      async handler(req, ctx) {
        await ctx.transaction(async () => {
          const made = await ctx.docs('gadget').create({ name: req.body.name });
          if (!(await ctx.docs('gadget').get(made.id))) throw new Error('the insert is not visible inside its transaction');
          throw new Error('secret internal detail: failed after the insert');
        });
        return { status: 201, body: {} };
      },
    },
  ],
};
`;

describe('audit log', () => {
  let host: Host;
  let co: TestCompany;
  const rows = (companyId: string) => count(host, 'SELECT count(*) FROM audit_log WHERE company_id = ?', companyId);
  const outbox = (companyId: string) => count(host, 'SELECT count(*) FROM outbox WHERE company_id = ?', companyId);
  const invoices = (companyId: string) => count(host, 'SELECT count(*) FROM doc_invoicing_invoice WHERE company_id = ?', companyId);
  const customers = (companyId: string) => count(host, 'SELECT count(*) FROM doc_invoicing_customer WHERE company_id = ?', companyId);

  async function auditOf(resource: string, resourceId: string): Promise<AuditRow[]> {
    const res = await co.as('Admin').get(`/api/v1/audit-log?resource=${resource}&resourceId=${resourceId}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data;
  }

  beforeAll(async () => {
    host = await makeHost();
    co = await createCompany(host, { name: 'Audited' });
  });
  afterAll(() => host.close());

  it('records a customer create with actor, company, action, resource, before and after', async () => {
    const res = await co.as('Member').post('/api/v1/customers', { name: 'Acme', email: 'a@acme.test' });
    expect(res.statusCode).toBe(201);
    const customer = res.json().data;
    const [row, ...more] = await auditOf('customers', customer.id);
    expect(more).toEqual([]);
    expect(row).toMatchObject({
      id: expect.stringMatching(/^aud_/),
      companyId: co.company.id,
      actor: { type: 'key', id: keyIdOf(co.keys.Member) },
      appId: 'invoicing',
      action: 'create',
      resource: 'customers',
      resourceId: customer.id,
      before: null,
      after: customer,
      requestId: expect.any(String),
      at: expect.any(String),
    });
  });

  it('records an invoice create with the stored invoice as after', async () => {
    const customer = await createCustomer(co.as());
    const inv = (await co.as('Member').post('/api/v1/invoices', invoiceBody(customer.id))).json().data;
    const [row] = await auditOf('invoices', inv.id);
    expect(row).toMatchObject({ companyId: co.company.id, actor: { type: 'key', id: keyIdOf(co.keys.Member) }, action: 'create', resource: 'invoices', before: null, after: inv });
    // 2 × 100.00 with 15 % VAT
    expect(row.after).toMatchObject({ currency: 'SAR', total: 230, state: 'draft' });
  });

  it('records a key create (POST /api/v1/api-keys) without the key', async () => {
    const res = await co.as('Admin').post('/api/v1/api-keys', { name: 'Audited key', role: 'Viewer', scopes: ['invoices'] });
    expect(res.statusCode).toBe(201);
    const { key, ...record } = res.json().data;
    const [row] = await auditOf('api-keys', record.id);
    expect(row).toMatchObject({ companyId: co.company.id, actor: { type: 'key', id: keyIdOf(co.keys.Admin) }, appId: 'core', action: 'create', resource: 'api-keys', resourceId: record.id, before: null });
    expect(row.after).toEqual(record);
    const secret = key.split('_')[2];
    expect(JSON.stringify(row)).not.toContain(secret);
    // Nor is the secret anywhere in the audit table or the outbox.
    expect(JSON.stringify(await host.storage.db.all('SELECT * FROM audit_log'))).not.toContain(secret);
    expect(JSON.stringify(await host.storage.db.all('SELECT * FROM outbox'))).not.toContain(secret);

    const revoke = await co.as('Admin').delete(`/api/v1/api-keys/${record.id}`);
    expect(revoke.statusCode).toBe(200);
    const log = await auditOf('api-keys', record.id);
    expect(log.map((r) => r.action)).toEqual(['revoke', 'create']);
    expect(log[0].before).toMatchObject({ revokedAt: null });
    expect(log[0].after).toMatchObject({ revokedAt: expect.any(String) });
  });

  it('records updates, transitions and deletes with before and after', async () => {
    const customer = await createCustomer(co.as(), 'Old name');
    const patched = (await co.as().patch(`/api/v1/customers/${customer.id}`, { name: 'New name' })).json().data;
    const inv = (await co.as().post('/api/v1/invoices', invoiceBody(customer.id))).json().data;
    // A draft is voided and deleted; an issued invoice is not (it is cancelled by a credit note).
    const voided = await co.as('Manager').post(`/api/v1/invoices/${inv.id}/void`);
    expect(voided.statusCode, voided.body).toBe(200);
    expect((await co.as('Manager').delete(`/api/v1/invoices/${inv.id}`)).statusCode).toBe(200);
    const other = (await co.as().post('/api/v1/invoices', invoiceBody(customer.id))).json().data;
    const sent = await co.as().post(`/api/v1/invoices/${other.id}/send`);
    expect(sent.statusCode, sent.body).toBe(200);

    const [update] = await auditOf('customers', customer.id);
    expect(update).toMatchObject({ action: 'update', before: { name: 'Old name' }, after: { name: 'New name' } });
    expect(update.after).toEqual(patched);
    const log = await auditOf('invoices', inv.id);
    expect(log.map((r) => r.action)).toEqual(['delete', 'void', 'create']);
    expect(log[1]).toMatchObject({ actor: { id: keyIdOf(co.keys.Manager) }, before: { state: 'draft' }, after: { state: 'void' } });
    expect(log[0]).toMatchObject({ before: { id: inv.id, state: 'void' }, after: null });
    // Sending is the transition, then the issue in the same unit of work (the number, the UUID).
    const issued = await auditOf('invoices', other.id);
    expect(issued.map((r) => r.action)).toEqual(['update', 'send', 'create']);
    expect(issued[1]).toMatchObject({ before: { state: 'draft' }, after: { state: 'sent' } });
    expect(issued[0].before).toMatchObject({ state: 'sent' });
    expect(issued[0].before).not.toHaveProperty('number');
    expect(issued[0].after).toMatchObject({ state: 'sent', number: expect.any(Number), uuid: expect.any(String) });
  });

  it('writes each write, its audit row and its outbox events together', async () => {
    const c0 = await customers(co.company.id);
    const a0 = await rows(co.company.id);
    const o0 = await outbox(co.company.id);
    const customer = await createCustomer(co.as());
    expect([await customers(co.company.id), await rows(co.company.id)]).toEqual([c0 + 1, a0 + 1]);
    // One domain event and one audit-trail event.
    const topics = (await host.storage.db.all<{ topic: string }>('SELECT topic FROM outbox WHERE company_id = ? ORDER BY seq DESC LIMIT 2', [co.company.id])).map((r) => r.topic);
    expect(await outbox(co.company.id)).toBe(o0 + 2);
    expect([...topics].sort()).toEqual(['audit.customers.create', 'customer.created']);

    const i0 = await invoices(co.company.id);
    const inv = await co.as().post('/api/v1/invoices', invoiceBody(customer.id));
    expect(inv.statusCode).toBe(201);
    expect([await invoices(co.company.id), await rows(co.company.id), await outbox(co.company.id)]).toEqual([i0 + 1, a0 + 2, o0 + 4]);
  });

  it('leaves no row, no audit row and no event when a write is refused', async () => {
    const customer = await createCustomer(co.as());
    const before = async () => [await invoices(co.company.id), await customers(co.company.id), await rows(co.company.id), await outbox(co.company.id)];
    const snapshot = await before();
    const refused: [string, Record<string, unknown>, number, string][] = [
      // Refused by the schema, before the transaction.
      ['/api/v1/invoices', invoiceBody(customer.id, { lines: [{ description: 'x', quantity: -1, unitPrice: 1 }] }), 400, 'VALIDATION_ERROR'],
      // Refused inside the transaction: the reference check ...
      ['/api/v1/invoices', invoiceBody('cus_doesnotexist00000000'), 400, 'VALIDATION_ERROR'],
      // ... and the app's hook (dateOrder).
      ['/api/v1/invoices', invoiceBody(customer.id, { date: '2026-05-01', dueDate: '2026-04-01' }), 400, 'VALIDATION_ERROR'],
      ['/api/v1/customers', { name: '' }, 400, 'VALIDATION_ERROR'],
    ];
    for (const [url, body, status, code] of refused) expectError(await co.as().post(url, body), status, code);
    expectError(await co.as('Viewer').post('/api/v1/customers', { name: 'No' }), 403, 'FORBIDDEN');
    expect(await before()).toEqual(snapshot);

    // A delete refused by the app's hook (the customer still has invoices) rolls back too.
    expect((await co.as().post('/api/v1/invoices', invoiceBody(customer.id))).statusCode).toBe(201);
    const withInvoice = await before();
    const del = await co.as('Manager').delete(`/api/v1/customers/${customer.id}`);
    expect(expectError(del, 409, 'CONFLICT').details[0]).toMatchObject({ reason: 'customer_has_invoices', invoices: 1 });
    expect(await before()).toEqual(withInvoice);
    expect((await co.as().get(`/api/v1/customers/${customer.id}`)).statusCode).toBe(200);
  });

  it('rolls back the row, its audit row and its events when the transaction fails after the insert', async () => {
    const app = writeTempApp({
      server: FAILING_SERVER,
      topics: [{ topic: 'gadget.created', description: { en: 'A gadget was created.', ar: 'أُنشئت أداة.' }, source: { on: 'create', type: 'gadget' } }],
    });
    try {
      await host.runtime.load(app);
      await host.lifecycle.install(co.company.id, 'gadgets', { type: 'cli', id: 'test' });
      const gadgets = () => count(host, 'SELECT count(*) FROM doc_gadgets_gadget WHERE company_id = ?', co.company.id);
      const snapshot = async () => [await gadgets(), await rows(co.company.id), await outbox(co.company.id)];

      // The generated create route works and writes all three.
      const s0 = await snapshot();
      const ok = await co.as().post('/api/v1/gadgets', { name: 'kept' });
      expect(ok.statusCode, ok.body).toBe(201);
      expect(await snapshot()).toEqual([s0[0] + 1, s0[1] + 1, s0[2] + 2]);

      // The failing route inserted a gadget (with its audit row and events), then threw: an app's
      // own fault answers APP_ERROR naming the app and the route (it was INTERNAL), never its message.
      const s1 = await snapshot();
      const res = await co.as().post('/api/v1/gadgets-then-fail', { name: 'lost' });
      const err = expectError(res, 500, 'APP_ERROR');
      expect(res.body).not.toContain('secret internal detail');
      expect(err.details).toEqual([{ app: 'gadgets', rule: 'route', route: 'POST /api/v1/gadgets-then-fail' }]);
      expect(err.message).toContain('gadgets');
      expect(await snapshot()).toEqual(s1);
      const names = (await host.storage.db.all<{ name: string }>(`SELECT ${host.storage.db.dialect.jsonField('data', 'name', 'text')} AS name FROM doc_gadgets_gadget`)).map((r) => r.name);
      expect(names).toEqual(['kept']);
    } finally {
      app.cleanup();
    }
  });

  it('lets Admin and Owner read the audit log, and refuses Manager, Member and Viewer', async () => {
    for (const role of ['Admin', 'Owner'] as const) {
      const res = await co.as(role).get('/api/v1/audit-log');
      expect(res.statusCode, role).toBe(200);
      expect(res.json().data.length).toBeGreaterThan(0);
    }
    for (const role of ['Manager', 'Member', 'Viewer'] as const) {
      const err = expectError(await co.as(role).get('/api/v1/audit-log'), 403, 'FORBIDDEN');
      expect(err.details[0]).toMatchObject({ permission: 'audit:read', requiredRole: 'Admin', keyRole: role });
    }
  });

  it('lists newest first and filters by resource and action', async () => {
    const all = (await co.as('Admin').get('/api/v1/audit-log?pageSize=100')).json();
    const ats = all.data.map((r: AuditRow) => r.at);
    expect([...ats].sort().reverse()).toEqual(ats);
    const creates = (await co.as('Admin').get('/api/v1/audit-log?resource=invoices&action=create&pageSize=100')).json();
    expect(creates.total).toBeGreaterThan(0);
    expect(creates.data.every((r: AuditRow) => r.resource === 'invoices' && r.action === 'create')).toBe(true);
    // The company's own creation is audited as the operator's.
    const company = (await co.as('Admin').get(`/api/v1/audit-log?resource=companies&resourceId=${co.company.id}`)).json().data;
    expect(company).toEqual([expect.objectContaining({ action: 'create', actor: { type: 'cli', id: 'operator' }, after: expect.objectContaining({ id: co.company.id }) })]);
  });
});
