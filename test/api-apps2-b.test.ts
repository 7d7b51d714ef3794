// The second wave of rules for 21 first-party apps (issue 26, part 2), each driven through the
// API alone by a story of its domain: what a document takes from the one it references (a
// ticket price, a nightly rate, a revision), what it adds up over its children (seats left,
// points and gift-card balances, work-order costs, the amount a campaign raised), what a
// transition does to another document (a checkout dirties the room, accepting a quote opens the
// job, a publication sets the listing's current version), the numbers a series gives, and what
// is refused: a second value of a unique field, a write against a document in the wrong state.
// One host with just these apps and their dependencies, on SQLite and again on PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Host } from '../core/host.ts';
import { expectError, type Client, type TestCompany, created, ok, type Data } from './helpers.ts';
import { AR, conflictWith, refused, storiesWithApprover } from './app-stories.ts';

const APPS = [
  'employees', 'invoicing', 'ecommerce', 'crm',
  'emr', 'event-management', 'expenses', 'field-service', 'fleet', 'forum', 'forwarding', 'helpdesk', 'hospitality', 'hse',
  'industry-models', 'iot', 'jewelry', 'knowledge', 'legal', 'loyalty', 'maintenance', 'manufacturing',
  'marketing-automation', 'marketplace', 'nonprofit',
];

let host: Host;
let co: TestCompany;
let api: Client;
let employeeId: string;
let otherEmployeeId: string;
let customerId: string;
/** Series without a date field count in the year of the host's clock. */
const YEAR = new Date().getUTCFullYear();

beforeAll(async () => {
  ({ host, co, api, employeeId, otherEmployeeId, customerId } = await storiesWithApprover(APPS));
}, 60_000);
afterAll(() => host.close());

const get = (path: string) => ok(api.get(path));

describe('emr', () => {
  it('a national ID names one patient; a claim and an order are for their encounter\'s patient', async () => {
    const huda = await created(api.post('/api/v1/patients', { fullName: 'Huda Al-Zahrani', nationalId: '1023456789' }));
    conflictWith(await api.post('/api/v1/patients', { fullName: 'Huda Z.', nationalId: '1023456789' }), { reason: 'unique', field: 'nationalId', other: huda.id });
    const ali = await created(api.post('/api/v1/patients', { fullName: 'Ali Al-Shehri', nationalId: '2098765432' }));
    const enc = await created(api.post('/api/v1/encounters', { patientId: huda.id, practitionerId: employeeId, encounterType: 'outpatient', encounterDate: '2026-04-01' }));
    refused(await api.post('/api/v1/insurance-claims', { encounterId: enc.id, patientId: ali.id, payerName: 'Bupa Arabia', claimedAmount: 1200 }),
      { pointer: '/patientId', message: "The patient is not the encounter's patient" });
    const ar = expectError(await api.post('/api/v1/clinical-orders', { encounterId: enc.id, patientId: ali.id, orderType: 'lab', testName: 'CBC' }, AR), 400, 'VALIDATION_ERROR');
    expect(ar.details[0]).toMatchObject({ pointer: '/patientId', message: 'المريض ليس مريض الزيارة' });
    expect(await created(api.post('/api/v1/insurance-claims', { encounterId: enc.id, patientId: huda.id, payerName: 'Bupa Arabia', claimedAmount: 1200 }))).toMatchObject({ claimedAmount: 1200, state: 'draft' });
  });
});

describe('event-management', () => {
  it('a workshop of 2 seats at 500: tickets default to the price, one per email, none once full or unpublished', async () => {
    const ev = await created(api.post('/api/v1/managed-events', { title: 'ZATCA Phase 2 workshop', eventType: 'workshop', startDate: '2026-05-10', venue: 'KAFD', capacity: 2, ticketPrice: 500 }));
    expect(ev).toMatchObject({ registered: 0, seatsLeft: 2 });
    refused(await api.post('/api/v1/event-registrations', { eventId: ev.id, attendeeName: 'Nora' }), { pointer: '/eventId', message: 'Registrations are taken for a published event only' });
    await ok(api.post(`/api/v1/managed-events/${ev.id}/publish`));
    const nora = await created(api.post('/api/v1/event-registrations', { eventId: ev.id, attendeeName: 'Nora', email: 'nora@alnoor.sa' }));
    expect(nora).toMatchObject({ price: 500, vatAmount: 75, totalPrice: 575 });
    conflictWith(await api.post('/api/v1/event-registrations', { eventId: ev.id, attendeeName: 'Nora A.', email: 'nora@alnoor.sa' }), { reason: 'unique', field: 'email', other: nora.id, within: 'eventId' });
    // A colleague on the early-bird price.
    const fahad = await created(api.post('/api/v1/event-registrations', { eventId: ev.id, attendeeName: 'Fahad', email: 'fahad@alnoor.sa', price: 250 }));
    expect(fahad).toMatchObject({ price: 250, vatAmount: 37.5, totalPrice: 287.5 });
    expect(await get(`/api/v1/managed-events/${ev.id}`)).toMatchObject({ registered: 2, seatsLeft: 0 });
    conflictWith(await api.post('/api/v1/event-registrations', { eventId: ev.id, attendeeName: 'Reem', email: 'reem@alnoor.sa' }), { reason: 'parentRule', id: ev.id }, 'The event is full');
    refused(await api.patch(`/api/v1/managed-events/${ev.id}`, { capacity: 1 }), { pointer: '/capacity' });
    // A cancellation frees its seat; a check-in keeps it.
    await ok(api.post(`/api/v1/event-registrations/${fahad.id}/cancel`, { reason: 'Travelling' }));
    await ok(api.post(`/api/v1/event-registrations/${nora.id}/checkIn`));
    expect(await get(`/api/v1/managed-events/${ev.id}`)).toMatchObject({ registered: 1, seatsLeft: 1 });
    await created(api.post('/api/v1/event-registrations', { eventId: ev.id, attendeeName: 'Reem', email: 'reem@alnoor.sa' }));
    expect(await get(`/api/v1/managed-events/${ev.id}`)).toMatchObject({ registered: 2, seatsLeft: 0 });
    // Fahad's cancelled registration no longer holds his email: with a third seat he registers again.
    await ok(api.patch(`/api/v1/managed-events/${ev.id}`, { capacity: 3 }));
    expect(await created(api.post('/api/v1/event-registrations', { eventId: ev.id, attendeeName: 'Fahad', email: 'fahad@alnoor.sa' }))).toMatchObject({ price: 500 });
  });
});

