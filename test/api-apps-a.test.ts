// The rules of twenty-two apps (issue 26, part 2), each driven through the API alone by a story of
// its domain with the numbers the business gives: what a document computes (VAT at 15 %, totals
// in exact minor units, days, rates, scores), what it refuses (with which pointer, in ar and en),
// what a transition needs and stamps, and what it locks. One host, one company, SQLite and
// PostgreSQL (vitest.config.ts's `onPostgres`).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Host } from '../core/host.ts';
import { expectError, type Client, type TestCompany, created, ok } from './helpers.ts';
import { AR, conflict, invalid, storiesWithProject } from './app-stories.ts';

const APPS = [
  'invoicing', 'employees', 'projects', 'ecommerce', 'manufacturing',
  'aftersales', 'agents', 'analytics', 'appointments', 'appraisals', 'approvals', 'attendance', 'auto-workshop', 'av',
  'biometrics', 'blog', 'carwash', 'configurator', 'connect', 'crm', 'discuss', 'education', 'elearning', 'elv',
  'email-marketing',
];

let host: Host;
let co: TestCompany;
let api: Client;
let customerId: string;
let employeeId: string;
let projectId: string;

beforeAll(async () => {
  ({ host, co, api, customerId, employeeId, projectId } = await storiesWithProject(APPS));
}, 60_000);
afterAll(() => host?.close());

describe('aftersales', () => {
  it('an extended warranty: 1,150.50 + 15 % VAT = 1,323.08 for 365 days, locked once active, renewed only forward', async () => {
    const body = { customerId, agreementType: 'extended_warranty', startDate: '2026-01-01', endDate: '2026-12-31', price: 1_150.5 };
    const a = await created(api.post('/api/v1/service-agreements', body));
    expect(a).toMatchObject({ vatAmount: 172.58, totalAmount: 1_323.08, durationDays: 365 });
    await invalid(api.post('/api/v1/service-agreements', { ...body, endDate: '2025-12-31' }), '/endDate');
    const e = await invalid(api.post('/api/v1/service-agreements', { ...body, price: 0 }, AR), '/price');
    expect(e.details[0].message).toBe('الضمان الممتد وعقد الصيانة يُباعان: أدخل السعر');
    await invalid(api.post('/api/v1/service-agreements', { ...body, vatAmount: 1 }), '/vatAmount');

    await ok(api.post(`/api/v1/service-agreements/${a.id}/activate`));
    const locked = expectError(await api.patch(`/api/v1/service-agreements/${a.id}`, { price: 1 }), 409, 'CONFLICT');
    expect(locked.details[0]).toMatchObject({ reason: 'locked' });
    await conflict(api.post(`/api/v1/service-agreements/${a.id}/renew`, { newEndDate: '2026-06-30' }));
    const renewed = await ok(api.post(`/api/v1/service-agreements/${a.id}/renew`, { newEndDate: '2027-12-31', price: 1_000 }));
    expect(renewed).toMatchObject({ endDate: '2027-12-31', durationDays: 730, price: 1_000, vatAmount: 150, totalAmount: 1_150 });
    await invalid(api.post(`/api/v1/service-agreements/${a.id}/cancel`), '/reason');
    expectError(await co.as('Member').post(`/api/v1/service-agreements/${a.id}/cancel`, { reason: 'Sold the unit' }), 403, 'FORBIDDEN');
    expect(await ok(api.post(`/api/v1/service-agreements/${a.id}/cancel`, { reason: 'Sold the unit' }))).toMatchObject({ state: 'cancelled', cancellationReason: 'Sold the unit' });
  });

  it('a claim is approved with its remedy; a refund is settled only with its amount; a chargeable part is priced with VAT', async () => {
    const claim = await created(api.post('/api/v1/aftersales-claims', { customerId, issue: 'Compressor noise' }));
    await ok(api.post(`/api/v1/aftersales-claims/${claim.id}/acknowledge`));
    await invalid(api.post(`/api/v1/aftersales-claims/${claim.id}/approve`, { decision: 'apology' }), '/decision');
    expect(await ok(api.post(`/api/v1/aftersales-claims/${claim.id}/approve`, { decision: 'refund' }))).toMatchObject({ state: 'approved', decision: 'refund' });
    const e = await conflict(api.post(`/api/v1/aftersales-claims/${claim.id}/settle`, {}));
    expect(e.message).toContain('A refund or credit note needs the amount settled');
    expect(await ok(api.post(`/api/v1/aftersales-claims/${claim.id}/settle`, { settledAmount: 499.99 }))).toMatchObject({ state: 'settled', settledAmount: 499.99 });

    const part = await created(api.post('/api/v1/replaced-parts', { claimId: claim.id, productId: await productId(), quantity: 3, chargeable: true, unitPrice: 33.33 }));
    expect(part).toMatchObject({ amount: 99.99, vatAmount: 15 });
    expect(await created(api.post('/api/v1/replaced-parts', { claimId: claim.id, productId: await productId(), quantity: 3, unitPrice: 33.33 }))).toMatchObject({ amount: 0, vatAmount: 0 });
    await invalid(api.post('/api/v1/replaced-parts', { claimId: claim.id, productId: await productId(), quantity: 0, chargeable: true, unitPrice: 0 }), '/quantity', '/unitPrice');

    const rejected = await created(api.post('/api/v1/aftersales-claims', { customerId, issue: 'Scratched door' }));
    expect(await ok(api.post(`/api/v1/aftersales-claims/${rejected.id}/reject`, { reason: 'Damage caused by misuse' }))).toMatchObject({ state: 'rejected', rejectionReason: 'Damage caused by misuse' });
    const locked = expectError(await api.patch(`/api/v1/aftersales-claims/${rejected.id}`, { issue: 'Changed' }), 409, 'CONFLICT');
    expect(locked.details[0]).toMatchObject({ reason: 'locked' });
  });
});

let product: Promise<string> | undefined;
function productId(): Promise<string> {
  product ??= created(api.post('/api/v1/products', { name: 'Split AC 24k BTU', sku: 'AC-24', kind: 'goods', price: 2_000, cost: 1_400, vatRate: 15, active: true })).then((p) => p.id);
  return product;
}

