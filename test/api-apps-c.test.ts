// The rules of the point-of-sale, hospitality, rental, property, subscription, pharmacy, time,
// project, logistics, planning, hiring and quality apps (and the smaller ones), driven through
// the API alone with the numbers each business gives: what a document computes, what it refuses
// with which error at which pointer, and what a transition changes. One host with just the apps
// the file needs; on SQLite, and again on PostgreSQL (vitest.config.ts's `onPostgres`).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Host } from '../core/host.ts';
import { firstPartySources } from '../core/apps/app-source.ts';
import { buildHost } from './db.ts';
import { ARABIC, createCompany, createCustomer, expectError, type Client, type Res, type TestCompany } from './helpers.ts';

const APPS = [
  'invoicing', 'employees', 'ecommerce', 'emr', 'pos', 'restaurant', 'rental', 'property', 'subscriptions', 'pharmacy',
  'projects', 'timesheets', 'shipping', 'planning', 'recruitment', 'quality',
];

let host: Host;
let company: TestCompany;
let api: Client;
let customerId: string;
let employeeId: string;
let productId: string;

beforeAll(async () => {
  host = await buildHost({ sources: firstPartySources().filter((s) => APPS.includes(s.manifest.id)), config: { rateLimitPerMinute: 0 } });
  company = await createCompany(host, { currency: 'SAR', apps: APPS });
  api = company.as();
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

describe('restaurant', () => {
  it('a dine-in bill of 230 (VAT-inclusive) holds 30 of VAT; paying takes the method, then the bill is closed', async () => {
    const table = await created(api.post('/api/v1/restaurant-tables', { tableNo: 'T4', seats: 4 }));
    expect(await conflict(api.post(`/api/v1/restaurant-tables/${table.id}/seat`, { covers: 6 }))).toContain('More guests than the table seats');
    expect(await ok(api.post(`/api/v1/restaurant-tables/${table.id}/seat`, { covers: 3 }))).toMatchObject({ state: 'occupied', covers: 3 });

    expect((await refused(api.post('/api/v1/restaurant-orders', { orderType: 'dine_in', total: 230 }))).pointers).toEqual(['/tableId', '/covers']);
    expect((await refused(api.post('/api/v1/restaurant-orders', { orderType: 'delivery', total: 50 }))).pointers).toEqual(['/deliveryAddress']);
    const order = await created(api.post('/api/v1/restaurant-orders', { orderType: 'dine_in', tableId: table.id, covers: 3, total: 230 }));
    expect(order.vatIncluded).toBe(30);
    const line = await created(api.post('/api/v1/restaurant-order-lines', { orderId: order.id, itemName: 'Kabsa', quantity: 3, unitPrice: 45.5 }));
    expect(line.amount).toBe(136.5);

    expect((await refused(api.post(`/api/v1/restaurant-orders/${order.id}/pay`, {}))).pointers).toEqual(['/paymentMethod']);
    expect(await ok(api.post(`/api/v1/restaurant-orders/${order.id}/pay`, { paymentMethod: 'mada' }))).toMatchObject({ state: 'paid', paymentMethod: 'mada' });
    await conflict(api.patch(`/api/v1/restaurant-orders/${order.id}`, { total: 1 }));
    expect(await ok(api.post(`/api/v1/restaurant-tables/${table.id}/clear`))).toMatchObject({ state: 'free', covers: 0 });
  });

  it('a void is a manager\'s, with its reason; a served item stays', async () => {
    const order = await created(api.post('/api/v1/restaurant-orders', { orderType: 'takeaway', total: 20 }));
    const line = await created(api.post('/api/v1/restaurant-order-lines', { orderId: order.id, itemName: 'Falafel', quantity: 2, unitPrice: 10 }));
    expectError(await company.as('Member').post(`/api/v1/restaurant-order-lines/${line.id}/void`, { reason: 'wrong_item' }), 403, 'FORBIDDEN');
    expect(await ok(api.post(`/api/v1/restaurant-order-lines/${line.id}/void`, { reason: 'wrong_item' }))).toMatchObject({ state: 'voided', voidReason: 'wrong_item' });
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
    agreementNumber: 'RA-1', customerId, pickupDate: '2026-03-01', returnDate: '2026-03-05',
    lines: [{ productId, quantity: 2, dailyRate: 150 }, { productId, quantity: 1, dailyRate: 80.25 }], ...over,
  });

  it('4 days of 2 × 150 and 1 × 80.25: 1,521.00 of rent, 228.15 VAT, 1,749.15; a same-day rental is a day', async () => {
    const a = await created(api.post('/api/v1/rental-agreements', agreement()));
    expect(a).toMatchObject({ rentalDays: 4, rentalAmount: 1_521, vatAmount: 228.15, total: 1_749.15 });
    expect(await created(api.post('/api/v1/rental-agreements', agreement({ returnDate: '2026-03-01' })))).toMatchObject({ rentalDays: 1, rentalAmount: 380.25 });
    expect(await refused(api.post('/api/v1/rental-agreements', agreement({ returnDate: '2026-02-28' }), { 'accept-language': 'ar' }), 'ar')).toEqual({ pointers: ['/returnDate'], messages: ['لا يجوز أن يسبق الإرجاع الاستلام'] });
  });

  it('a damaged return must be charged; the charge enters the total; then the agreement is locked', async () => {
    const a = await created(api.post('/api/v1/rental-agreements', agreement()));
    await ok(api.post(`/api/v1/rental-agreements/${a.id}/reserve`));
    await ok(api.post(`/api/v1/rental-agreements/${a.id}/pickUp`));
    await conflict(api.patch(`/api/v1/rental-agreements/${a.id}`, { returnDate: '2026-03-04', lines: [{ productId, quantity: 1, dailyRate: 1 }] }));
    expect(await conflict(api.post(`/api/v1/rental-agreements/${a.id}/markReturned`, { returnCondition: 'damaged' }))).toMatch(/Charge the damage/);
    const back = await ok(api.post(`/api/v1/rental-agreements/${a.id}/markReturned`, { returnCondition: 'damaged', lateHours: 5, extraCharges: 200 }));
    expect(back).toMatchObject({ state: 'returned', extraCharges: 200, lateHours: 5, vatAmount: 258.15, total: 1_979.15 });
    await conflict(api.patch(`/api/v1/rental-agreements/${a.id}`, { deposit: 0 }));
  });

  it('a cancellation takes its reason and fee', async () => {
    const a = await created(api.post('/api/v1/rental-agreements', agreement()));
    expect(await ok(api.post(`/api/v1/rental-agreements/${a.id}/cancel`, { reason: 'Event postponed', fee: 75 }))).toMatchObject({ state: 'cancelled', cancelReason: 'Event postponed', cancellationFee: 75 });
  });
});

describe('property', () => {
  let unitId: string;
  beforeAll(async () => {
    const buildingId = (await created(api.post('/api/v1/buildings', { name: 'Al-Olaya Tower', city: 'Riyadh' }))).id;
    unitId = (await created(api.post('/api/v1/property-units', { buildingId, unitRef: 'A-101', unitType: 'apartment', askingRent: 60_000 }))).id;
  });
  const lease = (over: Record<string, unknown> = {}) => ({ unitId, tenantId: customerId, startDate: '2026-01-01', endDate: '2026-12-31', annualRent: 60_000, paymentFrequency: 'quarterly', ...over });

  it('a year at 60,000 paid quarterly: 365 days, 60,000 for the term, instalments of 15,000; six months pro rata', async () => {
    expect(await created(api.post('/api/v1/leases', lease()))).toMatchObject({ termDays: 365, contractRent: 60_000, instalmentAmount: 15_000 });
    // 1 Jan – 30 Jun: 181 days → 60,000 × 181 ÷ 365 = 29,753.42; monthly 5,000.
    expect(await created(api.post('/api/v1/leases', lease({ endDate: '2026-06-30', paymentFrequency: 'monthly' })))).toMatchObject({ termDays: 181, contractRent: 29_753.42, instalmentAmount: 5_000 });
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
    expect(await conflict(api.post(`/api/v1/subscriptions/${sub.id}/startTrial`, { trialEndsOn: '2026-01-15' }))).toContain('A trial ends after the subscription starts');
    expect(await ok(api.post(`/api/v1/subscriptions/${sub.id}/startTrial`, { trialEndsOn: '2026-02-15' }))).toMatchObject({ state: 'trial', trialEndsOn: '2026-02-15' });
    expect(await conflict(api.post(`/api/v1/subscriptions/${sub.id}/activate`))).toContain('Set the next billing date first');
    await ok(api.patch(`/api/v1/subscriptions/${sub.id}`, { nextBillingDate: '2026-02-15' }));
    await ok(api.post(`/api/v1/subscriptions/${sub.id}/activate`));
    expect((await refused(api.post(`/api/v1/subscriptions/${sub.id}/cancel`, { reason: 'price' }))).pointers.sort()).toEqual(['/endDate', '/reason']);
    expect(await ok(api.post(`/api/v1/subscriptions/${sub.id}/cancel`, { reason: 'too_expensive', endDate: '2026-05-14' }))).toMatchObject({ state: 'cancelled', cancelReason: 'too_expensive', endDate: '2026-05-14' });
    await conflict(api.patch(`/api/v1/subscriptions/${sub.id}`, { amount: 1 }));
    expect((await refused(api.post('/api/v1/subscriptions', { customerId, planId, amount: 0, startDate: '2026-02-01', vatAmount: 1 }))).pointers).toEqual(['/vatAmount']);
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
    const good = await created(api.post('/api/v1/medicine-batches', { productId, lotNumber: 'L3', expiryDate: '2027-06-30' }));
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
    awb: 'AWB1001', merchantId, consigneeName: 'Huda', consigneePhone: '0551234567', deliveryAddress: 'Al-Malaz, Riyadh', destinationCity: 'Riyadh',
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

    const d = await created(api.post('/api/v1/shipments', shipment({ awb: 'AWB1002' })));
    await ok(api.post(`/api/v1/shipments/${d.id}/scanIn`));
    await ok(api.post(`/api/v1/shipments/${d.id}/dispatch`));
    await conflict(api.patch(`/api/v1/shipments/${d.id}`, { codAmount: 1 }));
    expect((await refused(api.post(`/api/v1/shipments/${d.id}/deliver`, {}))).pointers).toEqual(['/receivedBy']);
    expect(await ok(api.post(`/api/v1/shipments/${d.id}/deliver`, { receivedBy: 'Huda' }))).toMatchObject({ state: 'delivered', codStatus: 'collected', receivedBy: 'Huda' });
  });

  it('a driver 12.50 short explains it; a remittance of 10,000 less 1,250.75 of fees pays 8,749.25; a claim settles at most what was claimed', async () => {
    const cash = { driverId: employeeId, hub: 'RUH-1', cashupDate: '2026-02-02', expectedAmount: 4_312.5, countedAmount: 4_300 };
    expect((await refused(api.post('/api/v1/driver-cashups', cash))).pointers).toEqual(['/varianceNote']);
    expect(await created(api.post('/api/v1/driver-cashups', { ...cash, varianceNote: 'Change given twice' }))).toMatchObject({ variance: -12.5 });

    const rem = await created(api.post('/api/v1/cod-remittances', { merchantId, periodFrom: '2026-02-01', periodTo: '2026-02-07', shipmentCount: 40, codAmount: 10_000, fees: 1_250.75 }));
    expect(rem.netAmount).toBe(8_749.25);
    expect((await refused(api.post('/api/v1/cod-remittances', { merchantId, periodFrom: '2026-02-07', periodTo: '2026-02-01', shipmentCount: 1, codAmount: 10, fees: 11 }))).pointers).toEqual(['/fees', '/periodTo']);
    expect(await ok(api.post(`/api/v1/cod-remittances/${rem.id}/remit`, { paymentReference: 'SARIE-998877' }))).toMatchObject({ state: 'remitted', paymentReference: 'SARIE-998877' });
    await conflict(api.patch(`/api/v1/cod-remittances/${rem.id}`, { fees: 0 }));

    const shipmentId = (await created(api.post('/api/v1/shipments', shipment({ awb: 'AWB1003' })))).id;
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
    await ok(api.post(`/api/v1/job-offers/${offer.id}/send`));
    await conflict(api.patch(`/api/v1/job-offers/${offer.id}`, { monthlySalary: 13_000 }));

    for (const t of ['screen', 'shortlist', 'moveToOffer']) await ok(api.post(`/api/v1/job-applications/${app.id}/${t}`));
    expect(await ok(api.post(`/api/v1/job-applications/${app.id}/hire`, { employeeId, startDate: '2026-04-01' }))).toMatchObject({ state: 'hired', employeeId, startDate: '2026-04-01' });
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

    const ncr = await created(api.post('/api/v1/nonconformance-reports', { ncrNumber: 'NCR-1', checkId: c.id, productId, lotNumber: 'L-9', quantityAffected: 40, severity: 'major', disposition: 'rework' }));
    expect(await conflict(api.post(`/api/v1/nonconformance-reports/${ncr.id}/close`))).toContain('root cause');
    await ok(api.patch(`/api/v1/nonconformance-reports/${ncr.id}`, { rootCause: 'Worn tool', correctiveAction: 'Tool change every 500 parts' }));
    await ok(api.post(`/api/v1/nonconformance-reports/${ncr.id}/close`));
    await conflict(api.patch(`/api/v1/nonconformance-reports/${ncr.id}`, { disposition: 'scrap' }));
  });
});
