// The rules of 23 first-party apps (issue 26, part 2), each driven through the API alone by a
// story of its domain with the numbers the business gives: what a document computes (VAT at
// 15 %, gold by weight × rate + making charge, nights × rate, chargeable weight), what it
// refuses (with the error, the pointer and the message in ar/en), what a transition stamps
// and what a state locks. One host with just these apps and their dependencies, on SQLite and
// again on PostgreSQL (vitest.config.ts's `onPostgres`).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Host } from '../core/host.ts';
import { ARABIC, expectError, type Client, type TestCompany, created, ok } from './helpers.ts';
import { AR, conflictWith, refused, storiesWithApprover } from './app-stories.ts';

const APPS = [
  'employees', 'invoicing', 'ecommerce', 'crm',
  'emr', 'event-management', 'expenses', 'field-service', 'fleet', 'forum', 'forwarding', 'helpdesk', 'hospitality', 'hse',
  'industry-models', 'iot', 'jewelry', 'knowledge', 'legal', 'livechat', 'loyalty', 'maintenance', 'manufacturing',
  'marketing-automation', 'marketplace', 'migration', 'nonprofit',
];

let host: Host;
let co: TestCompany;
let api: Client;
let employeeId: string;
let otherEmployeeId: string;
let customerId: string;

beforeAll(async () => {
  ({ host, co, api, employeeId, otherEmployeeId, customerId } = await storiesWithApprover(APPS));
}, 60_000);
afterAll(() => host.close());

describe('expenses', () => {
  const claim = (over: Record<string, unknown> = {}) => ({
    employeeId,
    approverId: otherEmployeeId,
    purpose: 'Client visit to Jeddah',
    lines: [
      { date: '2026-03-02', category: 'accommodation', description: 'Hotel, one night', amount: 230, vatAmount: 30 },
      { date: '2026-03-02', category: 'meals', description: 'Dinner with the client', amount: 57.5, vatAmount: 7.5 },
    ],
    ...over,
  });

  it('totals the receipts (287.50, input VAT 37.50), approves part of it, and pays what was approved', async () => {
    const c = await created(api.post('/api/v1/expense-claims', claim()));
    expect(c).toMatchObject({ total: 287.5, vatTotal: 37.5 });
    refused(await api.post('/api/v1/expense-claims', claim({ total: 1 })), { pointer: '/total', rule: 'additionalProperties' } as never);
    await ok(api.post(`/api/v1/expense-claims/${c.id}/submit`));
    // Submitted: the employee can no longer change it.
    conflictWith(await api.patch(`/api/v1/expense-claims/${c.id}`, { purpose: 'Holiday' }), { reason: 'locked', state: 'pending' });
    // Only a manager approves, and never for more than the total.
    expectError(await co.as('Member').post(`/api/v1/expense-claims/${c.id}/approve`), 403, 'FORBIDDEN');
    conflictWith(await api.post(`/api/v1/expense-claims/${c.id}/approve`, { approvedAmount: 300 }), { reason: 'guard' }, "cannot exceed the claim's total");
    const approved = await ok(api.post(`/api/v1/expense-claims/${c.id}/approve`, { approvedAmount: 230 }));
    expect(approved).toMatchObject({ state: 'approved', approvedAmount: 230, total: 287.5 });
    refused(await api.post(`/api/v1/expense-claims/${c.id}/reimburse`, { paymentMethod: 'bank_transfer' }), { pointer: '/paymentRef' });
    const paid = await ok(api.post(`/api/v1/expense-claims/${c.id}/reimburse`, { paymentMethod: 'bank_transfer', paymentRef: 'TRX-5521' }));
    expect(paid).toMatchObject({ state: 'reimbursed', paymentMethod: 'bank_transfer', paymentRef: 'TRX-5521' });
  });

  it('refuses VAT above 15/115 of a receipt, a zero line and a self-approval, all at once; a rejection needs its reason', async () => {
    const bad = claim({ approverId: employeeId, lines: [{ date: '2026-03-02', category: 'fuel', description: 'Fuel', amount: 100, vatAmount: 15 }, { date: '2026-03-02', category: 'meals', description: 'Lunch', amount: 0 }] });
    refused(await api.post('/api/v1/expense-claims', bad),
      { pointer: '/lines', message: 'Every line needs an amount above zero' },
      { pointer: '/lines', message: 'A line\'s VAT cannot exceed 15 % of its amount before VAT (15/115 of the receipt)' },
      { pointer: '/approverId', message: 'An employee cannot approve their own claim' });
    const ar = expectError(await api.post('/api/v1/expense-claims', bad, AR), 400, 'VALIDATION_ERROR');
    expect(ar.details[2].message).toBe('لا يعتمد الموظف مطالبته بنفسه');
    const c = await created(api.post('/api/v1/expense-claims', claim()));
    await ok(api.post(`/api/v1/expense-claims/${c.id}/submit`));
    refused(await api.post(`/api/v1/expense-claims/${c.id}/reject`, {}), { pointer: '/reason' });
    expect(await ok(api.post(`/api/v1/expense-claims/${c.id}/reject`, { reason: 'No receipt for the hotel' }))).toMatchObject({ state: 'rejected', reviewNote: 'No receipt for the hotel' });
  });
});