describe('agents', () => {
  it('an agent that used its 50,000-token budget is stopped and resumes only once the budget is raised', async () => {
    const agent = await created(api.post('/api/v1/ai-agents', { name: 'Collections', instructions: 'Chase overdue invoices', trigger: 'schedule', tokenBudget: 50_000 }));
    await created(api.post('/api/v1/ai-agent-runs', { agentId: agent.id, trigger: 'schedule', tokensUsed: 12_500 }));
    expect(await ok(api.get(`/api/v1/ai-agents/${agent.id}`))).toMatchObject({ tokensUsed: 12_500, tokensRemaining: 37_500, budgetUsedPercent: 25 });
    const early = await conflict(api.post(`/api/v1/ai-agents/${agent.id}/exceedBudget`, undefined, AR));
    expect(early.message).toContain('لم يستنفد الوكيل ميزانية الرموز');
    await created(api.post('/api/v1/ai-agent-runs', { agentId: agent.id, trigger: 'schedule', tokensUsed: 37_700 }));
    expect(await ok(api.get(`/api/v1/ai-agents/${agent.id}`))).toMatchObject({ tokensUsed: 50_200, tokensRemaining: 0, budgetUsedPercent: 100 });
    expect(await ok(api.post(`/api/v1/ai-agents/${agent.id}/exceedBudget`))).toMatchObject({ state: 'over_budget', stoppedForBudget: true });
    await conflict(api.post(`/api/v1/ai-agents/${agent.id}/resume`));
    expect((await ok(api.patch(`/api/v1/ai-agents/${agent.id}`, { tokenBudget: 100_000 }))).stoppedForBudget).toBe(true);
    expect(await ok(api.post(`/api/v1/ai-agents/${agent.id}/resume`))).toMatchObject({ state: 'active', stoppedForBudget: false, tokensRemaining: 49_800, budgetUsedPercent: 50 });
    expect(await ok(api.post(`/api/v1/ai-agents/${agent.id}/pause`, { reason: 'Month-end freeze' }))).toMatchObject({ state: 'paused', pauseReason: 'Month-end freeze' });
  });

  it('a proposed action is decided by a manager, with the reason kept on a rejection, and then locked', async () => {
    const agent = await created(api.post('/api/v1/ai-agents', { name: 'Reorder', instructions: 'Reorder stock', trigger: 'manual' }));
    const action = await created(api.post('/api/v1/ai-agent-actions', { agentId: agent.id, tool: 'purchase.create', summary: 'Order 40 units', expiresOn: '2026-02-01' }));
    expectError(await co.as('Member').post(`/api/v1/ai-agent-actions/${action.id}/reject`, { note: 'Too many' }), 403, 'FORBIDDEN');
    await invalid(api.post(`/api/v1/ai-agent-actions/${action.id}/reject`, {}), '/note');
    expect(await ok(api.post(`/api/v1/ai-agent-actions/${action.id}/reject`, { note: 'Stock is enough until March' }))).toMatchObject({ state: 'rejected', decisionNote: 'Stock is enough until March' });
    await conflict(api.patch(`/api/v1/ai-agent-actions/${action.id}`, { summary: 'Order 400 units' }), 'locked');
  });
});

describe('analytics', () => {
  it('a dashboard needs its dataset and definition to publish; a refresh stamps its rows and time', async () => {
    const ds = await created(api.post('/api/v1/analytics-datasets', { name: 'Sales by month', query: 'select 1' }));
    const dash = await created(api.post('/api/v1/analytics-dashboards', { name: 'Sales' }));
    const e = await conflict(api.post(`/api/v1/analytics-dashboards/${dash.id}/publish`));
    expect(e.message).toContain('A dashboard needs its dataset and a definition before it is published');
    await ok(api.patch(`/api/v1/analytics-dashboards/${dash.id}`, { datasetId: ds.id, definition: '{"widgets":[]}' }));
    expect((await ok(api.post(`/api/v1/analytics-dashboards/${dash.id}/publish`))).state).toBe('published');

    await ok(api.post(`/api/v1/analytics-datasets/${ds.id}/refresh`));
    await conflict(api.patch(`/api/v1/analytics-datasets/${ds.id}`, { query: 'select 2' }), 'locked');
    await invalid(api.post(`/api/v1/analytics-datasets/${ds.id}/complete`, { rowCount: 1_240 }), '/durationMs');
    expect(await ok(api.post(`/api/v1/analytics-datasets/${ds.id}/complete`, { rowCount: 1_240, durationMs: 830 }))).toMatchObject({ state: 'ready', rowCount: 1_240, lastDurationMs: 830 });
    await conflict(api.patch(`/api/v1/analytics-datasets/${ds.id}`, { rowCount: 5 }), 'locked');
    expect((await ok(api.patch(`/api/v1/analytics-datasets/${ds.id}`, { name: 'Sales by month (SAR)' }))).rowCount).toBe(1_240);
  });
});

describe('appointments', () => {
  it('a 45-minute service at 200.00 costs 230.00 with VAT; a cancellation keeps its reason and locks the booking', async () => {
    const svc = await created(api.post('/api/v1/bookable-services', { name: 'Dental cleaning', durationMinutes: 45, price: 200 }));
    expect(svc.priceWithVat).toBe(230);
    await invalid(api.post('/api/v1/bookable-services', { name: 'Odd slot', durationMinutes: 47 }), '/durationMinutes');
    const appt = await created(api.post('/api/v1/appointments', { serviceId: svc.id, customerId, date: '2026-03-02', startAt: '2026-03-02T10:00', channel: 'phone' }));
    await invalid(api.post(`/api/v1/appointments/${appt.id}/cancel`, {}), '/reason');
    expect(await ok(api.post(`/api/v1/appointments/${appt.id}/cancel`, { reason: 'Customer travelling' }))).toMatchObject({ state: 'cancelled', reason: 'Customer travelling' });
    await conflict(api.patch(`/api/v1/appointments/${appt.id}`, { startAt: '2026-03-03T10:00' }), 'locked');
  });
});

describe('appraisals', () => {
  it('a cycle in order; goals weigh 40 % × 75 % = 30 points; a review completes only rated, and feedback is rated 1–5', async () => {
    await invalid(api.post('/api/v1/appraisal-cycles', { name: '2026', periodStart: '2026-01-01', periodEnd: '2025-12-31', reviewDeadline: '2026-01-31' }), '/periodEnd');
    const cycle = await created(api.post('/api/v1/appraisal-cycles', { name: '2026', periodStart: '2026-01-01', periodEnd: '2026-12-31', reviewDeadline: '2027-01-31', selfReviewDeadline: '2027-01-15' }));
    await ok(api.post(`/api/v1/appraisal-cycles/${cycle.id}/open`));
    const goal = await created(api.post('/api/v1/appraisal-goals', { employeeId, cycleId: cycle.id, title: 'Close books in 5 days', weight: 40, progress: 75 }));
    expect(goal.weightedScore).toBe(30);
    expect(await ok(api.post(`/api/v1/appraisal-goals/${goal.id}/achieve`))).toMatchObject({ progress: 100, weightedScore: 40 });

    const review = await created(api.post('/api/v1/appraisals', { cycleId: cycle.id, employeeId, managerId: employeeId }));
    const fb = await created(api.post('/api/v1/appraisal-feedback', { appraisalId: review.id, employeeId, reviewerId: employeeId }));
    await invalid(api.post(`/api/v1/appraisal-feedback/${fb.id}/submit`, { feedback: 'Reliable', rating: 6 }), '/rating');
    expect(await ok(api.post(`/api/v1/appraisal-feedback/${fb.id}/submit`, { feedback: 'Reliable', rating: 5 }))).toMatchObject({ state: 'submitted', rating: 5, feedback: 'Reliable' });
    const e = await conflict(api.post(`/api/v1/appraisals/${review.id}/complete`, undefined, AR));
    expect(e.message).toContain('أدخل التقدير العام وتقييم المدير قبل إتمام المراجعة');
    await ok(api.patch(`/api/v1/appraisals/${review.id}`, { overallRating: 4, managerAssessment: 'Exceeded the closing goal' }));
    expectError(await co.as('Member').post(`/api/v1/appraisals/${review.id}/complete`), 403, 'FORBIDDEN');
    expect((await ok(api.post(`/api/v1/appraisals/${review.id}/complete`))).state).toBe('completed');
    await conflict(api.patch(`/api/v1/appraisals/${review.id}`, { overallRating: 5 }), 'locked');

  });
});

