// The rules of the point-of-sale, hospitality, rental, property, subscription, pharmacy, time,
// project, logistics, planning, hiring and quality apps (and the smaller ones), driven through
// the API alone with the numbers each business gives: what a document computes, what it refuses
// with which error at which pointer, and what a transition changes. One host with just the apps
// the file needs; on SQLite, and again on PostgreSQL (vitest.config.ts's `onPostgres`).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Host } from '../core/host.ts';
import { firstPartySources } from '../core/apps/app-source.ts';
import { ManualClock } from '../core/kernel/clock.ts';
import { buildHost } from './db.ts';
import { ARABIC, createCompany, createCustomer, expectError, invoiceBody, type Client, type Res, type TestCompany, created, ok } from './helpers.ts';

const APPS = [
  'invoicing', 'employees', 'ecommerce', 'emr', 'pos', 'restaurant', 'rental', 'property', 'subscriptions', 'pharmacy',
  'projects', 'timesheets', 'shipping', 'planning', 'recruitment', 'quality', 'manufacturing', 'payment-links', 'plm', 'referrals',
  'training', 'valet', 'voip', 'storefronts', 'report-builder', 'security-ops', 'sign', 'sms-marketing', 'social-marketing',
  'spreadsheet', 'surveys', 'website', 'whatsapp',
];

let host: Host;
let company: TestCompany;
let api: Client;
let customerId: string;
let employeeId: string;
let productId: string;

beforeAll(async () => {
  // The host's date is 7 March 2026 (rules that read `today`: a rental returned two days late).
  host = await buildHost({ sources: firstPartySources().filter((s) => APPS.includes(s.manifest.id)), clock: new ManualClock(Date.UTC(2026, 2, 7, 10)), config: { rateLimitPerMinute: 0 } });
  company = await createCompany(host, { currency: 'SAR', apps: APPS });
  api = company.as();
  customerId = (await createCustomer(api, 'Al-Noor Trading')).id;
  employeeId = (await created(api.post('/api/v1/employees', { fullName: 'Sara Al-Harbi', jobTitle: 'Cashier', joinDate: '2024-01-01' }))).id;
  productId = (await created(api.post('/api/v1/products', { name: 'Espresso machine', sku: 'ESP-1', kind: 'goods', price: 100, active: true, stockQuantity: 10 }))).id;
});
afterAll(() => host.close());

/** The pointers of a VALIDATION_ERROR, in order. */
async function refused(res: Promise<Res>, lang = 'en'): Promise<{ pointers: string[]; messages: string[] }> {
  const e = expectError(await res, 400, 'VALIDATION_ERROR');
  if (lang === 'ar') expect(e.message).toMatch(ARABIC);
  return { pointers: e.details.map((d) => d.pointer as string), messages: e.details.map((d) => d.message as string) };
}
async function conflict(res: Promise<Res>): Promise<string> {
  return expectError(await res, 409, 'CONFLICT').message;
}

/** A CONFLICT's first detail (its reason, the effect or parent it names). */
async function conflictDetail(res: Promise<Res>): Promise<Record<string, unknown>> {
  return expectError(await res, 409, 'CONFLICT').details[0];
}