describe('emr', () => {
  it('settles an insurance claim: 1,200 claimed, 950 approved in part, 250 denied; a rejection needs its reason', async () => {
    const patient = await created(api.post('/api/v1/patients', { fullName: 'Huda Al-Zahrani', nationalId: '1023456789' }));
    refused(await api.post('/api/v1/patients', { fullName: 'X', nationalId: '3023456789' }), { pointer: '/nationalId' });
    const enc = await created(api.post('/api/v1/encounters', { patientId: patient.id, practitionerId: employeeId, encounterType: 'outpatient', encounterDate: '2026-04-01' }));
    conflictWith(await api.post(`/api/v1/encounters/${enc.id}/close`), { reason: 'guard' }, 'Record at least one diagnosis');
    refused(await api.patch(`/api/v1/encounters/${enc.id}`, { diagnoses: [{ code: 'J02.9', primary: true }, { code: 'R50.9', primary: true }] }), { pointer: '/diagnoses', message: 'An encounter has one primary diagnosis at most' });
    await ok(api.patch(`/api/v1/encounters/${enc.id}`, { diagnoses: [{ code: 'J02.9', description: 'Acute pharyngitis', primary: true }] }));
    await ok(api.post(`/api/v1/encounters/${enc.id}/close`));
    conflictWith(await api.patch(`/api/v1/encounters/${enc.id}`, { clinicalNotes: 'late' }), { reason: 'locked', state: 'closed' });

    const claim = await created(api.post('/api/v1/insurance-claims', { encounterId: enc.id, patientId: patient.id, payerName: 'Bupa Arabia', claimedAmount: 1200 }));
    expect(claim.deniedAmount).toBe(0);
    await ok(api.post(`/api/v1/insurance-claims/${claim.id}/submit`));
    conflictWith(await api.post(`/api/v1/insurance-claims/${claim.id}/decide`, { decision: 'partially_approved', approvedAmount: 1200 }), { reason: 'guard' });
    conflictWith(await api.post(`/api/v1/insurance-claims/${claim.id}/decide`, { decision: 'rejected' }), { reason: 'guard' });
    const decided = await ok(api.post(`/api/v1/insurance-claims/${claim.id}/decide`, { decision: 'partially_approved', approvedAmount: 950 }));
    expect(decided).toMatchObject({ state: 'decided', decision: 'partially_approved', approvedAmount: 950, deniedAmount: 250 });
  });

  it('a lab result is recorded once, with the result required', async () => {
    const patient = await created(api.post('/api/v1/patients', { fullName: 'Ali Al-Shehri' }));
    const enc = await created(api.post('/api/v1/encounters', { patientId: patient.id, practitionerId: employeeId, encounterType: 'emergency', encounterDate: '2026-04-02' }));
    const order = await created(api.post('/api/v1/clinical-orders', { encounterId: enc.id, patientId: patient.id, orderType: 'lab', testName: 'CBC', urgency: 'stat' }));
    refused(await api.post(`/api/v1/clinical-orders/${order.id}/recordResult`, {}), { pointer: '/result' });
    expect(await ok(api.post(`/api/v1/clinical-orders/${order.id}/recordResult`, { result: 'WBC 14.2 ×10⁹/L', abnormal: true }))).toMatchObject({ state: 'resulted', abnormal: true });
    conflictWith(await api.patch(`/api/v1/clinical-orders/${order.id}`, { result: 'normal' }), { reason: 'locked', state: 'resulted' });
  });
});

describe('event-management', () => {
  it('a 3-day conference; a ticket at 500 costs 575 with 15 % VAT; a cancellation keeps its reason', async () => {
    refused(await api.post('/api/v1/managed-events', { title: 'Riyadh FinTech', startDate: '2026-05-12', endDate: '2026-05-10' }), { pointer: '/endDate', message: 'The event cannot end before it starts' });
    const ev = await created(api.post('/api/v1/managed-events', { title: 'Riyadh FinTech', eventType: 'conference', startDate: '2026-05-10', endDate: '2026-05-12', capacity: 300 }));
    expect(ev.durationDays).toBe(3);
    conflictWith(await api.post(`/api/v1/managed-events/${ev.id}/publish`), { reason: 'guard' }, 'Give the venue');
    await ok(api.patch(`/api/v1/managed-events/${ev.id}`, { venue: 'KAFD Conference Centre' }));
    await ok(api.post(`/api/v1/managed-events/${ev.id}/publish`));
    const reg = await created(api.post('/api/v1/event-registrations', { eventId: ev.id, attendeeName: 'Nora', price: 500 }));
    expect(reg).toMatchObject({ price: 500, vatAmount: 75, totalPrice: 575 });
    const cheap = await created(api.post('/api/v1/event-registrations', { eventId: ev.id, attendeeName: 'Fahad', price: 99.99 }));
    expect(cheap).toMatchObject({ vatAmount: 15, totalPrice: 114.99 });
    expectError(await co.as('Member').post(`/api/v1/managed-events/${ev.id}/cancel`, { reason: 'Venue flooded' }), 403, 'FORBIDDEN');
    expect(await ok(api.post(`/api/v1/managed-events/${ev.id}/cancel`, { reason: 'Venue flooded' }))).toMatchObject({ state: 'cancelled', cancelReason: 'Venue flooded' });
  });
});

describe('field-service', () => {
  it('a repair is dispatched to a technician and closed with the work done, 95 minutes (1.58 h) and the customer\'s sign-off', async () => {
    const wo = await created(api.post('/api/v1/fs-work-orders', { customerId, serviceType: 'repair', siteAddress: 'Olaya St, Riyadh' }));
    refused(await api.post(`/api/v1/fs-work-orders/${wo.id}/dispatch`, { technicianId: employeeId }), { pointer: '/scheduledOn' });
    expect(await ok(api.post(`/api/v1/fs-work-orders/${wo.id}/dispatch`, { technicianId: employeeId, scheduledOn: '2026-06-01' }))).toMatchObject({ technicianId: employeeId, scheduledOn: '2026-06-01' });
    conflictWith(await api.patch(`/api/v1/fs-work-orders/${wo.id}`, { customerId: (await created(api.post('/api/v1/customers', { name: 'Other' }))).id }), { reason: 'locked', field: 'customerId' });
    await ok(api.post(`/api/v1/fs-work-orders/${wo.id}/start`));
    const done = await ok(api.post(`/api/v1/fs-work-orders/${wo.id}/complete`, { resolution: 'Replaced the compressor relay', durationMinutes: 95, signedBy: 'Khalid' }));
    expect(done).toMatchObject({ state: 'done', durationMinutes: 95, durationHours: 1.58, signedBy: 'Khalid' });
  });
});

describe('fleet', () => {
  it('a fill-up of 45.5 litres for 99.19: 2.18 a litre, 12.94 VAT inside; the odometer never goes back', async () => {
    const v = await created(api.post('/api/v1/fleet-vehicles', { plateNumber: 'ABC 1234', make: 'Toyota', odometerKm: 52_000 }));
    const fuel = await created(api.post('/api/v1/fuel-logs', { vehicleId: v.id, driverId: employeeId, filledOn: '2026-02-01', litres: 45.5, amount: 99.19, fuelType: 'petrol_91', odometerKm: 52_300 }));
    expect(fuel).toMatchObject({ pricePerLitre: 2.18, vatAmount: 12.94 });
    refused(await api.post('/api/v1/fuel-logs', { vehicleId: v.id, driverId: employeeId, filledOn: '2026-02-01', litres: 0, amount: 10, fuelType: 'diesel', odometerKm: 1 }), { pointer: '/litres' });
    await ok(api.post(`/api/v1/fleet-vehicles/${v.id}/sendToWorkshop`, { reason: 'Brake pads' }));
    conflictWith(await api.post(`/api/v1/fleet-vehicles/${v.id}/returnToService`, { odometerKm: 51_000 }), { reason: 'guard' }, 'The odometer cannot go back');
    expect(await ok(api.post(`/api/v1/fleet-vehicles/${v.id}/returnToService`, { odometerKm: 52_410 }))).toMatchObject({ state: 'active', odometerKm: 52_410 });
    const fine = await created(api.post('/api/v1/traffic-fines', { vehicleId: v.id, fineNumber: 'M-77', violation: 'Speeding', amount: 300, issuedOn: '2026-02-10' }));
    conflictWith(await api.post(`/api/v1/traffic-fines/${fine.id}/pay`, { paidOn: '2026-02-01' }), { reason: 'guard' });
    await ok(api.post(`/api/v1/traffic-fines/${fine.id}/pay`, { paidOn: '2026-02-12' }));
    conflictWith(await api.patch(`/api/v1/traffic-fines/${fine.id}`, { amount: 150 }), { reason: 'locked', state: 'paid' });
  });
});