describe('approvals', () => {
  it('a 3-step purchase of 75,000 climbs step by step to the last; a manager gives the final approval; a rejection needs its reason', async () => {
    await invalid(api.post('/api/v1/approval-requests', { requestType: 'purchase', subject: 'Laptops', requesterId: employeeId }), '/amount');
    const req = await created(api.post('/api/v1/approval-requests', { requestType: 'purchase', subject: 'Laptops', requesterId: employeeId, amount: 75_000, totalSteps: 3 }));
    expect((await ok(api.post(`/api/v1/approval-requests/${req.id}/submit`))).currentStep).toBe(1);
    await conflict(api.patch(`/api/v1/approval-requests/${req.id}`, { amount: 90_000 }), 'locked');
    await invalid(api.post(`/api/v1/approval-requests/${req.id}/approveStep`, {}), '/approverId');
    const member = co.as('Member');
    expect(await ok(member.post(`/api/v1/approval-requests/${req.id}/approveStep`, { approverId: employeeId }))).toMatchObject({ state: 'pending', currentStep: 2, approverId: employeeId });
    expect((await ok(member.post(`/api/v1/approval-requests/${req.id}/approveStep`, { approverId: employeeId }))).currentStep).toBe(3);
    const last = await conflict(member.post(`/api/v1/approval-requests/${req.id}/approveStep`, { approverId: employeeId }));
    expect(last.message).toContain('This is the last step: a manager gives the final approval');
    expectError(await member.post(`/api/v1/approval-requests/${req.id}/approve`), 403, 'FORBIDDEN');
    expect(await ok(co.as('Manager').post(`/api/v1/approval-requests/${req.id}/approve`))).toMatchObject({ state: 'approved', currentStep: 3 });

    // A manager may approve at step 1 of 4: the steps left are skipped.
    const urgent = await created(api.post('/api/v1/approval-requests', { requestType: 'payment', subject: 'Customs duty', requesterId: employeeId, amount: 12_345.67, totalSteps: 4 }));
    await ok(api.post(`/api/v1/approval-requests/${urgent.id}/submit`));
    expect(await ok(api.post(`/api/v1/approval-requests/${urgent.id}/approve`))).toMatchObject({ state: 'approved', currentStep: 4 });

    const other = await created(api.post('/api/v1/approval-requests', { requestType: 'hiring', subject: 'Accountant', requesterId: employeeId }));
    await ok(api.post(`/api/v1/approval-requests/${other.id}/submit`));
    await invalid(api.post(`/api/v1/approval-requests/${other.id}/reject`, {}), '/comment');
    expect(await ok(api.post(`/api/v1/approval-requests/${other.id}/reject`, { comment: 'No budget this year' }))).toMatchObject({ state: 'rejected', comment: 'No budget this year' });
  });

  it('a rule numbers its steps once each', async () => {
    const steps = [{ step: 1, approverId: employeeId, deadlineDays: 2 }, { step: 1, approverId: employeeId }];
    await invalid(api.post('/api/v1/approval-rules', { name: 'Purchases', requestType: 'purchase', steps }), '/steps');
    await created(api.post('/api/v1/approval-rules', { name: 'Purchases', requestType: 'purchase', steps: [steps[0], { ...steps[1], step: 2 }] }));
  });
});

describe('attendance', () => {
  it('a day of 2 present (1 late), 1 absent, 1 on leave is 4 people and 66.7 % attendance, counted from the records; one record per employee a day; overtime within the hours', async () => {
    const sheet = await created(api.post('/api/v1/attendance-sheets', { date: '2026-02-01', absentCount: 1, onLeaveCount: 1 }));
    expect(sheet).toMatchObject({ presentCount: 0, lateCount: 0, headcount: 2, attendanceRate: 0 });
    await invalid(api.post('/api/v1/attendance-sheets', { date: '2026-02-01', presentCount: 42 }), '/presentCount');

    const rec = { employeeId, sheetId: sheet.id, date: '2026-02-01', checkInTime: '08:00' };
    await invalid(api.post('/api/v1/attendance-records', { ...rec, checkOutTime: '07:30' }), '/checkOutTime');
    await invalid(api.post('/api/v1/attendance-records', { ...rec, checkOutTime: '19:00', workedHours: 10, overtimeHours: 11 }), '/overtimeHours');
    await invalid(api.post('/api/v1/attendance-records', { ...rec, checkOutTime: '16:00', workedHours: 8, overtimeStatus: 'approved' }), '/overtimeStatus');
    await invalid(api.post('/api/v1/attendance-records', { ...rec, date: '2026-02-02' }), '/sheetId');
    const ot = await created(api.post('/api/v1/attendance-records', { ...rec, checkOutTime: '19:00', workedHours: 11, overtimeHours: 3, overtimeStatus: 'to_approve' }));
    const twice = expectError(await api.post('/api/v1/attendance-records', { ...rec, checkInTime: '09:00' }), 409, 'CONFLICT');
    expect(twice.details[0]).toMatchObject({ reason: 'unique', field: 'date', other: ot.id });
    const colleague = await created(api.post('/api/v1/employees', { fullName: 'Hind Al-Zahrani', jobTitle: 'Storekeeper', joinDate: '2024-01-07' }));
    const none = await created(api.post('/api/v1/attendance-records', { ...rec, employeeId: colleague.id, checkInTime: '08:20', late: true, checkOutTime: '16:20', workedHours: 8 }));
    expect(await ok(api.get(`/api/v1/attendance-sheets/${sheet.id}`))).toMatchObject({ presentCount: 2, lateCount: 1, workedHours: 19, overtimeHours: 3, headcount: 4, attendanceRate: 66.7 });

    // Overtime is approved by a manager, never typed; the approved hours are then fixed.
    await conflict(api.patch(`/api/v1/attendance-records/${ot.id}`, { overtimeStatus: 'approved' }), 'locked');
    expectError(await co.as('Member').post(`/api/v1/attendance-records/${ot.id}/approveOvertime`), 403, 'FORBIDDEN');
    expect(await ok(co.as('Manager').post(`/api/v1/attendance-records/${ot.id}/approveOvertime`))).toMatchObject({ state: 'overtime_approved', overtimeStatus: 'approved', overtimeHours: 3 });
    await conflict(api.patch(`/api/v1/attendance-records/${ot.id}`, { overtimeHours: 5 }), 'locked');
    expect((await ok(api.patch(`/api/v1/attendance-records/${ot.id}`, { notes: 'Stock count' }))).overtimeStatus).toBe('approved');
    await conflict(api.post(`/api/v1/attendance-records/${none.id}/approveOvertime`));

    // A closed day takes no more records, and its counts stay.
    await ok(api.post(`/api/v1/attendance-sheets/${sheet.id}/close`));
    await conflict(api.patch(`/api/v1/attendance-sheets/${sheet.id}`, { absentCount: 0 }), 'locked');
    const third = await created(api.post('/api/v1/employees', { fullName: 'Turki Al-Anazi', jobTitle: 'Driver', joinDate: '2024-01-07' }));
    await conflict(api.post('/api/v1/attendance-records', { ...rec, employeeId: third.id }), 'parentLocked');
    await conflict(api.patch(`/api/v1/attendance-records/${none.id}`, { late: false }), 'parentLocked');
    expect((await ok(api.get(`/api/v1/attendance-sheets/${sheet.id}`))).lateCount).toBe(1);

    const leave = await created(api.post('/api/v1/attendance-leaves', { employeeId, leaveType: 'hajj', startDate: '2026-05-24', endDate: '2026-06-06' }));
    expect(leave.days).toBe(14);
    await invalid(api.post('/api/v1/attendance-leaves', { employeeId, leaveType: 'sick', startDate: '2026-05-24', endDate: '2026-05-20' }), '/endDate');
  });
});