describe('expenses', () => {
  it('claims are numbered from one gap-free series per year, which the client cannot type', async () => {
    const body = { employeeId, purpose: 'Site visit', lines: [{ date: '2026-03-02', category: 'fuel', description: 'Fuel', amount: 115, vatAmount: 15 }] };
    refused(await api.post('/api/v1/expense-claims', { ...body, claimNumber: 'EXP-1' }), { pointer: '/claimNumber' });
    // A refused create gives its number back: the next claims are 00001 and 00002.
    refused(await api.post('/api/v1/expense-claims', { ...body, lines: [{ ...body.lines[0], amount: 0, vatAmount: 0 }] }), { pointer: '/lines' });
    expect((await created(api.post('/api/v1/expense-claims', body))).claimNumber).toBe(`EXP-${YEAR}-00001`);
    const second = await created(api.post('/api/v1/expense-claims', body));
    expect(second.claimNumber).toBe(`EXP-${YEAR}-00002`);
    // An edit keeps it.
    expect((await ok(api.patch(`/api/v1/expense-claims/${second.id}`, { purpose: 'Site visit, Dammam' }))).claimNumber).toBe(`EXP-${YEAR}-00002`);
  });
});

describe('field-service', () => {
  it('work orders are numbered WO-<year>-<n> and call the customer on their phone unless another is given', async () => {
    const first = await created(api.post('/api/v1/fs-work-orders', { customerId, serviceType: 'installation', siteAddress: 'Olaya St, Riyadh' }));
    expect(first).toMatchObject({ workOrderNumber: `WO-${YEAR}-00001`, contactPhone: '+966112345678' });
    const second = await created(api.post('/api/v1/fs-work-orders', { customerId, serviceType: 'repair', siteAddress: 'Warehouse 7, Sulay', contactPhone: '+966501112233' }));
    expect(second).toMatchObject({ workOrderNumber: `WO-${YEAR}-00002`, contactPhone: '+966501112233' });
  });
});

describe('fleet', () => {
  it('a fuel log moves the vehicle\'s odometer on and never back; a fine falls on the assigned driver; plates, VINs and fine numbers are unique', async () => {
    const v = await created(api.post('/api/v1/fleet-vehicles', { plateNumber: 'RUA 4821', make: 'Toyota', vin: 'JTDBR32E720123456', odometerKm: 52_000, driverId: employeeId }));
    conflictWith(await api.post('/api/v1/fleet-vehicles', { plateNumber: 'RUA 4821', make: 'Hyundai' }), { reason: 'unique', field: 'plateNumber', other: v.id });
    conflictWith(await api.post('/api/v1/fleet-vehicles', { plateNumber: 'RUA 4822', make: 'Toyota', vin: 'JTDBR32E720123456' }), { reason: 'unique', field: 'vin', other: v.id });
    const fill = { vehicleId: v.id, driverId: employeeId, filledOn: '2026-02-01', litres: 45.5, amount: 99.19, fuelType: 'petrol_91' };
    await created(api.post('/api/v1/fuel-logs', { ...fill, odometerKm: 52_300 }));
    expect((await get(`/api/v1/fleet-vehicles/${v.id}`)).odometerKm).toBe(52_300);
    refused(await api.post('/api/v1/fuel-logs', { ...fill, filledOn: '2026-02-03', odometerKm: 52_100 }), { pointer: '/odometerKm', message: "The odometer cannot read less than the vehicle's last reading" });
    await created(api.post('/api/v1/fuel-logs', { ...fill, filledOn: '2026-02-05', odometerKm: 52_780 }));
    expect((await get(`/api/v1/fleet-vehicles/${v.id}`)).odometerKm).toBe(52_780);

    const fine = await created(api.post('/api/v1/traffic-fines', { vehicleId: v.id, fineNumber: 'SAHER-99120', violation: 'Speeding', amount: 300, issuedOn: '2026-02-10' }));
    expect(fine.driverId).toBe(employeeId);
    expect((await created(api.post('/api/v1/traffic-fines', { vehicleId: v.id, driverId: otherEmployeeId, fineNumber: 'SAHER-99121', violation: 'Parking', amount: 100, issuedOn: '2026-02-11' }))).driverId).toBe(otherEmployeeId);
    conflictWith(await api.post('/api/v1/traffic-fines', { vehicleId: v.id, fineNumber: 'SAHER-99120', violation: 'Speeding', amount: 300, issuedOn: '2026-02-10' }), { reason: 'unique', field: 'fineNumber', other: fine.id });

    // A retired vehicle takes no fuel: nothing of the log is kept.
    await ok(api.post(`/api/v1/fleet-vehicles/${v.id}/retire`, { reason: 'Sold' }));
    conflictWith(await api.post('/api/v1/fuel-logs', { ...fill, filledOn: '2026-03-01', odometerKm: 53_000 }), { reason: 'locked', effect: 0, effectOn: 'vehicleId' });
    expect((await api.get(`/api/v1/fuel-logs?vehicleId=${v.id}`)).json().total).toBe(2);
  });
});