describe('forum', () => {
  it('a topic closed as a duplicate keeps its reason and takes no edits; a hidden reply is no longer the accepted answer', async () => {
    const forum = await created(api.post('/api/v1/forums', { name: 'Payroll questions', mode: 'questions' }));
    const topic = await created(api.post('/api/v1/forum-topics', { forumId: forum.id, title: 'GOSI rate?', body: 'What is the rate?', authorName: 'Reem' }));
    await ok(api.post(`/api/v1/forum-topics/${topic.id}/publish`));
    const reply = await created(api.post('/api/v1/forum-replies', { topicId: topic.id, body: '9.75 %', authorName: 'Sami', accepted: true }));
    expect(await ok(api.post(`/api/v1/forum-replies/${reply.id}/hide`, { reason: 'Wrong figure' }))).toMatchObject({ state: 'hidden', accepted: false, hiddenReason: 'Wrong figure' });
    expect((await ok(api.get(`/api/v1/forum-topics/${topic.id}`))).acceptedAnswers).toBe(0);
    refused(await api.post(`/api/v1/forum-topics/${topic.id}/close`, { reason: 'bored' }), { pointer: '/reason' });
    expect(await ok(api.post(`/api/v1/forum-topics/${topic.id}/close`, { reason: 'duplicate' }))).toMatchObject({ state: 'closed', closeReason: 'duplicate' });
    conflictWith(await api.patch(`/api/v1/forum-topics/${topic.id}`, { title: 'x' }), { reason: 'locked', state: 'closed' });
  });
});

describe('forwarding', () => {
  it('charges freight on the chargeable weight: air 500 kg of 4 m³ is 668 kg, sea 3 t of 12 m³ is 12,000 kg', async () => {
    const q = (over: Record<string, unknown>) => ({ customerId, incoterm: 'FOB', pol: 'CNSHA', pod: 'SAJED', amount: 4200, currency: 'SAR', validUntil: '2026-07-01', ...over });
    expect((await created(api.post('/api/v1/freight-quotes', q({ mode: 'air', weightKg: 500, volumeCbm: 4 })))).chargeableWeightKg).toBe(668);
    expect((await created(api.post('/api/v1/freight-quotes', q({ mode: 'sea', weightKg: 3000, volumeCbm: 12 })))).chargeableWeightKg).toBe(12_000);
    expect((await created(api.post('/api/v1/freight-quotes', q({ mode: 'road', weightKg: 9000, volumeCbm: 20 })))).chargeableWeightKg).toBe(9000);
    refused(await api.post('/api/v1/freight-quotes', q({ mode: 'sea', pod: 'CNSHA' })), { pointer: '/pod' });
  });

  it('a job ships, arrives with 7 free days, gets its delivery order and is delivered; its route is fixed once shipped', async () => {
    const job = await created(api.post('/api/v1/forwarding-jobs', { customerId, direction: 'import', mode: 'sea', incoterm: 'FOB', pol: 'CNSHA', pod: 'SADMM' }));
    refused(await api.patch(`/api/v1/forwarding-jobs/${job.id}`, { etd: '2026-03-10', eta: '2026-03-01' }), { pointer: '/eta' });
    const shipped = await ok(api.post(`/api/v1/forwarding-jobs/${job.id}/ship`, { etd: '2026-03-01', eta: '2026-03-22' }));
    expect(shipped).toMatchObject({ state: 'in_transit', transitDays: 21 });
    conflictWith(await api.patch(`/api/v1/forwarding-jobs/${job.id}`, { mode: 'air' }), { reason: 'locked', field: 'mode' });
    const arrived = await ok(api.post(`/api/v1/forwarding-jobs/${job.id}/notifyArrival`, { eta: '2026-03-24', freeDaysEnd: '2026-03-31' }));
    expect(arrived).toMatchObject({ transitDays: 23, freeDays: 7 });
    await ok(api.post(`/api/v1/forwarding-jobs/${job.id}/releaseDeliveryOrder`, { deliveryOrderNumber: 'DO-88' }));
    expect(await ok(api.post(`/api/v1/forwarding-jobs/${job.id}/deliver`, { receivedBy: 'Warehouse 3' }))).toMatchObject({ state: 'delivered', receivedBy: 'Warehouse 3' });

    const consol = await created(api.post('/api/v1/consolidations', { mode: 'sea', pol: 'CNSHA', pod: 'SADMM', etd: '2026-03-01' }));
    conflictWith(await api.post(`/api/v1/consolidations/${consol.id}/build`), { reason: 'guard' });
    refused(await api.patch(`/api/v1/consolidations/${consol.id}`, { jobs: [{ jobId: job.id, weightKg: 1 }, { jobId: job.id, weightKg: 2 }] }), { pointer: '/jobs' });
    const loaded = await ok(api.patch(`/api/v1/consolidations/${consol.id}`, { jobs: [{ jobId: job.id, packages: 12, weightKg: 1250.5, volumeCbm: 6.25 }] }));
    expect(loaded).toMatchObject({ weightKg: 1250.5, volumeCbm: 6.25, packages: 12 });
  });
});

describe('helpdesk', () => {
  it('an urgent ticket has 4 hours; solving it needs the resolution; a reopen keeps its reason', async () => {
    const t = await created(api.post('/api/v1/tickets', { subject: 'Cannot post invoices', channel: 'email', priority: 'urgent' }));
    expect(t.slaHours).toBe(4);
    expect((await ok(api.patch(`/api/v1/tickets/${t.id}`, { priority: 'low' }))).slaHours).toBe(72);
    refused(await api.post(`/api/v1/tickets/${t.id}/solve`, {}), { pointer: '/resolution' });
    expect(await ok(api.post(`/api/v1/tickets/${t.id}/solve`, { resolution: 'Reset the fiscal period lock' }))).toMatchObject({ state: 'solved', resolution: 'Reset the fiscal period lock' });
    await ok(api.post(`/api/v1/tickets/${t.id}/close`));
    conflictWith(await api.patch(`/api/v1/tickets/${t.id}`, { subject: 'x' }), { reason: 'locked', state: 'closed' });
    expect(await ok(api.post(`/api/v1/tickets/${t.id}/reopen`, { reason: 'Happened again' }))).toMatchObject({ state: 'open', reopenReason: 'Happened again' });
  });
});