describe('auto-workshop', () => {
  it('an estimate of 2.5 h labour at 180 and 4 filters at 37.50 is 600 + 90 VAT = 690, locked once sent; delivery waits for the invoice', async () => {
    const job = await created(api.post('/api/v1/workshop-jobs', { customerId, plateNumber: 'ABC 1234', odometerKm: 84_210, complaint: 'Brake noise', vin: 'JTDBR32E720123456' }));
    await invalid(api.post('/api/v1/workshop-jobs', { customerId, plateNumber: 'ABC 1235', odometerKm: 1, complaint: 'Noise', vin: 'SHORT' }), '/vin');
    const lines = [{ kind: 'labour', description: 'Brake service', quantity: 2.5, unitPrice: 180 }, { kind: 'part', description: 'Filter', quantity: 4, unitPrice: 37.5 }];
    const est = await created(api.post('/api/v1/workshop-estimates', { jobId: job.id, lines }));
    expect(est).toMatchObject({ subtotal: 600, vatAmount: 90, total: 690 });
    await invalid(api.post('/api/v1/workshop-estimates', { jobId: job.id, lines: [{ ...lines[0], quantity: 0 }] }), '/lines');
    await ok(api.post(`/api/v1/workshop-estimates/${est.id}/send`));
    await conflict(api.patch(`/api/v1/workshop-estimates/${est.id}`, { lines: [lines[0]] }), 'locked');

    await ok(api.post(`/api/v1/workshop-jobs/${job.id}/start`));
    await conflict(api.patch(`/api/v1/workshop-jobs/${job.id}`, { odometerKm: 10 }), 'locked');
    await invalid(api.post(`/api/v1/workshop-jobs/${job.id}/waitForParts`, { partsAwaited: 'Rear pads' }), '/expectedPartsOn');
    expect(await ok(api.post(`/api/v1/workshop-jobs/${job.id}/waitForParts`, { partsAwaited: 'Rear pads', expectedPartsOn: '2026-02-03' }))).toMatchObject({ state: 'waiting_parts', expectedPartsOn: '2026-02-03' });
    await ok(api.post(`/api/v1/workshop-jobs/${job.id}/start`));
    await ok(api.post(`/api/v1/workshop-jobs/${job.id}/markReady`));
    await conflict(api.post(`/api/v1/workshop-jobs/${job.id}/deliver`));
    await ok(api.post(`/api/v1/workshop-estimates/${est.id}/approve`));
    expect((await ok(api.get(`/api/v1/workshop-jobs/${job.id}`))).invoiceTotal).toBe(690);
    expect((await ok(api.post(`/api/v1/workshop-jobs/${job.id}/deliver`))).state).toBe('delivered');
  });
});

describe('av', () => {
  it('a BoQ of 6 displays at 4,250.75 and 120 m of cable at 3.35 is 25,906.50 + 3,885.98 VAT; a passed commissioning has no failed check', async () => {
    const lines = [{ description: '65" display', quantity: 6, unitPrice: 4_250.75 }, { description: 'HDMI cable (m)', quantity: 120, unitPrice: 3.35 }];
    const approved = await created(api.post('/api/v1/av-designs', { projectId, title: 'Auditorium', revision: 0 }));
    await ok(api.post(`/api/v1/av-designs/${approved.id}/submit`));
    await ok(api.post(`/api/v1/av-designs/${approved.id}/approve`));
    const boq = await created(api.post('/api/v1/av-boqs', { projectId, designId: approved.id, revision: 0, lines }));
    expect(boq).toMatchObject({ totalAmount: 25_906.5, vatAmount: 3_885.98, totalWithVat: 29_792.48 });
    await invalid(api.post('/api/v1/av-boqs', { projectId, revision: 1, supersedesId: boq.id, lines }), '/revisionReason');
    await ok(api.post(`/api/v1/av-boqs/${boq.id}/freeze`));
    await conflict(api.patch(`/api/v1/av-boqs/${boq.id}`, { lines: [lines[0]] }), 'locked');

    const design = await created(api.post('/api/v1/av-designs', { projectId, title: 'Boardroom', revision: 0 }));
    await ok(api.post(`/api/v1/av-designs/${design.id}/submit`));
    await invalid(api.post(`/api/v1/av-designs/${design.id}/reject`, {}), '/comments');
    expect(await ok(api.post(`/api/v1/av-designs/${design.id}/reject`, { comments: 'Move the camera to the far wall' }))).toMatchObject({ state: 'rejected', clientComments: 'Move the camera to the far wall' });

    const test = { projectId, engineerId: employeeId, testDate: '2026-04-01', checksPassed: 47, failedChecks: 3 };
    await invalid(api.post('/api/v1/av-commissioning-tests', { ...test, result: 'passed' }), '/result');
    expect(await created(api.post('/api/v1/av-commissioning-tests', { ...test, result: 'failed' }))).toMatchObject({ totalChecks: 50, passRate: 94 });

    const inst = await created(api.post('/api/v1/av-installations', { projectId, siteName: 'HQ', plannedStart: '2026-03-01', plannedEnd: '2026-03-10' }));
    await invalid(api.patch(`/api/v1/av-installations/${inst.id}`, { plannedEnd: '2026-02-28' }), '/plannedEnd');
    await ok(api.post(`/api/v1/av-installations/${inst.id}/start`));
    await ok(api.post(`/api/v1/av-installations/${inst.id}/complete`));
    await conflict(api.post(`/api/v1/av-installations/${inst.id}/handover`, { signedBy: 'Eng. Khalid', handoverDate: '2026-02-01' }));
    expect(await ok(api.post(`/api/v1/av-installations/${inst.id}/handover`, { signedBy: 'Eng. Khalid', handoverDate: '2026-03-12' }))).toMatchObject({ state: 'handed_over', handoverSignedBy: 'Eng. Khalid', handoverDate: '2026-03-12' });
  });
});

