// The rules of the point-of-sale, hospitality, rental, property, subscription, pharmacy, time,
// project, logistics, planning, hiring and quality apps (and the smaller ones), driven through
// the API alone with the numbers each business gives: what a document computes, what it refuses
// with which error at which pointer, and what a transition changes. One host with just the apps
// the file needs; on SQLite, and again on PostgreSQL (vitest.config.ts's `onPostgres`).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Host } from '../core/host.ts';
import { firstPartySources } from '../core/apps/app-source.ts';
import { buildHost } from './db.ts';
import { ARABIC, createCompany, createCustomer, expectError, type Client, type Res } from './helpers.ts';

const APPS = [
  'invoicing', 'employees', 'ecommerce', 'emr', 'pos', 'restaurant', 'rental', 'property', 'subscriptions', 'pharmacy',
];

let host: Host;
let api: Client;
let customerId: string;
let employeeId: string;
let productId: string;

beforeAll(async () => {
  host = await buildHost({ sources: firstPartySources().filter((s) => APPS.includes(s.manifest.id)), config: { rateLimitPerMinute: 0 } });
  api = (await createCompany(host, { currency: 'SAR', apps: APPS })).as();
  customerId = (await createCustomer(api, 'Al-Noor Trading')).id;
  employeeId = (await created(api.post('/api/v1/employees', { fullName: 'Sara Al-Harbi', jobTitle: 'Cashier', joinDate: '2024-01-01' }))).id;
  productId = (await created(api.post('/api/v1/products', { name: 'Espresso machine', sku: 'ESP-1', kind: 'goods', price: 100, active: true }))).id;
});
afterAll(() => host.close());

async function created(res: Promise<Res>): Promise<Record<string, any> & { id: string }> {
  const r = await res;
  expect(r.statusCode, r.body).toBe(201);
  return r.json().data;
}
async function ok(res: Promise<Res>): Promise<Record<string, any>> {
  const r = await res;
  expect(r.statusCode, r.body).toBe(200);
  return r.json().data;
}
/** The pointers of a VALIDATION_ERROR, in order. */
async function refused(res: Promise<Res>, lang = 'en'): Promise<{ pointers: string[]; messages: string[] }> {
  const e = expectError(await res, 400, 'VALIDATION_ERROR');
  if (lang === 'ar') expect(e.message).toMatch(ARABIC);
  return { pointers: e.details.map((d) => d.pointer as string), messages: e.details.map((d) => d.message as string) };
}
async function conflict(res: Promise<Res>): Promise<string> {
  return expectError(await res, 409, 'CONFLICT').message;
}

describe('pos', () => {
  let sessionId: string;
  beforeAll(async () => {
    const registerId = (await created(api.post('/api/v1/pos-registers', { name: 'Till 1', mode: 'shop' }))).id;
    sessionId = (await created(api.post('/api/v1/pos-sessions', { registerId, cashierId: employeeId, openingFloat: 500, expectedCash: 1_745.5 }))).id;
  });
  const sale = (over: Record<string, unknown> = {}) => ({
    kind: 'sale', receiptNumber: 'R-0001', sessionId, paymentMethod: 'cash',
    lines: [{ productId, quantity: 3, unitPrice: 100 }, { productId, quantity: 2, unitPrice: 12.5, discount: 5 }], ...over,
  });

  it('a receipt of 3 × 100 and 2 × 12.50 less 5: subtotal 320, VAT 48, total 368; then it is final', async () => {
    const r = await created(api.post('/api/v1/pos-orders', sale()));
    expect(r).toMatchObject({ subtotal: 320, vatAmount: 48, total: 368, state: 'paid' });
    expect(await conflict(api.patch(`/api/v1/pos-orders/${r.id}`, { paymentMethod: 'mada' }))).toBeTruthy();
    await conflict(api.delete(`/api/v1/pos-orders/${r.id}`));
    // VAT to the halala: 1 × 0.99 → 0.15 (14.85 halala rounds half away from zero).
    expect(await created(api.post('/api/v1/pos-orders', sale({ lines: [{ productId, quantity: 1, unitPrice: 0.99 }] })))).toMatchObject({ vatAmount: 0.15, total: 1.14 });
  });

  it('refuses a typed total, a discount over its line, a zero quantity and a refund with no sale or reason', async () => {
    expect((await refused(api.post('/api/v1/pos-orders', sale({ total: 1 })))).pointers).toEqual(['/total']);
    const bad = await refused(api.post('/api/v1/pos-orders', sale({ kind: 'refund', lines: [{ productId, quantity: 0, unitPrice: 10, discount: 11 }] })));
    expect(bad.pointers).toEqual(['/lines', '/lines', '/originalSaleId', '/reason']);
    expect(bad.messages[1]).toBe("A discount cannot exceed its line's amount");
    const original = await created(api.post('/api/v1/pos-orders', sale()));
    const refund = await created(api.post('/api/v1/pos-orders', sale({ kind: 'refund', originalSaleId: original.id, reason: 'Damaged box', lines: [{ productId, quantity: 1, unitPrice: 100 }] })));
    expect(refund.total).toBe(115);
  });

  it('closes the session with the cash counted: 1,740.25 against 1,745.50 expected is 5.25 short', async () => {
    expect((await refused(api.post(`/api/v1/pos-sessions/${sessionId}/close`, {}))).pointers).toEqual(['/countedCash']);
    const closed = await ok(api.post(`/api/v1/pos-sessions/${sessionId}/close`, { countedCash: 1_740.25 }));
    expect(closed).toMatchObject({ state: 'closed', countedCash: 1_740.25, difference: -5.25 });
    await conflict(api.patch(`/api/v1/pos-sessions/${sessionId}`, { notes: 'recount' }));
  });
});
