// Creating and reading invoices: the created shape, amounts rounded in the company currency's
// minor units (half away from zero) with the company's 15 % VAT on standard-rated lines (VAT
// itself: test/api-invoicing-saudi.test.ts), every validation rule with its detail, and
// Idempotency-Key.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Host } from '../core/host.ts';
import { ARABIC, count, createCompany, createCustomer, expectError, invoiceBody, makeHost, type TestCompany } from './helpers.ts';

const INVOICES = 'SELECT count(*) FROM doc_invoicing_invoice';

describe('invoices', () => {
  let host: Host;
  let sar: TestCompany;
  let kwd: TestCompany;
  let jpy: TestCompany;
  let customer: { id: string };

  beforeAll(async () => {
    host = await makeHost();
    sar = await createCompany(host, { name: 'Riyadh Trading', currency: 'SAR' });
    kwd = await createCompany(host, { name: 'Kuwait Trading', currency: 'KWD' });
    jpy = await createCompany(host, { name: 'Tokyo Trading', currency: 'JPY' });
    customer = await createCustomer(sar.as(), 'Acme');
  });
  afterAll(() => host.close());

  const lines = (...ls: [number, number][]) => ls.map(([quantity, unitPrice], i) => ({ description: `Line ${i + 1}`, quantity, unitPrice }));

  describe('create', () => {
    it('answers 201 with an inv_ id, state draft and the company currency', async () => {
      const body = invoiceBody(customer.id, { notes: 'Thanks' });
      const res = await sar.as('Member').post('/api/v1/invoices', body);
      expect(res.statusCode, res.body).toBe(201);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      const json = res.json();
      expect(Object.keys(json)).toEqual(['data']);
      expect(json.data).toMatchObject({
        id: expect.stringMatching(/^inv_[0-9a-z]+$/),
        state: 'draft',
        customerId: customer.id,
        date: '2026-01-15',
        dueDate: '2026-02-14',
        currency: 'SAR',
        notes: 'Thanks',
        lines: [{ description: 'Consulting', quantity: 2, unitPrice: 100, taxCategory: 'S', amount: 200, taxRate: 15, taxAmount: 30, amountWithTax: 230 }],
        subtotal: 200,
        taxTotal: 30,
        total: 230,
        balanceDue: 230,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      expect(new Date(json.data.createdAt).toISOString()).toBe(json.data.createdAt);
    });

    it('refuses a client-sent currency or total as unknown fields', async () => {
      const res = await sar.as().post('/api/v1/invoices', invoiceBody(customer.id, { currency: 'USD', total: 1 }));
      const err = expectError(res, 400, 'VALIDATION_ERROR');
      expect(err.details.map((d) => d.pointer).sort()).toEqual(['/currency', '/total']);
    });

    it('rounds SAR amounts to 2 decimals, half away from zero: 3 × 1.005 = 3.02', async () => {
      const res = await sar.as().post('/api/v1/invoices', invoiceBody(customer.id, { lines: lines([3, 1.005]) }));
      expect(res.statusCode, res.body).toBe(201);
      const inv = res.json().data;
      expect(inv.lines[0].amount).toBe(3.02);
      expect(inv.subtotal).toBe(3.02);
      // VAT 3.02 × 15 % = 0.453 → 0.45
      expect(inv.taxTotal).toBe(0.45);
      expect(inv.total).toBe(3.47);
      expect(inv.currency).toBe('SAR');
    });

    it('rounds each line, then sums the rounded lines', async () => {
      // 3.015 → 3.02, 0.105 → 0.11, 0.1 × 3 = 0.30000000000000004 in binary → 0.3
      const inv = (await sar.as().post('/api/v1/invoices', invoiceBody(customer.id, { lines: lines([3, 1.005], [1, 0.105], [3, 0.1]) }))).json().data;
      expect(inv.lines.map((l: { amount: number }) => l.amount)).toEqual([3.02, 0.11, 0.3]);
      expect(inv.subtotal).toBe(3.43);
      // VAT 3.43 × 15 % = 0.5145 → 0.51
      expect(inv.total).toBe(3.94);
    });

    it('rounds negative amounts away from zero too (a credit line)', async () => {
      const inv = (await sar.as().post('/api/v1/invoices', invoiceBody(customer.id, { lines: lines([3, -1.005], [1, 10]) }))).json().data;
      expect(inv.lines[0].amount).toBe(-3.02);
      expect(inv.subtotal).toBe(6.98);
      // VAT 6.98 × 15 % = 1.047 → 1.05
      expect(inv.total).toBe(8.03);
    });

    it('rounds KWD amounts to 3 decimals', async () => {
      const kc = await createCustomer(kwd.as(), 'Kuwait customer');
      const inv = (await kwd.as().post('/api/v1/invoices', invoiceBody(kc.id, { lines: lines([3, 1.0005], [1, 2.0004]) }))).json().data;
      expect(inv.currency).toBe('KWD');
      // 3.0015 → 3.002 (half away from zero), 2.0004 → 2.000
      expect(inv.lines.map((l: { amount: number }) => l.amount)).toEqual([3.002, 2]);
      expect(inv.subtotal).toBe(5.002);
      // VAT 5.002 × 15 % = 0.7503 → 0.750
      expect(inv.total).toBe(5.752);
    });

    it('rounds JPY amounts to whole yen', async () => {
      const jc = await createCustomer(jpy.as(), 'Tokyo customer');
      const inv = (await jpy.as().post('/api/v1/invoices', invoiceBody(jc.id, { lines: lines([3, 100.5], [1, 0.5], [1, 0.49]) }))).json().data;
      expect(inv.currency).toBe('JPY');
      // 301.5 → 302, 0.5 → 1, 0.49 → 0
      expect(inv.lines.map((l: { amount: number }) => l.amount)).toEqual([302, 1, 0]);
      expect(inv.subtotal).toBe(303);
      // VAT 303 × 15 % = 45.45 → 45
      expect(inv.total).toBe(348);
      expect(Number.isInteger(inv.total)).toBe(true);
    });

    it('accepts quantity 0 (the lowest allowed)', async () => {
      const res = await sar.as().post('/api/v1/invoices', invoiceBody(customer.id, { lines: lines([0, 50]) }));
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json().data.total).toBe(0);
    });
  });

  describe('validation', () => {
    const post = (body: unknown, headers?: Record<string, string>) => sar.as().post('/api/v1/invoices', body, headers);

    it('refuses quantity -1: the message says it must be at least 0, with pointer, rule and limit', async () => {
      const err = expectError(await post(invoiceBody(customer.id, { lines: lines([-1, 10]) })), 400, 'VALIDATION_ERROR');
      expect(err.message).toMatch(/quantity must be at least 0/);
      expect(err.details).toEqual([
        { in: 'body', pointer: '/lines/0/quantity', rule: 'minimum', limit: 0, message: 'lines[0].quantity must be at least 0' },
      ]);
    });

    it('says the same in Arabic with Accept-Language: ar', async () => {
      const res = await post(invoiceBody(customer.id, { lines: lines([-1, 10]) }), { 'accept-language': 'ar' });
      const err = expectError(res, 400, 'VALIDATION_ERROR');
      expect(res.headers['content-language']).toBe('ar');
      expect(err.message).toMatch(ARABIC);
      expect(err.message).toContain('lines[0].quantity');
      expect(err.message).toContain('على الأقل 0');
      expect(err.details[0]).toMatchObject({ pointer: '/lines/0/quantity', rule: 'minimum', limit: 0 });
      expect(err.details[0].message).toMatch(ARABIC);
      // A weighted Accept-Language list picks Arabic too; an unknown language falls back to English.
      const weighted = await post(invoiceBody(customer.id, { lines: lines([-1, 10]) }), { 'accept-language': 'fr;q=0.9, ar;q=0.8' });
      expect(weighted.json().error.message).toMatch(ARABIC);
      const unknown = await post(invoiceBody(customer.id, { lines: lines([-1, 10]) }), { 'accept-language': 'fr' });
      expect(unknown.json().error.message).toMatch(/quantity must be at least 0/);
    });

    it('reports every broken rule at once, each with its pointer', async () => {
      const body = { customerId: customer.id, date: '2026-02-30', dueDate: '2026-1-5', lines: [{ description: 'x', quantity: -1, unitPrice: 'ten' }], extra: 1 };
      const err = expectError(await post(body), 400, 'VALIDATION_ERROR');
      const got = err.details.map((d) => `${d.pointer} ${d.rule}`).sort();
      expect(got).toEqual(['/date format', '/dueDate format', '/extra additionalProperties', '/lines/0/quantity minimum', '/lines/0/unitPrice type']);
    });

    it.each([
      ['2026-02-30', 'a day February 2026 does not have'],
      ['2026-1-5', 'no leading zeros'],
      ['2026-13-01', 'month 13'],
      ['15/01/2026', 'another notation'],
      ['2026-01-15T00:00:00Z', 'a date-time'],
    ])('refuses date %s (%s)', async (date) => {
      const err = expectError(await post(invoiceBody(customer.id, { date, dueDate: '2026-12-31' })), 400, 'VALIDATION_ERROR');
      expect(err.details).toEqual([expect.objectContaining({ pointer: '/date', rule: 'format', limit: 'date' })]);
    });

    it('accepts 29 February in a leap year', async () => {
      expect((await post(invoiceBody(customer.id, { date: '2028-02-29', dueDate: '2028-03-01' }))).statusCode).toBe(201);
    });

    it("refuses a dueDate before the date with rule 'dateOrder'", async () => {
      const err = expectError(await post(invoiceBody(customer.id, { date: '2026-03-01', dueDate: '2026-02-28' })), 400, 'VALIDATION_ERROR');
      expect(err.details).toEqual([expect.objectContaining({ in: 'body', pointer: '/dueDate', rule: 'dateOrder' })]);
      expect(err.message).toContain('dueDate must not be before date');
      const ar = expectError(await post(invoiceBody(customer.id, { date: '2026-03-01', dueDate: '2026-02-28' }), { 'accept-language': 'ar' }), 400, 'VALIDATION_ERROR');
      expect(ar.message).toMatch(ARABIC);
      // The same day is fine.
      expect((await post(invoiceBody(customer.id, { date: '2026-03-01', dueDate: '2026-03-01' }))).statusCode).toBe(201);
    });

    it("refuses an invoice without lines with rule 'minItems'", async () => {
      const err = expectError(await post(invoiceBody(customer.id, { lines: [] })), 400, 'VALIDATION_ERROR');
      expect(err.details).toEqual([expect.objectContaining({ pointer: '/lines', rule: 'minItems', limit: 1 })]);
      const { lines: _omit, ...noLines } = invoiceBody(customer.id);
      const missing = expectError(await post(noLines), 400, 'VALIDATION_ERROR');
      expect(missing.details).toEqual([expect.objectContaining({ pointer: '/lines', rule: 'required' })]);
    });

    it("refuses every missing required field with rule 'required'", async () => {
      const err = expectError(await post({}), 400, 'VALIDATION_ERROR');
      expect(err.details.map((d) => `${d.pointer} ${d.rule}`).sort()).toEqual(['/customerId required', '/date required', '/dueDate required', '/lines required']);
      const line = expectError(await post(invoiceBody(customer.id, { lines: [{ description: 'x' }] })), 400, 'VALIDATION_ERROR');
      expect(line.details.map((d) => d.pointer).sort()).toEqual(['/lines/0/quantity', '/lines/0/unitPrice']);
    });

    it("refuses an unknown field with rule 'additionalProperties', at the top and in a line", async () => {
      const err = expectError(await post(invoiceBody(customer.id, { discount: 5 })), 400, 'VALIDATION_ERROR');
      expect(err.details).toEqual([expect.objectContaining({ pointer: '/discount', rule: 'additionalProperties' })]);
      const inLine = expectError(await post(invoiceBody(customer.id, { lines: [{ description: 'x', quantity: 1, unitPrice: 1, amount: 99 }] })), 400, 'VALIDATION_ERROR');
      expect(inLine.details).toEqual([expect.objectContaining({ pointer: '/lines/0/amount', rule: 'additionalProperties' })]);
    });

    it('refuses a unitPrice of 1e400 (Infinity once parsed) and never answers 500', async () => {
      const raw = `{"customerId":"${customer.id}","date":"2026-01-15","dueDate":"2026-02-14","lines":[{"description":"x","quantity":1,"unitPrice":1e400}]}`;
      const res = await sar.as().raw({ method: 'POST', url: '/api/v1/invoices', payload: raw, headers: { 'content-type': 'application/json' } });
      const err = expectError(res, 400, 'VALIDATION_ERROR');
      expect(err.details.length).toBeGreaterThan(0);
      expect(err.details.every((d) => d.pointer === '/lines/0/unitPrice')).toBe(true);
      // Very large but finite amounts are bounded too, as are quantities.
      for (const [q, p] of [['1', '1e300'], ['1e300', '1'], ['-1e400', '1'], ['1', '-1e400']]) {
        const r = await sar.as().raw({
          method: 'POST', url: '/api/v1/invoices', headers: { 'content-type': 'application/json' },
          payload: `{"customerId":"${customer.id}","date":"2026-01-15","dueDate":"2026-02-14","lines":[{"description":"x","quantity":${q},"unitPrice":${p}}]}`,
        });
        expectError(r, 400, 'VALIDATION_ERROR');
      }
    });

    it("refuses a customerId that names no customer with rule 'exists'", async () => {
      const err = expectError(await post(invoiceBody('cus_doesnotexist00000000')), 400, 'VALIDATION_ERROR');
      expect(err.details).toEqual([expect.objectContaining({ in: 'body', pointer: '/customerId', rule: 'exists', value: 'cus_doesnotexist00000000' })]);
      expect(err.details[0].message).toMatch(/customerId/);
      // An id of the wrong kind is refused by its form.
      const wrongKind = expectError(await post(invoiceBody('inv_abc')), 400, 'VALIDATION_ERROR');
      expect(wrongKind.details[0]).toMatchObject({ pointer: '/customerId', rule: 'pattern' });
    });

    it('refuses wrong types without coercing them', async () => {
      const err = expectError(await post(invoiceBody(customer.id, { lines: [{ description: 'x', quantity: '2', unitPrice: 1 }] })), 400, 'VALIDATION_ERROR');
      expect(err.details[0]).toMatchObject({ pointer: '/lines/0/quantity', rule: 'type', limit: 'number' });
      expectError(await post([invoiceBody(customer.id)]), 400, 'VALIDATION_ERROR');
      for (const payload of ['"just a string"', '42', 'null']) {
        const res = await sar.as().raw({ method: 'POST', url: '/api/v1/invoices', payload, headers: { 'content-type': 'application/json' } });
        expect(res.statusCode, payload).toBe(400);
        expect(['VALIDATION_ERROR', 'BAD_REQUEST']).toContain(expectError(res, 400, res.json().error.code).code);
      }
    });
  });

  describe('read', () => {
    it('lists invoices paged, newest last, and gets one by id', async () => {
      const co = await createCompany(host, { name: 'Reader' });
      const cus = await createCustomer(co.as(), 'R');
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push((await co.as().post('/api/v1/invoices', invoiceBody(cus.id, { notes: `n${i}` }))).json().data.id);
      const page = (await co.as('Viewer').get('/api/v1/invoices?pageSize=2')).json();
      expect(page).toMatchObject({ total: 3, page: 1, pageSize: 2 });
      expect(page.data.map((d: { id: string }) => d.id)).toEqual(ids.slice(0, 2));
      const page2 = (await co.as('Viewer').get('/api/v1/invoices?pageSize=2&page=2')).json();
      expect(page2.data.map((d: { id: string }) => d.id)).toEqual(ids.slice(2));

      const one = await co.as('Viewer').get(`/api/v1/invoices/${ids[1]}`);
      expect(one.statusCode).toBe(200);
      expect(Object.keys(one.json())).toEqual(['data']);
      expect(one.json().data).toEqual(page.data[1]);
      expect(one.json().data).toMatchObject({ id: ids[1], state: 'draft', notes: 'n1', currency: 'SAR', total: 230 });

      // Filters: by customer and by state.
      expect((await co.as().get(`/api/v1/invoices?customerId=${cus.id}`)).json().total).toBe(3);
      expect((await co.as().get('/api/v1/invoices?state=sent')).json().total).toBe(0);
      expectError(await co.as().get('/api/v1/invoices?state=lost'), 400, 'VALIDATION_ERROR');
      expectError(await co.as().get('/api/v1/invoices/inv_nothere000000000000'), 404, 'NOT_FOUND');
    });

    it('changes an invoice with PATCH and recomputes its totals', async () => {
      const inv = (await sar.as().post('/api/v1/invoices', invoiceBody(customer.id))).json().data;
      const res = await sar.as().patch(`/api/v1/invoices/${inv.id}`, { notes: 'Updated' });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data).toMatchObject({ id: inv.id, notes: 'Updated', total: 230, currency: 'SAR' });
    });

    it('replaces lines with PATCH and recomputes the totals', async () => {
      const inv = (await sar.as().post('/api/v1/invoices', invoiceBody(customer.id))).json().data;
      const res = await sar.as().patch(`/api/v1/invoices/${inv.id}`, { lines: lines([3, 1.005]) });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data).toMatchObject({ lines: [{ amount: 3.02 }], subtotal: 3.02, total: 3.47 });
    });
  });

  describe('Idempotency-Key', () => {
    it('answers the same invoice for the same key and body, with one row and idempotent-replayed', async () => {
      const co = await createCompany(host, { name: 'Idem' });
      const cus = await createCustomer(co.as(), 'I');
      const body = invoiceBody(cus.id);
      const before = await count(host, `${INVOICES} WHERE company_id = ?`, co.company.id);
      const auditBefore = await count(host, 'SELECT count(*) FROM audit_log WHERE company_id = ?', co.company.id);
      const first = await co.as().post('/api/v1/invoices', body, { 'idempotency-key': 'order-42' });
      expect(first.statusCode, first.body).toBe(201);
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      const second = await co.as().post('/api/v1/invoices', body, { 'idempotency-key': 'order-42' });
      expect(second.statusCode).toBe(201);
      expect(second.headers['idempotent-replayed']).toBe('true');
      expect(second.json().data.id).toBe(first.json().data.id);
      expect(second.json()).toEqual(first.json());
      expect(await count(host, `${INVOICES} WHERE company_id = ?`, co.company.id)).toBe(before + 1);
      expect(await count(host, 'SELECT count(*) FROM audit_log WHERE company_id = ?', co.company.id)).toBe(auditBefore + 1);

      // Same key, different body: 409 CONFLICT, nothing written.
      const other = await co.as().post('/api/v1/invoices', invoiceBody(cus.id, { notes: 'different' }), { 'idempotency-key': 'order-42' });
      const err = expectError(other, 409, 'CONFLICT');
      expect(err.details[0]).toMatchObject({ reason: 'idempotency_key_reused' });
      expect(await count(host, `${INVOICES} WHERE company_id = ?`, co.company.id)).toBe(before + 1);

      // Another key, or none, creates another invoice.
      const third = await co.as().post('/api/v1/invoices', body, { 'idempotency-key': 'order-43' });
      expect(third.json().data.id).not.toBe(first.json().data.id);
      const fourth = await co.as().post('/api/v1/invoices', body);
      expect(fourth.json().data.id).not.toBe(third.json().data.id);
      expect(await count(host, `${INVOICES} WHERE company_id = ?`, co.company.id)).toBe(before + 3);
    });

    it('does not remember a refused request under its key', async () => {
      const co = await createCompany(host, { name: 'Idem2' });
      const cus = await createCustomer(co.as(), 'I');
      expectError(await co.as().post('/api/v1/invoices', invoiceBody(cus.id, { lines: [] }), { 'idempotency-key': 'k1' }), 400, 'VALIDATION_ERROR');
      expectError(await co.as().post('/api/v1/invoices', invoiceBody(cus.id, { dueDate: '2025-01-01' }), { 'idempotency-key': 'k1' }), 400, 'VALIDATION_ERROR');
      const ok = await co.as().post('/api/v1/invoices', invoiceBody(cus.id), { 'idempotency-key': 'k1' });
      expect(ok.statusCode, ok.body).toBe(201);
      expect(ok.headers['idempotent-replayed']).toBeUndefined();
    });

    it('keeps keys apart per API key and per company', async () => {
      const co = await createCompany(host, { name: 'Idem3' });
      const cus = await createCustomer(co.as(), 'I');
      const body = invoiceBody(cus.id);
      const byOwner = (await co.as('Owner').post('/api/v1/invoices', body, { 'idempotency-key': 'same' })).json().data.id;
      const byMember = await co.as('Member').post('/api/v1/invoices', body, { 'idempotency-key': 'same' });
      expect(byMember.statusCode).toBe(201);
      expect(byMember.json().data.id).not.toBe(byOwner);
    });

    it('refuses a key longer than 255 characters', async () => {
      const err = expectError(await sar.as().post('/api/v1/invoices', invoiceBody(customer.id), { 'idempotency-key': 'k'.repeat(256) }), 400, 'VALIDATION_ERROR');
      expect(err.details[0]).toMatchObject({ in: 'headers', rule: 'maxLength', limit: 255 });
    });
  });
});