describe('biometrics', () => {
  it('an unmatched punch is not posted; a rejection keeps its reason; a posting covers its days in order', async () => {
    const device = await created(api.post('/api/v1/biometric-devices', { name: 'Gate 1', serialNumber: 'ZK-0001' }));
    expect(await ok(api.post(`/api/v1/biometric-devices/${device.id}/reportError`, { errorCode: 'E42', errorMessage: 'Sensor dirty' }))).toMatchObject({ state: 'error', lastErrorCode: 'E42' });
    const punch = await created(api.post('/api/v1/biometric-punches', { deviceId: device.id, deviceUserCode: '1007', punchDate: '2026-02-01', punchTime: '07:58:12' }));
    const e = await conflict(api.post(`/api/v1/biometric-punches/${punch.id}/post`));
    expect(e.message).toContain('Match the punch to an employee before posting it');
    await invalid(api.post(`/api/v1/biometric-punches/${punch.id}/reject`, { reason: 'bored' }), '/reason');
    expect(await ok(api.post(`/api/v1/biometric-punches/${punch.id}/reject`, { reason: 'unknown_user' }))).toMatchObject({ state: 'rejected', rejectReason: 'unknown_user' });

    await invalid(api.post('/api/v1/biometric-postings', { periodFrom: '2026-02-10', periodTo: '2026-02-01' }), '/periodTo');
    const posting = await created(api.post('/api/v1/biometric-postings', { periodFrom: '2026-02-01', periodTo: '2026-02-28' }));
    expect(posting.periodDays).toBe(28);
    await conflict(api.post(`/api/v1/biometric-postings/${posting.id}/post`));
    await created(api.post('/api/v1/biometric-punches', { deviceId: device.id, deviceUserCode: '1008', employeeId, postingId: posting.id, punchDate: '2026-02-02', punchTime: '07:55:00' }));
    expect((await ok(api.post(`/api/v1/biometric-postings/${posting.id}/post`))).punchCount).toBe(1);
    await conflict(api.patch(`/api/v1/biometric-postings/${posting.id}`, { periodTo: '2026-02-27' }), 'locked');
  });
});

describe('blog', () => {
  it('a post needs a URL-safe slug and a body to publish; its slug is then fixed', async () => {
    const e = await invalid(api.post('/api/v1/blog-posts', { title: 'VAT in 2026', slug: 'VAT in 2026' }, AR), '/slug');
    expect(e.details[0].message).toBe('المعرّف حروف لاتينية صغيرة وأرقام تفصل بينها شرطات');
    const post = await created(api.post('/api/v1/blog-posts', { title: 'VAT in 2026', slug: 'vat-in-2026' }));
    await conflict(api.post(`/api/v1/blog-posts/${post.id}/publish`));
    await ok(api.patch(`/api/v1/blog-posts/${post.id}`, { body: 'What changes for retailers.' }));
    await ok(api.post(`/api/v1/blog-posts/${post.id}/publish`));
    await conflict(api.patch(`/api/v1/blog-posts/${post.id}`, { slug: 'vat-2026' }), 'locked');
    expect((await ok(api.patch(`/api/v1/blog-posts/${post.id}`, { summary: 'Updated for Q2' }))).summary).toBe('Updated for Q2');
  });
});

describe('carwash', () => {
  it('a 57.50 wash includes 7.50 VAT (50.00 net); a started job keeps its price; a cancellation needs a reason; a coupon is used once', async () => {
    const pkg = await created(api.post('/api/v1/wash-packages', { code: 'GOLD', name: 'Gold wash', price: 57.5 }));
    expect(pkg).toMatchObject({ vatAmount: 7.5, netAmount: 50 });
    const job = await created(api.post('/api/v1/wash-jobs', { plateNumber: 'XYZ 9876', vehicleType: 'suv', packageId: pkg.id, price: 57.5, capture: 'cashier' }));
    expect(job).toMatchObject({ vatAmount: 7.5, netAmount: 50 });
    await ok(api.post(`/api/v1/wash-jobs/${job.id}/start`));
    await conflict(api.patch(`/api/v1/wash-jobs/${job.id}`, { price: 20 }), 'locked');
    expect((await ok(api.patch(`/api/v1/wash-jobs/${job.id}`, { bay: 'Bay 2' }))).bay).toBe('Bay 2');

    const other = await created(api.post('/api/v1/wash-jobs', { plateNumber: 'XYZ 1', vehicleType: 'sedan', packageId: pkg.id, price: 35, capture: 'app' }));
    await invalid(api.post(`/api/v1/wash-jobs/${other.id}/cancel`, {}), '/reason');
    expect(await ok(api.post(`/api/v1/wash-jobs/${other.id}/cancel`, { reason: 'Customer left' }))).toMatchObject({ state: 'cancelled', cancelReason: 'Customer left', vatAmount: 4.57 });

    const coupon = await created(api.post('/api/v1/wash-coupons', { code: 'RAMADAN10', discount: 10 }));
    expect(await ok(api.post(`/api/v1/wash-coupons/${coupon.id}/redeem`, { jobId: job.id }))).toMatchObject({ state: 'redeemed', jobId: job.id });
    expectError(await api.post(`/api/v1/wash-coupons/${coupon.id}/redeem`, { jobId: job.id }), 409, 'CONFLICT');

    // A yearly membership of 1,200 for 4 washes a month: 48 washes at 25.00, 156.52 VAT included.
    const mem = { customerId, plateNumber: 'XYZ 9876', packageId: pkg.id, period: 'yearly', washesPerMonth: 4, price: 1_200, validUntil: '2027-01-31' };
    expect(await created(api.post('/api/v1/wash-memberships', mem))).toMatchObject({ pricePerWash: 25, vatAmount: 156.52, netAmount: 1_043.48 });
    expect((await created(api.post('/api/v1/wash-memberships', { ...mem, period: 'quarterly', washesPerMonth: 8, price: 299 }))).pricePerWash).toBe(12.46);
  });
});