describe('forum', () => {
  it('a moderated forum holds every topic; replies go to a published topic, and one of them is the accepted answer', async () => {
    const moderated = await created(api.post('/api/v1/forums', { name: 'Payroll questions', mode: 'questions', moderated: true }));
    const open = await created(api.post('/api/v1/forums', { name: 'Off topic', mode: 'discussions' }));
    const topic = await created(api.post('/api/v1/forum-topics', { forumId: moderated.id, title: 'GOSI rate for Saudis?', body: 'What is the rate?', authorName: 'Reem' }));
    expect(topic.moderationReason).toBe('moderated_forum');
    expect((await created(api.post('/api/v1/forum-topics', { forumId: moderated.id, title: 'Buy now', body: 'http://x', authorName: 'Bot', moderationReason: 'contains_links' }))).moderationReason).toBe('contains_links');
    expect((await created(api.post('/api/v1/forum-topics', { forumId: open.id, title: 'Hello', body: 'Hi all', authorName: 'Sami' }))).moderationReason).toBeUndefined();

    refused(await api.post('/api/v1/forum-replies', { topicId: topic.id, body: '9.75 %', authorName: 'Sami' }), { pointer: '/topicId' });
    await ok(api.post(`/api/v1/forum-topics/${topic.id}/publish`));
    const a = await created(api.post('/api/v1/forum-replies', { topicId: topic.id, body: '9.75 % for the employee', authorName: 'Sami', accepted: true }));
    const b = await created(api.post('/api/v1/forum-replies', { topicId: topic.id, body: '9.75 % employee, 11.75 % employer', authorName: 'Huda' }));
    expect((await get(`/api/v1/forum-topics/${topic.id}`)).acceptedAnswers).toBe(1);
    conflictWith(await api.patch(`/api/v1/forum-replies/${b.id}`, { accepted: true }), { reason: 'parentRule', id: topic.id }, 'A topic has one accepted answer');
    await ok(api.patch(`/api/v1/forum-replies/${a.id}`, { accepted: false }));
    expect((await ok(api.patch(`/api/v1/forum-replies/${b.id}`, { accepted: true }))).accepted).toBe(true);
    expect((await get(`/api/v1/forum-topics/${topic.id}`)).acceptedAnswers).toBe(1);

    await ok(api.post(`/api/v1/forum-topics/${topic.id}/close`, { reason: 'answered' }));
    const ar = expectError(await api.post('/api/v1/forum-replies', { topicId: topic.id, body: 'late', authorName: 'Omar' }, AR), 400, 'VALIDATION_ERROR');
    expect(ar.details[0]).toMatchObject({ pointer: '/topicId', message: 'لا تُكتب الردود إلا في موضوع منشور (لا معلّق ولا مرفوض ولا مغلق)' });
  });
});

describe('forwarding', () => {
  it('accepting a quote opens its job with the quote\'s terms; one job per quote; a statement\'s net is its jobs\' sum', async () => {
    const quote = await created(api.post('/api/v1/freight-quotes', { customerId, mode: 'sea', incoterm: 'FOB', pol: 'CNSHA', pod: 'SADMM', weightKg: 3000, volumeCbm: 12, amount: 4200, currency: 'SAR', validUntil: '2026-07-01' }));
    expect(quote.quoteNumber).toBe(`QT-${YEAR}-00001`);
    // A job is opened from an accepted quote only.
    refused(await api.post('/api/v1/forwarding-jobs', { quoteId: quote.id, direction: 'import' }), { pointer: '/quoteId', message: 'A job is opened from an accepted quote only' });
    await ok(api.post(`/api/v1/freight-quotes/${quote.id}/send`));
    refused(await api.post(`/api/v1/freight-quotes/${quote.id}/accept`, {}), { pointer: '/direction' });
    await ok(api.post(`/api/v1/freight-quotes/${quote.id}/accept`, { direction: 'import' }));
    const jobs = (await api.get(`/api/v1/forwarding-jobs?quoteId=${quote.id}`)).json().data as Data[];
    expect(jobs).toHaveLength(1);
    expect(jobs[0]).toMatchObject({ jobNumber: `JOB-${YEAR}-00001`, state: 'opened', customerId, direction: 'import', mode: 'sea', incoterm: 'FOB', pol: 'CNSHA', pod: 'SADMM' });
    conflictWith(await api.post('/api/v1/forwarding-jobs', { quoteId: quote.id, direction: 'import' }), { reason: 'unique', field: 'quoteId', other: jobs[0].id });

    // Opened by mistake as an import, deleted and opened again from the quote: it takes the quote's terms, and the next number.
    expect((await api.delete(`/api/v1/forwarding-jobs/${jobs[0].id}`)).statusCode).toBe(200);
    const other = await created(api.post('/api/v1/customers', { name: 'Gulf Foods' }));
    refused(await api.post('/api/v1/forwarding-jobs', { quoteId: quote.id, customerId: other.id, direction: 'export' }), { pointer: '/customerId', message: "The job's customer is its quote's customer" });
    const job = await created(api.post('/api/v1/forwarding-jobs', { quoteId: quote.id, direction: 'cross_trade' }));
    expect(job).toMatchObject({ jobNumber: `JOB-${YEAR}-00002`, customerId, direction: 'cross_trade', mode: 'sea', incoterm: 'FOB', pol: 'CNSHA', pod: 'SADMM' });
    const own = await created(api.post('/api/v1/forwarding-jobs', { customerId: other.id, direction: 'export', mode: 'air', incoterm: 'EXW', pol: 'RUH', pod: 'DXB' }));
    expect(own.jobNumber).toBe(`JOB-${YEAR}-00003`);

    expect((await created(api.post('/api/v1/consolidations', { mode: 'sea', pol: 'CNSHA', pod: 'SADMM', etd: '2026-03-01' }))).consolNumber).toBe(`CON-${YEAR}-00001`);

    const agent = await created(api.post('/api/v1/forwarding-agents', { name: 'Shanghai Link', country: 'CN' }));
    const st = { agentId: agent.id, statementRef: 'SL-0412', statementDate: '2026-04-30', direction: 'payable', currency: 'SAR' };
    refused(await api.post('/api/v1/agent-statements', { ...st, netAmount: 2000, jobs: [{ jobId: job.id, amount: 1250.5 }] }), { pointer: '/netAmount' });
    refused(await api.post('/api/v1/agent-statements', { ...st, jobs: [] }), { pointer: '/jobs' });
    const statement = await created(api.post('/api/v1/agent-statements', { ...st, jobs: [{ jobId: job.id, amount: 1250.5 }, { jobId: own.id, amount: 749.5 }] }));
    expect(statement.netAmount).toBe(2000);
  });
});