describe('pos', () => {
  let sessionId: string;
  beforeAll(async () => {
    const registerId = (await created(api.post('/api/v1/pos-registers', { name: 'Till 1', mode: 'shop' }))).id;
    sessionId = (await created(api.post('/api/v1/pos-sessions', { registerId, cashierId: employeeId, openingFloat: 500 }))).id;
  });
  const sale = (over: Record<string, unknown> = {}) => ({
    kind: 'sale', sessionId, paymentMethod: 'cash',
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

  it('numbers receipts from one series; sales, refunds and cash moves make the drawer; a refund is of a sale and no larger; a closed session takes nothing', async () => {
    const registerId = (await created(api.post('/api/v1/pos-registers', { name: 'Till 2', mode: 'shop' }))).id;
    const s = await created(api.post('/api/v1/pos-sessions', { registerId, cashierId: employeeId, openingFloat: 300 }));
    expect(s).toMatchObject({ saleCount: 0, salesTotal: 0, expectedCash: 300 });
    const a = await created(api.post('/api/v1/pos-orders', sale({ sessionId: s.id })));
    const b = await created(api.post('/api/v1/pos-orders', sale({ sessionId: s.id, paymentMethod: 'mada', lines: [{ productId, quantity: 2, unitPrice: 100 }] })));
    const year = new Date().getUTCFullYear();
    expect(a.receiptNumber).toMatch(new RegExp(`^R-${year}-\\d{6}$`));
    expect(Number(b.receiptNumber.slice(-6))).toBe(Number(a.receiptNumber.slice(-6)) + 1);
    expect((await refused(api.post('/api/v1/pos-orders', sale({ sessionId: s.id, receiptNumber: 'R-1' })))).pointers).toEqual(['/receiptNumber']);

    // The 230 card sale cannot be refunded 345; a refund is not refunded again.
    const refund = (over: Record<string, unknown>) => sale({ sessionId: s.id, kind: 'refund', reason: 'Returned', ...over });
    expect(await refused(api.post('/api/v1/pos-orders', refund({ originalSaleId: b.id, lines: [{ productId, quantity: 3, unitPrice: 100 }] })))).toEqual({ pointers: ['/total'], messages: ['A refund cannot be larger than its sale'] });
    const r = await created(api.post('/api/v1/pos-orders', refund({ originalSaleId: a.id, lines: [{ productId, quantity: 1, unitPrice: 100 }] })));
    expect((await refused(api.post('/api/v1/pos-orders', refund({ originalSaleId: r.id, lines: [{ productId, quantity: 1, unitPrice: 1 }] })))).pointers).toEqual(['/originalSaleId']);

    await created(api.post('/api/v1/pos-cash-moves', { sessionId: s.id, direction: 'in', amount: 200, reason: 'float_top_up' }));
    await created(api.post('/api/v1/pos-cash-moves', { sessionId: s.id, direction: 'out', amount: 450, reason: 'bank_drop' }));
    // 300 float + 368 cash sale − 115 cash refund + 200 in − 450 out = 303; net sales 368 + 230 − 115 = 483.
    expect(await ok(api.get(`/api/v1/pos-sessions/${s.id}`))).toMatchObject({ saleCount: 2, salesTotal: 483, cashSales: 253, cashMoves: -250, expectedCash: 303 });
    // The drawer cannot give out more than it holds.
    expect(await conflictDetail(api.post('/api/v1/pos-cash-moves', { sessionId: s.id, direction: 'out', amount: 303.01, reason: 'bank_drop' }))).toMatchObject({ reason: 'parentRule' });
    expect(await ok(api.post(`/api/v1/pos-sessions/${s.id}/close`, { countedCash: 303 }))).toMatchObject({ difference: 0 });
    expect(await conflictDetail(api.post('/api/v1/pos-orders', sale({ sessionId: s.id })))).toMatchObject({ reason: 'parentLocked', state: 'closed' });
  });

  it('closes the session with the cash counted: 1,117.00 against 1,122.14 expected is 5.14 short', async () => {
    // 500 of float + cash sales 368 + 1.14 + 368 − the 115 refunded in cash.
    expect(await ok(api.get(`/api/v1/pos-sessions/${sessionId}`))).toMatchObject({ saleCount: 3, salesTotal: 622.14, cashSales: 622.14, expectedCash: 1_122.14 });
    expect((await refused(api.post(`/api/v1/pos-sessions/${sessionId}/close`, {}))).pointers).toEqual(['/countedCash']);
    const closed = await ok(api.post(`/api/v1/pos-sessions/${sessionId}/close`, { countedCash: 1_117 }));
    expect(closed).toMatchObject({ state: 'closed', countedCash: 1_117, difference: -5.14 });
    await conflict(api.patch(`/api/v1/pos-sessions/${sessionId}`, { notes: 'recount' }));
  });
});

describe('restaurant', () => {
  it('a dine-in bill of 230 (VAT-inclusive) holds 30 of VAT; paying takes the method, then the bill is closed', async () => {
    const table = await created(api.post('/api/v1/restaurant-tables', { tableNo: 'T4', seats: 4 }));
    // Opening a dine-in bill seats its guests: six at a table of four is refused.
    expect(await conflict(api.post('/api/v1/restaurant-orders', { orderType: 'dine_in', tableId: table.id, covers: 6 }))).toContain('More guests than the table seats');

    expect((await refused(api.post('/api/v1/restaurant-orders', { orderType: 'dine_in' }))).pointers).toEqual(['/tableId', '/covers']);
    expect((await refused(api.post('/api/v1/restaurant-orders', { orderType: 'delivery' }))).pointers).toEqual(['/deliveryAddress']);
    const order = await created(api.post('/api/v1/restaurant-orders', { orderType: 'dine_in', tableId: table.id, covers: 3 }));
    expect(await ok(api.get(`/api/v1/restaurant-tables/${table.id}`))).toMatchObject({ state: 'occupied', covers: 3 });
    const line = await created(api.post('/api/v1/restaurant-order-lines', { orderId: order.id, itemName: 'Kabsa', quantity: 3, unitPrice: 45.5 }));
    expect(line.amount).toBe(136.5);
    await created(api.post('/api/v1/restaurant-order-lines', { orderId: order.id, itemName: 'Mandi', quantity: 2, unitPrice: 46.75 }));
    expect(await ok(api.get(`/api/v1/restaurant-orders/${order.id}`))).toMatchObject({ total: 230, vatIncluded: 30 });

    expect((await refused(api.post(`/api/v1/restaurant-orders/${order.id}/pay`, {}))).pointers).toEqual(['/paymentMethod']);
    expect(await ok(api.post(`/api/v1/restaurant-orders/${order.id}/pay`, { paymentMethod: 'mada' }))).toMatchObject({ state: 'paid', paymentMethod: 'mada' });
    await conflict(api.patch(`/api/v1/restaurant-orders/${order.id}`, { customerName: 'Late edit' }));
    // Paying freed the table.
    expect(await ok(api.get(`/api/v1/restaurant-tables/${table.id}`))).toMatchObject({ state: 'free', covers: 0 });
  });

  it('a booking is held on a table that seats the party and seating it occupies the table; a busy table takes no second bill; a ticket counts its lines', async () => {
    const two = await created(api.post('/api/v1/restaurant-tables', { tableNo: 'T2', seats: 2 }));
    const six = await created(api.post('/api/v1/restaurant-tables', { tableNo: 'T6', seats: 6 }));
    const booking = { guestName: 'Nora', phone: '0551112222', partySize: 5, date: '2026-03-02', time: '21:00' };
    expect(await refused(api.post('/api/v1/table-reservations', { ...booking, tableId: two.id }))).toEqual({ pointers: ['/tableId'], messages: ['The table is too small for the party'] });
    const r = await created(api.post('/api/v1/table-reservations', { ...booking, tableId: six.id }));
    await ok(api.post(`/api/v1/table-reservations/${r.id}/markSeated`));
    expect(await ok(api.get(`/api/v1/restaurant-tables/${six.id}`))).toMatchObject({ state: 'occupied', covers: 5 });
    expect(await conflictDetail(api.post('/api/v1/restaurant-orders', { orderType: 'dine_in', tableId: six.id, covers: 2 }))).toMatchObject({ effectOn: 'tableId' });
    await ok(api.post(`/api/v1/restaurant-tables/${six.id}/clear`));
    const o = await created(api.post('/api/v1/restaurant-orders', { orderType: 'dine_in', tableId: six.id, covers: 4 }));
    await ok(api.post(`/api/v1/restaurant-orders/${o.id}/cancel`, { reason: 'Guests left' }));
    expect((await ok(api.get(`/api/v1/restaurant-tables/${six.id}`))).state).toBe('free');

    // A bill opened on the wrong table and deleted frees it; a takeaway bill deleted touches no table.
    const wrong = await created(api.post('/api/v1/restaurant-orders', { orderType: 'dine_in', tableId: six.id, covers: 2 }));
    expect((await ok(api.get(`/api/v1/restaurant-tables/${six.id}`))).state).toBe('occupied');
    expect((await api.delete(`/api/v1/restaurant-orders/${wrong.id}`)).statusCode).toBe(200);
    expect(await ok(api.get(`/api/v1/restaurant-tables/${six.id}`))).toMatchObject({ state: 'free', covers: 0 });
    expect((await api.delete(`/api/v1/restaurant-orders/${(await created(api.post('/api/v1/restaurant-orders', { orderType: 'takeaway' }))).id}`)).statusCode).toBe(200);

    const ticket = await created(api.post('/api/v1/kitchen-tickets', { orderId: o.id, station: 'grill' }));
    expect(ticket.lineCount).toBe(0);
    const t2 = await created(api.post('/api/v1/restaurant-orders', { orderType: 'takeaway' }));
    const k = await created(api.post('/api/v1/kitchen-tickets', { orderId: t2.id, station: 'grill' }));
    for (const itemName of ['Shish tawook', 'Kofta']) await created(api.post('/api/v1/restaurant-order-lines', { orderId: t2.id, ticketId: k.id, itemName, quantity: 1, unitPrice: 30 }));
    expect(await ok(api.post(`/api/v1/kitchen-tickets/${k.id}/bump`))).toMatchObject({ state: 'done', lineCount: 2 });
    expect(await conflictDetail(api.post('/api/v1/restaurant-order-lines', { orderId: t2.id, ticketId: k.id, itemName: 'Late', quantity: 1, unitPrice: 5 }))).toMatchObject({ reason: 'parentLocked' });
    // The cancelled bill takes no more lines.
    expect(await conflictDetail(api.post('/api/v1/restaurant-order-lines', { orderId: o.id, itemName: 'Tea', quantity: 1, unitPrice: 5 }))).toMatchObject({ reason: 'parentLocked', state: 'cancelled' });
  });

  it('a void is a manager\'s, with its reason; a served item stays', async () => {
    const order = await created(api.post('/api/v1/restaurant-orders', { orderType: 'takeaway' }));
    const line = await created(api.post('/api/v1/restaurant-order-lines', { orderId: order.id, itemName: 'Falafel', quantity: 2, unitPrice: 10 }));
    expectError(await company.as('Member').post(`/api/v1/restaurant-order-lines/${line.id}/void`, { reason: 'wrong_item' }), 403, 'FORBIDDEN');
    expect(await ok(api.post(`/api/v1/restaurant-order-lines/${line.id}/void`, { reason: 'wrong_item' }))).toMatchObject({ state: 'voided', voidReason: 'wrong_item' });
    expect((await ok(api.get(`/api/v1/restaurant-orders/${order.id}`))).total).toBe(0);
    expect((await refused(api.post(`/api/v1/restaurant-orders/${order.id}/cancel`, {}))).pointers).toEqual(['/reason']);
    expect(await ok(api.post(`/api/v1/restaurant-orders/${order.id}/cancel`, { reason: 'Guest left' }))).toMatchObject({ state: 'cancelled', cancelReason: 'Guest left' });
    expect(await conflict(api.post(`/api/v1/restaurant-orders/${order.id}/pay`, { paymentMethod: 'cash' }))).toBeTruthy();
  });

  it('a booking at 25:00 is refused; a cancellation says who and why', async () => {
    const booking = { guestName: 'Fahad', phone: '0500000000', partySize: 4, date: '2026-03-01', time: '20:30' };
    expect((await refused(api.post('/api/v1/table-reservations', { ...booking, time: '25:00' }))).pointers).toEqual(['/time']);
    const r = await created(api.post('/api/v1/table-reservations', booking));
    expect(await ok(api.post(`/api/v1/table-reservations/${r.id}/cancel`, { cancelledBy: 'guest', reason: 'Travel' }))).toMatchObject({ state: 'cancelled', cancelledBy: 'guest', cancelReason: 'Travel' });
  });
});

describe('rental', () => {
  const agreement = (over: Record<string, unknown> = {}) => ({
    customerId, pickupDate: '2026-03-01', returnDate: '2026-03-05',
    lines: [{ productId, quantity: 2, dailyRate: 150 }, { productId, quantity: 1, dailyRate: 80.25 }], ...over,
  });

  it('4 days of 2 × 150 and 1 × 80.25: 1,521.00 of rent, 228.15 VAT, 1,749.15; a same-day rental is a day', async () => {
    const a = await created(api.post('/api/v1/rental-agreements', agreement()));
    expect(a).toMatchObject({ rentalDays: 4, rentalAmount: 1_521, vatAmount: 228.15, total: 1_749.15 });
    // Numbered from the series of the pickup's year; a refused agreement uses no number.
    expect(a.agreementNumber).toBe('RA-2026-00001');
    expect((await refused(api.post('/api/v1/rental-agreements', agreement({ agreementNumber: 'RA-9' })))).pointers).toEqual(['/agreementNumber']);
    expect(await created(api.post('/api/v1/rental-agreements', agreement({ returnDate: '2026-03-01' })))).toMatchObject({ rentalDays: 1, rentalAmount: 380.25 });
    expect(await refused(api.post('/api/v1/rental-agreements', agreement({ returnDate: '2026-02-28' }), { 'accept-language': 'ar' }), 'ar')).toEqual({ pointers: ['/returnDate'], messages: ['لا يجوز أن يسبق الإرجاع الاستلام'] });
    expect((await created(api.post('/api/v1/rental-agreements', agreement({ pickupDate: '2027-01-02', returnDate: '2027-01-03' })))).agreementNumber).toBe('RA-2027-00001');
    expect((await created(api.post('/api/v1/rental-agreements', agreement()))).agreementNumber).toBe('RA-2026-00003');
  });

  it('a damaged return must be charged; the charge enters the total; then the agreement is locked', async () => {
    const a = await created(api.post('/api/v1/rental-agreements', agreement()));
    await ok(api.post(`/api/v1/rental-agreements/${a.id}/reserve`));
    await ok(api.post(`/api/v1/rental-agreements/${a.id}/pickUp`));
    await conflict(api.patch(`/api/v1/rental-agreements/${a.id}`, { returnDate: '2026-03-04', lines: [{ productId, quantity: 1, dailyRate: 1 }] }));
    expect(await conflict(api.post(`/api/v1/rental-agreements/${a.id}/markReturned`, { returnCondition: 'damaged' }))).toMatch(/Charge the damage/);
    const back = await ok(api.post(`/api/v1/rental-agreements/${a.id}/markReturned`, { returnCondition: 'damaged', lateHours: 5, extraCharges: 200 }));
    // Due back on 5 March, recorded on the 7th: two days late.
    expect(back).toMatchObject({ state: 'returned', extraCharges: 200, lateHours: 5, returnedOn: '2026-03-07', lateDays: 2, vatAmount: 258.15, total: 1_979.15 });
    await conflict(api.patch(`/api/v1/rental-agreements/${a.id}`, { deposit: 0 }));
  });

  it('a cancellation takes its reason and fee', async () => {
    const a = await created(api.post('/api/v1/rental-agreements', agreement()));
    expect(await ok(api.post(`/api/v1/rental-agreements/${a.id}/cancel`, { reason: 'Event postponed', fee: 75 }))).toMatchObject({ state: 'cancelled', cancelReason: 'Event postponed', cancellationFee: 75 });
  });
});

describe('property', () => {
  let unitId: string;
  let buildingId: string;
  beforeAll(async () => {
    buildingId = (await created(api.post('/api/v1/buildings', { name: 'Al-Olaya Tower', city: 'Riyadh' }))).id;
    unitId = (await created(api.post('/api/v1/property-units', { buildingId, unitRef: 'A-101', unitType: 'apartment', askingRent: 60_000 }))).id;
  });
  const lease = (over: Record<string, unknown> = {}) => ({ unitId, tenantId: customerId, startDate: '2026-01-01', endDate: '2026-12-31', annualRent: 60_000, paymentFrequency: 'quarterly', ...over });

  it('a year at 60,000 paid quarterly: 365 days, 60,000 for the term, instalments of 15,000; six months pro rata', async () => {
    expect(await created(api.post('/api/v1/leases', lease()))).toMatchObject({ termDays: 365, contractRent: 60_000, instalmentAmount: 15_000 });
    // 1 Jan – 30 Jun: 181 days → 60,000 × 181 ÷ 365 = 29,753.42; monthly 5,000.
    expect(await created(api.post('/api/v1/leases', lease({ endDate: '2026-06-30', paymentFrequency: 'monthly' })))).toMatchObject({ termDays: 181, contractRent: 29_753.42, instalmentAmount: 5_000 });
    // A commercial lease bears 15 % VAT: a shop at 120,000 a year, quarterly, is 30,000 + 4,500 each quarter.
    expect(await created(api.post('/api/v1/leases', lease({ annualRent: 120_000, leaseUse: 'commercial' })))).toMatchObject({ instalmentAmount: 30_000, instalmentVat: 4_500, instalmentTotal: 34_500 });
    expect(await created(api.post('/api/v1/leases', lease({ leaseUse: 'residential' })))).toMatchObject({ instalmentVat: 0, instalmentTotal: 15_000 });
    const bad = await refused(api.post('/api/v1/leases', lease({ endDate: '2025-12-31', securityDeposit: 70_000 })));
    expect(bad.pointers).toEqual(['/endDate', '/securityDeposit']);
  });

  it('activates only once registered on Ejar; then its rent is fixed; renewal extends it; ending takes a reason and date', async () => {
    const l = await created(api.post('/api/v1/leases', lease()));
    expect(await conflict(api.post(`/api/v1/leases/${l.id}/activate`))).toContain('Register the lease on Ejar and enter its number first');
    await ok(api.patch(`/api/v1/leases/${l.id}`, { ejarNumber: '10293847' }));
    await ok(api.post(`/api/v1/leases/${l.id}/activate`));
    expect(expectError(await api.patch(`/api/v1/leases/${l.id}`, { annualRent: 1 }), 409, 'CONFLICT')).toBeTruthy();
    await conflict(api.post(`/api/v1/leases/${l.id}/renew`, { endDate: '2026-06-30' }));
    expect(await ok(api.post(`/api/v1/leases/${l.id}/renew`, { endDate: '2027-12-31', annualRent: 63_000 }))).toMatchObject({ state: 'active', termDays: 730, contractRent: 126_000, instalmentAmount: 15_750 });
    expect((await refused(api.post(`/api/v1/leases/${l.id}/end`, { reason: 'mutual' }))).pointers).toEqual(['/endedOn']);
    expect(await ok(api.post(`/api/v1/leases/${l.id}/end`, { reason: 'early_termination', endedOn: '2027-03-31' }))).toMatchObject({ state: 'ended', endReason: 'early_termination', endedOn: '2027-03-31' });
    await conflict(api.patch(`/api/v1/leases/${l.id}`, { securityDeposit: 1 }));
  });

  it('a lease takes its use from its unit (a shop bears VAT, a flat none); activating occupies the unit, a second lease cannot, ending frees it', async () => {
    const shop = await created(api.post('/api/v1/property-units', { buildingId, unitRef: 'G-01', unitType: 'shop' }));
    const flat = await created(api.post('/api/v1/property-units', { buildingId, unitRef: 'A-102', unitType: 'apartment' }));
    const l = await created(api.post('/api/v1/leases', lease({ unitId: shop.id, annualRent: 120_000, ejarNumber: '20394857' })));
    expect(l).toMatchObject({ leaseUse: 'commercial', instalmentAmount: 30_000, instalmentVat: 4_500, instalmentTotal: 34_500 });
    expect(await created(api.post('/api/v1/leases', lease({ unitId: flat.id })))).toMatchObject({ leaseUse: 'residential', instalmentVat: 0 });
    expect(await refused(api.post('/api/v1/leases', lease({ unitId: shop.id, leaseUse: 'residential' })))).toEqual({ pointers: ['/leaseUse'], messages: ['An office, shop or warehouse is let commercially'] });

    await ok(api.post(`/api/v1/leases/${l.id}/activate`));
    expect((await ok(api.get(`/api/v1/property-units/${shop.id}`))).state).toBe('occupied');
    const next = await created(api.post('/api/v1/leases', lease({ unitId: shop.id, annualRent: 126_000, ejarNumber: '20394999', startDate: '2027-01-01', endDate: '2027-12-31' })));
    expect(await conflictDetail(api.post(`/api/v1/leases/${next.id}/activate`))).toMatchObject({ effectOn: 'unitId', effectDoes: 'unitId → occupy' });
    expect((await ok(api.get(`/api/v1/leases/${next.id}`))).state).toBe('draft');
    await ok(api.post(`/api/v1/leases/${l.id}/end`, { reason: 'expired', endedOn: '2026-12-31' }));
    expect((await ok(api.get(`/api/v1/property-units/${shop.id}`))).state).toBe('vacant');
    await ok(api.post(`/api/v1/leases/${next.id}/activate`));
    expect((await ok(api.get(`/api/v1/property-units/${shop.id}`))).state).toBe('occupied');
  });

  it('an instalment is paid on a date or waived by a manager with a reason', async () => {
    const l = await created(api.post('/api/v1/leases', lease()));
    const due = await created(api.post('/api/v1/rent-instalments', { leaseId: l.id, dueDate: '2026-04-01', amount: 15_000 }));
    expect(await ok(api.post(`/api/v1/rent-instalments/${due.id}/pay`, { paidOn: '2026-04-03' }))).toMatchObject({ state: 'paid', paidOn: '2026-04-03' });
    await conflict(api.patch(`/api/v1/rent-instalments/${due.id}`, { amount: 1 }));
    const other = await created(api.post('/api/v1/rent-instalments', { leaseId: l.id, dueDate: '2026-07-01', amount: 15_000 }));
    expectError(await company.as('Member').post(`/api/v1/rent-instalments/${other.id}/waive`, { reason: 'Repairs' }), 403, 'FORBIDDEN');
    expect(await ok(api.post(`/api/v1/rent-instalments/${other.id}/waive`, { reason: 'Repairs' }))).toMatchObject({ state: 'waived', waiveReason: 'Repairs' });
  });
});

describe('subscriptions', () => {
  it('a 299 plan bills 343.85 with VAT; a trial ends after the start; a cancellation needs its reason and date', async () => {
    const planId = (await created(api.post('/api/v1/subscription-plans', { code: 'PRO-M', name: 'Pro monthly', interval: 'month', price: 299 }))).id;
    const sub = await created(api.post('/api/v1/subscriptions', { customerId, planId, amount: 299, startDate: '2026-02-01' }));
    expect(sub).toMatchObject({ vatAmount: 44.85, totalPerPeriod: 343.85 });
    expect(await conflict(api.post(`/api/v1/subscriptions/${sub.id}/startTrial`, {}))).toContain('Say when the trial ends');
    expect(await refused(api.post(`/api/v1/subscriptions/${sub.id}/startTrial`, { trialEndsOn: '2026-01-15' }))).toEqual({ pointers: ['/trialEndsOn'], messages: ['A trial ends after the subscription starts'] });
    expect(await ok(api.post(`/api/v1/subscriptions/${sub.id}/startTrial`, { trialEndsOn: '2026-02-15' }))).toMatchObject({ state: 'trial', trialEndsOn: '2026-02-15' });
    expect(await conflict(api.post(`/api/v1/subscriptions/${sub.id}/activate`))).toContain('Set the next billing date first');
    await ok(api.patch(`/api/v1/subscriptions/${sub.id}`, { nextBillingDate: '2026-02-15' }));
    await ok(api.post(`/api/v1/subscriptions/${sub.id}/activate`));
    expect((await refused(api.post(`/api/v1/subscriptions/${sub.id}/cancel`, { reason: 'price' }))).pointers.sort()).toEqual(['/endDate', '/reason']);
    expect(await ok(api.post(`/api/v1/subscriptions/${sub.id}/cancel`, { reason: 'too_expensive', endDate: '2026-05-14' }))).toMatchObject({ state: 'cancelled', cancelReason: 'too_expensive', endDate: '2026-05-14' });
    await conflict(api.patch(`/api/v1/subscriptions/${sub.id}`, { amount: 1 }));
    expect((await refused(api.post('/api/v1/subscriptions', { customerId, planId, amount: 0, startDate: '2026-02-01', vatAmount: 1 }))).pointers).toEqual(['/vatAmount']);
  });

  it('a subscription takes its plan\'s price unless given one; a plan code is used once', async () => {
    const plan = await created(api.post('/api/v1/subscription-plans', { code: 'TEAM-Y', name: 'Team yearly', interval: 'year', price: 2_990 }));
    expect(await created(api.post('/api/v1/subscriptions', { customerId, planId: plan.id, startDate: '2026-03-01' }))).toMatchObject({ amount: 2_990, vatAmount: 448.5, totalPerPeriod: 3_438.5 });
    expect(await created(api.post('/api/v1/subscriptions', { customerId, planId: plan.id, startDate: '2026-03-01', amount: 2_500 }))).toMatchObject({ amount: 2_500, totalPerPeriod: 2_875 });
    expect(await conflictDetail(api.post('/api/v1/subscription-plans', { code: 'TEAM-Y', name: 'Team yearly (copy)', interval: 'year', price: 1 }))).toMatchObject({ reason: 'unique', field: 'code', other: plan.id });
  });
});

describe('pharmacy', () => {
  it('a recall needs its class, reference and reason; disposal empties the batch; a dispensing is final', async () => {
    expect((await refused(api.post('/api/v1/medicine-batches', { productId, lotNumber: 'L1', expiryDate: '2026-01-01', receivedOn: '2026-02-01' }))).pointers).toEqual(['/expiryDate']);
    const batch = await created(api.post('/api/v1/medicine-batches', { productId, lotNumber: 'L2', expiryDate: '2027-06-30', receivedOn: '2026-02-01', quantityOnHand: 120 }));
    expect((await refused(api.post(`/api/v1/medicine-batches/${batch.id}/recall`, { recallClass: 'class_2' }))).pointers.sort()).toEqual(['/reason', '/recallRef']);
    expect(await ok(api.post(`/api/v1/medicine-batches/${batch.id}/recall`, { recallClass: 'class_2', recallRef: 'SFDA-2026-14', reason: 'Contamination' })))
      .toMatchObject({ state: 'recalled', recallClass: 'class_2', recallRef: 'SFDA-2026-14', recallReason: 'Contamination' });
    await conflict(api.patch(`/api/v1/medicine-batches/${batch.id}`, { expiryDate: '2028-01-01' }));
    expect(await ok(api.post(`/api/v1/medicine-batches/${batch.id}/dispose`))).toMatchObject({ state: 'disposed', quantityOnHand: 0 });

    const patientId = (await created(api.post('/api/v1/patients', { fullName: 'Noura' }))).id;
    const prescriptionId = (await created(api.post('/api/v1/prescriptions', { patientId, prescriberId: employeeId, prescribedOn: '2026-02-01', items: [{ medication: 'Amoxicillin 500', quantity: 21 }] }))).id;
    const good = await created(api.post('/api/v1/medicine-batches', { productId, lotNumber: 'L3', expiryDate: '2027-06-30', quantityOnHand: 50 }));
    const body = { prescriptionId, patientId, pharmacistId: employeeId, dispensedOn: '2026-02-02', items: [{ batchId: good.id, quantity: 21 }] };
    expect((await refused(api.post('/api/v1/dispensings', { ...body, items: [{ batchId: good.id, quantity: 1 }, { batchId: good.id, quantity: 0 }] }))).pointers).toEqual(['/items', '/items']);
    const d = await created(api.post('/api/v1/dispensings', body));
    expect(d).toMatchObject({ totalQuantity: 21, state: 'dispensed' });
    await conflict(api.patch(`/api/v1/dispensings/${d.id}`, { counselled: true }));
  });
});

describe('timesheets', () => {
  it('hours in quarters; a submitted entry is locked; no one approves their own; a rejection keeps its reason', async () => {
    const projectId = (await created(api.post('/api/v1/projects', { name: 'ERP rollout' }))).id;
    const managerId = (await created(api.post('/api/v1/employees', { fullName: 'Omar Al-Qahtani', jobTitle: 'PM', joinDate: '2020-01-01' }))).id;
    const entry = (over: Record<string, unknown> = {}) => ({ employeeId, projectId, date: '2026-02-02', hours: 7.5, ...over });
    expect((await refused(api.post('/api/v1/timesheet-entries', entry({ hours: 7.3 })))).pointers).toEqual(['/hours']);
    const e = await created(api.post('/api/v1/timesheet-entries', entry()));
    await ok(api.post(`/api/v1/timesheet-entries/${e.id}/submit`));
    await conflict(api.patch(`/api/v1/timesheet-entries/${e.id}`, { hours: 8 }));
    expect(await conflict(api.post(`/api/v1/timesheet-entries/${e.id}/approve`, { approverId: employeeId }))).toContain('No one approves their own hours');
    expect(await ok(api.post(`/api/v1/timesheet-entries/${e.id}/approve`, { approverId: managerId }))).toMatchObject({ state: 'approved', approverId: managerId });
    const r = await created(api.post('/api/v1/timesheet-entries', entry({ hours: 9 })));
    await ok(api.post(`/api/v1/timesheet-entries/${r.id}/submit`));
    expect(await ok(api.post(`/api/v1/timesheet-entries/${r.id}/reject`, { reason: 'Client visit was 6 hours' }))).toMatchObject({ state: 'rejected', rejectionReason: 'Client visit was 6 hours' });
    expect(await ok(api.patch(`/api/v1/timesheet-entries/${r.id}`, { hours: 6 }))).toMatchObject({ hours: 6 });
  });

  it('a period counts its days, at most a month, and locks', async () => {
    expect(await created(api.post('/api/v1/timesheet-periods', { periodStart: '2026-02-01', periodEnd: '2026-02-28' }))).toMatchObject({ days: 28 });
    expect((await refused(api.post('/api/v1/timesheet-periods', { periodStart: '2026-02-01', periodEnd: '2026-03-15' }))).pointers).toEqual(['/periodEnd']);
    expect((await refused(api.post('/api/v1/timesheet-periods', { periodStart: '2026-02-01', periodEnd: '2026-01-31' }))).pointers).toEqual(['/periodEnd']);
  });

  it('a period totals its hours, locks only once every entry is decided, then takes no more; one period per range; an entry falls inside its period', async () => {
    const p = await created(api.post('/api/v1/timesheet-periods', { periodStart: '2026-03-01', periodEnd: '2026-03-31' }));
    expect(p).toMatchObject({ totalHours: 0, approvedHours: 0 });
    expect(await conflictDetail(api.post('/api/v1/timesheet-periods', { periodStart: '2026-03-01', periodEnd: '2026-03-15' }))).toMatchObject({ reason: 'unique', field: 'periodStart', other: p.id });
    const projectId = (await created(api.post('/api/v1/projects', { name: 'Year-end audit' }))).id;
    const approverId = (await created(api.post('/api/v1/employees', { fullName: 'Huda Al-Shehri', jobTitle: 'Audit manager', joinDate: '2019-01-01' }))).id;
    const entry = (date: string, hours: number) => ({ employeeId, projectId, periodId: p.id, date, hours });
    expect(await refused(api.post('/api/v1/timesheet-entries', entry('2026-04-01', 8)))).toEqual({ pointers: ['/date'], messages: ['The date is outside the timesheet period'] });
    const [a, b, c] = [await created(api.post('/api/v1/timesheet-entries', entry('2026-03-02', 7.5))), await created(api.post('/api/v1/timesheet-entries', entry('2026-03-03', 8))), await created(api.post('/api/v1/timesheet-entries', entry('2026-03-04', 6.25)))];
    expect((await ok(api.get(`/api/v1/timesheet-periods/${p.id}`))).totalHours).toBe(21.75);
    for (const e of [a, b, c]) await ok(api.post(`/api/v1/timesheet-entries/${e.id}/submit`));
    for (const e of [a, b]) await ok(api.post(`/api/v1/timesheet-entries/${e.id}/approve`, { approverId }));
    expect(await conflict(api.post(`/api/v1/timesheet-periods/${p.id}/lock`))).toContain('Approve or reject every entry');
    await ok(api.post(`/api/v1/timesheet-entries/${c.id}/reject`, { reason: 'Not on this engagement' }));
    expect(await ok(api.post(`/api/v1/timesheet-periods/${p.id}/lock`))).toMatchObject({ state: 'locked', totalHours: 15.5, approvedHours: 15.5 });
    // Locked: no new hours, no reopening an approved entry, no resubmitting a rejected one.
    expect(await conflictDetail(api.post('/api/v1/timesheet-entries', entry('2026-03-05', 4)))).toMatchObject({ reason: 'parentLocked', state: 'locked' });
    expect(await conflictDetail(api.post(`/api/v1/timesheet-entries/${a.id}/reopen`))).toMatchObject({ reason: 'parentLocked' });
    expect(await conflictDetail(api.post(`/api/v1/timesheet-entries/${c.id}/submit`))).toMatchObject({ reason: 'parentLocked' });
    expect((await ok(api.get(`/api/v1/timesheet-entries/${a.id}`))).state).toBe('approved');
  });
});

describe('projects', () => {
  it('budget 250,000 with 262,500.50 spent: 12,500.50 over, 105 % used; 1 Mar – 31 May is 92 days', async () => {
    const p = await created(api.post('/api/v1/projects', { name: 'Warehouse fit-out', startDate: '2026-03-01', endDate: '2026-05-31', budget: 250_000, actualCost: 262_500.5 }));
    expect(p).toMatchObject({ budgetRemaining: -12_500.5, budgetUsedPercent: 105, durationDays: 92 });
    expect((await refused(api.post('/api/v1/projects', { name: 'Backwards', startDate: '2026-03-01', endDate: '2026-02-01' }))).pointers).toEqual(['/endDate']);
    expect(await conflict(api.post(`/api/v1/projects/${(await created(api.post('/api/v1/projects', { name: 'Undated' }))).id}/start`))).toContain('Set the start date first');
    await ok(api.post(`/api/v1/projects/${p.id}/start`));
    expect((await refused(api.post(`/api/v1/projects/${p.id}/hold`, {}))).pointers).toEqual(['/reason']);
    expect(await ok(api.post(`/api/v1/projects/${p.id}/hold`, { reason: 'Permit pending' }))).toMatchObject({ state: 'on_hold', statusReason: 'Permit pending' });
    await ok(api.post(`/api/v1/projects/${p.id}/resume`));
    await ok(api.post(`/api/v1/projects/${p.id}/complete`));
    await conflict(api.patch(`/api/v1/projects/${p.id}`, { budget: 300_000 }));
    expectError(await company.as('Member').post(`/api/v1/projects/${p.id}/reopen`), 403, 'FORBIDDEN');
  });
});

describe('shipping', () => {
  let merchantId: string;
  beforeAll(async () => { merchantId = customerId; });
  const shipment = (over: Record<string, unknown> = {}) => ({
    merchantId, consigneeName: 'Huda', consigneePhone: '0551234567', deliveryAddress: 'Al-Malaz, Riyadh', destinationCity: 'Riyadh',
    serviceLevel: 'next_day', weightKg: 2.5, codAmount: 349.99, collectionMethod: 'cash', ...over,
  });

  it('three failed attempts send it back; a delivery collects the cash on delivery', async () => {
    expect((await refused(api.post('/api/v1/shipments', shipment({ collectionMethod: undefined })))).pointers).toEqual(['/collectionMethod']);
    const s = await created(api.post('/api/v1/shipments', shipment()));
    await ok(api.post(`/api/v1/shipments/${s.id}/scanIn`));
    for (let i = 1; i <= 3; i++) {
      await ok(api.post(`/api/v1/shipments/${s.id}/dispatch`));
      expect(await ok(api.post(`/api/v1/shipments/${s.id}/failDelivery`, { reason: 'customer_not_available' }))).toMatchObject({ state: 'undelivered', attempts: i });
    }
    expect(await conflict(api.post(`/api/v1/shipments/${s.id}/dispatch`))).toContain('Three delivery attempts failed');
    expect(await ok(api.post(`/api/v1/shipments/${s.id}/returnToMerchant`, { reason: 'max_attempts' }))).toMatchObject({ state: 'returned', returnReason: 'max_attempts' });

    const d = await created(api.post('/api/v1/shipments', shipment()));
    // Waybills from one series, the next number each.
    expect(s.awb).toMatch(new RegExp(`^AWB-${new Date().getUTCFullYear()}-\\d{7}$`));
    expect(Number(d.awb.slice(-7))).toBe(Number(s.awb.slice(-7)) + 1);
    expect((await refused(api.post('/api/v1/shipments', shipment({ awb: 'AWB1' })))).pointers).toEqual(['/awb']);
    await ok(api.post(`/api/v1/shipments/${d.id}/scanIn`));
    await ok(api.post(`/api/v1/shipments/${d.id}/dispatch`));
    await conflict(api.patch(`/api/v1/shipments/${d.id}`, { codAmount: 1 }));
    expect((await refused(api.post(`/api/v1/shipments/${d.id}/deliver`, {}))).pointers).toEqual(['/receivedBy']);
    expect(await ok(api.post(`/api/v1/shipments/${d.id}/deliver`, { receivedBy: 'Huda' }))).toMatchObject({ state: 'delivered', codStatus: 'collected', receivedBy: 'Huda' });
  });

  it('a route collects 500 on delivery and its driver, 12.50 short, explains it; a remittance of 10,000 less 1,250.75 of fees pays 8,749.25; a claim settles at most what was claimed', async () => {
    // The route's cash on delivery: 349.99 and 150.01 delivered, 500 not delivered, one prepaid.
    const route = await created(api.post('/api/v1/delivery-routes', { hub: 'RUH-1', routeDate: '2026-02-02', driverId: employeeId }));
    const onRoute = async (over: Record<string, unknown>, deliver: boolean) => {
      const x = await created(api.post('/api/v1/shipments', shipment({ routeId: route.id, ...over })));
      await ok(api.post(`/api/v1/shipments/${x.id}/scanIn`));
      await ok(api.post(`/api/v1/shipments/${x.id}/dispatch`));
      if (deliver) await ok(api.post(`/api/v1/shipments/${x.id}/deliver`, { receivedBy: 'Consignee' }));
      else await ok(api.post(`/api/v1/shipments/${x.id}/failDelivery`, { reason: 'closed' }));
    };
    await onRoute({ codAmount: 349.99 }, true);
    await onRoute({ codAmount: 150.01 }, true);
    await onRoute({ codAmount: 0, collectionMethod: undefined }, true);
    await onRoute({ codAmount: 500 }, false);
    expect(await ok(api.get(`/api/v1/delivery-routes/${route.id}`))).toMatchObject({ shipmentCount: 4, codShipments: 2, codCollected: 500 });
    const cash = { routeId: route.id, hub: 'RUH-1', cashupDate: '2026-02-02', countedAmount: 487.5 };
    expect(await refused(api.post('/api/v1/driver-cashups', { ...cash, varianceNote: 'x' }))).toEqual({ pointers: ['/routeId'], messages: ['Cash up a route once it is completed'] });
    await ok(api.post(`/api/v1/delivery-routes/${route.id}/dispatch`));
    await ok(api.post(`/api/v1/delivery-routes/${route.id}/complete`));
    expect((await refused(api.post('/api/v1/driver-cashups', cash))).pointers).toEqual(['/varianceNote']);
    expect((await refused(api.post('/api/v1/driver-cashups', { ...cash, expectedAmount: 487.5 }))).pointers).toEqual(['/expectedAmount']);
    const up = await created(api.post('/api/v1/driver-cashups', { ...cash, varianceNote: 'Change given twice' }));
    expect(up).toMatchObject({ driverId: employeeId, shipmentCount: 2, expectedAmount: 500, variance: -12.5 });
    expect(await conflictDetail(api.post('/api/v1/driver-cashups', { ...cash, countedAmount: 500 }))).toMatchObject({ reason: 'unique', field: 'routeId', other: up.id });
    const lh = await created(api.post('/api/v1/linehaul-manifests', { originHub: 'RUH-1', destinationHub: 'JED-2', departureDate: '2026-02-03' }));
    expect(lh.manifestNumber).toBe('LH-2026-00001');

    const rem = await created(api.post('/api/v1/cod-remittances', { merchantId, periodFrom: '2026-02-01', periodTo: '2026-02-07', shipmentCount: 40, codAmount: 10_000, fees: 1_250.75 }));
    expect(rem.netAmount).toBe(8_749.25);
    expect((await refused(api.post('/api/v1/cod-remittances', { merchantId, periodFrom: '2026-02-07', periodTo: '2026-02-01', shipmentCount: 1, codAmount: 10, fees: 11 }))).pointers).toEqual(['/fees', '/periodTo']);
    expect(await ok(api.post(`/api/v1/cod-remittances/${rem.id}/remit`, { paymentReference: 'SARIE-998877' }))).toMatchObject({ state: 'remitted', paymentReference: 'SARIE-998877' });
    await conflict(api.patch(`/api/v1/cod-remittances/${rem.id}`, { fees: 0 }));

    const shipmentId = (await created(api.post('/api/v1/shipments', shipment()))).id;
    const claim = await created(api.post('/api/v1/shipping-claims', { shipmentId, merchantId, claimType: 'damaged', claimedAmount: 349.99 }));
    expect(await conflict(api.post(`/api/v1/shipping-claims/${claim.id}/settle`, { settledAmount: 400 }))).toContain('exceeds the amount claimed');
    expect(await ok(api.post(`/api/v1/shipping-claims/${claim.id}/settle`, { settledAmount: 300 }))).toMatchObject({ state: 'settled', settledAmount: 300 });
  });
});

describe('planning', () => {
  it('a night shift 22:00–06:00 with a 30-minute break is 7.5 hours; a 14-hour shift and a bad time are refused', async () => {
    const shift = (over: Record<string, unknown> = {}) => ({ employeeId, date: '2026-02-02', startTime: '22:00', endTime: '06:00', breakMinutes: 30, ...over });
    const s = await created(api.post('/api/v1/planning-shifts', shift()));
    expect(s.hours).toBe(7.5);
    expect((await created(api.post('/api/v1/planning-shifts', shift({ startTime: '08:15', endTime: '17:00', breakMinutes: 60 })))).hours).toBe(7.75);
    expect((await refused(api.post('/api/v1/planning-shifts', shift({ startTime: '06:00', endTime: '20:00', breakMinutes: 0 })))).pointers).toEqual(['/endTime']);
    expect((await refused(api.post('/api/v1/planning-shifts', shift({ startTime: '24:00' })))).pointers).toEqual(['/startTime', '/breakMinutes']);
    const open = await created(api.post('/api/v1/planning-shifts', shift({ employeeId: undefined })));
    expect(await conflict(api.post(`/api/v1/planning-shifts/${open.id}/publish`))).toContain('Assign the shift to an employee first');
    await ok(api.post(`/api/v1/planning-shifts/${s.id}/publish`));
    await conflict(api.patch(`/api/v1/planning-shifts/${s.id}`, { breakMinutes: 0 }));
  });

  it('a week counts its shifts and hours, each shift inside the week; once published it takes no more', async () => {
    const w = await created(api.post('/api/v1/planning-weeks', { weekStart: '2026-03-01', location: 'Jeddah store' }));
    expect(await conflict(api.post(`/api/v1/planning-weeks/${w.id}/publish`))).toContain('Plan at least one shift');
    const shift = (date: string, over: Record<string, unknown> = {}) => ({ weekId: w.id, employeeId, date, startTime: '08:00', endTime: '16:00', breakMinutes: 60, ...over });
    await created(api.post('/api/v1/planning-shifts', shift('2026-03-01')));
    const night = await created(api.post('/api/v1/planning-shifts', shift('2026-03-07', { startTime: '22:00', endTime: '06:00', breakMinutes: 30 })));
    for (const date of ['2026-03-08', '2026-02-28']) {
      expect(await refused(api.post('/api/v1/planning-shifts', shift(date)))).toEqual({ pointers: ['/date'], messages: ['The shift is outside its planning week'] });
    }
    expect(await ok(api.get(`/api/v1/planning-weeks/${w.id}`))).toMatchObject({ shiftCount: 2, plannedHours: 14.5 });
    await ok(api.post(`/api/v1/planning-shifts/${night.id}/cancel`));
    expect(await ok(api.post(`/api/v1/planning-weeks/${w.id}/publish`))).toMatchObject({ state: 'published', shiftCount: 1, plannedHours: 7 });
    expect(await conflictDetail(api.post('/api/v1/planning-shifts', shift('2026-03-02')))).toMatchObject({ reason: 'parentLocked', state: 'published' });
  });
});

describe('recruitment', () => {
  it('an offer of 12,000 + 3,000 is 15,000 a month, 180,000 a year, and is fixed once sent; an interview is rated; a hire names the employee', async () => {
    const jobId = (await created(api.post('/api/v1/job-openings', { title: 'Accountant' }))).id;
    const app = await created(api.post('/api/v1/job-applications', { jobId, candidateName: 'Reem', email: 'reem@example.com' }));
    expect((await refused(api.post('/api/v1/job-applications', { jobId, candidateName: 'X', email: 'not-an-email' }))).pointers).toEqual(['/email']);
    const iv = await created(api.post('/api/v1/job-interviews', { applicationId: app.id, interviewDate: '2026-02-10', startTime: '10:00', mode: 'video', interviewerId: employeeId }));
    expect((await refused(api.post(`/api/v1/job-interviews/${iv.id}/markDone`, { rating: 6, feedback: 'ok' }))).pointers).toEqual(['/rating']);
    expect(await ok(api.post(`/api/v1/job-interviews/${iv.id}/markDone`, { rating: 4, feedback: 'Strong IFRS' }))).toMatchObject({ state: 'done', rating: 4 });

    const offer = await created(api.post('/api/v1/job-offers', { applicationId: app.id, jobTitle: 'Accountant', monthlySalary: 12_000, monthlyAllowances: 3_000, startDate: '2026-04-01' }));
    expect(offer).toMatchObject({ monthlyPackage: 15_000, annualPackage: 180_000 });
    expect(await conflict(api.post(`/api/v1/job-offers/${offer.id}/send`))).toContain('Say until when the offer is valid');
    expect((await refused(api.patch(`/api/v1/job-offers/${offer.id}`, { validUntil: '2026-04-15' }))).pointers).toEqual(['/validUntil']);
    await ok(api.patch(`/api/v1/job-offers/${offer.id}`, { validUntil: '2026-03-01' }));
    // An offer goes to a candidate who was interviewed: sending it moves the application to the offer stage.
    expect(await conflictDetail(api.post(`/api/v1/job-offers/${offer.id}/send`))).toMatchObject({ effectOn: 'applicationId', effectDoes: 'applicationId → moveToOffer' });
    for (const t of ['screen', 'shortlist']) await ok(api.post(`/api/v1/job-applications/${app.id}/${t}`));
    await ok(api.post(`/api/v1/job-offers/${offer.id}/send`));
    expect((await ok(api.get(`/api/v1/job-applications/${app.id}`))).state).toBe('offer');
    await conflict(api.patch(`/api/v1/job-offers/${offer.id}`, { monthlySalary: 13_000 }));
    await ok(api.post(`/api/v1/job-offers/${offer.id}/accept`));
    expect(await ok(api.get(`/api/v1/job-applications/${app.id}`))).toMatchObject({ state: 'accepted', startDate: '2026-04-01' });
    expect(await ok(api.post(`/api/v1/job-applications/${app.id}/hire`, { employeeId, startDate: '2026-04-05' }))).toMatchObject({ state: 'hired', employeeId, startDate: '2026-04-05' });
    expect((await ok(api.get(`/api/v1/job-openings/${jobId}`))).filled).toBe(1);
  });

  it('an opening of one position hires one; a declined offer rejects its application', async () => {
    const jobId = (await created(api.post('/api/v1/job-openings', { title: 'Storekeeper', positions: 1 }))).id;
    const candidate = async (candidateName: string) => {
      const a = await created(api.post('/api/v1/job-applications', { jobId, candidateName }));
      for (const t of ['screen', 'shortlist']) await ok(api.post(`/api/v1/job-applications/${a.id}/${t}`));
      const o = await created(api.post('/api/v1/job-offers', { applicationId: a.id, jobTitle: 'Storekeeper', monthlySalary: 5_000, startDate: '2026-05-01', validUntil: '2026-04-15' }));
      await ok(api.post(`/api/v1/job-offers/${o.id}/send`));
      return { a, o };
    };
    const first = await candidate('Majed');
    const second = await candidate('Turki');
    const third = await candidate('Salem');
    await ok(api.post(`/api/v1/job-offers/${third.o.id}/decline`));
    expect(await ok(api.get(`/api/v1/job-applications/${third.a.id}`))).toMatchObject({ state: 'rejected', rejectionReason: 'Declined the offer' });
    for (const c of [first, second]) await ok(api.post(`/api/v1/job-offers/${c.o.id}/accept`));
    await ok(api.post(`/api/v1/job-applications/${first.a.id}/hire`, { employeeId, startDate: '2026-05-01' }));
    const full = await conflictDetail(api.post(`/api/v1/job-applications/${second.a.id}/hire`, { employeeId, startDate: '2026-05-01' }));
    expect(full).toMatchObject({ reason: 'parentRule' });
    expect(JSON.stringify(full.problems)).toContain('Every position of the opening is filled');
    expect(await ok(api.get(`/api/v1/job-openings/${jobId}`))).toMatchObject({ positions: 1, filled: 1 });
    expect((await ok(api.get(`/api/v1/job-applications/${second.a.id}`))).state).toBe('accepted');
  });
});

describe('quality', () => {
  it('a measurement of 10.6 outside 9.5–10.5 cannot pass and fails with a note; a major NCR closes only with its root cause and action', async () => {
    const check = (measuredValue: number) => ({ controlPoint: 'Shaft diameter', checkType: 'measurement', stage: 'production', productId, sourceRef: 'MO-17', measuredValue, toleranceMin: 9.5, toleranceMax: 10.5 });
    expect(await created(api.post('/api/v1/quality-checks', check(10.5)))).toMatchObject({ withinTolerance: true });
    const c = await created(api.post('/api/v1/quality-checks', check(10.6)));
    expect(c.withinTolerance).toBe(false);
    expect(await conflict(api.post(`/api/v1/quality-checks/${c.id}/pass`))).toContain('outside the tolerance');
    expect(await ok(api.post(`/api/v1/quality-checks/${c.id}/fail`, { note: 'Oversize by 0.1 mm' }))).toMatchObject({ state: 'failed', note: 'Oversize by 0.1 mm' });
    expect((await refused(api.post('/api/v1/quality-checks', { ...check(10), toleranceMin: 11 }))).pointers).toEqual(['/toleranceMax']);

    // An NCR is raised from a failed check, takes its product from it and is numbered from the year's series.
    const ncrBody = { lotNumber: 'L-9', quantityAffected: 40, severity: 'major', disposition: 'rework' };
    const todo = (await ok(api.get('/api/v1/quality-checks?state=todo'))) as unknown as { id: string }[];
    expect(await refused(api.post('/api/v1/nonconformance-reports', { ...ncrBody, checkId: todo[0].id }))).toEqual({ pointers: ['/checkId'], messages: ['A nonconformance is raised from a failed check'] });
    expect((await refused(api.post('/api/v1/nonconformance-reports', { ...ncrBody, checkId: c.id, ncrNumber: 'NCR-1' }))).pointers).toEqual(['/ncrNumber']);
    const ncr = await created(api.post('/api/v1/nonconformance-reports', { ...ncrBody, checkId: c.id }));
    expect(ncr).toMatchObject({ ncrNumber: `NCR-${new Date().getUTCFullYear()}-0001`, productId });
    expect(await conflict(api.post(`/api/v1/nonconformance-reports/${ncr.id}/close`))).toContain('root cause');
    await ok(api.patch(`/api/v1/nonconformance-reports/${ncr.id}`, { rootCause: 'Worn tool', correctiveAction: 'Tool change every 500 parts' }));
    await ok(api.post(`/api/v1/nonconformance-reports/${ncr.id}/close`));
    await conflict(api.patch(`/api/v1/nonconformance-reports/${ncr.id}`, { disposition: 'scrap' }));
  });
});

describe('payment links', () => {
  it('a 1,150 link paid by mada with a 17.25 gateway fee nets 1,132.75, and is then final', async () => {
    const link = await created(api.post('/api/v1/payment-links', { amount: 1_150, purpose: 'Invoice INV-7', customerId }));
    expect((await refused(api.post(`/api/v1/payment-links/${link.id}/markPaid`, { paymentMethod: 'mada' }))).pointers).toEqual(['/transactionRef']);
    expect(await conflict(api.post(`/api/v1/payment-links/${link.id}/markPaid`, { paymentMethod: 'mada', transactionRef: 'T1', fee: 2_000 }))).toContain('The fee exceeds the amount');
    expect(await ok(api.post(`/api/v1/payment-links/${link.id}/markPaid`, { paymentMethod: 'mada', transactionRef: 'HP-77812', fee: 17.25 })))
      .toMatchObject({ state: 'paid', fee: 17.25, netAmount: 1_132.75, transactionRef: 'HP-77812' });
    await conflict(api.patch(`/api/v1/payment-links/${link.id}`, { amount: 1 }));
  });

  it('a link for an invoice asks for its total from its customer unless given less, never a halala more', async () => {
    const invoice = await created(api.post('/api/v1/invoices', invoiceBody(customerId, { lines: [{ description: 'Consulting', quantity: 1, unitPrice: 1_000 }] })));
    const total = invoice.total as number;
    expect(total).toBeGreaterThanOrEqual(1_000);
    expect(await created(api.post('/api/v1/payment-links', { invoiceId: invoice.id, purpose: 'Invoice' }))).toMatchObject({ amount: total, customerId });
    expect((await created(api.post('/api/v1/payment-links', { invoiceId: invoice.id, purpose: 'First half', amount: 500 }))).amount).toBe(500);
    expect(await refused(api.post('/api/v1/payment-links', { invoiceId: invoice.id, purpose: 'Too much', amount: Math.round(total * 100 + 1) / 100 }))).toEqual({ pointers: ['/amount'], messages: ["The link asks for more than the invoice's total"] });
  });
});

describe('plm', () => {
  it('a change moves to a new revision, needs its reason to be submitted, and a rejection keeps why', async () => {
    const change = { title: 'Thicker bracket', productId, changeType: 'drawing', fromRevision: 'B', toRevision: 'B' };
    expect((await refused(api.post('/api/v1/engineering-changes', change))).pointers).toEqual(['/toRevision']);
    const c = await created(api.post('/api/v1/engineering-changes', { ...change, toRevision: 'C' }));
    expect(await conflict(api.post(`/api/v1/engineering-changes/${c.id}/submit`))).toContain('Say why the change is needed');
    await ok(api.patch(`/api/v1/engineering-changes/${c.id}`, { reason: 'Cracks in field returns' }));
    await ok(api.post(`/api/v1/engineering-changes/${c.id}/submit`));
    await conflict(api.patch(`/api/v1/engineering-changes/${c.id}`, { toRevision: 'D' }));
    expect(await ok(api.post(`/api/v1/engineering-changes/${c.id}/reject`, { reason: 'Cost study missing' }))).toMatchObject({ state: 'rejected', decisionNote: 'Cost study missing' });
  });

  it('numbers change orders from the year\'s series; applying one releases revision C from its date and makes B obsolete', async () => {
    const revision = async (rev: string) => created(api.post('/api/v1/product-revisions', { productId, revision: rev }));
    const b = await revision('B');
    await ok(api.post(`/api/v1/product-revisions/${b.id}/release`, { effectiveOn: '2025-06-01' }));
    const [c, d] = [await revision('C'), await revision('D')];
    const eco = (over: Record<string, unknown>) => created(api.post('/api/v1/engineering-changes', { title: 'Thicker bracket', productId, changeType: 'drawing', fromRevision: 'B', toRevision: 'C', reason: 'Cracks in field returns', oldRevisionId: b.id, ...over }));
    const approve = async (id: string) => {
      await ok(api.post(`/api/v1/engineering-changes/${id}/submit`));
      await ok(api.post(`/api/v1/engineering-changes/${id}/approve`, {}));
    };
    // A change naming revision D as its C is refused when applied, and nothing moves.
    const wrong = await eco({ newRevisionId: d.id });
    await approve(wrong.id);
    expect((await refused(api.post(`/api/v1/engineering-changes/${wrong.id}/apply`, { effectiveOn: '2026-04-01' }))).pointers).toEqual(['/newRevisionId']);
    expect((await ok(api.get(`/api/v1/product-revisions/${d.id}`))).state).toBe('draft');
    const right = await eco({ newRevisionId: c.id });
    expect(Number(right.changeNumber.slice(-4))).toBe(Number(wrong.changeNumber.slice(-4)) + 1);
    expect(right.changeNumber).toMatch(new RegExp(`^ECO-${new Date().getUTCFullYear()}-\\d{4}$`));
    await approve(right.id);
    expect(await ok(api.post(`/api/v1/engineering-changes/${right.id}/apply`, { effectiveOn: '2026-04-01' }))).toMatchObject({ state: 'applied', effectiveOn: '2026-04-01' });
    expect(await ok(api.get(`/api/v1/product-revisions/${c.id}`))).toMatchObject({ state: 'released', effectiveOn: '2026-04-01' });
    expect((await ok(api.get(`/api/v1/product-revisions/${b.id}`))).state).toBe('obsolete');
  });
});

describe('referrals', () => {
  it('a reward is not paid before it is payable (after probation)', async () => {
    const jobId = (await created(api.post('/api/v1/job-openings', { title: 'Engineer' }))).id;
    const referralId = (await created(api.post('/api/v1/referrals', { referrerId: employeeId, jobId, candidateName: 'Majed' }))).id;
    // A reward is for a hired referral, goes to its referrer, once.
    expect(await refused(api.post('/api/v1/referral-rewards', { referralId, amount: 3_000 }))).toEqual({ pointers: ['/referralId'], messages: ['A reward is for a referral that was hired'] });
    for (const t of ['accept', 'markHired']) await ok(api.post(`/api/v1/referrals/${referralId}/${t}`));
    const someoneElse = (await created(api.post('/api/v1/employees', { fullName: 'Bandar Al-Zahrani', jobTitle: 'Engineer', joinDate: '2024-05-01' }))).id;
    expect((await refused(api.post('/api/v1/referral-rewards', { referralId, referrerId: someoneElse, amount: 3_000 }))).pointers).toEqual(['/referrerId']);
    const reward = await created(api.post('/api/v1/referral-rewards', { referralId, amount: 3_000, payableAfter: '2026-07-01' }));
    expect(reward.referrerId).toBe(employeeId);
    expect(await conflictDetail(api.post('/api/v1/referral-rewards', { referralId, amount: 1_000 }))).toMatchObject({ reason: 'unique', field: 'referralId', other: reward.id });
    await ok(api.post(`/api/v1/referral-rewards/${reward.id}/approve`));
    expect(await conflict(api.post(`/api/v1/referral-rewards/${reward.id}/pay`, { paidVia: 'payroll', paidOn: '2026-06-30' }))).toContain('not payable yet');
    expect(await ok(api.post(`/api/v1/referral-rewards/${reward.id}/pay`, { paidVia: 'payroll', paidOn: '2026-07-27' }))).toMatchObject({ state: 'paid', paidVia: 'payroll', paidOn: '2026-07-27' });
  });
});

describe('training', () => {
  it('a session of two seats takes two approvals, completes once each has a result and counts them; an induction completes when its checklist is done', async () => {
    const courseId = (await created(api.post('/api/v1/training-courses', { name: 'First aid' }))).id;
    const s = await created(api.post('/api/v1/training-sessions', { courseId, startDate: '2026-03-01', endDate: '2026-03-03', seats: 2 }));
    expect(s).toMatchObject({ days: 3, enrolledCount: 0, attendedCount: 0 });
    // Two seats: the third approval is refused; the session completes once each has a result, and counts them.
    const people = [employeeId];
    for (const fullName of ['Yousef Al-Dosari', 'Amal Al-Otaibi']) people.push((await created(api.post('/api/v1/employees', { fullName, jobTitle: 'Picker', joinDate: '2025-06-01' }))).id);
    const enrolled: string[] = [];
    for (const id of people) enrolled.push((await created(api.post('/api/v1/training-enrolments', { employeeId: id, courseId, sessionId: s.id }))).id);
    for (const id of enrolled.slice(0, 2)) await ok(api.post(`/api/v1/training-enrolments/${id}/approve`));
    expect(await conflictDetail(api.post(`/api/v1/training-enrolments/${enrolled[2]}/approve`))).toMatchObject({ reason: 'parentRule' });
    expect(await conflict(api.post(`/api/v1/training-sessions/${s.id}/complete`))).toContain('Record the result of every enrolled employee');
    await ok(api.patch(`/api/v1/training-enrolments/${enrolled[0]}`, { result: 'passed' }));
    await ok(api.patch(`/api/v1/training-enrolments/${enrolled[1]}`, { result: 'failed' }));
    expect(await ok(api.post(`/api/v1/training-sessions/${s.id}/complete`))).toMatchObject({ state: 'completed', enrolledCount: 2, attendedCount: 2, passedCount: 1, pendingResults: 0 });
    expect(await conflictDetail(api.patch(`/api/v1/training-enrolments/${enrolled[1]}`, { result: 'passed' }))).toMatchObject({ reason: 'parentLocked', state: 'completed' });
    const otherCourse = (await created(api.post('/api/v1/training-courses', { name: 'Forklift' }))).id;
    expect((await refused(api.post('/api/v1/training-enrolments', { employeeId, courseId: otherCourse, sessionId: s.id }))).pointers).toEqual(['/sessionId']);

    const ind = await created(api.post('/api/v1/training-inductions', { employeeId, programme: 'Warehouse', dueDate: '2026-03-31',
      checklist: [{ item: 'Safety walk', done: true, doneOn: '2026-03-02' }, { item: 'Forklift briefing' }, { item: 'HR forms' }, { item: 'IT account', done: true, doneOn: '2026-03-02' }] }));
    expect(ind.progressPercent).toBe(50);
    expect(await conflict(api.post(`/api/v1/training-inductions/${ind.id}/complete`))).toContain('not done');
    expect((await refused(api.patch(`/api/v1/training-inductions/${ind.id}`, { checklist: [{ item: 'Safety walk', done: true }] }))).pointers).toEqual(['/checklist']);
    expect(await ok(api.patch(`/api/v1/training-inductions/${ind.id}`, { checklist: [{ item: 'Safety walk', done: true, doneOn: '2026-03-02' }] }))).toMatchObject({ progressPercent: 100 });
    await ok(api.post(`/api/v1/training-inductions/${ind.id}/complete`));

    const enrolment = await created(api.post('/api/v1/training-enrolments', { employeeId, courseId }));
    expect(await conflict(api.post(`/api/v1/training-enrolments/${enrolment.id}/approve`))).toContain('Place the employee in a session first');
    const comp = await created(api.post('/api/v1/training-competencies', { employeeId, competencyCode: 'FA-1', competencyName: 'First aid', issuedOn: '2026-03-03', validUntil: '2028-03-03' }));
    expect((await refused(api.post(`/api/v1/training-competencies/${comp.id}/revoke`, {}))).pointers).toEqual(['/reason']);
    expect(await ok(api.post(`/api/v1/training-competencies/${comp.id}/revoke`, { reason: 'Certificate forged' }))).toMatchObject({ state: 'revoked', revokeReason: 'Certificate forged' });
  });
});

describe('valet', () => {
  it('a lost ticket adds its fee (50 + 100) and the car is released only after an ID check', async () => {
    const t = await created(api.post('/api/v1/valet-tickets', { site: 'Hotel', plateNumber: 'ABC 1234', fee: 50 }));
    const next = await created(api.post('/api/v1/valet-tickets', { site: 'Hotel', plateNumber: 'XYZ 9876', fee: 50 }));
    expect(t.ticketNumber).toBe(`VT-${new Date().getUTCFullYear()}-000001`);
    expect(next.ticketNumber).toBe(`VT-${new Date().getUTCFullYear()}-000002`);
    expect((await refused(api.patch(`/api/v1/valet-tickets/${t.id}`, { ticketLost: true }))).pointers).toEqual(['/lostTicketFee']);
    expect(await ok(api.patch(`/api/v1/valet-tickets/${t.id}`, { ticketLost: true, lostTicketFee: 100 }))).toMatchObject({ totalFee: 150 });
    expect((await refused(api.post(`/api/v1/valet-tickets/${t.id}/park`, {}))).pointers).toEqual(['/bay']);
    await ok(api.post(`/api/v1/valet-tickets/${t.id}/park`, { bay: 'B2-14' }));
    await ok(api.post(`/api/v1/valet-tickets/${t.id}/request`));
    await ok(api.post(`/api/v1/valet-tickets/${t.id}/markReady`));
    expect(await conflict(api.post(`/api/v1/valet-tickets/${t.id}/deliver`))).toContain("check and record the guest's ID");
    await ok(api.patch(`/api/v1/valet-tickets/${t.id}`, { idCheckedNumber: '1012345678' }));
    expect(await ok(api.post(`/api/v1/valet-tickets/${t.id}/deliver`))).toMatchObject({ state: 'delivered', bay: 'B2-14', totalFee: 150 });
  });
});

describe('voip', () => {
  it('a call of 61 seconds bills 2 minutes; a missed call keeps why', async () => {
    const call = { direction: 'inbound', fromNumber: '+966500000001', toNumber: '+966112345678' };
    expect((await refused(api.post('/api/v1/phone-calls', { ...call, toNumber: call.fromNumber }))).pointers).toEqual(['/toNumber']);
    const c = await created(api.post('/api/v1/phone-calls', call));
    await ok(api.post(`/api/v1/phone-calls/${c.id}/answer`));
    expect(await ok(api.post(`/api/v1/phone-calls/${c.id}/hangUp`, { durationSeconds: 61 }))).toMatchObject({ state: 'completed', durationSeconds: 61, billableMinutes: 2 });
    const m = await created(api.post('/api/v1/phone-calls', call));
    expect(await ok(api.post(`/api/v1/phone-calls/${m.id}/markMissed`, { reason: 'outside_hours' }))).toMatchObject({ state: 'missed', missedReason: 'outside_hours', billableMinutes: 0 });
  });

  it('an extension number is used once', async () => {
    const ext = await created(api.post('/api/v1/phone-extensions', { number: '204', employeeId }));
    expect(await conflictDetail(api.post('/api/v1/phone-extensions', { number: '204' }))).toMatchObject({ reason: 'unique', field: 'number', other: ext.id });
    const other = await created(api.post('/api/v1/phone-extensions', { number: '205' }));
    expect(await conflictDetail(api.patch(`/api/v1/phone-extensions/${other.id}`, { number: '204' }))).toMatchObject({ reason: 'unique', other: ext.id });
  });
});

describe('storefronts', () => {
  it('an imported order totals its items; refunds, a manager\'s, add up to no more than its total', async () => {
    const channelId = (await created(api.post('/api/v1/storefront-channels', { platform: 'salla', storeName: 'Qahwa' }))).id;
    const order = { channelId, externalOrderId: 'S-1', lines: [{ productId, quantity: 2, unitPrice: 45 }, { productId, quantity: 1, unitPrice: 19.5 }], total: 126.5 };
    const o = await created(api.post('/api/v1/storefront-orders', order));
    expect(o.itemsTotal).toBe(109.5);
    // Refunds are a manager's transition, adding up to no more than the total: 100 + 26.50 = 126.50.
    expect((await refused(api.patch(`/api/v1/storefront-orders/${o.id}`, { refundedAmount: 100 }))).pointers).toEqual(['/refundedAmount']);
    await ok(api.post(`/api/v1/storefront-orders/${o.id}/complete`));
    await conflict(api.patch(`/api/v1/storefront-orders/${o.id}`, { total: 1 }));
    expectError(await company.as('Member').post(`/api/v1/storefront-orders/${o.id}/refund`, { amount: 100 }), 403, 'FORBIDDEN');
    expect(await ok(api.post(`/api/v1/storefront-orders/${o.id}/refund`, { amount: 100 }))).toMatchObject({ state: 'completed', refundedAmount: 100 });
    expect(await conflict(api.post(`/api/v1/storefront-orders/${o.id}/refund`, { amount: 26.51 }))).toContain('exceed the order total');
    expect(await ok(api.post(`/api/v1/storefront-orders/${o.id}/refund`, { amount: 26.5 }))).toMatchObject({ refundedAmount: 126.5 });
    const other = await created(api.post('/api/v1/storefront-orders', { ...order, externalOrderId: 'S-2' }));
    expect(await ok(api.post(`/api/v1/storefront-orders/${other.id}/cancel`, { reason: 'Out of stock' }))).toMatchObject({ state: 'cancelled', cancelReason: 'Out of stock' });
  });

  it('a listing takes the product\'s price unless given one; committing more than is available is oversold, once', async () => {
    const channelId = (await created(api.post('/api/v1/storefront-channels', { platform: 'zid', storeName: 'Qahwa Zid' }))).id;
    const l = await created(api.post('/api/v1/storefront-listings', { channelId, productId, available: 5, committed: 3 }));
    expect(l).toMatchObject({ price: 100, freeToSell: 2 });
    expect((await created(api.post('/api/v1/storefront-listings', { channelId, productId, price: 95 }))).price).toBe(95);
    await ok(api.patch(`/api/v1/storefront-listings/${l.id}`, { committed: 7 }));
    await ok(api.patch(`/api/v1/storefront-listings/${l.id}`, { committed: 8 }));
    const events = await host.storage.db.all<{ data: string }>("SELECT data FROM outbox WHERE company_id = ? AND topic = 'storefronts.inventory.oversold'", [company.company.id]);
    expect(events.map((e) => JSON.parse(e.data)).filter((d) => d.id === l.id).map((d) => [d.committed, d.freeToSell])).toEqual([[7, -2]]);
  });
});

describe('report builder', () => {
  it('a grouped report aggregates every other column; a schedule lists valid recipients once; a failed run says why', async () => {
    const cols = [{ field: 'customerId' }, { field: 'total', aggregate: 'sum' }, { field: 'id' }];
    expect((await refused(api.post('/api/v1/custom-reports', { name: 'Sales by customer', sourceResource: 'invoices', groupBy: 'customerId', columns: cols }))).pointers).toEqual(['/columns']);
    const r = await created(api.post('/api/v1/custom-reports', { name: 'Sales by customer', sourceResource: 'invoices', groupBy: 'customerId', columns: [cols[0], cols[1], { field: 'id', aggregate: 'count' }] }));
    const rec = [{ email: 'cfo@example.sa' }, { email: 'cfo@example.sa' }, { email: 'nobody' }];
    expect((await refused(api.post('/api/v1/report-schedules', { reportId: r.id, frequency: 'weekly', format: 'xlsx', recipients: rec }))).pointers).toEqual(['/recipients', '/recipients']);
    const sch = await created(api.post('/api/v1/report-schedules', { reportId: r.id, frequency: 'weekly', format: 'xlsx', recipients: [rec[0]] }));
    expect((await refused(api.post('/api/v1/report-runs', { scheduleId: sch.id, reportId: r.id, outcome: 'failed' }))).pointers).toEqual(['/error']);
    // A run is of its schedule's report (the default); a report name is used once.
    expect((await created(api.post('/api/v1/report-runs', { scheduleId: sch.id, outcome: 'sent', rowCount: 12, recipientCount: 1 }))).reportId).toBe(r.id);
    const other = await created(api.post('/api/v1/custom-reports', { name: 'Open invoices', sourceResource: 'invoices', columns: [{ field: 'total' }] }));
    expect(await refused(api.post('/api/v1/report-runs', { scheduleId: sch.id, reportId: other.id, outcome: 'sent' }))).toEqual({ pointers: ['/reportId'], messages: ["The run is of another report than its schedule's"] });
    expect(await conflictDetail(api.post('/api/v1/custom-reports', { name: 'Open invoices', sourceResource: 'bills', columns: [{ field: 'total' }] }))).toMatchObject({ reason: 'unique', field: 'name', other: other.id });
  });
});

describe('security ops', () => {
  it('a contractor permit needs company and ID, a year at most; a theft closes only with a police report', async () => {
    const permit = { site: 'HQ', visitorType: 'contractor', visitorName: 'Ali', validFrom: '2026-03-01', validTo: '2027-03-05' };
    expect((await refused(api.post('/api/v1/access-permits', permit))).pointers).toEqual(['/validTo', '/idNumber']);
    const p = await created(api.post('/api/v1/access-permits', { ...permit, validTo: '2026-03-31', visitorCompany: 'Binladin', idNumber: '2098765432' }));
    expect(await ok(api.post(`/api/v1/access-permits/${p.id}/reject`, { reason: 'No work order' }))).toMatchObject({ state: 'rejected', decisionReason: 'No work order' });
    const i = await created(api.post('/api/v1/security-incidents', { site: 'HQ', category: 'theft', occurredOn: '2026-03-02', description: 'Laptop taken', actionTaken: 'CCTV reviewed' }));
    expect(await conflict(api.post(`/api/v1/security-incidents/${i.id}/close`))).toContain('police report number');
    await ok(api.patch(`/api/v1/security-incidents/${i.id}`, { policeReportNumber: 'RYD-2026-5521' }));
    await ok(api.post(`/api/v1/security-incidents/${i.id}/close`));
    const shift = { guardId: employeeId, site: 'HQ', shiftDate: '2026-03-02', startTime: '18:00', endTime: '06:00' };
    expect((await refused(api.post('/api/v1/guard-assignments', { ...shift, replacementGuardId: employeeId }))).pointers).toEqual(['/replacementGuardId']);
    // A no-show's replacement is given the shift.
    const a = await created(api.post('/api/v1/guard-assignments', { ...shift, postName: 'Gate 2' }));
    const replacement = (await created(api.post('/api/v1/employees', { fullName: 'Fahad Al-Mutairi', jobTitle: 'Guard', joinDate: '2023-09-01' }))).id;
    await ok(api.post(`/api/v1/guard-assignments/${a.id}/markNoShow`, { replacementGuardId: replacement }));
    const covering = (await ok(api.get(`/api/v1/guard-assignments?guardId=${replacement}`))) as unknown as Record<string, unknown>[];
    expect(covering).toEqual([expect.objectContaining({ site: 'HQ', shiftDate: '2026-03-02', startTime: '18:00', endTime: '06:00', state: 'scheduled', notes: 'Covering a no-show' })]);
    const b = await created(api.post('/api/v1/guard-assignments', shift));
    await ok(api.post(`/api/v1/guard-assignments/${b.id}/markNoShow`, {}));
    expect(((await ok(api.get(`/api/v1/guard-assignments?guardId=${replacement}`))) as unknown as unknown[]).length).toBe(1);
  });
});

describe('sign', () => {
  it('an envelope is sent only with its document fingerprint and then fixed; a copy recipient does not sign', async () => {
    const e = await created(api.post('/api/v1/sign-envelopes', { title: 'NDA' }));
    expect(await conflict(api.post(`/api/v1/sign-envelopes/${e.id}/send`))).toContain('SHA-256');
    expect((await refused(api.patch(`/api/v1/sign-envelopes/${e.id}`, { documentSha256: 'ABC' }))).pointers).toEqual(['/documentSha256']);
    await ok(api.patch(`/api/v1/sign-envelopes/${e.id}`, { documentSha256: 'a'.repeat(64), signingOrder: 'sequential' }));
    // A copy is not a signer: the envelope goes out only with one; in sequence, each recipient has a routing order.
    const cc = await created(api.post('/api/v1/sign-recipients', { envelopeId: e.id, name: 'Legal', email: 'legal@example.sa', role: 'cc', routingOrder: 3 }));
    expect(await conflict(api.post(`/api/v1/sign-envelopes/${e.id}/send`))).toContain('at least one signer');
    expect(await refused(api.post('/api/v1/sign-recipients', { envelopeId: e.id, name: 'CEO', email: 'ceo@example.sa', role: 'signer' }))).toEqual({ pointers: ['/routingOrder'], messages: ['A sequential envelope gives each recipient a routing order'] });
    await created(api.post('/api/v1/sign-recipients', { envelopeId: e.id, name: 'CEO', email: 'ceo@example.sa', role: 'signer', routingOrder: 1 }));
    await created(api.post('/api/v1/sign-recipients', { envelopeId: e.id, name: 'CFO', email: 'cfo@example.sa', role: 'approver', routingOrder: 2 }));
    expect(await ok(api.post(`/api/v1/sign-envelopes/${e.id}/send`))).toMatchObject({ state: 'sent', signerCount: 2 });
    await conflict(api.patch(`/api/v1/sign-envelopes/${e.id}`, { documentSha256: 'b'.repeat(64) }));
    expect(await conflictDetail(api.post('/api/v1/sign-recipients', { envelopeId: e.id, name: 'Late', email: 'late@example.sa', role: 'signer', routingOrder: 4 }))).toMatchObject({ reason: 'parentLocked', state: 'sent' });
    expect(await conflict(api.post(`/api/v1/sign-recipients/${cc.id}/sign`))).toContain('does not sign');
    expect(await ok(api.post(`/api/v1/sign-envelopes/${e.id}/void`, { reason: 'Wrong counterparty' }))).toMatchObject({ state: 'voided', voidReason: 'Wrong counterparty' });
  });
});

describe('sms marketing', () => {
  it('counts SMS parts: 160 Latin characters are one, 161 two; 70 Arabic one, 71 two', async () => {
    const c = (message: string) => created(api.post('/api/v1/sms-campaigns', { name: 'Promo', senderName: 'QAHWA', message }));
    expect((await c('a'.repeat(160))).segments).toBe(1);
    expect((await c('a'.repeat(161))).segments).toBe(2);
    expect((await c('ق'.repeat(70))).segments).toBe(1);
    expect((await c('ق'.repeat(71))).segments).toBe(2);
    expect((await c('ق'.repeat(135))).segments).toBe(3);
    expect((await refused(api.post('/api/v1/sms-campaigns', { name: 'x', senderName: 'قهوة', message: 'hi' }))).pointers).toEqual(['/senderName']);
    const contact = await created(api.post('/api/v1/sms-contacts', { phone: '+966500000002' }));
    expect(await ok(api.post(`/api/v1/sms-contacts/${contact.id}/unsubscribe`, { via: 'keyword_reply' }))).toMatchObject({ state: 'unsubscribed', unsubscribeVia: 'keyword_reply' });
  });
});

describe('social marketing', () => {
  it('a post is scheduled only with a date and time; a failure keeps the error', async () => {
    const accountId = (await created(api.post('/api/v1/social-accounts', { network: 'x', handle: '@qahwa' }))).id;
    const p = await created(api.post('/api/v1/social-posts', { accountId, text: 'New roast' }));
    expect(await conflict(api.post(`/api/v1/social-posts/${p.id}/schedule`))).toContain('Set the date and time first');
    expect((await refused(api.patch(`/api/v1/social-posts/${p.id}`, { scheduledOn: '2026-03-01', scheduledTime: '9:00' }))).pointers).toEqual(['/scheduledTime']);
    await ok(api.patch(`/api/v1/social-posts/${p.id}`, { scheduledOn: '2026-03-01', scheduledTime: '09:00' }));
    await ok(api.post(`/api/v1/social-posts/${p.id}/schedule`));
    expect(await ok(api.post(`/api/v1/social-posts/${p.id}/fail`, { error: 'Token expired' }))).toMatchObject({ state: 'failed', error: 'Token expired' });
  });

  it('a post is as long as its network allows (281 characters is too long for X, not for LinkedIn); a disconnected account publishes nothing', async () => {
    const x = await created(api.post('/api/v1/social-accounts', { network: 'x', handle: '@qahwa_sa' }));
    const linkedin = await created(api.post('/api/v1/social-accounts', { network: 'linkedin', handle: 'qahwa' }));
    expect(await refused(api.post('/api/v1/social-posts', { accountId: x.id, text: 'a'.repeat(281) }))).toEqual({ pointers: ['/text'], messages: ['The text is longer than the network allows (X 280, Snapchat 250, Instagram and TikTok 2,200, LinkedIn 3,000 characters)'] });
    await created(api.post('/api/v1/social-posts', { accountId: x.id, text: 'a'.repeat(280) }));
    const long = await created(api.post('/api/v1/social-posts', { accountId: linkedin.id, text: 'a'.repeat(281) }));
    await ok(api.post(`/api/v1/social-accounts/${linkedin.id}/disconnect`));
    expect(await conflict(api.post(`/api/v1/social-posts/${long.id}/publish`, {}))).toContain('Reconnect the account');
    await ok(api.post(`/api/v1/social-accounts/${linkedin.id}/reconnect`));
    expect((await ok(api.post(`/api/v1/social-posts/${long.id}/publish`, {}))).state).toBe('published');
  });
});

describe('spreadsheet', () => {
  it('a workbook is sent to valid recipients, each once', async () => {
    const wb = await created(api.post('/api/v1/workbooks', { title: 'Q1 sales' }));
    expect((await refused(api.post('/api/v1/workbook-sends', { workbookId: wb.id, format: 'xlsx', recipients: [{ email: 'a@b' }] }))).pointers).toEqual(['/recipients']);
    await created(api.post('/api/v1/workbook-sends', { workbookId: wb.id, format: 'xlsx', recipients: [{ email: 'ceo@example.sa' }] }));
    await ok(api.post(`/api/v1/workbooks/${wb.id}/archive`));
    expect(await refused(api.post('/api/v1/workbook-sends', { workbookId: wb.id, format: 'pdf', recipients: [{ email: 'ceo@example.sa' }] }))).toEqual({ pointers: ['/workbookId'], messages: ['An archived workbook is not sent'] });
  });
});

describe('surveys', () => {
  it('an NPS survey asks for a score, and its questions are fixed once open', async () => {
    const q = { text: 'Any comment?', questionType: 'text' };
    expect((await refused(api.post('/api/v1/surveys', { title: 'NPS Q1', surveyType: 'nps', questions: [q] }))).pointers).toEqual(['/questions']);
    const s = await created(api.post('/api/v1/surveys', { title: 'NPS Q1', surveyType: 'nps', questions: [{ text: 'How likely are you to recommend us?', questionType: 'score' }, q] }));
    await ok(api.post(`/api/v1/surveys/${s.id}/open`));
    await conflict(api.patch(`/api/v1/surveys/${s.id}`, { questions: [q] }));
    expect(await ok(api.patch(`/api/v1/surveys/${s.id}`, { closesOn: '2026-04-01' }))).toMatchObject({ closesOn: '2026-04-01' });
  });

  it('a response is to an open survey and scores on its scale: NPS 0–10, CSAT 1–5', async () => {
    const nps = await created(api.post('/api/v1/surveys', { title: 'NPS Q2', surveyType: 'nps', questions: [{ text: 'Recommend us?', questionType: 'score' }] }));
    expect(await refused(api.post('/api/v1/survey-responses', { surveyId: nps.id, score: 9 }))).toEqual({ pointers: ['/surveyId'], messages: ['The survey is not open for responses'] });
    await ok(api.post(`/api/v1/surveys/${nps.id}/open`));
    for (const score of [11, 7.5]) expect((await refused(api.post('/api/v1/survey-responses', { surveyId: nps.id, score }))).pointers).toEqual(['/score']);
    for (const score of [0, 10, 9]) await created(api.post('/api/v1/survey-responses', { surveyId: nps.id, score }));
    expect((await ok(api.get(`/api/v1/surveys/${nps.id}`))).responseCount).toBe(3);
    const csat = await created(api.post('/api/v1/surveys', { title: 'CSAT', surveyType: 'csat', questions: [{ text: 'Satisfied?', questionType: 'score' }] }));
    await ok(api.post(`/api/v1/surveys/${csat.id}/open`));
    expect((await refused(api.post('/api/v1/survey-responses', { surveyId: csat.id, score: 6 }, { 'accept-language': 'ar' }), 'ar')).pointers).toEqual(['/score']);
    await created(api.post('/api/v1/survey-responses', { surveyId: csat.id, score: 5 }));
    await ok(api.post(`/api/v1/surveys/${nps.id}/close`));
    expect((await refused(api.post('/api/v1/survey-responses', { surveyId: nps.id, score: 8 }))).pointers).toEqual(['/surveyId']);
  });
});

describe('website', () => {
  it('each publication is the next version; domains and paths are checked', async () => {
    expect((await refused(api.post('/api/v1/websites', { name: 'Qahwa', defaultLanguage: 'ar', domain: 'Qahwa SA' }))).pointers).toEqual(['/domain']);
    const site = await created(api.post('/api/v1/websites', { name: 'Qahwa', defaultLanguage: 'ar', domain: 'qahwa.sa' }));
    expect((await ok(api.post(`/api/v1/websites/${site.id}/publish`))).version).toBe(1);
    expect((await ok(api.post(`/api/v1/websites/${site.id}/publish`))).version).toBe(2);
    expect((await refused(api.post('/api/v1/website-pages', { siteId: site.id, path: 'about us', title: 'About' }))).pointers).toEqual(['/path']);
  });

  it('a path is once per site, a domain once in the company', async () => {
    const site = await created(api.post('/api/v1/websites', { name: 'Qahwa store', defaultLanguage: 'en', domain: 'store.qahwa.sa' }));
    const other = await created(api.post('/api/v1/websites', { name: 'Qahwa careers', defaultLanguage: 'ar' }));
    const about = await created(api.post('/api/v1/website-pages', { siteId: site.id, path: '/about', title: 'About' }));
    expect(await conflictDetail(api.post('/api/v1/website-pages', { siteId: site.id, path: '/about', title: 'About us' }))).toMatchObject({ reason: 'unique', field: 'path', other: about.id });
    await created(api.post('/api/v1/website-pages', { siteId: other.id, path: '/about', title: 'About' }));
    expect(await conflictDetail(api.patch(`/api/v1/websites/${other.id}`, { domain: 'store.qahwa.sa' }))).toMatchObject({ reason: 'unique', field: 'domain', other: site.id });
    const d = await created(api.post('/api/v1/website-domains', { siteId: site.id, domain: 'www.qahwa.sa', verificationMethod: 'cname' }));
    expect(await conflictDetail(api.post('/api/v1/website-domains', { siteId: other.id, domain: 'www.qahwa.sa', verificationMethod: 'dns_txt' }))).toMatchObject({ reason: 'unique', other: d.id });
  });
});

describe('whatsapp', () => {
  it('template names follow Meta\'s rule; a rejection keeps its reason; a media message needs its media', async () => {
    expect((await refused(api.post('/api/v1/whatsapp-templates', { name: 'Order Ready', language: 'ar', category: 'utility', body: 'طلبك جاهز' }))).pointers).toEqual(['/name']);
    const t = await created(api.post('/api/v1/whatsapp-templates', { name: 'order_ready', language: 'ar', category: 'utility', body: 'طلبك جاهز' }));
    await ok(api.post(`/api/v1/whatsapp-templates/${t.id}/submit`));
    await conflict(api.patch(`/api/v1/whatsapp-templates/${t.id}`, { body: 'x' }));
    expect(await ok(api.post(`/api/v1/whatsapp-templates/${t.id}/reject`, { reason: 'Promotional content in utility' }))).toMatchObject({ state: 'rejected', rejectionReason: 'Promotional content in utility' });
    const contactId = (await created(api.post('/api/v1/whatsapp-contacts', { phone: '+966500000003' }))).id;
    const conversationId = (await created(api.post('/api/v1/whatsapp-conversations', { contactId }))).id;
    expect((await refused(api.post('/api/v1/whatsapp-messages', { conversationId, direction: 'inbound', messageType: 'image' }))).pointers).toEqual(['/mediaUrl']);
  });

  it('a template name is once per language; a broadcast goes out on an approved template only; a conversation counts its messages', async () => {
    const tpl = (language: string) => ({ name: 'delivery_update', language, category: 'utility', body: 'Your order is on its way' });
    const ar = await created(api.post('/api/v1/whatsapp-templates', tpl('ar')));
    expect(ar.nameAndLanguage).toBe('delivery_update:ar');
    const en = await created(api.post('/api/v1/whatsapp-templates', tpl('en')));
    expect(await conflictDetail(api.post('/api/v1/whatsapp-templates', tpl('ar')))).toMatchObject({ reason: 'unique', field: 'nameAndLanguage', other: ar.id });
    const b = await created(api.post('/api/v1/whatsapp-broadcasts', { name: 'Ramadan hours', templateId: en.id }));
    expect(await conflict(api.post(`/api/v1/whatsapp-broadcasts/${b.id}/send`))).toContain('not approved by Meta');
    await ok(api.post(`/api/v1/whatsapp-templates/${en.id}/submit`));
    await ok(api.post(`/api/v1/whatsapp-templates/${en.id}/approve`));
    expect((await ok(api.post(`/api/v1/whatsapp-broadcasts/${b.id}/send`))).state).toBe('sent');

    const contactId = (await created(api.post('/api/v1/whatsapp-contacts', { phone: '+966500000004' }))).id;
    const conversationId = (await created(api.post('/api/v1/whatsapp-conversations', { contactId }))).id;
    await created(api.post('/api/v1/whatsapp-messages', { conversationId, direction: 'inbound', messageType: 'text', text: 'Is my order ready?' }));
    const reply = await created(api.post('/api/v1/whatsapp-messages', { conversationId, direction: 'outbound', messageType: 'template', templateId: en.id }));
    expect((await ok(api.get(`/api/v1/whatsapp-conversations/${conversationId}`))).messageCount).toBe(2);
    expect((await api.delete(`/api/v1/whatsapp-messages/${reply.id}`)).statusCode).toBeLessThan(300);
    expect((await ok(api.get(`/api/v1/whatsapp-conversations/${conversationId}`))).messageCount).toBe(1);
  });
});