describe('configurator', () => {
  it('a configured cabinet priced 3,400 with 650 of extras is 3,910 with VAT; one value per attribute; revising a template bumps its version', async () => {
    const options = [{ attribute: 'finish', value: 'oak', priceExtra: 400 }, { attribute: 'handles', value: 'brass', priceExtra: 250 }];
    const tplBody = { name: 'Kitchen cabinet', productId: await productId(), version: 1, basePrice: 2_750 };
    await invalid(api.post('/api/v1/configurator-templates', { ...tplBody, options: [...options, options[0]] }), '/options');
    const tpl = await created(api.post('/api/v1/configurator-templates', { ...tplBody, options }));
    await ok(api.post(`/api/v1/configurator-templates/${tpl.id}/publish`));
    await conflict(api.patch(`/api/v1/configurator-templates/${tpl.id}`, { basePrice: 1 }), 'locked');
    expect(await ok(api.post(`/api/v1/configurator-templates/${tpl.id}/revise`))).toMatchObject({ state: 'draft', version: 2 });

    const selections = [{ attribute: 'finish', value: 'oak', priceExtra: 400 }, { attribute: 'handles', value: 'brass', priceExtra: 250 }];
    const cfg = await created(api.post('/api/v1/product-configurations', { templateId: tpl.id, selections, price: 3_400 }));
    expect(cfg).toMatchObject({ extrasTotal: 650, vatAmount: 510, totalWithVat: 3_910 });
    await invalid(api.post('/api/v1/product-configurations', { templateId: tpl.id, selections, price: 600 }), '/price');
    await invalid(api.post('/api/v1/product-configurations', { templateId: tpl.id, selections: [...selections, { attribute: 'finish', value: 'walnut' }], price: 3_400 }), '/selections');
    expect(await ok(api.post(`/api/v1/product-configurations/${cfg.id}/attach`, { attachedTo: 'quote', documentRef: 'QT-2026-0042' }))).toMatchObject({ state: 'attached', documentRef: 'QT-2026-0042' });
    await conflict(api.patch(`/api/v1/product-configurations/${cfg.id}`, { price: 3_000 }), 'locked');
  });
});

describe('connect', () => {
  it('a delivery order of 2 × 32.00 and 1 × 18.50 is 82.50 with 10.76 VAT inside; it is accepted with a prep time and cancelled with who and why', async () => {
    const channel = await created(api.post('/api/v1/delivery-channels', { provider: 'jahez', branch: 'Olaya' }));
    await conflict(api.post(`/api/v1/delivery-channels/${channel.id}/connect`));
    await ok(api.patch(`/api/v1/delivery-channels/${channel.id}`, { storeRef: 'JHZ-55120' }));
    await ok(api.post(`/api/v1/delivery-channels/${channel.id}/connect`));
    const item = await created(api.post('/api/v1/delivery-items', { name: 'Shawarma plate', sku: 'SH-1', price: 32 }));
    const lines = [{ itemId: item.id, quantity: 2, unitPrice: 32 }, { itemId: item.id, quantity: 1, unitPrice: 18.5 }];
    const order = await created(api.post('/api/v1/channel-orders', { channelId: channel.id, externalOrderId: 'J-88121', lines }));
    expect(order).toMatchObject({ total: 82.5, vatAmount: 10.76 });
    await invalid(api.post('/api/v1/channel-orders', { channelId: channel.id, externalOrderId: 'J-88122', lines, total: 1 }), '/total');
    await invalid(api.post(`/api/v1/channel-orders/${order.id}/accept`, { prepMinutes: 300 }), '/prepMinutes');
    expect(await ok(api.post(`/api/v1/channel-orders/${order.id}/accept`, { prepMinutes: 20 }))).toMatchObject({ state: 'accepted', prepMinutes: 20 });
    await conflict(api.patch(`/api/v1/channel-orders/${order.id}`, { lines: [lines[0]] }), 'locked');
    await invalid(api.post(`/api/v1/channel-orders/${order.id}/cancel`, { reason: 'Driver not found' }), '/cancelledBy');
    expect(await ok(api.post(`/api/v1/channel-orders/${order.id}/cancel`, { cancelledBy: 'provider', reason: 'Driver not found' }))).toMatchObject({ state: 'cancelled', cancelledBy: 'provider', cancelReason: 'Driver not found' });
  });
});

describe('crm', () => {
  it('an opportunity of 250,000 at 40 % weighs 100,000; lost sets 0 % and locks it; an activity is done with its outcome', async () => {
    const lead = await created(api.post('/api/v1/leads', { title: 'Fleet tracking for Nahdi', expectedRevenue: 250_000, probability: 40 }));
    expect(lead.weightedRevenue).toBe(100_000);
    expect((await ok(api.patch(`/api/v1/leads/${lead.id}`, { probability: 65 }))).weightedRevenue).toBe(162_500);
    expect(await ok(api.post(`/api/v1/leads/${lead.id}/markLost`, { reason: 'price' }))).toMatchObject({ state: 'lost', probability: 0, weightedRevenue: 0, lostReason: 'price' });
    await conflict(api.patch(`/api/v1/leads/${lead.id}`, { expectedRevenue: 1 }), 'locked');

    const act = await created(api.post('/api/v1/crm-activities', { activityType: 'call', subject: 'Discovery call', leadId: lead.id }));
    await invalid(api.post(`/api/v1/crm-activities/${act.id}/markDone`, {}), '/outcome');
    expect(await ok(api.post(`/api/v1/crm-activities/${act.id}/markDone`, { outcome: 'Wants a demo next week' }))).toMatchObject({ state: 'done', outcome: 'Wants a demo next week' });
  });
});

describe('discuss', () => {
  it('a blank message is refused; an archived channel is read-only', async () => {
    const ch = await created(api.post('/api/v1/discuss-channels', { name: 'finance', visibility: 'public' }));
    await invalid(api.post('/api/v1/discuss-messages', { channelId: ch.id, authorId: employeeId, body: '   ' }), '/body');
    await created(api.post('/api/v1/discuss-messages', { channelId: ch.id, authorId: employeeId, body: 'Month-end close starts Sunday' }));
    await conflict(api.patch(`/api/v1/discuss-channels/${ch.id}`, { visibility: 'private' }), 'locked');
    await ok(api.post(`/api/v1/discuss-channels/${ch.id}/archive`));
    await conflict(api.patch(`/api/v1/discuss-channels/${ch.id}`, { description: 'Old' }), 'locked');
  });
});