describe('helpdesk', () => {
  it('the customer\'s reply reopens a solved ticket and takes a pending one back to open; an agent\'s does not; a closed ticket takes none', async () => {
    const t = await created(api.post('/api/v1/tickets', { subject: 'VAT return rejected', channel: 'email', customerId }));
    await ok(api.post(`/api/v1/tickets/${t.id}/solve`, { resolution: 'Re-filed with the corrected box 6' }));
    await created(api.post('/api/v1/ticket-replies', { ticketId: t.id, visibility: 'public', body: 'We re-filed it for you.', authorId: employeeId }));
    await created(api.post('/api/v1/ticket-replies', { ticketId: t.id, visibility: 'internal', body: 'Check again in a week' }));
    expect((await get(`/api/v1/tickets/${t.id}`)).state).toBe('solved');
    const back = await created(api.post('/api/v1/ticket-replies', { ticketId: t.id, visibility: 'public', body: 'Rejected again, same error.' }));
    expect(back.ticketState).toBe('solved');
    expect(await get(`/api/v1/tickets/${t.id}`)).toMatchObject({ state: 'open', reopenReason: 'Customer replied' });

    await ok(api.post(`/api/v1/tickets/${t.id}/wait`));
    await created(api.post('/api/v1/ticket-replies', { ticketId: t.id, visibility: 'public', body: 'Here is the screenshot.' }));
    expect((await get(`/api/v1/tickets/${t.id}`)).state).toBe('open');

    await ok(api.post(`/api/v1/tickets/${t.id}/solve`, { resolution: 'Box 6 corrected' }));
    await ok(api.post(`/api/v1/tickets/${t.id}/close`));
    refused(await api.post('/api/v1/ticket-replies', { ticketId: t.id, visibility: 'public', body: 'Thanks!' }), { pointer: '/ticketId', message: 'A closed ticket takes no replies: open a follow-up ticket' });
  });
});

describe('hospitality', () => {
  it('a booking takes its room type\'s rate and occupancy; check-in needs a clean room of that type; checkout leaves it dirty', async () => {
    const dlx = await created(api.post('/api/v1/room-types', { code: 'DLX', name: 'Deluxe', maxOccupancy: 2, baseRate: 450 }));
    const ste = await created(api.post('/api/v1/room-types', { code: 'STE', name: 'Suite', maxOccupancy: 4, baseRate: 900 }));
    const r504 = await created(api.post('/api/v1/hotel-rooms', { number: '504', roomTypeId: dlx.id, housekeeping: 'clean' }));
    const r901 = await created(api.post('/api/v1/hotel-rooms', { number: '901', roomTypeId: ste.id, housekeeping: 'clean' }));
    const stay = { guestId: customerId, channel: 'direct', roomTypeId: dlx.id, arrivalDate: '2026-08-10', departureDate: '2026-08-13' };
    refused(await api.post('/api/v1/hotel-bookings', { ...stay, adults: 2, children: 1 }), { pointer: '/adults', message: "More guests than the room type's maximum occupancy" });
    const b = await created(api.post('/api/v1/hotel-bookings', { ...stay, adults: 2 }));
    expect(b).toMatchObject({ confirmationNumber: `BK-${YEAR}-00001`, nightlyRate: 450, nights: 3, total: 1350, vatAmount: 202.5, totalWithVat: 1552.5 });
    // A corporate rate stays as given.
    expect(await created(api.post('/api/v1/hotel-bookings', { ...stay, adults: 1, nightlyRate: 380 }))).toMatchObject({ confirmationNumber: `BK-${YEAR}-00002`, total: 1140, totalWithVat: 1311 });

    refused(await api.post(`/api/v1/hotel-bookings/${b.id}/checkIn`, { roomId: r901.id }), { pointer: '/roomId', message: 'The room is not of the booked room type' });
    refused(await api.patch(`/api/v1/hotel-bookings/${b.id}`, { roomId: r901.id }), { pointer: '/roomId', message: 'The room is not of the booked room type' });
    await ok(api.post(`/api/v1/hotel-bookings/${b.id}/checkIn`, { roomId: r504.id }));
    await ok(api.post(`/api/v1/hotel-bookings/${b.id}/checkOut`, { folioTotal: 1720.5 }));
    expect((await get(`/api/v1/hotel-rooms/${r504.id}`)).housekeeping).toBe('dirty');

    const next = await created(api.post('/api/v1/hotel-bookings', { ...stay, arrivalDate: '2026-08-13', departureDate: '2026-08-14', adults: 1 }));
    refused(await api.post(`/api/v1/hotel-bookings/${next.id}/checkIn`, { roomId: r504.id }), { pointer: '/roomId', message: 'The room is not ready: it is dirty or out of order' });
    expect((await get(`/api/v1/hotel-bookings/${next.id}`)).state).toBe('confirmed');
    await ok(api.patch(`/api/v1/hotel-rooms/${r504.id}`, { housekeeping: 'inspected' }));
    expect((await ok(api.post(`/api/v1/hotel-bookings/${next.id}/checkIn`, { roomId: r504.id }))).state).toBe('checked_in');
  });
});

describe('hse', () => {
  it('an employee acknowledges an issued document\'s current revision, once', async () => {
    const doc = await created(api.post('/api/v1/hse-documents', { docNumber: 'HSE-P-01', title: 'Hot work procedure', docType: 'procedure', revision: 'C' }));
    refused(await api.post('/api/v1/hse-acknowledgements', { documentId: doc.id, employeeId, acknowledgedOn: '2026-02-01' }), { pointer: '/documentId', message: 'Only an issued document is acknowledged' });
    await ok(api.post(`/api/v1/hse-documents/${doc.id}/issue`, { effectiveDate: '2026-02-01' }));
    const ack = await created(api.post('/api/v1/hse-acknowledgements', { documentId: doc.id, employeeId, acknowledgedOn: '2026-02-02' }));
    expect(ack.revision).toBe('C');
    conflictWith(await api.post('/api/v1/hse-acknowledgements', { documentId: doc.id, employeeId, acknowledgedOn: '2026-02-03' }), { reason: 'unique', field: 'employeeRevision', other: ack.id, within: 'documentId' });
    refused(await api.post('/api/v1/hse-acknowledgements', { documentId: doc.id, employeeId: otherEmployeeId, revision: 'B', acknowledgedOn: '2026-02-03' }), { pointer: '/revision', message: "The acknowledgement is of the document's current revision" });
    await created(api.post('/api/v1/hse-acknowledgements', { documentId: doc.id, employeeId: otherEmployeeId, acknowledgedOn: '2026-02-03' }));
    expect((await api.get(`/api/v1/hse-acknowledgements?documentId=${doc.id}`)).json().total).toBe(2);
  });
});