describe('hospitality', () => {
  it('3 nights at 450: 1,350 + 202.50 VAT = 1,552.50; check-in fixes the stay; a cancellation fee cannot exceed the total', async () => {
    const rt = await created(api.post('/api/v1/room-types', { code: 'DLX', name: 'Deluxe', maxOccupancy: 2, baseRate: 450 }));
    const room = await created(api.post('/api/v1/hotel-rooms', { number: '504', roomTypeId: rt.id }));
    const base = { guestId: customerId, channel: 'direct', roomTypeId: rt.id, adults: 2, nightlyRate: 450 };
    refused(await api.post('/api/v1/hotel-bookings', { ...base, arrivalDate: '2026-08-10', departureDate: '2026-08-10' }), { pointer: '/departureDate', message: 'The departure must be at least one night after the arrival' });
    const b = await created(api.post('/api/v1/hotel-bookings', { ...base, arrivalDate: '2026-08-10', departureDate: '2026-08-13' }));
    expect(b).toMatchObject({ nights: 3, total: 1350, vatAmount: 202.5, totalWithVat: 1552.5 });
    expect(await ok(api.patch(`/api/v1/hotel-bookings/${b.id}`, { departureDate: '2026-08-14' }))).toMatchObject({ nights: 4, total: 1800, totalWithVat: 2070 });
    expect(await ok(api.post(`/api/v1/hotel-bookings/${b.id}/checkIn`, { roomId: room.id }))).toMatchObject({ state: 'checked_in', roomId: room.id });
    conflictWith(await api.patch(`/api/v1/hotel-bookings/${b.id}`, { nightlyRate: 300 }), { reason: 'locked', field: 'nightlyRate' });
    const other = await created(api.post('/api/v1/hotel-bookings', { ...base, arrivalDate: '2026-09-01', departureDate: '2026-09-02' }));
    conflictWith(await api.post(`/api/v1/hotel-bookings/${other.id}/cancel`, { reason: 'Changed plans', cancellationFee: 600 }), { reason: 'guard' });
    expect(await ok(api.post(`/api/v1/hotel-bookings/${other.id}/cancel`, { reason: 'Changed plans', cancellationFee: 517.5 }))).toMatchObject({ state: 'cancelled', cancellationFee: 517.5, cancelReason: 'Changed plans' });
  });
});

describe('hse', () => {
  it('an injury is recordable and is investigated before closing; a near miss injures no one', async () => {
    const inc = await created(api.post('/api/v1/hse-incidents', { kind: 'incident', site: 'Jubail plant', category: 'injury', severity: 'high', occurredOn: '2026-01-20', description: 'Hand caught in a press', injuredCount: 1, lostTime: true }));
    expect(inc.recordable).toBe(true);
    conflictWith(await api.post(`/api/v1/hse-incidents/${inc.id}/close`), { reason: 'guard' }, 'investigated before it is closed');
    await ok(api.post(`/api/v1/hse-incidents/${inc.id}/investigate`, { investigatorId: employeeId }));
    refused(await api.post(`/api/v1/hse-incidents/${inc.id}/completeInvestigation`, {}), { pointer: '/rootCause' });
    await ok(api.post(`/api/v1/hse-incidents/${inc.id}/completeInvestigation`, { rootCause: 'Guard removed for cleaning' }));
    await ok(api.post(`/api/v1/hse-incidents/${inc.id}/close`));
    refused(await api.post('/api/v1/hse-incidents', { kind: 'near_miss', site: 'Jubail plant', occurredOn: '2026-01-21', description: 'Dropped spanner', injuredCount: 1 }), { pointer: '/injuredCount', message: 'A near miss injured no one: record an incident instead' });
    const nm = await created(api.post('/api/v1/hse-incidents', { kind: 'near_miss', site: 'Jubail plant', occurredOn: '2026-01-21', description: 'Dropped spanner' }));
    expect(nm.recordable).toBe(false);
    await ok(api.post(`/api/v1/hse-incidents/${nm.id}/close`));
  });

  it('a hot-work permit runs 7 days at most, is approved with its precautions and then fixed', async () => {
    const body = { site: 'Tank 4', permitType: 'hot_work', workDescription: 'Weld the inlet', validFrom: '2026-02-01', validTo: '2026-02-08' };
    refused(await api.post('/api/v1/hse-permits', body), { pointer: '/validTo', message: 'A permit to work is issued for 7 days at most; renew it after' });
    const p = await created(api.post('/api/v1/hse-permits', { ...body, validTo: '2026-02-03' }));
    expect(p.validityDays).toBe(3);
    conflictWith(await api.post(`/api/v1/hse-permits/${p.id}/approve`, { approvedById: otherEmployeeId }), { reason: 'guard' }, 'precautions');
    await ok(api.patch(`/api/v1/hse-permits/${p.id}`, { precautions: 'Fire watch, extinguisher, gas test' }));
    await ok(api.post(`/api/v1/hse-permits/${p.id}/approve`, { approvedById: otherEmployeeId }));
    conflictWith(await api.patch(`/api/v1/hse-permits/${p.id}`, { validTo: '2026-02-05' }), { reason: 'locked', state: 'approved' });
    const ri = { activity: 'Work at height', hazards: 'Fall' };
    refused(await api.post('/api/v1/hse-risk-assessments', { ...ri, initialRisk: 'medium', residualRisk: 'high' }), { pointer: '/residualRisk' });
    const insp = await created(api.post('/api/v1/hse-inspections', { site: 'Tank 4', inspectionType: 'scaffolding', inspectorId: employeeId, scheduledFor: '2026-02-02' }));
    expect(await ok(api.post(`/api/v1/hse-inspections/${insp.id}/complete`, { score: 72, findings: 'Missing toe boards' }))).toMatchObject({ score: 72, passed: false });
  });
});