describe('ecommerce', () => {
  it('3 × 100 less 20 plus 25 shipping is 305 + 45.75 VAT = 350.75; a card order cancelled refunds at most its total; shipping needs tracking and takes the goods out of stock', async () => {
    const p = await created(api.post('/api/v1/products', { name: 'Dates gift box', sku: 'DGB-1', kind: 'goods', price: 100, cost: 62.5, vatRate: 15, active: true, publishedOnline: true }));
    expect(p).toMatchObject({ priceWithVat: 115, margin: 37.5, marginPercent: 37.5 });
    await invalid(api.post('/api/v1/products', { name: 'Draft', sku: 'D-1', kind: 'goods', price: 10, active: false, publishedOnline: true }), '/publishedOnline');

    const body = { customerId, lines: [{ productId: p.id, quantity: 3, unitPrice: 100 }], discount: 20, shippingFee: 25, paymentMethod: 'mada' };
    const order = await created(api.post('/api/v1/online-orders', body));
    expect(order).toMatchObject({ subtotal: 300, vatAmount: 45.75, total: 350.75 });
    await invalid(api.post('/api/v1/online-orders', { ...body, total: 1 }), '/total');
    await invalid(api.post('/api/v1/online-orders', { ...body, discount: 300.01 }), '/discount');
    const cancelled = await api.post(`/api/v1/online-orders/${order.id}/cancel`, { cancelledBy: 'customer', reason: 'Ordered twice', refundAmount: 400 });
    expect(expectError(cancelled, 400, 'VALIDATION_ERROR').details[0]).toMatchObject({ pointer: '/refundAmount' });
    expect(await ok(api.post(`/api/v1/online-orders/${order.id}/cancel`, { cancelledBy: 'customer', reason: 'Ordered twice', refundAmount: 350.75 }))).toMatchObject({ state: 'cancelled', refundAmount: 350.75, cancelledBy: 'customer' });

    const cod = await created(api.post('/api/v1/online-orders', { ...body, paymentMethod: 'cash_on_delivery' }));
    await conflict(api.post(`/api/v1/online-orders/${cod.id}/cancel`, { cancelledBy: 'merchant', reason: 'Out of stock', refundAmount: 10 }));
    await ok(api.post(`/api/v1/online-orders/${cod.id}/confirm`));
    await conflict(api.patch(`/api/v1/online-orders/${cod.id}`, { discount: 0 }), 'locked');
    await invalid(api.post(`/api/v1/online-orders/${cod.id}/ship`, { carrier: 'SMSA' }), '/trackingNumber');
    expect(await ok(api.post(`/api/v1/online-orders/${cod.id}/ship`, { carrier: 'SMSA', trackingNumber: '290012345678' }))).toMatchObject({ state: 'shipped', carrier: 'SMSA', trackingNumber: '290012345678' });

    // Shipping takes the goods out of stock: 12 boxes kept, 5 shipped leave 7; shipping 8 more is refused whole, naming the line.
    const kept = await created(api.post('/api/v1/products', { name: 'Saffron 10 g', sku: 'SAF-10', kind: 'goods', price: 45, active: true, stockQuantity: 12 }));
    const stocked = await created(api.post('/api/v1/online-orders', { ...body, lines: [{ productId: kept.id, quantity: 5, unitPrice: 45 }, { productId: p.id, quantity: 1, unitPrice: 100 }] }));
    await ok(api.post(`/api/v1/online-orders/${stocked.id}/confirm`));
    await ok(api.post(`/api/v1/online-orders/${stocked.id}/ship`, { carrier: 'Aramex', trackingNumber: '4471002' }));
    expect((await ok(api.get(`/api/v1/products/${kept.id}`))).stockQuantity).toBe(7);
    const eight = await created(api.post('/api/v1/online-orders', { ...body, lines: [{ productId: p.id, quantity: 1, unitPrice: 100 }, { productId: kept.id, quantity: 8, unitPrice: 45 }] }));
    await ok(api.post(`/api/v1/online-orders/${eight.id}/confirm`));
    const short = expectError(await api.post(`/api/v1/online-orders/${eight.id}/ship`, { carrier: 'Aramex', trackingNumber: '4471003' }), 400, 'VALIDATION_ERROR');
    expect(short.details[0]).toMatchObject({ pointer: '/lines/1/quantity', effectLine: 1, message: 'Not enough of this product in stock to ship' });
    expect((await ok(api.get(`/api/v1/online-orders/${eight.id}`))).state).toBe('confirmed');
    expect((await ok(api.get(`/api/v1/products/${kept.id}`))).stockQuantity).toBe(7);
    // A product the orders' lines name is not deleted from under them.
    const named = expectError(await api.delete(`/api/v1/products/${kept.id}`), 409, 'CONFLICT').details;
    expect(named).toEqual([expect.objectContaining({ reason: 'referenced', resource: 'online-orders', field: 'lines[].productId' })]);

    const cart = await created(api.post('/api/v1/carts', { customerId, lines: [{ productId: p.id, quantity: 2, unitPrice: 99.99 }] }));
    expect(cart.total).toBe(199.98);
    expect(await ok(api.post(`/api/v1/carts/${cart.id}/checkOut`, { orderId: order.id }))).toMatchObject({ state: 'checked_out', orderId: order.id });
  });
});

describe('education', () => {
  it('scores of 18, 15.5 and 12 out of 20 average 75.8 %; a fee of 12,000 at 15 % is 13,800; a waiver needs a manager and a reason', async () => {
    const student = await created(api.post('/api/v1/students', { fullName: 'Faisal Al-Qahtani' }));
    const other = await created(api.post('/api/v1/students', { fullName: 'Noura Al-Dosari' }));
    const third = await created(api.post('/api/v1/students', { fullName: 'Reem Al-Otaibi' }));
    const cls = await created(api.post('/api/v1/school-classes', { name: '10-A', academicYear: '2025-2026' }));
    const results = [{ studentId: student.id, score: 18 }, { studentId: other.id, score: 15.5 }, { studentId: third.id, score: 12 }];
    const a = { classId: cls.id, subject: 'Mathematics', name: 'Midterm', maxScore: 20 };
    await invalid(api.post('/api/v1/assessments', { ...a, results: [...results, { studentId: student.id, score: 21 }] }), '/results', '/results');
    const exam = await created(api.post('/api/v1/assessments', { ...a, results }));
    expect(exam.averagePercent).toBe(75.8);
    await ok(api.post(`/api/v1/assessments/${exam.id}/publish`));
    await conflict(api.patch(`/api/v1/assessments/${exam.id}`, { maxScore: 25 }), 'locked');

    const fee = await created(api.post('/api/v1/student-fees', { studentId: student.id, guardianId: customerId, feeType: 'tuition', amount: 12_000, vatRate: 15, dueDate: '2026-09-01' }));
    expect(fee).toMatchObject({ vatAmount: 1_800, totalAmount: 13_800 });
    expect(await created(api.post('/api/v1/student-fees', { studentId: student.id, guardianId: customerId, feeType: 'tuition', amount: 12_000, vatRate: 0, dueDate: '2026-09-01' }))).toMatchObject({ vatAmount: 0, totalAmount: 12_000 });
    expectError(await co.as('Member').post(`/api/v1/student-fees/${fee.id}/waive`, { reason: 'Scholarship' }), 403, 'FORBIDDEN');
    expect(await ok(api.post(`/api/v1/student-fees/${fee.id}/waive`, { reason: 'Scholarship' }))).toMatchObject({ state: 'waived', waiverReason: 'Scholarship' });
    await conflict(api.patch(`/api/v1/student-fees/${fee.id}`, { amount: 1 }), 'locked');
  });
});