describe('industry-models', () => {
  it('a model key names one model', async () => {
    const m = await created(api.post('/api/v1/industry-models', { modelKey: 'clinic', name: 'Clinic', version: '1.0.0', apps: [{ appId: 'emr' }] }));
    conflictWith(await api.post('/api/v1/industry-models', { modelKey: 'clinic', name: 'Clinic 2', version: '2.0.0', apps: [{ appId: 'emr' }] }), { reason: 'unique', field: 'modelKey', other: m.id });
  });
});

describe('iot', () => {
  it('an alert marks its device last seen; an offline or retired device raises no alert and takes no command; serial numbers are unique', async () => {
    const d = await created(api.post('/api/v1/iot-devices', { name: 'Cold room 1', deviceType: 'sensor', serialNumber: 'TS-0093' }));
    conflictWith(await api.post('/api/v1/iot-devices', { name: 'Cold room 2', deviceType: 'sensor', serialNumber: 'TS-0093' }), { reason: 'unique', field: 'serialNumber', other: d.id });
    await ok(api.post(`/api/v1/iot-devices/${d.id}/activate`, { lastSeenOn: '2026-02-25' }));
    const alert = { deviceId: d.id, metric: 'temperature', value: 9.5, threshold: 8, severity: 'critical' };
    const hot = await created(api.post('/api/v1/iot-alerts', { ...alert, raisedOn: '2026-03-01' }));
    expect((await get(`/api/v1/iot-devices/${d.id}`)).lastSeenOn).toBe('2026-03-01');
    // A reading that arrives late does not move it back.
    await created(api.post('/api/v1/iot-alerts', { ...alert, value: 8.6, raisedOn: '2026-02-27' }));
    expect((await get(`/api/v1/iot-devices/${d.id}`)).lastSeenOn).toBe('2026-03-01');

    await ok(api.post(`/api/v1/iot-devices/${d.id}/goOffline`));
    refused(await api.post('/api/v1/iot-alerts', { ...alert, raisedOn: '2026-03-02' }), { pointer: '/deviceId', message: 'A retired or offline device raises no alerts' });
    refused(await api.post('/api/v1/iot-commands', { deviceId: d.id, command: 'defrost' }), { pointer: '/deviceId', message: 'No command is queued for a retired or offline device' });
    expect((await get(`/api/v1/iot-devices/${d.id}`)).reachable).toBe(false);
    // What was raised before is still cleared.
    expect((await ok(api.post(`/api/v1/iot-alerts/${hot.id}/clear`, { clearedValue: 6.1 }))).state).toBe('cleared');
    await ok(api.post(`/api/v1/iot-devices/${d.id}/goOnline`, { lastSeenOn: '2026-03-03' }));
    await created(api.post('/api/v1/iot-commands', { deviceId: d.id, command: 'defrost' }));
    await ok(api.post(`/api/v1/iot-devices/${d.id}/retire`, { reason: 'Replaced' }));
    refused(await api.post('/api/v1/iot-alerts', { ...alert, raisedOn: '2026-03-04' }), { pointer: '/deviceId' });
  });
});

describe('jewelry', () => {
  it("a 21K order priced at the day's rate of 245.60 a gram: 12.5 g + making 350 = 3,420.00; a rate of another karat is refused", async () => {
    const r21 = await created(api.post('/api/v1/gold-rates', { karat: '21', ratePerGram: 245.6, effectiveDate: '2026-03-01' }));
    const r18 = await created(api.post('/api/v1/gold-rates', { karat: '18', ratePerGram: 210.5, effectiveDate: '2026-03-01' }));
    const order = { customerId, design: 'Ring, floral', karat: '21', estimatedWeightG: 12.5, makingCharge: 350 };
    refused(await api.post('/api/v1/jewelry-orders', { ...order, rateId: r18.id }), { pointer: '/rateId', message: 'The gold rate is for another karat' });
    expect(await created(api.post('/api/v1/jewelry-orders', { ...order, rateId: r21.id }))).toMatchObject({ ratePerGram: 245.6, goldValue: 3070, price: 3420, vatAmount: 513, total: 3933 });
    // A rate agreed with the customer stays as given.
    expect(await created(api.post('/api/v1/jewelry-orders', { ...order, rateId: r21.id, ratePerGram: 240 }))).toMatchObject({ ratePerGram: 240, goldValue: 3000, price: 3350 });
    refused(await api.post('/api/v1/jewelry-orders', order), { pointer: '/ratePerGram' });
  });
});

describe('knowledge', () => {
  it('an article is as visible as its space unless it says; resolving a flag sends a published article back to draft', async () => {
    const help = await created(api.post('/api/v1/knowledge-spaces', { name: 'Customer help', visibility: 'public' }));
    const finance = await created(api.post('/api/v1/knowledge-spaces', { name: 'Finance', visibility: 'internal' }));
    const a = await created(api.post('/api/v1/kb-articles', { spaceId: help.id, title: 'Paying by SADAD', body: 'Use biller code 901' }));
    expect(a.visibility).toBe('public');
    expect((await created(api.post('/api/v1/kb-articles', { spaceId: finance.id, title: 'Month end' }))).visibility).toBe('internal');
    expect((await created(api.post('/api/v1/kb-articles', { spaceId: help.id, title: 'Draft pricing', visibility: 'internal' }))).visibility).toBe('internal');

    await ok(api.post(`/api/v1/kb-articles/${a.id}/publish`));
    const flag = await created(api.post('/api/v1/kb-article-flags', { articleId: a.id, reason: 'outdated', comment: 'The biller code changed to 902' }));
    expect(await ok(api.post(`/api/v1/kb-article-flags/${flag.id}/resolve`, { resolution: 'Biller code updated' }))).toMatchObject({ state: 'resolved', articleState: 'published' });
    expect(await get(`/api/v1/kb-articles/${a.id}`)).toMatchObject({ state: 'draft', version: 1 });
    // A flag on an article already being revised leaves it as it is.
    const again = await created(api.post('/api/v1/kb-article-flags', { articleId: a.id, reason: 'unclear' }));
    await ok(api.post(`/api/v1/kb-article-flags/${again.id}/resolve`, { resolution: 'Reworded' }));
    expect((await get(`/api/v1/kb-articles/${a.id}`)).state).toBe('draft');
  });
});