describe('industry-models', () => {
  it('counts the apps of a model, refuses one listed twice, and only the owner installs it', async () => {
    refused(await api.post('/api/v1/industry-models', { modelKey: 'retail', name: 'Retail', version: '1.0', apps: [{ appId: 'pos' }] }), { pointer: '/version' });
    refused(await api.post('/api/v1/industry-models', { modelKey: 'retail', name: 'Retail', version: '1.0.0', apps: [{ appId: 'pos' }, { appId: 'pos' }] }), { pointer: '/apps', message: 'An app is listed once in a model' });
    const m = await created(api.post('/api/v1/industry-models', { modelKey: 'retail', name: 'Retail', version: '1.0.0', apps: [{ appId: 'pos' }, { appId: 'inventory' }, { appId: 'loyalty' }] }));
    expect(m.appCount).toBe(3);
    expectError(await co.as('Admin').post(`/api/v1/industry-models/${m.id}/install`), 403, 'FORBIDDEN');
    await ok(api.post(`/api/v1/industry-models/${m.id}/install`));
    conflictWith(await api.patch(`/api/v1/industry-models/${m.id}`, { notes: 'x' }), { reason: 'locked', state: 'installed' });
  });
});

describe('iot', () => {
  it('a cold-room reading of 9.5 °C over an 8 °C limit clears only when back under it', async () => {
    const d = await created(api.post('/api/v1/iot-devices', { name: 'Cold room 1', deviceType: 'sensor' }));
    const a = await created(api.post('/api/v1/iot-alerts', { deviceId: d.id, metric: 'temperature', value: 9.5, threshold: 8, severity: 'critical', raisedOn: '2026-03-01' }));
    expect(a.exceedance).toBe(1.5);
    conflictWith(await api.patch(`/api/v1/iot-alerts/${a.id}`, { value: 7 }), { reason: 'locked', field: 'value' });
    conflictWith(await api.post(`/api/v1/iot-alerts/${a.id}/clear`, { clearedValue: 8.4 }), { reason: 'guard' }, 'still past its threshold');
    expect(await ok(api.post(`/api/v1/iot-alerts/${a.id}/clear`, { clearedValue: 6.1 }))).toMatchObject({ state: 'cleared', clearedValue: 6.1 });
    const low = await created(api.post('/api/v1/iot-alerts', { deviceId: d.id, metric: 'battery', value: 10, threshold: 20, severity: 'warning', raisedOn: '2026-03-02' }));
    expect(low.exceedance).toBe(-10);
    conflictWith(await api.post(`/api/v1/iot-alerts/${low.id}/clear`, { clearedValue: 15 }), { reason: 'guard' });
    await ok(api.post(`/api/v1/iot-alerts/${low.id}/clear`, { clearedValue: 95 }));
  });
});

describe('jewelry', () => {
  it('a 21K ring: 12.5 g × 245.60 + making 350 = 3,420.00, VAT 513.00, total 3,933.00; the final weight reprices it', async () => {
    const order = await created(api.post('/api/v1/jewelry-orders', { customerId, design: 'Ring, floral', karat: '21', ratePerGram: 245.6, estimatedWeightG: 12.5, makingCharge: 350, advance: 1000 }));
    expect(order).toMatchObject({ goldValue: 3070, price: 3420, vatAmount: 513, total: 3933, balanceDue: 2933 });
    refused(await api.post('/api/v1/jewelry-orders', { customerId, design: 'Ring', karat: '21', ratePerGram: 245.6, estimatedWeightG: 12.5, price: 10 }), { pointer: '/price', rule: 'additionalProperties' } as never);
    await ok(api.post(`/api/v1/jewelry-orders/${order.id}/startProduction`));
    conflictWith(await api.patch(`/api/v1/jewelry-orders/${order.id}`, { ratePerGram: 200 }), { reason: 'locked', field: 'ratePerGram' });
    // Weighed at 12.83 g: 12.83 × 245.60 = 3,151.048 → 3,151.05; + 350 = 3,501.05; VAT 525.16 (525.1575 rounded); 4,026.21.
    const ready = await ok(api.post(`/api/v1/jewelry-orders/${order.id}/markReady`, { finalWeightG: 12.83 }));
    expect(ready).toMatchObject({ goldValue: 3151.05, price: 3501.05, vatAmount: 525.16, total: 4026.21, balanceDue: 3026.21 });
    expect(await ok(api.post(`/api/v1/jewelry-orders/${order.id}/deliver`))).toMatchObject({ state: 'delivered', amountPaid: 3026.21, balanceDue: 0 });
  });

  it('buys old gold at weight × rate with no VAT, and a melt gives its fine gold and loss', async () => {
    const p = await created(api.post('/api/v1/gold-purchases', { customerId, sellerIdNumber: '2045678901', itemDescription: 'Old bangles', karat: '18', weightG: 20.4, ratePerGram: 180.25, paymentMethod: 'cash' }));
    expect(p).toMatchObject({ amount: 3677.1, fineWeightG: 15.3 });
    refused(await api.post('/api/v1/gold-purchases', { customerId, sellerIdNumber: '12345', itemDescription: 'x', karat: '18', weightG: 1, ratePerGram: 1, paymentMethod: 'cash' }), { pointer: '/sellerIdNumber' });
    const melt = await created(api.post('/api/v1/melt-batches', { batchNumber: 'M-1', karat: '21', grossWeightG: 100 }));
    refused(await api.post(`/api/v1/melt-batches/${melt.id}/close`, { outputWeightG: 101, purity: 875 }), { pointer: '/outputWeightG' });
    expect(await ok(api.post(`/api/v1/melt-batches/${melt.id}/close`, { outputWeightG: 98.6, purity: 872 }))).toMatchObject({ state: 'closed', lossG: 1.4, fineWeightG: 85.979 });
  });
});

describe('knowledge', () => {
  it('each publication is the next version, and a published article changes only by revising it', async () => {
    const space = await created(api.post('/api/v1/knowledge-spaces', { name: 'Finance', visibility: 'internal' }));
    const a = await created(api.post('/api/v1/kb-articles', { spaceId: space.id, title: 'Closing the month' }));
    conflictWith(await api.post(`/api/v1/kb-articles/${a.id}/publish`), { reason: 'guard' });
    await ok(api.patch(`/api/v1/kb-articles/${a.id}`, { body: 'Step 1…' }));
    expect((await ok(api.post(`/api/v1/kb-articles/${a.id}/publish`))).version).toBe(1);
    conflictWith(await api.patch(`/api/v1/kb-articles/${a.id}`, { body: 'Step 2' }), { reason: 'locked', state: 'published' });
    await ok(api.post(`/api/v1/kb-articles/${a.id}/revise`));
    // Only publishing sets the version, and an edit keeps it.
    conflictWith(await api.patch(`/api/v1/kb-articles/${a.id}`, { version: 7 }), { reason: 'locked', field: 'version' });
    expect((await ok(api.patch(`/api/v1/kb-articles/${a.id}`, { body: 'Step 1, then step 2' }))).version).toBe(1);
    expect((await ok(api.post(`/api/v1/kb-articles/${a.id}/publish`))).version).toBe(2);
  });
});

