// Invoicing a Saudi business, through the API alone: the seller's profile (every problem of a bad
// one at once, in Arabic and English), VAT per category rounded as ZATCA's rules say, issuing
// with gap-free numbers (50 concurrent sends), immutability after issue, credit and debit notes,
// payments, and the balance they leave. Runs on SQLite and again on PostgreSQL (vitest.config.ts).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Host } from '../core/host.ts';
import { runCli } from './cli-run.ts';
import { processDatabase } from './db.ts';
import { INITIAL_PIH, invoiceHash, parseQr } from '../apps-installed/invoicing/zatca/index.ts';
import { ARABIC, createCompany, createCustomer, expectError, makeHost, type Client, type TestCompany } from './helpers.ts';
import { RIYADH_TRADING } from './zatca-company.ts';


describe('invoicing a Saudi business', () => {
  let host: Host;
  let co: TestCompany;
  let api: Client;

  beforeAll(async () => {
    host = await makeHost({ config: { rateLimitPerMinute: 0 } });
    co = await createCompany(host, { name: 'Riyadh Trading', currency: 'SAR' });
    api = co.as();
  });
  afterAll(() => host.close());

  describe("the seller's profile", () => {
    it('starts with the 15 % VAT rate and no profile; the Owner sets it, any member reads it, the change is audited', async () => {
      const before = (await co.as('Viewer').get('/api/v1/company')).json().data;
      expect(before).toMatchObject({ id: co.company.id, name: 'Riyadh Trading', currency: 'SAR', vatRate: 15 });
      expect(before.vatNumber).toBeUndefined();

      const res = await api.patch('/api/v1/company', RIYADH_TRADING);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data).toEqual({ ...before, ...RIYADH_TRADING });
      expect((await co.as('Viewer').get('/api/v1/company')).json().data).toEqual({ ...before, ...RIYADH_TRADING });

      const audit = (await api.get('/api/v1/audit-log?resource=companies')).json().data;
      expect(audit.find((e: { action: string }) => e.action === 'update')).toMatchObject({ resource: 'companies', resourceId: co.company.id });
    });

    it('is changed by the Owner only', async () => {
      for (const role of ['Admin', 'Manager', 'Member'] as const) expectError(await co.as(role).patch('/api/v1/company', { vatRate: 5 }), 403, 'FORBIDDEN');
    });

    it('refuses a VAT number of 14 digits that does not start with 3, a bad CR number and address, listing every problem, in English and Arabic', async () => {
      const bad = { vatNumber: '12345678901233', crNumber: '10100A', address: { buildingNumber: '12', postalCode: '1221', country: 'SA' } };
      const err = expectError(await api.patch('/api/v1/company', bad), 400, 'VALIDATION_ERROR');
      expect(err.details.map((d) => `${d.pointer} ${d.rule}`).sort()).toEqual([
        '/address/buildingNumber length', '/address/postalCode length', '/crNumber digits', '/crNumber length', '/vatNumber firstDigit', '/vatNumber length',
      ]);
      expect(err.details.find((d) => d.rule === 'firstDigit')!.message).toBe('vatNumber must begin with 3');
      expect(err.details.find((d) => d.pointer === '/vatNumber' && d.rule === 'length')!.message).toBe('vatNumber must have 15 digits (it has 14)');
      const ar = expectError(await api.patch('/api/v1/company', bad, { 'accept-language': 'ar' }), 400, 'VALIDATION_ERROR');
      expect(ar.details).toHaveLength(6);
      for (const d of ar.details) expect(d.message).toMatch(ARABIC);
      expect(ar.details.find((d) => d.rule === 'firstDigit')!.message).toBe('يجب أن يبدأ vatNumber بالرقم 3');
      // A number ending in another digit, and letters: each its own problem.
      const ends = expectError(await api.patch('/api/v1/company', { vatNumber: '31012239350000X' }), 400, 'VALIDATION_ERROR');
      expect(ends.details.map((d) => d.rule).sort()).toEqual(['digits', 'lastDigit']);
      // Nothing was stored.
      expect((await api.get('/api/v1/company')).json().data.vatNumber).toBe(RIYADH_TRADING.vatNumber);
    });

    it('refuses wrong types at their pointers: a VAT rate above 100, a legal name without Arabic', async () => {
      const err = expectError(await api.patch('/api/v1/company', { vatRate: 150, legalName: { en: 'X' } }), 400, 'VALIDATION_ERROR');
      const pointers = err.details.map((d) => d.pointer);
      expect(pointers).toContain('/vatRate');
      expect(pointers).toContain('/legalName/ar');
      // A blank name and a bad VAT number: both at once.
      const both = expectError(await api.patch('/api/v1/company', { name: '   ', vatNumber: '300000000000003X' }), 400, 'VALIDATION_ERROR');
      expect([...new Set(both.details.map((d) => d.pointer))].sort()).toEqual(['/name', '/vatNumber']);
    });
  });

  const line = (quantity: number, unitPrice: number, extra: Record<string, unknown> = {}) => ({ description: `${quantity} × ${unitPrice}`, quantity, unitPrice, ...extra });
  const draft = async (customerId: string, lines: Record<string, unknown>[], c: Client = api) => {
    const res = await c.post('/api/v1/invoices', { customerId, date: '2026-03-01', dueDate: '2026-03-31', lines });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data;
  };
  const send = async (id: string, c: Client = api) => {
    const res = await c.post(`/api/v1/invoices/${id}/send`, {});
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data;
  };

  describe('VAT per line and per category', () => {
    let customer: { id: string };
    beforeAll(async () => {
      customer = await createCustomer(api, 'Cash customer');
    });

    it('3 × 100.00 standard-rated and 1 × 50.00 zero-rated export: subtotal 350.00, VAT 45.00, total 395.00', async () => {
      const inv = await draft(customer.id, [line(3, 100), line(1, 50, { taxCategory: 'Z', exemptionReasonCode: 'VATEX-SA-32' })]);
      expect(inv.lines).toEqual([
        { description: '3 × 100', quantity: 3, unitPrice: 100, taxCategory: 'S', amount: 300, taxRate: 15, taxAmount: 45, amountWithTax: 345 },
        { description: '1 × 50', quantity: 1, unitPrice: 50, taxCategory: 'Z', exemptionReasonCode: 'VATEX-SA-32', exemptionReason: 'Export of goods', amount: 50, taxRate: 0, taxAmount: 0, amountWithTax: 50 },
      ]);
      expect(inv.taxBreakdown).toEqual([
        { taxCategory: 'S', taxRate: 15, taxableAmount: 300, taxAmount: 45 },
        { taxCategory: 'Z', taxRate: 0, taxableAmount: 50, taxAmount: 0, exemptionReasonCode: 'VATEX-SA-32', exemptionReason: 'Export of goods' },
      ]);
      expect(inv).toMatchObject({ currency: 'SAR', subtotal: 350, taxTotal: 45, total: 395, amountPaid: 0, balanceDue: 395 });
    });

    it('rounds 0.333 × 10.00 to a net of 3.33 and its VAT 0.4995 up to 0.50: total 3.83', async () => {
      const inv = await draft(customer.id, [line(0.333, 10)]);
      expect(inv.lines[0]).toMatchObject({ amount: 3.33, taxAmount: 0.5, amountWithTax: 3.83 });
      expect(inv).toMatchObject({ subtotal: 3.33, taxTotal: 0.5, total: 3.83 });
    });

    it("rounds VAT once per category (BR-CO-17): three lines of 10.10 have VAT 4.55 (30.30 × 15 % = 4.545), though each line's is 1.52", async () => {
      const inv = await draft(customer.id, [line(1, 10.1), line(1, 10.1), line(1, 10.1)]);
      expect(inv.lines.map((l: { taxAmount: number }) => l.taxAmount)).toEqual([1.52, 1.52, 1.52]);
      expect(inv.taxBreakdown).toEqual([{ taxCategory: 'S', taxRate: 15, taxableAmount: 30.3, taxAmount: 4.55 }]);
      expect(inv).toMatchObject({ subtotal: 30.3, taxTotal: 4.55, total: 34.85 });
    });

    it('keeps exempt, zero-rated and out-of-scope lines apart in the breakdown, each with its reason', async () => {
      const inv = await draft(customer.id, [
        line(2, 1000, { taxCategory: 'E', exemptionReasonCode: 'VATEX-SA-29' }),
        line(1, 200, { taxCategory: 'Z', exemptionReasonCode: 'VATEX-SA-35' }),
        line(1, 80, { taxCategory: 'O', exemptionReasonCode: 'VATEX-SA-OOS', exemptionReason: 'Disbursement paid on the customer’s behalf' }),
        line(1, 99.99),
      ]);
      expect(inv.taxBreakdown.map((b: Record<string, unknown>) => [b.taxCategory, b.taxableAmount, b.taxAmount, b.exemptionReasonCode])).toEqual([
        ['E', 2000, 0, 'VATEX-SA-29'], ['Z', 200, 0, 'VATEX-SA-35'], ['O', 80, 0, 'VATEX-SA-OOS'], ['S', 99.99, 15, undefined],
      ]);
      // 99.99 × 15 % = 14.9985 → 15.00
      expect(inv).toMatchObject({ subtotal: 2379.99, taxTotal: 15, total: 2394.99 });
    });

    it('takes the rate the company set: 5 % gives 100.00 → 5.00', async () => {
      const other = await createCompany(host, { name: 'Old rate', currency: 'SAR' });
      expect((await other.as().patch('/api/v1/company', { vatRate: 5 })).statusCode).toBe(200);
      const c = await createCustomer(other.as());
      const inv = await draft(c.id, [line(1, 100)], other.as());
      expect(inv).toMatchObject({ taxTotal: 5, total: 105 });
      expect(inv.lines[0].taxRate).toBe(5);
    });

    it('refuses Z, E and O lines without a reason, an S line with one, a code of another category and OOS without text, in English and Arabic', async () => {
      const body = (lines: Record<string, unknown>[]) => ({ customerId: customer.id, date: '2026-03-01', dueDate: '2026-03-31', lines });
      const cases: [Record<string, unknown>, RegExp][] = [
        [line(1, 10, { taxCategory: 'Z' }), /exemption reason code/],
        [line(1, 10, { exemptionReasonCode: 'VATEX-SA-32' }), /standard-rated/],
        [line(1, 10, { taxCategory: 'E', exemptionReasonCode: 'VATEX-SA-32' }), /belong to its line's category/],
        [line(1, 10, { taxCategory: 'O', exemptionReasonCode: 'VATEX-SA-OOS' }), /out-of-scope/],
      ];
      for (const [l, message] of cases) {
        const err = expectError(await api.post('/api/v1/invoices', body([l])), 400, 'VALIDATION_ERROR');
        expect(err.details).toEqual([expect.objectContaining({ pointer: '/lines', rule: 'validation', message: expect.stringMatching(message) })]);
        const ar = expectError(await api.post('/api/v1/invoices', body([l]), { 'accept-language': 'ar' }), 400, 'VALIDATION_ERROR');
        expect(ar.details[0].message).toMatch(ARABIC);
      }
      // Two exemption reasons in one category: an e-invoice gives each category one.
      const mixed = expectError(await api.post('/api/v1/invoices', body([line(1, 10, { taxCategory: 'Z', exemptionReasonCode: 'VATEX-SA-32' }), line(1, 10, { taxCategory: 'Z', exemptionReasonCode: 'VATEX-SA-35' })])), 400, 'VALIDATION_ERROR');
      expect(mixed.details).toEqual([expect.objectContaining({ pointer: '/lines', rule: 'validation', message: expect.stringMatching(/one exemption reason/) })]);
      // All at once: a line of each kind of mistake.
      const all = expectError(await api.post('/api/v1/invoices', body(cases.map(([l]) => l))), 400, 'VALIDATION_ERROR');
      expect(all.details).toHaveLength(4);
    });

    it('refuses a customer VAT number that is not 15 digits beginning and ending with 3', async () => {
      const err = expectError(await api.post('/api/v1/customers', { name: 'B2B', vatNumber: '30012345678901', crNumber: '12' }), 400, 'VALIDATION_ERROR');
      expect(err.details.map((d) => d.pointer).sort()).toEqual(['/crNumber', '/vatNumber']);
    });
  });

  describe('issuing', () => {
    it('gives the next number, the counter, a UUID, the time and the kind: standard for a buyer with a VAT number, simplified otherwise', async () => {
      const b2b = (await api.post('/api/v1/customers', { name: 'Jeddah Supplies', vatNumber: '300000000000003', city: 'Jeddah', country: 'SA' })).json().data;
      const b2c = await createCustomer(api, 'Walk-in');
      const first = await send((await draft(b2b.id, [line(1, 100)])).id);
      const second = await send((await draft(b2c.id, [line(1, 100)])).id);
      expect(first).toMatchObject({ state: 'sent', kind: 'standard', total: 115, balanceDue: 115 });
      expect(second).toMatchObject({ state: 'sent', kind: 'simplified', number: first.number + 1, counter: first.counter + 1 });
      expect(first.uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(first.uuid).not.toBe(second.uuid);
      expect(new Date(first.issuedAt).toISOString()).toBe(first.issuedAt);
      // What was answered is what is stored; a draft has no number.
      expect((await api.get(`/api/v1/invoices/${first.id}`)).json().data).toEqual(first);
      expect((await draft(b2c.id, [line(1, 1)])).number).toBeUndefined();
      // invoice.issued carries the number.
      const events = (await api.get('/api/v1/events?topics=invoice.issued')).json();
      expect(JSON.stringify(events)).toContain(first.uuid);
    });

    it('refuses every edit and the delete of an issued invoice with a CONFLICT naming the state, in English and Arabic', async () => {
      const c = await createCustomer(api, 'Locked');
      const inv = await send((await draft(c.id, [line(2, 100)])).id);
      for (const patch of [{ lines: [line(2, 1)] }, { notes: 'changed' }, { dueDate: '2026-12-31' }, { customerId: c.id, date: '2026-01-01' }]) {
        const err = expectError(await api.patch(`/api/v1/invoices/${inv.id}`, patch), 409, 'CONFLICT');
        expect(err.details[0]).toMatchObject({ reason: 'locked', state: 'sent' });
        expect(err.message).toContain('"sent"');
      }
      const ar = expectError(await api.patch(`/api/v1/invoices/${inv.id}`, { notes: 'x' }, { 'accept-language': 'ar' }), 409, 'CONFLICT');
      expect(ar.message).toMatch(ARABIC);
      const del = expectError(await co.as('Owner').delete(`/api/v1/invoices/${inv.id}`), 409, 'CONFLICT');
      expect(del.details[0]).toMatchObject({ reason: 'locked', state: 'sent' });
      expect(del.message).toContain('credit or debit note');
      expectError(await api.post(`/api/v1/invoices/${inv.id}/send`, {}), 409, 'CONFLICT');
      expectError(await api.post(`/api/v1/invoices/${inv.id}/void`, {}), 409, 'CONFLICT');
      // Nothing changed.
      expect((await api.get(`/api/v1/invoices/${inv.id}`)).json().data).toEqual(inv);
    });

    it('numbers 50 concurrent sends 1…50 with no gap and no repeat; a draft deleted or a send refused takes no number', async () => {
      const fresh = await createCompany(host, { name: 'Busy shop', currency: 'SAR' });
      const c = fresh.as();
      const cus = await createCustomer(c, 'Queue');
      const drafts = [];
      for (let i = 0; i < 52; i++) drafts.push(await draft(cus.id, [line(1, 10 + i)], c));
      // A deleted draft and a refused send take nothing.
      expect((await c.delete(`/api/v1/invoices/${drafts[50].id}`)).statusCode).toBe(200);
      expect((await c.post(`/api/v1/invoices/${drafts[51].id}/void`, {})).statusCode).toBe(200);
      expectError(await c.post(`/api/v1/invoices/${drafts[51].id}/send`, {}), 409, 'CONFLICT');
      const sent = await Promise.all(drafts.slice(0, 50).map((d) => c.post(`/api/v1/invoices/${d.id}/send`, {})));
      for (const r of sent) expect(r.statusCode, r.body).toBe(200);
      const numbers = sent.map((r) => r.json().data.number).sort((a, b) => a - b);
      expect(numbers).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
      const counters = sent.map((r) => r.json().data.counter).sort((a, b) => a - b);
      expect(counters).toEqual(numbers);
      expect(new Set(sent.map((r) => r.json().data.uuid)).size).toBe(50);
      // The stored invoices say the same.
      const stored = (await c.get('/api/v1/invoices?state=sent&pageSize=100')).json();
      expect(stored.total).toBe(50);
      expect(stored.data.map((d: { number: number }) => d.number).sort((a: number, b: number) => a - b)).toEqual(numbers);
    });
  });

  describe('credit notes, debit notes and payments', () => {
    let customer: { id: string };
    let inv: Record<string, any>;
    const get = async (id: string) => (await api.get(`/api/v1/invoices/${id}`)).json().data;
    const pay = (id: string, amount: number, c: Client = api, headers?: Record<string, string>) => c.post(`/api/v1/invoices/${id}/payments`, { amount, date: '2026-03-10', method: 'bankTransfer' }, headers);
    const balance = async () => (await api.get(`/api/v1/customers/${customer.id}/balance`)).json().data;

    beforeAll(async () => {
      customer = (await api.post('/api/v1/customers', { name: 'Dammam Builders', vatNumber: '399999999900003' })).json().data;
      // 10 × 115.00 S = 1,150.00 + 172.50 VAT = 1,322.50
      inv = await send((await draft(customer.id, [line(10, 115)])).id);
      expect(inv).toMatchObject({ total: 1322.5, balanceDue: 1322.5 });
    });

    it('a credit note for 2 returned units: 230.00 + 34.50 VAT, its own series, the invoice and its kind referenced; balance due 1,088.00', async () => {
      const res = await api.post('/api/v1/credit-notes', { invoiceId: inv.id, reason: 'Two units returned damaged', lines: [line(2, 115)] });
      expect(res.statusCode, res.body).toBe(201);
      const note = res.json().data;
      expect(note).toMatchObject({
        state: 'issued', invoiceId: inv.id, customerId: customer.id, kind: 'standard', currency: 'SAR', number: 1,
        subtotal: 230, taxTotal: 34.5, total: 264.5, taxBreakdown: [{ taxCategory: 'S', taxRate: 15, taxableAmount: 230, taxAmount: 34.5 }],
      });
      expect(note.counter).toBeGreaterThan(inv.counter);
      expect(note.uuid).toMatch(/^[0-9a-f-]{36}$/);
      expect(await get(inv.id)).toMatchObject({ state: 'sent', creditedTotal: 264.5, balanceDue: 1058 });
      // A note is issued as it is made: it changes no more.
      expectError(await api.patch(`/api/v1/credit-notes/${note.id}`, { reason: 'x' }), 409, 'CONFLICT');
      expectError(await co.as('Owner').delete(`/api/v1/credit-notes/${note.id}`), 409, 'CONFLICT');
    });

    it('refuses a credit note above what is left to credit, with the amounts, in English and Arabic; nothing is taken', async () => {
      // Left: 1,322.50 − 264.50 = 1,058.00; 8 × 115.00 + 15 % = 1,058.00 passes, one halala more does not.
      const over = await api.post('/api/v1/credit-notes', { invoiceId: inv.id, reason: 'Too much', lines: [line(8, 115), line(1, 0.01, { taxCategory: 'E', exemptionReasonCode: 'VATEX-SA-29' })] });
      const err = expectError(over, 409, 'CONFLICT');
      expect(err.details[0]).toMatchObject({ reason: 'over_credit', amount: 1058.01, left: 1058, currency: 'SAR' });
      expect(err.message).toContain('1058.01');
      const ar = expectError(await api.post('/api/v1/credit-notes', { invoiceId: inv.id, reason: 'Too much', lines: [line(9, 115)] }, { 'accept-language': 'ar' }), 409, 'CONFLICT');
      expect(ar.message).toMatch(ARABIC);
      expect(await get(inv.id)).toMatchObject({ creditedTotal: 264.5, balanceDue: 1058 });
      // The refused notes gave their numbers back: the next note is number 2.
      const debit = await api.post('/api/v1/debit-notes', { invoiceId: inv.id, reason: 'Delivery charge omitted', lines: [line(1, 100)] });
      expect(debit.statusCode, debit.body).toBe(201);
      expect(debit.json().data).toMatchObject({ number: 1, total: 115 });
      expect(await get(inv.id)).toMatchObject({ debitedTotal: 115, balanceDue: 1173 });
      const credit = await api.post('/api/v1/credit-notes', { invoiceId: inv.id, reason: 'Volume discount', lines: [line(1, 10)] });
      expect(credit.json().data).toMatchObject({ number: 2, total: 11.5 });
      expect(await get(inv.id)).toMatchObject({ creditedTotal: 276, balanceDue: 1161.5 });
    });

    it('partial payments move the balance due exactly; an overpayment is refused with the amounts; the last payment makes it paid', async () => {
      const first = await pay(inv.id, 500.25);
      expect(first.statusCode, first.body).toBe(201);
      expect(first.json().data).toMatchObject({ invoiceId: inv.id, amount: 500.25, method: 'bankTransfer', customerId: customer.id, state: 'recorded' });
      expect(await get(inv.id)).toMatchObject({ state: 'sent', amountPaid: 500.25, balanceDue: 661.25 });
      expect(await balance()).toEqual({ customerId: customer.id, currency: 'SAR', outstanding: 661.25, invoices: 1 });

      const over = expectError(await pay(inv.id, 661.26), 409, 'CONFLICT');
      expect(over.details[0]).toMatchObject({ reason: 'overpayment', amount: 661.26, balance: 661.25, currency: 'SAR' });
      expect(expectError(await pay(inv.id, 700, api, { 'accept-language': 'ar' }), 409, 'CONFLICT').message).toMatch(ARABIC);
      expect(await get(inv.id)).toMatchObject({ amountPaid: 500.25, balanceDue: 661.25 });

      const last = await pay(inv.id, 661.25);
      expect(last.statusCode, last.body).toBe(201);
      expect(last.json().data.number).toBe(first.json().data.number + 1);
      expect(await get(inv.id)).toMatchObject({ state: 'paid', amountPaid: 1161.5, balanceDue: 0 });
      expect(await balance()).toEqual({ customerId: customer.id, currency: 'SAR', outstanding: 0, invoices: 0 });
      expectError(await pay(inv.id, 0.01), 409, 'CONFLICT');
      // Payments are kept as they were recorded.
      expectError(await api.patch(`/api/v1/payments/${first.json().data.id}`, { amount: 1 }), 409, 'CONFLICT');
    });

    it('a debit note on a paid invoice, or a note or payment on a draft, is refused naming its state', async () => {
      const debit = expectError(await api.post('/api/v1/debit-notes', { invoiceId: inv.id, reason: 'Late fee', lines: [line(1, 20)] }), 409, 'CONFLICT');
      expect(debit.details[0]).toMatchObject({ reason: 'paid', state: 'paid' });
      expect(await get(inv.id)).toMatchObject({ state: 'paid', balanceDue: 0 });
      const d = await draft(customer.id, [line(1, 10)]);
      for (const res of [await pay(d.id, 1), await api.post('/api/v1/credit-notes', { invoiceId: d.id, reason: 'x', lines: [line(1, 1)] })]) {
        const err = expectError(res, 409, 'CONFLICT');
        expect(err.details[0]).toMatchObject({ reason: 'not_issued', state: 'draft' });
      }
      expectError(await pay('inv_nothere000000000000', 1), 404, 'NOT_FOUND');
      // A note moves money one way: its total is more than zero.
      const negative = expectError(await api.post('/api/v1/credit-notes', { invoiceId: inv.id, reason: 'x', lines: [line(1, -10)] }), 400, 'VALIDATION_ERROR');
      expect(negative.details).toEqual([expect.objectContaining({ pointer: '/total', rule: 'validation' })]);
      const bad = expectError(await api.post(`/api/v1/invoices/${inv.id}/payments`, { amount: 0, date: '2026-13-01', method: 'barter' }), 400, 'VALIDATION_ERROR');
      expect(bad.details.map((d) => d.pointer).sort()).toEqual(['/date', '/method']);
      expectError(await pay(inv.id, 0), 400, 'VALIDATION_ERROR');
    });

    it('a full credit note settles an unpaid invoice; the Member may not record payments or notes', async () => {
      const c = await createCustomer(api, 'Cancelled order');
      const other = await send((await draft(c.id, [line(3, 33.33)])).id);
      // 99.99 + 15.00 = 114.99
      expect(other.total).toBe(114.99);
      expectError(await pay(other.id, 10, co.as('Member')), 403, 'FORBIDDEN');
      expectError(await co.as('Member').post('/api/v1/credit-notes', { invoiceId: other.id, reason: 'x', lines: [line(1, 1)] }), 403, 'FORBIDDEN');
      const full = await api.post('/api/v1/credit-notes', { invoiceId: other.id, reason: 'Order cancelled', lines: [line(3, 33.33)] });
      expect(full.statusCode, full.body).toBe(201);
      expect(await get(other.id)).toMatchObject({ state: 'paid', creditedTotal: 114.99, balanceDue: 0 });
      const events = JSON.stringify((await api.get('/api/v1/events?topics=invoice.creditNote.issued,invoice.payment.recorded,invoice.paid')).json());
      for (const t of ['invoice.creditNote.issued', 'invoice.payment.recorded', 'invoice.paid']) expect(events).toContain(t);
    });
  });
  describe('e-invoices: the hash chain, the QR, the XML and the PDF', () => {
    it('keeps one unbroken chain through 50 concurrent sends: each PIH is the hash of the document with the counter before', async () => {
      const fresh = await createCompany(host, { name: 'Chain shop', currency: 'SAR' });
      const c = fresh.as();
      expect((await c.patch('/api/v1/company', RIYADH_TRADING)).statusCode).toBe(200);
      const cus = await createCustomer(c, 'Walk-in');
      const drafts = [];
      for (let i = 0; i < 50; i++) drafts.push(await draft(cus.id, [line(1, 10 + i)], c));
      const sent = await Promise.all(drafts.map((d) => c.post(`/api/v1/invoices/${d.id}/send`, {})));
      for (const r of sent) expect(r.statusCode, r.body).toBe(200);
      const chain = sent.map((r) => r.json().data).sort((a, b) => a.counter - b.counter);
      expect(chain.map((d) => d.counter)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
      expect(chain[0].previousHash).toBe(INITIAL_PIH);
      for (let i = 1; i < chain.length; i++) expect(chain[i].previousHash, `counter ${chain[i].counter}`).toBe(chain[i - 1].hash);
      expect(new Set(chain.map((d) => d.hash)).size).toBe(50);
    });

    it('seals each issued document: its PIH is the hash of the one before, the XML rebuilds to its hash, the QR carries tags 1–5, the PDF is served', async () => {
      const b2b = (await api.post('/api/v1/customers', {
        name: 'Jeddah Supplies', legalNameAr: 'توريدات جدة', vatNumber: '300000000000003', crNumber: '4030000000',
        buildingNumber: '2222', street: 'Tahlia Street', district: 'Al Andalus', city: 'Jeddah', postalCode: '23326', country: 'SA',
      })).json().data;
      const first = await send((await draft(b2b.id, [line(1, 100)])).id);
      const second = await send((await draft(b2b.id, [line(2, 50), line(1, 10, { taxCategory: 'Z', exemptionReasonCode: 'VATEX-SA-32' })])).id);
      const note = (await api.post('/api/v1/credit-notes', { invoiceId: second.id, reason: 'Returned', lines: [line(1, 50)] })).json().data;
      expect(second.previousHash).toBe(first.hash);
      expect(note.counter).toBe(second.counter + 1);
      expect(note.previousHash).toBe(second.hash);
      for (const [doc, path] of [[first, 'invoices'], [second, 'invoices'], [note, 'credit-notes']] as const) {
        const xml = await api.get(`/api/v1/${path}/${doc.id}/xml`);
        expect(xml.statusCode, xml.body).toBe(200);
        expect(xml.headers['content-type']).toMatch(/^application\/xml/);
        expect(xml.body).toContain(`<cbc:UUID>${doc.uuid}</cbc:UUID>`);
        expect(xml.body).toContain(`<cbc:UUID>${doc.counter}</cbc:UUID>`);
        expect(invoiceHash(xml.body)).toBe(doc.hash);
        const pdf = await api.get(`/api/v1/${path}/${doc.id}/pdf`);
        expect(pdf.statusCode).toBe(200);
        expect(pdf.headers['content-type']).toMatch(/^application\/pdf/);
        expect(pdf.rawPayload.subarray(0, 5).toString()).toBe('%PDF-');
      }
      expect(parseQr(first.qr)).toMatchObject({ sellerName: `${RIYADH_TRADING.legalName.ar} | ${RIYADH_TRADING.legalName.en}`, vatNumber: RIYADH_TRADING.vatNumber, total: '115.00', vatTotal: '15.00' });
      // A draft has no e-invoice yet.
      const d = await draft(b2b.id, [line(1, 1)]);
      expectError(await api.get(`/api/v1/invoices/${d.id}/xml`), 409, 'CONFLICT');
    });
  });
});

describe('diwan companies update', () => {
  it("sets the seller's profile as the API does, and lists every problem of a bad one", async () => {
    const db = await processDatabase();
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'diwan-company-cli-'));
    const cli = (...args: string[]) => runCli(args, { env: { ...process.env, DATA_DIR: dataDir, DIWAN_LANG: '', ...db.env } });
    try {
      expect((await cli('migrate', '--json')).code).toBe(0);
      const created = await cli('companies', 'create', '--name', 'Riyadh Trading', '--currency', 'SAR', '--apps', 'none', '--json');
      expect(created.code, created.stderr).toBe(0);
      const id = created.json.id;
      const address = JSON.stringify(RIYADH_TRADING.address);
      const ok = await cli('companies', 'update', '--company', id, '--legal-name-en', RIYADH_TRADING.legalName.en, '--legal-name-ar', RIYADH_TRADING.legalName.ar,
        '--vat-number', RIYADH_TRADING.vatNumber, '--cr-number', RIYADH_TRADING.crNumber, '--address', address, '--json');
      expect(ok.code, ok.stderr).toBe(0);
      expect(ok.json).toMatchObject({ id, name: 'Riyadh Trading', currency: 'SAR', vatRate: 15, ...RIYADH_TRADING });
      const bad = await cli('companies', 'update', '--company', id, '--vat-number', '12345678901233', '--vat-rate', '150', '--json');
      expect(bad.code).not.toBe(0);
      const err = JSON.parse(bad.stdout || bad.stderr).error;
      expect(err.code).toBe('VALIDATION_ERROR');
      expect(err.details.map((d: { pointer: string }) => d.pointer)).toEqual(['/vatRate']);
      const forms = await cli('companies', 'update', '--company', id, '--vat-number', '12345678901233', '--json');
      expect(JSON.parse(forms.stdout || forms.stderr).error.details.map((d: { rule: string }) => d.rule).sort()).toEqual(['firstDigit', 'length']);
      // Nothing of the refused changes was kept.
      const listed = await cli('companies', 'list', '--json');
      expect(listed.json.find((c: { id: string }) => c.id === id)).toMatchObject({ vatNumber: RIYADH_TRADING.vatNumber, vatRate: 15 });
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
      await db.drop();
    }
  }, 120_000);
});