describe('legal', () => {
  it('matters are numbered by the year they open; hearings take the matter\'s court and case number; a closed matter takes no hearing or deadline', async () => {
    const m = { title: 'Contract dispute', clientId: customerId, practiceArea: 'litigation', leadLawyerId: employeeId, court: 'Riyadh Commercial Court', caseNumber: '4471234' };
    const old = await created(api.post('/api/v1/legal-matters', { ...m, openedOn: '2025-01-05' }));
    expect(old.matterNumber).toBe('MAT-2025-00001');
    expect((await created(api.post('/api/v1/legal-matters', { ...m, openedOn: '2025-06-30' }))).matterNumber).toBe('MAT-2025-00002');
    expect((await created(api.post('/api/v1/legal-matters', { ...m, openedOn: '2026-01-04' }))).matterNumber).toBe('MAT-2026-00001');

    const h = await created(api.post('/api/v1/court-hearings', { matterId: old.id, hearingDate: '2025-03-01' }));
    expect(h).toMatchObject({ court: 'Riyadh Commercial Court', caseNumber: '4471234' });
    expect((await created(api.post('/api/v1/court-hearings', { matterId: old.id, hearingDate: '2025-05-01', court: 'Riyadh Court of Appeal' }))).court).toBe('Riyadh Court of Appeal');

    await ok(api.post(`/api/v1/legal-matters/${old.id}/close`, { closingReason: 'settled', closedOn: '2025-09-01' }));
    refused(await api.post('/api/v1/legal-deadlines', { matterId: old.id, deadlineType: 'appeal', dueDate: '2025-10-01' }), { pointer: '/matterId', message: 'A closed matter takes no deadlines: reopen it first' });
    refused(await api.post('/api/v1/court-hearings', { matterId: old.id, hearingDate: '2025-10-01' }), { pointer: '/matterId', message: 'A closed matter takes no hearings: reopen it first' });
    await ok(api.post(`/api/v1/legal-matters/${old.id}/reopen`, { reason: 'Settlement breached' }));
    expect((await created(api.post('/api/v1/legal-deadlines', { matterId: old.id, deadlineType: 'filing', dueDate: '2025-10-01' }))).state).toBe('open');
  });
});

describe('loyalty', () => {
  it('points: 500 + 250 − 600 leaves 150, and a redemption of 200 is refused; a gift card of 500 spends down to its balance', async () => {
    const member = await created(api.post('/api/v1/loyalty-members', { customerId, tier: 'silver', enrolledVia: 'pos' }));
    expect(member.pointsBalance).toBe(0);
    refused(await api.post('/api/v1/loyalty-members', { customerId, tier: 'gold', enrolledVia: 'pos', pointsBalance: 9999 }), { pointer: '/pointsBalance' });
    const move = (kind: string, points: number) => api.post('/api/v1/loyalty-points', { memberId: member.id, kind, points });
    expect((await created(move('earn', 500))).pointsBalance).toBe(500);
    expect((await created(move('earn', 250))).pointsBalance).toBe(750);
    expect(await created(move('redeem', 600))).toMatchObject({ signedPoints: -600, pointsBalance: 150 });
    expect((await get(`/api/v1/loyalty-members/${member.id}`)).pointsBalance).toBe(150);
    conflictWith(await move('redeem', 200), { reason: 'parentRule', id: member.id }, 'Not enough points');
    expect((await api.get(`/api/v1/loyalty-points?memberId=${member.id}`)).json().total).toBe(3);
    await ok(api.post(`/api/v1/loyalty-members/${member.id}/suspend`, { reason: 'Card shared' }));
    conflictWith(await move('earn', 10), { reason: 'parentLocked', id: member.id, state: 'suspended' });

    const c = await created(api.post('/api/v1/loyalty-coupons', { code: 'RAMADAN10', discountType: 'percent', discountValue: 10 }));
    conflictWith(await api.post('/api/v1/loyalty-coupons', { code: 'RAMADAN10', discountType: 'amount', discountValue: 0, amountOff: 20 }), { reason: 'unique', field: 'code', other: c.id });

    const card = await created(api.post('/api/v1/gift-cards', { cardNumber: 'GC-7781', amount: 500 }));
    expect(card).toMatchObject({ usedAmount: 0, balance: 500 });
    expect((await created(api.post('/api/v1/gift-card-uses', { giftcardId: card.id, amount: 120.5, orderRef: 'SO-1' }))).balance).toBe(379.5);
    expect((await created(api.post('/api/v1/gift-card-uses', { giftcardId: card.id, amount: 79.5, orderRef: 'SO-2' }))).balance).toBe(300);
    conflictWith(await api.post('/api/v1/gift-card-uses', { giftcardId: card.id, amount: 300.01, orderRef: 'SO-3' }), { reason: 'parentRule', id: card.id }, "The card's balance is not enough");
    expect(await get(`/api/v1/gift-cards/${card.id}`)).toMatchObject({ usedAmount: 200, balance: 300 });
  });
});