describe('legal', () => {
  it('a matter closes with its outcome and date (412 days open); an adjournment needs the next hearing; a late deadline is missed, not met', async () => {
    const m = await created(api.post('/api/v1/legal-matters', { title: 'Contract dispute', clientId: customerId, practiceArea: 'litigation', leadLawyerId: employeeId, openedOn: '2025-01-05' }));
    const h = await created(api.post('/api/v1/court-hearings', { matterId: m.id, court: 'Riyadh Commercial Court', hearingDate: '2025-03-01' }));
    conflictWith(await api.post(`/api/v1/court-hearings/${h.id}/recordOutcome`, { outcome: 'adjourned', summary: 'Defence asked for time' }), { reason: 'guard' }, "next hearing's date");
    refused(await api.patch(`/api/v1/court-hearings/${h.id}`, { nextHearingDate: '2025-02-01' }), { pointer: '/nextHearingDate', message: 'The next hearing comes after this one' });
    await ok(api.patch(`/api/v1/court-hearings/${h.id}`, { nextHearingDate: '2025-04-15' }));
    await ok(api.post(`/api/v1/court-hearings/${h.id}/recordOutcome`, { outcome: 'adjourned', summary: 'Defence asked for time' }));
    conflictWith(await api.patch(`/api/v1/court-hearings/${h.id}`, { summary: 'changed' }), { reason: 'locked', field: 'summary' });

    const d = await created(api.post('/api/v1/legal-deadlines', { matterId: m.id, deadlineType: 'appeal', dueDate: '2025-05-15' }));
    conflictWith(await api.post(`/api/v1/legal-deadlines/${d.id}/meet`, { metOn: '2025-05-16' }), { reason: 'guard' });
    expect(await ok(api.post(`/api/v1/legal-deadlines/${d.id}/meet`, { metOn: '2025-05-14' }))).toMatchObject({ state: 'met', metOn: '2025-05-14' });

    conflictWith(await api.post(`/api/v1/legal-matters/${m.id}/close`, { closingReason: 'settled', closedOn: '2024-12-31' }), { reason: 'guard' });
    expect(await ok(api.post(`/api/v1/legal-matters/${m.id}/close`, { closingReason: 'settled', closedOn: '2026-02-21' }))).toMatchObject({ state: 'closed', closingReason: 'settled', durationDays: 412 });
    expectError(await co.as('Member').post(`/api/v1/legal-matters/${m.id}/reopen`, { reason: 'Appeal' }), 403, 'FORBIDDEN');
  });
});

describe('livechat', () => {
  it('a chat waits 95 s (1.6 min), is picked up and transferred, the previous agent kept', async () => {
    const c = await created(api.post('/api/v1/live-chats', { visitorName: 'Guest', waitSeconds: 95 }));
    expect(c.waitMinutes).toBe(1.6);
    await ok(api.post(`/api/v1/live-chats/${c.id}/assign`, { agentId: employeeId }));
    expect(await ok(api.post(`/api/v1/live-chats/${c.id}/transfer`, { agentId: otherEmployeeId }))).toMatchObject({ agentId: otherEmployeeId, transferredFromId: employeeId });
    conflictWith(await api.patch(`/api/v1/live-chats/${c.id}`, { agentId: employeeId }), { reason: 'locked', field: 'agentId' });
    await ok(api.post(`/api/v1/live-chats/${c.id}/resolve`));
    // The visitor rates the resolved chat; who handled it stays.
    expect(await ok(api.patch(`/api/v1/live-chats/${c.id}`, { rating: 'good' }))).toMatchObject({ rating: 'good', agentId: otherEmployeeId, transferredFromId: employeeId });
  });
});

describe('loyalty', () => {
  it('a 15 % coupon on an order of 840 gives 126; an amount coupon of 50 gives at most the order', async () => {
    const pct = await created(api.post('/api/v1/loyalty-coupons', { code: 'EID15', discountType: 'percent', discountValue: 15 }));
    refused(await api.post('/api/v1/loyalty-coupons', { code: 'BAD', discountType: 'percent', discountValue: 150 }), { pointer: '/discountValue' });
    refused(await api.post('/api/v1/loyalty-coupons', { code: 'BAD', discountType: 'amount', discountValue: 0 }), { pointer: '/amountOff' });
    expect(await ok(api.post(`/api/v1/loyalty-coupons/${pct.id}/use`, { orderRef: 'SO-1', orderAmount: 840 }))).toMatchObject({ state: 'used', discount: 126, orderAmount: 840 });
    conflictWith(await api.post(`/api/v1/loyalty-coupons/${pct.id}/use`, { orderRef: 'SO-2', orderAmount: 10 }), {});
    const amt = await created(api.post('/api/v1/loyalty-coupons', { code: 'WELCOME50', discountType: 'amount', discountValue: 0, amountOff: 50 }));
    expect((await ok(api.post(`/api/v1/loyalty-coupons/${amt.id}/use`, { orderRef: 'SO-3', orderAmount: 35.5 }))).discount).toBe(35.5);
    const card = await created(api.post('/api/v1/gift-cards', { cardNumber: 'GC-1', amount: 500 }));
    await created(api.post('/api/v1/gift-card-uses', { giftcardId: card.id, amount: 380 }));
    expectError(await co.as('Member').post(`/api/v1/gift-cards/${card.id}/cancel`, { reason: 'Lost' }), 403, 'FORBIDDEN');
    // What was left on the card is forfeited, not spent.
    expect(await ok(api.post(`/api/v1/gift-cards/${card.id}/cancel`, { reason: 'Lost' }))).toMatchObject({ state: 'cancelled', usedAmount: 380, forfeitedAmount: 120, balance: 0 });
  });
});