describe('elearning', () => {
  it('a quiz at 72 against a pass mark of 70 passes, at 69.5 fails; completing sets 100 %; a revoked certificate keeps its reason', async () => {
    const course = await created(api.post('/api/v1/elearning-courses', { title: 'Anti-money-laundering basics', passMark: 70 }));
    await conflict(api.post(`/api/v1/elearning-courses/${course.id}/publish`));
    await ok(api.patch(`/api/v1/elearning-courses/${course.id}`, { lessonCount: 6 }));
    await ok(api.post(`/api/v1/elearning-courses/${course.id}/publish`));
    const learner = await created(api.post('/api/v1/learners', { fullName: 'Omar Al-Shehri', email: 'omar@example.sa' }));
    const enr = await created(api.post('/api/v1/course-enrolments', { courseId: course.id, learnerId: learner.id, enrolledBy: 'manager', progressPercent: 40 }));
    expect((await created(api.post('/api/v1/quiz-attempts', { enrolmentId: enr.id, quizName: 'Final', score: 72, passMark: 70 }))).result).toBe('passed');
    expect((await created(api.post('/api/v1/quiz-attempts', { enrolmentId: enr.id, quizName: 'Final', score: 69.5, passMark: 70 }))).result).toBe('failed');
    await invalid(api.post('/api/v1/quiz-attempts', { enrolmentId: enr.id, quizName: 'Final', score: 90, passMark: 70, result: 'failed' }), '/result');
    await ok(api.patch(`/api/v1/course-enrolments/${enr.id}`, { finalScore: 72 }));
    expect(await ok(api.post(`/api/v1/course-enrolments/${enr.id}/complete`))).toMatchObject({ state: 'completed', progressPercent: 100 });

    const cert = { enrolmentId: enr.id, courseId: course.id, learnerId: learner.id, issuedOn: '2026-03-01' };
    await invalid(api.post('/api/v1/course-certificates', { ...cert, validUntil: '2026-02-28' }), '/validUntil');
    const c = await created(api.post('/api/v1/course-certificates', { ...cert, validUntil: '2028-03-01' }));
    await conflict(api.patch(`/api/v1/course-certificates/${c.id}`, { issuedOn: '2026-01-01' }), 'locked');
    expect(await ok(api.post(`/api/v1/course-certificates/${c.id}/revoke`, { reason: 'Exam misconduct' }))).toMatchObject({ state: 'revoked', revokeReason: 'Exam misconduct' });
  });
});

describe('elv', () => {
  it('a CCTV test of 64 points with 2 failed is 96.9 % and cannot pass; a fault closes with its fix; a BoQ totals with VAT', async () => {
    const system = await created(api.post('/api/v1/elv-systems', { projectId, system: 'cctv', siteName: 'Warehouse 3' }));
    const t = { systemId: system.id, projectId, testDate: '2026-05-10', pointsTested: 64, failedPoints: 2 };
    await invalid(api.post('/api/v1/elv-system-tests', { ...t, result: 'passed' }), '/result');
    await invalid(api.post('/api/v1/elv-system-tests', { ...t, failedPoints: 65, result: 'failed' }), '/failedPoints');
    expect((await created(api.post('/api/v1/elv-system-tests', { ...t, result: 'failed' }))).passRate).toBe(96.9);

    expect(await ok(api.post(`/api/v1/elv-systems/${system.id}/handover`, { signedBy: 'Facility manager', handoverDate: '2026-05-15' }))).toMatchObject({ state: 'handed_over', handoverDate: '2026-05-15' });
    await invalid(api.patch(`/api/v1/elv-systems/${system.id}`, { nextMaintenanceDate: '2026-05-01' }), '/nextMaintenanceDate');
    await conflict(api.patch(`/api/v1/elv-systems/${system.id}`, { siteName: 'Warehouse 4' }), 'locked');

    const fault = await created(api.post('/api/v1/elv-faults', { systemId: system.id, symptom: 'Camera 12 offline', severity: 'high' }));
    await invalid(api.post(`/api/v1/elv-faults/${fault.id}/resolve`, {}), '/resolution');
    expect(await ok(api.post(`/api/v1/elv-faults/${fault.id}/resolve`, { resolution: 'Replaced PoE injector' }))).toMatchObject({ state: 'resolved', resolution: 'Replaced PoE injector' });

    const boq = await created(api.post('/api/v1/elv-boqs', { projectId, revision: 0, lines: [{ description: 'Dome camera', quantity: 24, unitPrice: 845 }, { description: 'Cat6 (m)', quantity: 1_500, unitPrice: 2.15 }] }));
    expect(boq).toMatchObject({ totalAmount: 23_505, vatAmount: 3_525.75, totalWithVat: 27_030.75 });
  });
});

describe('email-marketing', () => {
  it('a campaign needs its email to be scheduled and is then locked; an unsubscribe keeps its reason', async () => {
    const list = await created(api.post('/api/v1/mailing-lists', { name: 'Customers' }));
    const camp = await created(api.post('/api/v1/email-campaigns', { subject: 'White Friday', listId: list.id }));
    await invalid(api.post(`/api/v1/email-campaigns/${camp.id}/schedule`, {}), '/scheduledOn');
    await conflict(api.post(`/api/v1/email-campaigns/${camp.id}/schedule`, { scheduledOn: '2026-11-27' }));
    await ok(api.patch(`/api/v1/email-campaigns/${camp.id}`, { body: '<p>Up to 50 % off</p>' }));
    expect(await ok(api.post(`/api/v1/email-campaigns/${camp.id}/schedule`, { scheduledOn: '2026-11-27' }))).toMatchObject({ state: 'scheduled', scheduledOn: '2026-11-27' });
    await conflict(api.patch(`/api/v1/email-campaigns/${camp.id}`, { subject: 'Black Friday' }), 'locked');

    const sub = await created(api.post('/api/v1/mailing-subscribers', { listId: list.id, email: 'huda@example.sa', source: 'checkout' }));
    await invalid(api.post(`/api/v1/mailing-subscribers/${sub.id}/unsubscribe`, {}), '/reason');
    expect(await ok(api.post(`/api/v1/mailing-subscribers/${sub.id}/unsubscribe`, { reason: 'too_frequent' }))).toMatchObject({ state: 'unsubscribed', unsubscribeReason: 'too_frequent' });
  });
});

describe('employees', () => {
  it('notice and exit stamp the last day and reason (never before joining); an exited record is locked until rehired', async () => {
    const emp = await created(api.post('/api/v1/employees', { fullName: 'Majed Al-Ghamdi', jobTitle: 'Driver', joinDate: '2021-06-01' }));
    await invalid(api.post('/api/v1/employees', { fullName: 'X', jobTitle: 'Y', joinDate: '2021-06-01', exitDate: '2021-01-01' }), '/exitDate');
    await ok(api.post(`/api/v1/employees/${emp.id}/activate`));
    await conflict(api.post(`/api/v1/employees/${emp.id}/giveNotice`, { lastWorkingDay: '2021-05-31', reason: 'resignation' }));
    expect(await ok(api.post(`/api/v1/employees/${emp.id}/giveNotice`, { lastWorkingDay: '2026-03-31', reason: 'resignation' }))).toMatchObject({ state: 'notice_period', exitDate: '2026-03-31', exitReason: 'resignation' });
    expectError(await co.as('Member').post(`/api/v1/employees/${emp.id}/exit`, { exitDate: '2026-03-31', reason: 'resignation' }), 403, 'FORBIDDEN');
    expect(await ok(api.post(`/api/v1/employees/${emp.id}/exit`, { exitDate: '2026-03-31', reason: 'resignation' }))).toMatchObject({ state: 'exited', exitDate: '2026-03-31' });
    await conflict(api.patch(`/api/v1/employees/${emp.id}`, { jobTitle: 'Senior driver' }), 'locked');
    await ok(api.post(`/api/v1/employees/${emp.id}/rehire`));
    expect((await ok(api.patch(`/api/v1/employees/${emp.id}`, { jobTitle: 'Senior driver' }))).jobTitle).toBe('Senior driver');
  });
});