describe('maintenance', () => {
  it('completing a corrective request puts equipment that is down back in service with its downtime; retired equipment takes no request', async () => {
    const eq = await created(api.post('/api/v1/maintenance-equipment', { name: 'Chiller 3', location: 'Roof' }));
    await ok(api.post(`/api/v1/maintenance-equipment/${eq.id}/reportDown`, { downSince: '2026-03-01', reason: 'Compressor trip' }));
    const r = await created(api.post('/api/v1/maintenance-requests', { equipmentId: eq.id, requestType: 'corrective', priority: 'urgent', description: 'Compressor trip' }));
    expect(r.equipmentState).toBe('down');
    await ok(api.post(`/api/v1/maintenance-requests/${r.id}/complete`, { resolution: 'Replaced the contactor', durationMinutes: 135, downtimeMinutes: 300 }));
    expect(await get(`/api/v1/maintenance-equipment/${eq.id}`)).toMatchObject({ state: 'in_service', downtimeMinutes: 300 });

    // No downtime given: the time spent counts.
    await ok(api.post(`/api/v1/maintenance-equipment/${eq.id}/reportDown`, { downSince: '2026-03-09', reason: 'Low refrigerant' }));
    const r2 = await created(api.post('/api/v1/maintenance-requests', { equipmentId: eq.id, requestType: 'corrective', priority: 'high', description: 'Recharge' }));
    await ok(api.post(`/api/v1/maintenance-requests/${r2.id}/complete`, { resolution: 'Recharged R-134a', durationMinutes: 90 }));
    expect(await get(`/api/v1/maintenance-equipment/${eq.id}`)).toMatchObject({ state: 'in_service', downtimeMinutes: 390 });

    // A preventive visit on running equipment changes nothing of it.
    const p = await created(api.post('/api/v1/maintenance-requests', { equipmentId: eq.id, requestType: 'preventive', priority: 'normal', description: 'Quarterly service', scheduledOn: '2026-04-01' }));
    await ok(api.post(`/api/v1/maintenance-requests/${p.id}/complete`, { resolution: 'Cleaned the coils', durationMinutes: 60 }));
    expect(await get(`/api/v1/maintenance-equipment/${eq.id}`)).toMatchObject({ state: 'in_service', downtimeMinutes: 390 });

    await ok(api.post(`/api/v1/maintenance-equipment/${eq.id}/retire`, { reason: 'Replaced by Chiller 4' }));
    refused(await api.post('/api/v1/maintenance-requests', { equipmentId: eq.id, requestType: 'corrective', priority: 'low', description: 'Remove it' }), { pointer: '/equipmentId', message: 'Retired equipment takes no maintenance requests' });
  });
});

describe('manufacturing', () => {
  it('an order uses a BOM of its product, costs its work orders at the centre\'s rate (25 + 35 min at 120/h), and finishes when all are done', async () => {
    const cabinet = await created(api.post('/api/v1/products', { name: 'Cabinet', sku: 'CAB-2', kind: 'goods', price: 900, active: true }));
    const chair = await created(api.post('/api/v1/products', { name: 'Chair', sku: 'CHR-2', kind: 'goods', price: 300, active: true }));
    const board = await created(api.post('/api/v1/products', { name: 'Board', sku: 'BRD-2', kind: 'goods', price: 40, active: true }));
    const wc = await created(api.post('/api/v1/work-centers', { name: 'Assembly', costPerHour: 120 }));
    const bom = await created(api.post('/api/v1/boms', { productId: cabinet.id, quantity: 1, components: [{ productId: board.id, quantity: 6 }] }));
    refused(await api.post('/api/v1/manufacturing-orders', { productId: chair.id, bomId: bom.id, quantity: 10 }), { pointer: '/bomId', message: 'The bill of materials is for another product' });
    const mo = await created(api.post('/api/v1/manufacturing-orders', { productId: cabinet.id, bomId: bom.id, quantity: 10 }));
    expect(mo).toMatchObject({ orderNumber: `MO-${YEAR}-00001`, workOrders: 0, workOrdersDone: 0, operationsCost: 0 });
    await ok(api.post(`/api/v1/manufacturing-orders/${mo.id}/confirm`));
    await ok(api.post(`/api/v1/manufacturing-orders/${mo.id}/start`));
    const cut = await created(api.post('/api/v1/mfg-work-orders', { orderId: mo.id, operation: 'Cut', workCenterId: wc.id, plannedMinutes: 25 }));
    expect(cut).toMatchObject({ hourlyRate: 120, plannedCost: 50, cost: 0 });
    const asm = await created(api.post('/api/v1/mfg-work-orders', { orderId: mo.id, operation: 'Assemble', workCenterId: wc.id, plannedMinutes: 35 }));
    expect(asm.plannedCost).toBe(70);
    await ok(api.post(`/api/v1/mfg-work-orders/${cut.id}/start`));
    expect((await ok(api.post(`/api/v1/mfg-work-orders/${cut.id}/finish`, { durationMinutes: 30 }))).cost).toBe(60);
    conflictWith(await api.post(`/api/v1/manufacturing-orders/${mo.id}/finish`, { producedQuantity: 10 }), { reason: 'guard' }, 'once every work order is done');
    await ok(api.post(`/api/v1/mfg-work-orders/${asm.id}/start`));
    // 47 minutes at 120 an hour: 94.00.
    expect((await ok(api.post(`/api/v1/mfg-work-orders/${asm.id}/finish`, { durationMinutes: 47 }))).cost).toBe(94);
    expect(await get(`/api/v1/manufacturing-orders/${mo.id}`)).toMatchObject({ workOrders: 2, workOrdersDone: 2, operationsCost: 154 });
    expect(await ok(api.post(`/api/v1/manufacturing-orders/${mo.id}/finish`, { producedQuantity: 9, scrapQuantity: 1 }))).toMatchObject({ state: 'done', yieldPercent: 90 });
    // A done order takes no further work order.
    conflictWith(await api.post('/api/v1/mfg-work-orders', { orderId: mo.id, operation: 'Polish', workCenterId: wc.id, plannedMinutes: 10 }), { reason: 'parentLocked', id: mo.id, state: 'done' });
  });
});