describe('maintenance', () => {
  it('equipment down twice adds 240 + 90 minutes of downtime; a request closes with the work done and its time', async () => {
    const eq = await created(api.post('/api/v1/maintenance-equipment', { name: 'Chiller 2', location: 'Roof' }));
    await ok(api.post(`/api/v1/maintenance-equipment/${eq.id}/reportDown`, { downSince: '2026-03-01', reason: 'Compressor trip' }));
    expect((await ok(api.post(`/api/v1/maintenance-equipment/${eq.id}/restore`, { downtimeMinutes: 240 }))).downtimeMinutes).toBe(240);
    // An edit keeps the downtime, and cannot change it.
    expect((await ok(api.patch(`/api/v1/maintenance-equipment/${eq.id}`, { location: 'Roof, east' }))).downtimeMinutes).toBe(240);
    conflictWith(await api.patch(`/api/v1/maintenance-equipment/${eq.id}`, { downtimeMinutes: 0 }), { reason: 'locked', field: 'downtimeMinutes' });
    await ok(api.post(`/api/v1/maintenance-equipment/${eq.id}/reportDown`, { downSince: '2026-03-09', reason: 'Low refrigerant' }));
    expect((await ok(api.post(`/api/v1/maintenance-equipment/${eq.id}/restore`, { downtimeMinutes: 90 }))).downtimeMinutes).toBe(330);
    refused(await api.post('/api/v1/maintenance-requests', { equipmentId: eq.id, requestType: 'preventive', priority: 'normal', description: 'Quarterly service' }), { pointer: '/scheduledOn', message: 'Preventive maintenance is planned: give its date' });
    const r = await created(api.post('/api/v1/maintenance-requests', { equipmentId: eq.id, requestType: 'corrective', priority: 'high', description: 'Noisy fan' }));
    conflictWith(await api.post(`/api/v1/maintenance-requests/${r.id}/start`), { reason: 'guard' }, 'Assign a technician');
    await ok(api.patch(`/api/v1/maintenance-requests/${r.id}`, { technicianId: employeeId }));
    await ok(api.post(`/api/v1/maintenance-requests/${r.id}/start`));
    expect(await ok(api.post(`/api/v1/maintenance-requests/${r.id}/complete`, { resolution: 'Replaced the bearing', durationMinutes: 135 }))).toMatchObject({ state: 'done', durationHours: 2.25 });
  });
});

describe('manufacturing', () => {
  it('an order of 500 finishes with 480 good and 20 scrap: a 96 % yield; an operation planned 60 minutes done in 75 runs at 80 %', async () => {
    const product = await created(api.post('/api/v1/products', { name: 'Cabinet', sku: 'CAB-1', kind: 'goods', price: 900, active: true }));
    const board = await created(api.post('/api/v1/products', { name: 'Board', sku: 'BRD-1', kind: 'goods', price: 40, active: true }));
    const wc = await created(api.post('/api/v1/work-centers', { name: 'Assembly', costPerHour: 120 }));
    refused(await api.post('/api/v1/boms', { productId: product.id, quantity: 1, components: [{ productId: board.id, quantity: 0 }] }), { pointer: '/components' });
    const bom = await created(api.post('/api/v1/boms', { productId: product.id, quantity: 1, components: [{ productId: board.id, quantity: 6 }], operations: [{ operation: 'Cut', workCenterId: wc.id, minutes: 25 }, { operation: 'Assemble', workCenterId: wc.id, minutes: 35 }] }));
    expect(bom.totalMinutes).toBe(60);
    const mo = await created(api.post('/api/v1/manufacturing-orders', { productId: product.id, bomId: bom.id, quantity: 500 }));
    await ok(api.post(`/api/v1/manufacturing-orders/${mo.id}/confirm`));
    conflictWith(await api.patch(`/api/v1/manufacturing-orders/${mo.id}`, { quantity: 600 }), { reason: 'locked', field: 'quantity' });
    await ok(api.post(`/api/v1/manufacturing-orders/${mo.id}/start`));
    const wo = await created(api.post('/api/v1/mfg-work-orders', { orderId: mo.id, operation: 'Assemble', workCenterId: wc.id, plannedMinutes: 60 }));
    await ok(api.post(`/api/v1/mfg-work-orders/${wo.id}/start`));
    expect((await ok(api.post(`/api/v1/mfg-work-orders/${wo.id}/finish`, { durationMinutes: 75 }))).efficiencyPercent).toBe(80);
    expect(await ok(api.post(`/api/v1/manufacturing-orders/${mo.id}/finish`, { producedQuantity: 480, scrapQuantity: 20 }))).toMatchObject({ state: 'done', yieldPercent: 96 });
  });
});

describe('marketing-automation', () => {
  it('a lead scoring 85 is hot; one leaving the workflow keeps why', async () => {
    const lead = await created(api.post('/api/v1/leads', { title: 'Warehouse software' }));
    const wf = await created(api.post('/api/v1/marketing-workflows', { name: 'Nurture', entryTrigger: 'form_submitted' }));
    conflictWith(await api.post(`/api/v1/marketing-workflows/${wf.id}/start`), { reason: 'guard' });
    await ok(api.patch(`/api/v1/marketing-workflows/${wf.id}`, { channel: 'email' }));
    await ok(api.post(`/api/v1/marketing-workflows/${wf.id}/start`));
    conflictWith(await api.patch(`/api/v1/marketing-workflows/${wf.id}`, { goal: 'x' }), { reason: 'locked', state: 'running' });
    const p = await created(api.post('/api/v1/workflow-participants', { workflowId: wf.id, leadId: lead.id, entryTrigger: 'form_submitted', score: 35 }));
    expect(p.temperature).toBe('cold');
    expect((await ok(api.patch(`/api/v1/workflow-participants/${p.id}`, { score: 85 }))).temperature).toBe('hot');
    expect(await ok(api.post(`/api/v1/workflow-participants/${p.id}/exit`, { reason: 'Unsubscribed' }))).toMatchObject({ state: 'exited', exitReason: 'Unsubscribed' });
  });
});

describe('marketplace', () => {
  it('a version is semver with a SHA-256; a rejected one says what to fix and can be resubmitted', async () => {
    const l = await created(api.post('/api/v1/marketplace-listings', { appId: 'zatca-einvoice', name: 'ZATCA e-invoicing', publisherName: 'Acme' }));
    refused(await api.post('/api/v1/marketplace-listings', { appId: 'Bad App', name: 'x', publisherName: 'y' }), { pointer: '/appId' });
    refused(await api.post('/api/v1/marketplace-versions', { listingId: l.id, version: 'v1', packageSha256: 'xyz' }), { pointer: '/version' }, { pointer: '/packageSha256' });
    const v = await created(api.post('/api/v1/marketplace-versions', { listingId: l.id, version: '1.2.0' }));
    conflictWith(await api.post(`/api/v1/marketplace-versions/${v.id}/submit`), { reason: 'guard' });
    await ok(api.patch(`/api/v1/marketplace-versions/${v.id}`, { packageSha256: 'ab'.repeat(32), releaseNotes: 'Phase 2 integration' }));
    await ok(api.post(`/api/v1/marketplace-versions/${v.id}/submit`));
    conflictWith(await api.patch(`/api/v1/marketplace-versions/${v.id}`, { releaseNotes: 'x' }), { reason: 'locked', state: 'submitted' });
    expect(await ok(api.post(`/api/v1/marketplace-versions/${v.id}/reject`, { reason: 'The CSID onboarding fails' }))).toMatchObject({ state: 'rejected', reviewNotes: 'The CSID onboarding fails' });
    await ok(api.post(`/api/v1/marketplace-versions/${v.id}/submit`));
  });
});