describe('marketing-automation', () => {
  it('leads enter a running workflow once, with its entry trigger', async () => {
    const lead = await created(api.post('/api/v1/leads', { title: 'Fleet tracking for 40 trucks' }));
    const wf = await created(api.post('/api/v1/marketing-workflows', { name: 'Webinar follow-up', entryTrigger: 'list_joined', channel: 'email' }));
    refused(await api.post('/api/v1/workflow-participants', { workflowId: wf.id, leadId: lead.id }), { pointer: '/workflowId' });
    await ok(api.post(`/api/v1/marketing-workflows/${wf.id}/start`));
    const p = await created(api.post('/api/v1/workflow-participants', { workflowId: wf.id, leadId: lead.id, score: 20 }));
    expect(p.entryTrigger).toBe('list_joined');
    conflictWith(await api.post('/api/v1/workflow-participants', { workflowId: wf.id, leadId: lead.id }), { reason: 'unique', field: 'leadId', other: p.id, within: 'workflowId' });
    await ok(api.post(`/api/v1/marketing-workflows/${wf.id}/stop`, { reason: 'Rewriting the emails' }));
    const other = await created(api.post('/api/v1/leads', { title: 'HR for 12 staff' }));
    refused(await api.post('/api/v1/workflow-participants', { workflowId: wf.id, leadId: other.id, entryTrigger: 'manual' }), { pointer: '/workflowId', message: 'Leads enter a running workflow only; while it is stopped its participants wait unchanged' });
    // One who leaves meanwhile still may.
    expect((await ok(api.post(`/api/v1/workflow-participants/${p.id}/exit`, { reason: 'Unsubscribed' }))).state).toBe('exited');
  });
});

describe('marketplace', () => {
  it('a version is once per listing; publishing it makes it the listing\'s current version; an install takes the version it names', async () => {
    const l = await created(api.post('/api/v1/marketplace-listings', { appId: 'wps-export', name: 'WPS export', publisherName: 'Acme' }));
    const other = await created(api.post('/api/v1/marketplace-listings', { appId: 'gosi-sync', name: 'GOSI sync', publisherName: 'Acme' }));
    const v = await created(api.post('/api/v1/marketplace-versions', { listingId: l.id, version: '1.2.0', packageSha256: 'ab'.repeat(32), releaseNotes: 'SIF v2' }));
    conflictWith(await api.post('/api/v1/marketplace-versions', { listingId: l.id, version: '1.2.0' }), { reason: 'unique', field: 'version', other: v.id, within: 'listingId' });
    const otherV = await created(api.post('/api/v1/marketplace-versions', { listingId: other.id, version: '1.2.0' }));
    refused(await api.post('/api/v1/marketplace-installs', { listingId: l.id, versionId: v.id }), { pointer: '/versionId', message: 'Only a published version is installed' });
    await ok(api.post(`/api/v1/marketplace-versions/${v.id}/submit`));
    await ok(api.post(`/api/v1/marketplace-versions/${v.id}/publish`));
    expect((await get(`/api/v1/marketplace-listings/${l.id}`)).currentVersion).toBe('1.2.0');
    expect(await created(api.post('/api/v1/marketplace-installs', { listingId: l.id, versionId: v.id, installedOn: '2026-05-01' }))).toMatchObject({ version: '1.2.0', versionId: v.id });
    refused(await api.post('/api/v1/marketplace-installs', { listingId: other.id, versionId: v.id }), { pointer: '/versionId', message: 'The version is of another listing' });
    refused(await api.post('/api/v1/marketplace-installs', { listingId: l.id, versionId: v.id, version: '1.1.0' }), { pointer: '/version' });
    expect(otherV.state).toBe('draft');
  });
});

describe('nonprofit', () => {
  it('a campaign of 1,000 raises what its received donations add up to, reaches its goal once, and keeps zakat in its fund', async () => {
    const camp = await created(api.post('/api/v1/fundraising-campaigns', { name: 'Winter blankets', fund: 'zakat', goalAmount: 1000 }));
    refused(await api.post('/api/v1/fundraising-campaigns', { name: 'x', fund: 'general', goalAmount: 1, raisedAmount: 5 }), { pointer: '/raisedAmount' });
    const donor = await created(api.post('/api/v1/donors', { fullName: 'Abdullah' }));
    refused(await api.post('/api/v1/donations', { donorId: donor.id, campaignId: camp.id, fund: 'sadaqah', amount: 100, method: 'card' }), { pointer: '/fund', message: "A donation to a campaign goes to the campaign's fund (zakat stays zakat)" });
    const a = await created(api.post('/api/v1/donations', { donorId: donor.id, campaignId: camp.id, amount: 600.25, method: 'bank_transfer' }));
    expect(a.fund).toBe('zakat');
    const b = await created(api.post('/api/v1/donations', { donorId: donor.id, campaignId: camp.id, amount: 399.75, method: 'card' }));
    const c = await created(api.post('/api/v1/donations', { donorId: donor.id, campaignId: camp.id, amount: 5000, method: 'cash' }));
    // Pledged is not raised.
    expect((await get(`/api/v1/fundraising-campaigns/${camp.id}`)).raisedAmount).toBe(0);
    expect((await ok(api.post(`/api/v1/donations/${a.id}/receive`, { receivedOn: '2026-01-05' }))).receiptNumber).toBe('RCPT-2026-00001');
    expect(await get(`/api/v1/fundraising-campaigns/${camp.id}`)).toMatchObject({ raisedAmount: 600.25, progressPercent: 60, remainingAmount: 399.75 });
    await ok(api.post(`/api/v1/donations/${c.id}/cancel`, { reason: 'Cheque bounced' }));
    const reached = () => api.get('/api/v1/events?topics=nonprofit.campaign.goal_reached').then((r) => (r.json().data as { data: Data }[]).filter((e) => e.data.id === camp.id));
    expect(await reached()).toHaveLength(0);
    expect((await ok(api.post(`/api/v1/donations/${b.id}/receive`, { receivedOn: '2026-01-06' }))).receiptNumber).toBe('RCPT-2026-00002');
    expect(await get(`/api/v1/fundraising-campaigns/${camp.id}`)).toMatchObject({ raisedAmount: 1000, progressPercent: 100, remainingAmount: 0 });
    const events = await reached();
    expect(events).toHaveLength(1);
    expect(events[0].data).toMatchObject({ goalAmount: 1000, raisedAmount: 1000 });
    // Past the goal it does not fire again.
    const d = await created(api.post('/api/v1/donations', { donorId: donor.id, campaignId: camp.id, amount: 50, method: 'cash' }));
    await ok(api.post(`/api/v1/donations/${d.id}/receive`, { receivedOn: '2026-01-07' }));
    expect((await get(`/api/v1/fundraising-campaigns/${camp.id}`)).raisedAmount).toBe(1050);
    expect(await reached()).toHaveLength(1);
  });
});