describe('migration', () => {
  it('counts 1,180 imported and 20 refused of 1,200; finishes only when every record is accounted for; undo removes what was imported', async () => {
    const j = await created(api.post('/api/v1/migration-jobs', { name: 'From QuickBooks', sourceSystem: 'quickbooks', entities: [{ entity: 'customers', sourceCount: 200 }, { entity: 'invoices', sourceCount: 1000 }] }));
    expect(j).toMatchObject({ recordsInSource: 1200, recordsImported: 0, recordsFailed: 0 });
    await ok(api.post(`/api/v1/migration-jobs/${j.id}/validate`));
    await ok(api.post(`/api/v1/migration-jobs/${j.id}/start`));
    refused(await api.patch(`/api/v1/migration-jobs/${j.id}`, { entities: [{ entity: 'customers', sourceCount: 200, imported: 199, failed: 2 }, { entity: 'invoices', sourceCount: 1000 }] }), { pointer: '/entities' });
    await ok(api.patch(`/api/v1/migration-jobs/${j.id}`, { entities: [{ entity: 'customers', sourceCount: 200, imported: 195, failed: 5 }, { entity: 'invoices', sourceCount: 1000, imported: 900 }] }));
    conflictWith(await api.post(`/api/v1/migration-jobs/${j.id}/finish`), { reason: 'guard' });
    const counted = await ok(api.patch(`/api/v1/migration-jobs/${j.id}`, { entities: [{ entity: 'customers', sourceCount: 200, imported: 195, failed: 5 }, { entity: 'invoices', sourceCount: 1000, imported: 985, failed: 15 }] }));
    expect(counted).toMatchObject({ recordsImported: 1180, recordsFailed: 20 });
    await ok(api.post(`/api/v1/migration-jobs/${j.id}/finish`));
    expect(await ok(api.post(`/api/v1/migration-jobs/${j.id}/undo`))).toMatchObject({ state: 'undone', recordsRemoved: 1180 });
  });
});

describe('nonprofit', () => {
  it('a donation received counts towards its campaign (35 % of 200,000); a pledge of 12 × 250 is fulfilled when paid', async () => {
    const camp = await created(api.post('/api/v1/fundraising-campaigns', { name: 'Winter relief', fund: 'relief', goalAmount: 200_000 }));
    const donor = await created(api.post('/api/v1/donors', { fullName: 'Abdullah' }));
    const first = await created(api.post('/api/v1/donations', { donorId: donor.id, campaignId: camp.id, fund: 'relief', amount: 60_000, method: 'bank_transfer' }));
    await ok(api.post(`/api/v1/donations/${first.id}/receive`, { receivedOn: '2026-01-02' }));
    expect(await ok(api.get(`/api/v1/fundraising-campaigns/${camp.id}`))).toMatchObject({ raisedAmount: 60_000, progressPercent: 30, remainingAmount: 140_000 });
    const don = await created(api.post('/api/v1/donations', { donorId: donor.id, campaignId: camp.id, fund: 'relief', amount: 10_000, method: 'bank_transfer' }));
    refused(await api.post(`/api/v1/donations/${don.id}/receive`, {}), { pointer: '/receivedOn' });
    expect(await ok(api.post(`/api/v1/donations/${don.id}/receive`, { receivedOn: '2026-01-05' }))).toMatchObject({ state: 'received', receiptNumber: 'RCPT-2026-00002' });
    // Two donations of one donor: one donor.
    expect(await ok(api.get(`/api/v1/fundraising-campaigns/${camp.id}`))).toMatchObject({ raisedAmount: 70_000, donorCount: 1, progressPercent: 35, remainingAmount: 130_000 });
    const other = await created(api.post('/api/v1/donors', { fullName: 'Maha' }));
    const third = await created(api.post('/api/v1/donations', { donorId: other.id, campaignId: camp.id, fund: 'relief', amount: 5_000, method: 'cash' }));
    expect((await ok(api.get(`/api/v1/fundraising-campaigns/${camp.id}`))).donorCount).toBe(1);
    await ok(api.post(`/api/v1/donations/${third.id}/receive`, { receivedOn: '2026-01-06' }));
    expect(await ok(api.get(`/api/v1/fundraising-campaigns/${camp.id}`))).toMatchObject({ raisedAmount: 75_000, donorCount: 2 });
    conflictWith(await api.patch(`/api/v1/donations/${don.id}`, { amount: 1 }), { reason: 'locked', state: 'received' });

    const pledge = await created(api.post('/api/v1/pledges', { donorId: donor.id, fund: 'orphans', installmentAmount: 250, frequency: 'monthly', installmentsTotal: 12, installmentsPaid: 5, nextDueDate: '2026-06-01' }));
    expect(pledge).toMatchObject({ totalPledged: 3000, outstanding: 1750 });
    conflictWith(await api.post(`/api/v1/pledges/${pledge.id}/fulfil`), { reason: 'guard' }, 'every instalment is paid');
    refused(await api.patch(`/api/v1/pledges/${pledge.id}`, { installmentsPaid: 13 }), { pointer: '/installmentsPaid' });
    expect((await ok(api.patch(`/api/v1/pledges/${pledge.id}`, { installmentsPaid: 12 }))).outstanding).toBe(0);
    await ok(api.post(`/api/v1/pledges/${pledge.id}/fulfil`));
  });

  it('aid is approved by a manager, paid on a date, and then final', async () => {
    const ben = await created(api.post('/api/v1/beneficiaries', { fullName: 'Fatimah', category: 'widow', householdSize: 4 }));
    const d = await created(api.post('/api/v1/aid-disbursements', { beneficiaryId: ben.id, fund: 'zakat', amount: 1500, method: 'bank_transfer' }));
    expectError(await co.as('Member').post(`/api/v1/aid-disbursements/${d.id}/approve`), 403, 'FORBIDDEN');
    await ok(api.post(`/api/v1/aid-disbursements/${d.id}/approve`));
    conflictWith(await api.patch(`/api/v1/aid-disbursements/${d.id}`, { amount: 3000 }), { reason: 'locked', state: 'approved' }, undefined);
    const ar = expectError(await api.patch(`/api/v1/aid-disbursements/${d.id}`, { amount: 3000 }, AR), 409, 'CONFLICT');
    expect(ar.message).toMatch(ARABIC);
    expect(await ok(api.post(`/api/v1/aid-disbursements/${d.id}/pay`, { paidOn: '2026-01-10' }))).toMatchObject({ state: 'paid', paidOn: '2026-01-10' });
  });
});
