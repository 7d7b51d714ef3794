// The rules of twenty-one apps that waited for the engine's effects, naming series, unique fields,
// aggregates, `ref.<field>`, defaults and topic rules (issue 26, part 2), each driven through the
// API alone by a story of its domain: what a parent totals from its children, what a reference
// gives or forbids, what a series names, what is refused as a repeat, and what an approval
// creates elsewhere. One host, one company, SQLite and PostgreSQL (vitest.config.ts's `onPostgres`).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Host } from '../core/host.ts';
import { count, expectError, type Client, type Res, type TestCompany, created, ok, type Data } from './helpers.ts';
import { AR, conflict, invalid, storiesWithProject } from './app-stories.ts';

const APPS = [
  'aftersales', 'agents', 'analytics', 'appointments', 'appraisals', 'approvals', 'attendance', 'auto-workshop', 'av',
  'biometrics', 'blog', 'carwash', 'configurator', 'connect', 'crm', 'discuss', 'ecommerce', 'education', 'elearning', 'elv',
  'email-marketing', 'employees',
];

let host: Host;
let co: TestCompany;
let api: Client;
let customerId: string;
let employeeId: string;
let projectId: string;
const YEAR = new Date().getUTCFullYear();

beforeAll(async () => {
  ({ host, co, api, customerId, employeeId, projectId } = await storiesWithProject(APPS));
}, 60_000);
afterAll(() => host?.close());

const get = (url: string) => ok(api.get(url));

async function list(url: string): Promise<Data[]> {
  const r = await api.get(url);
  expect(r.statusCode, r.body).toBe(200);
  return r.json().data;
}

/** A repeat refused: the field and the document that already has the value. */
async function repeated(res: Promise<Res>, field: string, other: string) {
  const e = await conflict(res, 'unique');
  expect(e.details[0]).toMatchObject({ field, other });
  return e;
}

async function newEmployee(fullName: string, extra: Record<string, unknown> = {}): Promise<Data> {
  return created(api.post('/api/v1/employees', { fullName, jobTitle: 'Technician', joinDate: '2023-05-01', ...extra }));
}

let product: Promise<string> | undefined;
function productId(): Promise<string> {
  product ??= created(api.post('/api/v1/products', { name: 'Split AC 24k BTU', sku: 'AC-24', kind: 'goods', price: 2_000, cost: 1_400, active: true })).then((p) => p.id);
  return product;
}

describe('aftersales', () => {
  it('parts priced from the product total on the claim; approving a replacement issues RMA-YYYY-00001, a repair none; a closed claim takes no part', async () => {
    const claim = await created(api.post('/api/v1/aftersales-claims', { customerId, issue: 'Compressor failed', productSerial: 'SN-88' }));
    const part = { claimId: claim.id, productId: await productId(), chargeable: true };
    expect(await created(api.post('/api/v1/replaced-parts', { ...part, quantity: 2 }))).toMatchObject({ unitPrice: 2_000, amount: 4_000, vatAmount: 600 });
    const valve = await created(api.post('/api/v1/replaced-parts', { ...part, quantity: 1, unitPrice: 150.25 }));
    await created(api.post('/api/v1/replaced-parts', { ...part, quantity: 1, chargeable: false }));
    expect(await get(`/api/v1/aftersales-claims/${claim.id}`)).toMatchObject({ partsTotal: 4_150.25, partsCount: 3 });
    await ok(api.delete(`/api/v1/replaced-parts/${valve.id}`));
    expect(await get(`/api/v1/aftersales-claims/${claim.id}`)).toMatchObject({ partsTotal: 4_000, partsCount: 2 });
    await invalid(api.patch(`/api/v1/aftersales-claims/${claim.id}`, { partsTotal: 1 }), '/partsTotal');

    await ok(api.post(`/api/v1/aftersales-claims/${claim.id}/acknowledge`));
    await ok(api.post(`/api/v1/aftersales-claims/${claim.id}/approve`, { decision: 'replacement' }));
    const rmas = await list('/api/v1/return-authorisations');
    expect(rmas).toHaveLength(1);
    expect(rmas[0]).toMatchObject({ rmaNumber: `RMA-${YEAR}-00001`, claimId: claim.id, customerId, quantity: 1, state: 'issued' });
    await invalid(api.post('/api/v1/return-authorisations', { rmaNumber: 'RMA-1', claimId: claim.id, customerId, quantity: 1 }), '/rmaNumber');

    const repair = await created(api.post('/api/v1/aftersales-claims', { customerId, issue: 'Remote lost' }));
    await ok(api.post(`/api/v1/aftersales-claims/${repair.id}/acknowledge`));
    await ok(api.post(`/api/v1/aftersales-claims/${repair.id}/approve`, { decision: 'repair' }));
    expect(await list('/api/v1/return-authorisations')).toHaveLength(1);
    const manual = await created(api.post('/api/v1/return-authorisations', { claimId: repair.id, customerId, quantity: 2 }));
    expect(manual.rmaNumber).toBe(`RMA-${YEAR}-00002`);

    await ok(api.post(`/api/v1/aftersales-claims/${claim.id}/settle`, {}));
    await ok(api.post(`/api/v1/aftersales-claims/${claim.id}/close`));
    await conflict(api.post('/api/v1/replaced-parts', { ...part, quantity: 1 }), 'parentLocked');
    expect((await get(`/api/v1/aftersales-claims/${claim.id}`)).partsTotal).toBe(4_000);
  });
});

describe('agents', () => {
  it('tokens used are the runs\' tokens; reaching the 10,000 budget fires budget.exceeded once, and again only past a raised budget; a run counts its actions', async () => {
    const agent = await created(api.post('/api/v1/ai-agents', { name: 'Collections', instructions: 'Chase overdue invoices', trigger: 'schedule', tokenBudget: 10_000 }));
    await invalid(api.patch(`/api/v1/ai-agents/${agent.id}`, { tokensUsed: 1 }), '/tokensUsed');
    const exceeded = async () => Number(await count(host, "SELECT count(*) FROM outbox WHERE company_id = ? AND topic = 'agents.budget.exceeded'", co.company.id));
    const run = (tokensUsed: number) => created(api.post('/api/v1/ai-agent-runs', { agentId: agent.id, trigger: 'schedule', tokensUsed }));

    const first = await run(4_000);
    expect(await get(`/api/v1/ai-agents/${agent.id}`)).toMatchObject({ tokensUsed: 4_000, tokensRemaining: 6_000, budgetUsedPercent: 40 });
    await run(6_000);
    expect(await get(`/api/v1/ai-agents/${agent.id}`)).toMatchObject({ tokensUsed: 10_000, tokensRemaining: 0, budgetUsedPercent: 100 });
    expect(await exceeded()).toBe(1);
    await run(500);
    expect(await exceeded()).toBe(1);
    expect((await ok(api.patch(`/api/v1/ai-agents/${agent.id}`, { tokenBudget: 20_000 }))).tokensRemaining).toBe(9_500);
    expect(await exceeded()).toBe(1);
    await run(10_000);
    expect((await get(`/api/v1/ai-agents/${agent.id}`)).tokensUsed).toBe(20_500);
    expect(await exceeded()).toBe(2);

    const action = (runId: string, summary: string) => api.post('/api/v1/ai-agent-actions', { agentId: agent.id, runId, tool: 'email.send', summary, expiresOn: '2026-02-01' });
    const a1 = await created(action(first.id, 'Remind Al-Noor of invoice 1042'));
    await created(action(first.id, 'Remind Al-Noor of invoice 1043'));
    expect((await get(`/api/v1/ai-agent-runs/${first.id}`)).actionsProposed).toBe(2);
    await ok(api.post(`/api/v1/ai-agent-actions/${a1.id}/reject`, { note: 'Paid yesterday' }));
    expect((await get(`/api/v1/ai-agent-runs/${first.id}`)).actionsProposed).toBe(2);
    await ok(api.post(`/api/v1/ai-agent-runs/${first.id}/complete`));
    await conflict(action(first.id, 'Late proposal'), 'parentLocked');
  });
});

describe('analytics', () => {
  it('only a published dashboard is exported; a user is granted a dashboard once; an archived one is shared with no one', async () => {
    const ds = await created(api.post('/api/v1/analytics-datasets', { name: 'Sales by month', query: 'select 1' }));
    const dash = await created(api.post('/api/v1/analytics-dashboards', { name: 'Sales', datasetId: ds.id, definition: '{"widgets":[]}' }));
    const e = await invalid(api.post('/api/v1/analytics-exports', { dashboardId: dash.id, format: 'pdf' }, AR), '/dashboardId');
    expect(e.details[0].message).toBe('لا تُصدَّر إلا لوحة منشورة');
    await ok(api.post(`/api/v1/analytics-dashboards/${dash.id}/publish`));
    const pdf = await created(api.post('/api/v1/analytics-exports', { dashboardId: dash.id, format: 'pdf' }));
    const csv = await created(api.post('/api/v1/analytics-exports', { dashboardId: dash.id, format: 'csv' }));
    await ok(api.post(`/api/v1/analytics-exports/${pdf.id}/complete`, { fileUrl: 'https://files.example.sa/sales.pdf' }));
    // Unpublished while an export waits: no new export, but the one queued still ends.
    await ok(api.post(`/api/v1/analytics-dashboards/${dash.id}/unpublish`));
    await invalid(api.post('/api/v1/analytics-exports', { dashboardId: dash.id, format: 'xlsx' }), '/dashboardId');
    expect((await ok(api.post(`/api/v1/analytics-exports/${csv.id}/fail`, { error: 'Dashboard withdrawn' }))).state).toBe('failed');

    const grant = await created(api.post('/api/v1/analytics-access', { dashboardId: dash.id, principalType: 'user', principalId: 'usr_huda', level: 'view' }));
    await repeated(api.post('/api/v1/analytics-access', { dashboardId: dash.id, principalType: 'user', principalId: 'usr_huda', level: 'edit' }), 'principalId', grant.id);
    expect((await ok(api.patch(`/api/v1/analytics-access/${grant.id}`, { level: 'edit' }))).level).toBe('edit');
    const other = await created(api.post('/api/v1/analytics-dashboards', { name: 'Stock' }));
    await created(api.post('/api/v1/analytics-access', { dashboardId: other.id, principalType: 'user', principalId: 'usr_huda', level: 'view' }));
    await ok(api.post(`/api/v1/analytics-dashboards/${other.id}/archive`));
    await invalid(api.post('/api/v1/analytics-access', { dashboardId: other.id, principalType: 'role', principalId: 'Member', level: 'view' }), '/dashboardId');
  });
});

describe('appointments', () => {
  it('a booking takes the service\'s 200.00 (230.00 with VAT) unless agreed; a staff member is booked once per start time until the booking is cancelled', async () => {
    const svc = await created(api.post('/api/v1/bookable-services', { name: 'Dental cleaning', durationMinutes: 45, price: 200 }));
    const dentist = await newEmployee('Dr. Lama Al-Qahtani');
    const hygienist = await newEmployee('Abeer Al-Saud');
    const at = { serviceId: svc.id, customerId, date: '2026-03-02', startAt: '2026-03-02T10:00', channel: 'phone' };
    const first = await created(api.post('/api/v1/appointments', { ...at, staffId: dentist.id }));
    expect(first).toMatchObject({ price: 200, vatAmount: 30, totalAmount: 230 });
    expect(await created(api.post('/api/v1/appointments', { ...at, staffId: hygienist.id, price: 150 }))).toMatchObject({ price: 150, vatAmount: 22.5, totalAmount: 172.5 });
    await repeated(api.post('/api/v1/appointments', { ...at, staffId: dentist.id, channel: 'online' }), 'slot', first.id);
    // No staff member named: nothing is held.
    await created(api.post('/api/v1/appointments', at));
    await created(api.post('/api/v1/appointments', at));

    const later = await created(api.post('/api/v1/appointments', { ...at, staffId: dentist.id, startAt: '2026-03-02T11:00' }));
    await repeated(api.patch(`/api/v1/appointments/${later.id}`, { startAt: '2026-03-02T10:00' }), 'slot', first.id);
    await ok(api.post(`/api/v1/appointments/${first.id}/cancel`, { reason: 'Customer travelling' }));
    expect((await ok(api.patch(`/api/v1/appointments/${later.id}`, { startAt: '2026-03-02T10:00' }))).slot).toBe('2026-03-02T10:00');
  });
});

describe('appraisals', () => {
  it('goals of 40 % at 75 and 60 % at 50 score 60 of 100 weight; two feedback of 4 and 5 average 4.5; one appraisal per employee in an open cycle', async () => {
    const cycle = await created(api.post('/api/v1/appraisal-cycles', { name: '2026', periodStart: '2026-01-01', periodEnd: '2026-12-31', reviewDeadline: '2027-01-31' }));
    const body = { cycleId: cycle.id, employeeId, managerId: employeeId };
    await invalid(api.post('/api/v1/appraisals', body), '/cycleId');
    await ok(api.post(`/api/v1/appraisal-cycles/${cycle.id}/open`));
    const review = await created(api.post('/api/v1/appraisals', body));
    expect(review).toMatchObject({ goalWeight: 0, goalScore: 0, feedbackCount: 0, feedbackRating: 0 });
    await repeated(api.post('/api/v1/appraisals', body), 'employeeId', review.id);

    const goal = (title: string, weight: number, progress: number) => api.post('/api/v1/appraisal-goals', { employeeId, cycleId: cycle.id, appraisalId: review.id, title, weight, progress });
    await created(goal('Close books in 5 days', 40, 75));
    const second = await created(goal('Automate bank reconciliation', 60, 50));
    expect(await get(`/api/v1/appraisals/${review.id}`)).toMatchObject({ goalWeight: 100, goalScore: 60 });
    const over = await conflict(goal('Train a junior', 10, 0), 'parentRule');
    expect(over.message).toContain('The goals of an appraisal weigh 100 % at most');
    await ok(api.post(`/api/v1/appraisal-goals/${second.id}/drop`));
    expect(await get(`/api/v1/appraisals/${review.id}`)).toMatchObject({ goalWeight: 40, goalScore: 30 });
    const someoneElse = await newEmployee('Yasser Al-Mutairi');
    await invalid(api.post('/api/v1/appraisal-goals', { employeeId: someoneElse.id, appraisalId: review.id, title: 'Not mine', weight: 10 }), '/appraisalId');

    const ask = () => created(api.post('/api/v1/appraisal-feedback', { appraisalId: review.id, employeeId, reviewerId: someoneElse.id }));
    const [f1, f2, f3] = [await ask(), await ask(), await ask()];
    await ok(api.post(`/api/v1/appraisal-feedback/${f1.id}/submit`, { feedback: 'Reliable', rating: 4 }));
    await ok(api.post(`/api/v1/appraisal-feedback/${f2.id}/submit`, { feedback: 'Excellent at month-end', rating: 5 }));
    await ok(api.post(`/api/v1/appraisal-feedback/${f3.id}/decline`));
    expect(await get(`/api/v1/appraisals/${review.id}`)).toMatchObject({ feedbackCount: 2, feedbackRatingTotal: 9, feedbackRating: 4.5 });

    // An appraisal opened for the wrong manager is cancelled: the employee's place in the cycle is free again.
    const huda = await newEmployee('Huda Al-Harbi');
    const wrong = await created(api.post('/api/v1/appraisals', { cycleId: cycle.id, employeeId: huda.id, managerId: someoneElse.id }));
    await ok(api.post(`/api/v1/appraisals/${wrong.id}/cancel`));
    const right = await created(api.post('/api/v1/appraisals', { cycleId: cycle.id, employeeId: huda.id, managerId: employeeId }));
    await repeated(api.post('/api/v1/appraisals', { cycleId: cycle.id, employeeId: huda.id, managerId: employeeId }), 'employeeId', right.id);

    await ok(api.post(`/api/v1/appraisal-cycles/${cycle.id}/close`));
    await invalid(api.patch(`/api/v1/appraisals/${review.id}`, { overallRating: 4 }), '/cycleId');
  });
});

describe('approvals', () => {
  it('a request under a 3-step purchase rule from 50,000 takes its type, steps and first approver; below the threshold or of another type it is refused', async () => {
    const [buyer, head, cfo] = [await newEmployee('Procurement lead'), await newEmployee('Head of operations'), await newEmployee('CFO')];
    await invalid(api.post('/api/v1/approval-rules', { name: 'Gap', requestType: 'purchase', steps: [{ step: 1, approverId: buyer.id }, { step: 3, approverId: cfo.id }] }), '/steps');
    const steps = [{ step: 2, approverId: head.id, deadlineDays: 3 }, { step: 1, approverId: buyer.id, deadlineDays: 2 }, { step: 3, approverId: cfo.id }];
    const rule = await created(api.post('/api/v1/approval-rules', { name: 'Large purchases', requestType: 'purchase', minAmount: 50_000, active: true, steps }));
    expect(rule).toMatchObject({ stepCount: 3, firstApproverId: buyer.id });

    const req = await created(api.post('/api/v1/approval-requests', { ruleId: rule.id, subject: 'Forklift', requesterId: employeeId, amount: 75_000 }));
    expect(req).toMatchObject({ requestType: 'purchase', totalSteps: 3, approverId: buyer.id });
    const e = await invalid(api.post('/api/v1/approval-requests', { ruleId: rule.id, subject: 'Pallets', requesterId: employeeId, amount: 49_999.99 }, AR), '/amount');
    expect(e.details[0].message).toBe('المبلغ دون حد القاعدة');
    await invalid(api.post('/api/v1/approval-requests', { ruleId: rule.id, requestType: 'expense', subject: 'Travel', requesterId: employeeId, amount: 60_000 }), '/ruleId');
    expect((await created(api.post('/api/v1/approval-requests', { ruleId: rule.id, subject: 'Racking', requesterId: employeeId, amount: 50_000, totalSteps: 2 }))).totalSteps).toBe(2);

    await ok(api.post(`/api/v1/approval-requests/${req.id}/submit`));
    expect(await ok(api.post(`/api/v1/approval-requests/${req.id}/approveStep`, { approverId: head.id }))).toMatchObject({ currentStep: 2, approverId: head.id });
  });
});

describe('auto-workshop', () => {
  it('jobs are numbered JOB-YYYY-00001 on; the invoice total is the approved estimates\' 690 + 115 = 805, never a declined one', async () => {
    const body = { customerId, plateNumber: 'ABC 1234', odometerKm: 84_210, complaint: 'Brake noise' };
    const job = await created(api.post('/api/v1/workshop-jobs', body));
    expect(job).toMatchObject({ jobNumber: `JOB-${YEAR}-00001`, invoiceTotal: 0 });
    expect((await created(api.post('/api/v1/workshop-jobs', { ...body, plateNumber: 'XYZ 1' }))).jobNumber).toBe(`JOB-${YEAR}-00002`);
    await invalid(api.post('/api/v1/workshop-jobs', { ...body, jobNumber: 'WS-1' }), '/jobNumber');

    const estimate = async (lines: Record<string, unknown>[], decision: 'approve' | 'decline') => {
      const est = await created(api.post('/api/v1/workshop-estimates', { jobId: job.id, lines }));
      await ok(api.post(`/api/v1/workshop-estimates/${est.id}/send`));
      await ok(api.post(`/api/v1/workshop-estimates/${est.id}/${decision}`, decision === 'decline' ? { reason: 'Too dear' } : undefined));
      return est;
    };
    await estimate([{ kind: 'labour', description: 'Brake service', quantity: 2.5, unitPrice: 180 }, { kind: 'part', description: 'Filter', quantity: 4, unitPrice: 37.5 }], 'approve');
    await estimate([{ kind: 'part', description: 'Ceramic pads', quantity: 1, unitPrice: 900 }], 'decline');
    expect((await get(`/api/v1/workshop-jobs/${job.id}`)).invoiceTotal).toBe(690);
    await estimate([{ kind: 'part', description: 'Brake fluid', quantity: 2, unitPrice: 50 }], 'approve');
    expect((await get(`/api/v1/workshop-jobs/${job.id}`)).invoiceTotal).toBe(805);
    await invalid(api.patch(`/api/v1/workshop-jobs/${job.id}`, { invoiceTotal: 1 }), '/invoiceTotal');

    const unpriced = await created(api.post('/api/v1/workshop-jobs', { ...body, plateNumber: 'XYZ 2' }));
    await ok(api.post(`/api/v1/workshop-jobs/${unpriced.id}/start`));
    await ok(api.post(`/api/v1/workshop-jobs/${unpriced.id}/markReady`));
    expect((await conflict(api.post(`/api/v1/workshop-jobs/${unpriced.id}/deliver`))).message).toContain('The customer has approved no estimate');
  });
});

for (const app of ['av', 'elv'] as const) {
  describe(app, () => {
    it('a BoQ is frozen on an approved design only; its revision is numbered 1 and supersedes it, once', async () => {
      const design = await created(api.post(`/api/v1/${app}-designs`, { projectId, revision: 0, ...(app === 'av' ? { title: 'Boardroom' } : { system: 'cctv' }) }));
      const lines = [{ description: 'Dome camera', quantity: 24, unitPrice: 845 }];
      const boq = await created(api.post(`/api/v1/${app}-boqs`, { projectId, designId: design.id, lines }));
      expect(boq).toMatchObject({ revision: 0, totalAmount: 20_280, vatAmount: 3_042, totalWithVat: 23_322 });
      const e = await conflict(api.post(`/api/v1/${app}-boqs/${boq.id}/freeze`, undefined, AR));
      expect(e.message).toContain('لا تُجمَّد جداول الكميات إلا على تصميم معتمد');
      await ok(api.post(`/api/v1/${app}-designs/${design.id}/submit`));
      await ok(api.post(`/api/v1/${app}-designs/${design.id}/approve`));
      await ok(api.post(`/api/v1/${app}-boqs/${boq.id}/freeze`));
      const noDesign = await created(api.post(`/api/v1/${app}-boqs`, { projectId, lines }));
      await conflict(api.post(`/api/v1/${app}-boqs/${noDesign.id}/freeze`));

      const revision = { projectId, designId: design.id, supersedesId: boq.id, revisionReason: 'Two more cameras at the gate', lines: [{ ...lines[0], quantity: 26 }] };
      await invalid(api.post(`/api/v1/${app}-boqs`, { ...revision, revision: 5 }), '/revision');
      const rev = await created(api.post(`/api/v1/${app}-boqs`, revision));
      expect(rev).toMatchObject({ revision: 1, totalAmount: 21_970 });
      expect((await get(`/api/v1/${app}-boqs/${boq.id}`)).state).toBe('superseded');
      const twice = expectError(await api.post(`/api/v1/${app}-boqs`, revision), 409, 'CONFLICT');
      expect(twice.details[0]).toMatchObject({ effect: 0, effectOn: 'supersedesId' });
      expect((await list(`/api/v1/${app}-boqs`)).filter((b) => b.supersedesId === boq.id)).toHaveLength(1);
    });
  });
}

describe('biometrics', () => {
  it('a device is registered once by serial, a user code once per device; a posting counts its 3 punches, 2 once one is rejected, and takes none once posted', async () => {
    const device = await created(api.post('/api/v1/biometric-devices', { name: 'Gate 1', serialNumber: 'ZK-0001' }));
    await repeated(api.post('/api/v1/biometric-devices', { name: 'Gate 2', serialNumber: 'ZK-0001' }), 'serialNumber', device.id);
    const gate2 = await created(api.post('/api/v1/biometric-devices', { name: 'Gate 2', serialNumber: 'ZK-0002' }));
    const enr = await created(api.post('/api/v1/biometric-enrolments', { deviceId: device.id, employeeId, deviceUserCode: '1007', enrolmentType: 'fingerprint' }));
    const colleague = await newEmployee('Fahad Al-Shammari');
    await repeated(api.post('/api/v1/biometric-enrolments', { deviceId: device.id, employeeId: colleague.id, deviceUserCode: '1007', enrolmentType: 'face' }), 'deviceUserCode', enr.id);
    await created(api.post('/api/v1/biometric-enrolments', { deviceId: gate2.id, employeeId: colleague.id, deviceUserCode: '1007', enrolmentType: 'face' }));

    const posting = await created(api.post('/api/v1/biometric-postings', { deviceId: device.id, periodFrom: '2026-02-01', periodTo: '2026-02-07' }));
    const punch = (punchDate: string, punchTime: string) => api.post('/api/v1/biometric-punches', { deviceId: device.id, deviceUserCode: '1007', employeeId, postingId: posting.id, punchDate, punchTime });
    const [p1] = [await created(punch('2026-02-01', '07:58:12')), await created(punch('2026-02-01', '16:02:40')), await created(punch('2026-02-02', '07:59:01'))];
    await invalid(punch('2026-02-08', '08:00:00'), '/postingId');
    expect((await get(`/api/v1/biometric-postings/${posting.id}`)).punchCount).toBe(3);
    await ok(api.post(`/api/v1/biometric-punches/${p1.id}/reject`, { reason: 'duplicate' }));
    expect((await ok(api.post(`/api/v1/biometric-postings/${posting.id}/post`))).punchCount).toBe(2);
    await conflict(punch('2026-02-03', '08:01:00'), 'parentLocked');
  });
});

describe('blog', () => {
  it('a slug is used once', async () => {
    const post = await created(api.post('/api/v1/blog-posts', { title: 'VAT in 2026', slug: 'vat-in-2026' }));
    await repeated(api.post('/api/v1/blog-posts', { title: 'VAT in 2026 (again)', slug: 'vat-in-2026' }), 'slug', post.id);
  });
});

describe('carwash', () => {
  it('a job takes the Gold package\'s 57.50 (7.50 VAT inside) unless agreed; a coupon code is issued once', async () => {
    const pkg = await created(api.post('/api/v1/wash-packages', { code: 'GOLD', name: 'Gold wash', price: 57.5 }));
    expect(await created(api.post('/api/v1/wash-jobs', { plateNumber: 'XYZ 9876', vehicleType: 'suv', packageId: pkg.id, capture: 'plate_camera' }))).toMatchObject({ price: 57.5, vatAmount: 7.5, netAmount: 50 });
    expect((await created(api.post('/api/v1/wash-jobs', { plateNumber: 'XYZ 1', vehicleType: 'sedan', packageId: pkg.id, price: 46, capture: 'cashier' }))).vatAmount).toBe(6);
    const coupon = await created(api.post('/api/v1/wash-coupons', { code: 'RAMADAN10', discount: 10 }));
    await repeated(api.post('/api/v1/wash-coupons', { code: 'RAMADAN10', discount: 20 }), 'code', coupon.id);
  });
});

describe('configurator', () => {
  it('a configuration of a 2,750 template with 650 of extras is priced 3,400 (3,910 with VAT) unless quoted', async () => {
    const options = [{ attribute: 'finish', value: 'oak', priceExtra: 400 }, { attribute: 'handles', value: 'brass', priceExtra: 250 }];
    const tpl = await created(api.post('/api/v1/configurator-templates', { name: 'Kitchen cabinet', productId: await productId(), version: 1, basePrice: 2_750, options }));
    expect(await created(api.post('/api/v1/product-configurations', { templateId: tpl.id, selections: options }))).toMatchObject({ price: 3_400, extrasTotal: 650, vatAmount: 510, totalWithVat: 3_910 });
    expect((await created(api.post('/api/v1/product-configurations', { templateId: tpl.id, selections: options, price: 3_200 }))).totalWithVat).toBe(3_680);
  });
});

describe('connect', () => {
  it('a menu counts its 2 items (1 available once one is snoozed) and is published only with items', async () => {
    const channel = await created(api.post('/api/v1/delivery-channels', { provider: 'jahez', branch: 'Olaya' }));
    const menu = await created(api.post('/api/v1/delivery-menus', { name: 'Lunch', channelId: channel.id }));
    await conflict(api.post(`/api/v1/delivery-menus/${menu.id}/publish`));
    await invalid(api.patch(`/api/v1/delivery-menus/${menu.id}`, { itemCount: 2 }), '/itemCount');
    await created(api.post('/api/v1/delivery-items', { name: 'Shawarma plate', sku: 'SH-1', price: 32, menuId: menu.id }));
    const juice = await created(api.post('/api/v1/delivery-items', { name: 'Orange juice', sku: 'OJ-1', price: 12, menuId: menu.id }));
    await ok(api.post(`/api/v1/delivery-items/${juice.id}/snooze`, { until: '2026-03-01' }));
    expect(await get(`/api/v1/delivery-menus/${menu.id}`)).toMatchObject({ itemCount: 2, availableCount: 1 });
    expect((await ok(api.post(`/api/v1/delivery-menus/${menu.id}/publish`))).state).toBe('published');
  });
});

describe('crm', () => {
  it('probability follows the stage unless entered: 250,000 weighs 25,000 as a lead, 125,000 at proposal, 187,500 in negotiation', async () => {
    const lead = (extra: Record<string, unknown>) => created(api.post('/api/v1/leads', { title: 'Fleet tracking', expectedRevenue: 250_000, ...extra }));
    expect(await lead({})).toMatchObject({ probability: 10, weightedRevenue: 25_000 });
    expect(await lead({ stage: 'qualification' })).toMatchObject({ probability: 20, weightedRevenue: 50_000 });
    expect(await lead({ stage: 'proposal' })).toMatchObject({ probability: 50, weightedRevenue: 125_000 });
    expect(await lead({ stage: 'negotiation' })).toMatchObject({ probability: 75, weightedRevenue: 187_500 });
    expect(await lead({ stage: 'negotiation', probability: 90 })).toMatchObject({ probability: 90, weightedRevenue: 225_000 });
  });
});

describe('discuss', () => {
  it('an archived channel takes no message until a manager brings it back', async () => {
    const ch = await created(api.post('/api/v1/discuss-channels', { name: 'finance', visibility: 'public' }));
    await ok(api.post(`/api/v1/discuss-channels/${ch.id}/archive`));
    const e = await invalid(api.post('/api/v1/discuss-messages', { channelId: ch.id, authorId: employeeId, body: 'Anyone here?' }, AR), '/channelId');
    expect(e.details[0].message).toBe('القناة مؤرشفة: لا تقبل رسائل');
    await ok(co.as('Manager').post(`/api/v1/discuss-channels/${ch.id}/unarchive`));
    await created(api.post('/api/v1/discuss-messages', { channelId: ch.id, authorId: employeeId, body: 'Back for the audit' }));
  });
});

describe('ecommerce', () => {
  it('orders are numbered WEB-YYYY-00001 on; a SKU is used once; VAT defaults to 15 % (115.00 for 100.00), 0 when entered', async () => {
    const p = await created(api.post('/api/v1/products', { name: 'Dates gift box', sku: 'DGB-1', kind: 'goods', price: 100, active: true }));
    expect(p).toMatchObject({ vatRate: 15, priceWithVat: 115 });
    await repeated(api.post('/api/v1/products', { name: 'Dates gift box (large)', sku: 'DGB-1', kind: 'goods', price: 180, active: true }), 'sku', p.id);
    expect(await created(api.post('/api/v1/products', { name: 'Export box', sku: 'DGB-X', kind: 'goods', price: 100, vatRate: 0, active: true }))).toMatchObject({ vatRate: 0, priceWithVat: 100 });

    const body = { customerId, lines: [{ productId: p.id, quantity: 1, unitPrice: 100 }], paymentMethod: 'mada' };
    expect((await created(api.post('/api/v1/online-orders', body))).orderNumber).toBe(`WEB-${YEAR}-00001`);
    expect((await created(api.post('/api/v1/online-orders', body))).orderNumber).toBe(`WEB-${YEAR}-00002`);
    await invalid(api.post('/api/v1/online-orders', { ...body, orderNumber: 'WEB-9' }), '/orderNumber');
  });
});

describe('education', () => {
  it('a class of 2 seats takes 2 students, refuses a third until one withdraws, and a student once; the year comes from the class', async () => {
    const cls = await created(api.post('/api/v1/school-classes', { name: '10-A', academicYear: '2025-2026', capacity: 2 }));
    const student = (fullName: string) => created(api.post('/api/v1/students', { fullName }));
    const [s1, s2, s3] = [await student('Faisal Al-Qahtani'), await student('Noura Al-Dosari'), await student('Reem Al-Otaibi')];
    const enrol = (studentId: string, extra: Record<string, unknown> = {}) => api.post('/api/v1/student-enrolments', { studentId, classId: cls.id, enrolledOn: '2025-08-31', ...extra });
    const e1 = await created(enrol(s1.id));
    expect(e1.academicYear).toBe('2025-2026');
    await invalid(enrol(s2.id, { academicYear: '2026-2027' }), '/academicYear');
    const e2 = await created(enrol(s2.id));
    expect((await get(`/api/v1/school-classes/${cls.id}`)).enrolledCount).toBe(2);
    const full = await conflict(enrol(s3.id), 'parentRule');
    expect(full.message).toContain('The class is full');
    await repeated(enrol(s1.id), 'studentId', e1.id);
    await ok(api.post(`/api/v1/student-enrolments/${e1.id}/withdraw`));
    await created(enrol(s3.id));
    expect((await get(`/api/v1/school-classes/${cls.id}`)).enrolledCount).toBe(2);
    // A withdrawn student comes back once a seat is free: the withdrawn enrolment holds no place.
    await ok(api.post(`/api/v1/student-enrolments/${e2.id}/withdraw`));
    await created(enrol(s1.id));
  });
});

describe('elearning', () => {
  it('a score of 65 does not complete a course passed at 70, 70 does; certificates are numbered per year of issue and only for a completed course', async () => {
    const course = await created(api.post('/api/v1/elearning-courses', { title: 'Anti-money-laundering basics', passMark: 70, lessonCount: 6 }));
    const learner = await created(api.post('/api/v1/learners', { fullName: 'Omar Al-Shehri', email: 'omar@example.sa' }));
    const enr = await created(api.post('/api/v1/course-enrolments', { courseId: course.id, learnerId: learner.id, enrolledBy: 'manager', finalScore: 65 }));
    await invalid(api.post('/api/v1/course-certificates', { enrolmentId: enr.id, issuedOn: '2026-03-01' }), '/enrolmentId');
    const e = await conflict(api.post(`/api/v1/course-enrolments/${enr.id}/complete`, undefined, AR));
    expect(e.message).toContain('لم تبلغ الدرجة النهائية درجة النجاح في الدورة');
    await ok(api.patch(`/api/v1/course-enrolments/${enr.id}`, { finalScore: 70 }));
    await ok(api.post(`/api/v1/course-enrolments/${enr.id}/complete`));

    const c1 = await created(api.post('/api/v1/course-certificates', { enrolmentId: enr.id, issuedOn: '2026-03-01' }));
    expect(c1).toMatchObject({ certificateNumber: 'CERT-2026-00001', courseId: course.id, learnerId: learner.id });
    expect((await created(api.post('/api/v1/course-certificates', { enrolmentId: enr.id, issuedOn: '2026-11-30' }))).certificateNumber).toBe('CERT-2026-00002');
    expect((await created(api.post('/api/v1/course-certificates', { enrolmentId: enr.id, issuedOn: '2027-01-04' }))).certificateNumber).toBe('CERT-2027-00001');
    const other = await created(api.post('/api/v1/learners', { fullName: 'Someone else', email: 'x@example.sa' }));
    await invalid(api.post('/api/v1/course-certificates', { enrolmentId: enr.id, learnerId: other.id, issuedOn: '2026-03-01' }), '/enrolmentId');
  });
});

describe('email-marketing', () => {
  it('a list counts its 2 subscribers still subscribed; an address is on a list once; a campaign is scheduled for them', async () => {
    const list = await created(api.post('/api/v1/mailing-lists', { name: 'Customers' }));
    const sub = (listId: string, email: string) => api.post('/api/v1/mailing-subscribers', { listId, email, source: 'checkout' });
    const huda = await created(sub(list.id, 'huda@example.sa'));
    await created(sub(list.id, 'majed@example.sa'));
    const leaver = await created(sub(list.id, 'leaver@example.sa'));
    await repeated(sub(list.id, 'huda@example.sa'), 'email', huda.id);
    const other = await created(api.post('/api/v1/mailing-lists', { name: 'Suppliers' }));
    await created(sub(other.id, 'huda@example.sa'));
    await ok(api.post(`/api/v1/mailing-subscribers/${leaver.id}/unsubscribe`, { reason: 'too_frequent' }));
    expect((await get(`/api/v1/mailing-lists/${list.id}`)).subscriberCount).toBe(2);

    const camp = await created(api.post('/api/v1/email-campaigns', { subject: 'White Friday', listId: list.id, body: '<p>Up to 50 % off</p>' }));
    await invalid(api.patch(`/api/v1/email-campaigns/${camp.id}`, { recipients: 5_000 }), '/recipients');
    expect(await ok(api.post(`/api/v1/email-campaigns/${camp.id}/schedule`, { scheduledOn: '2026-11-27' }))).toMatchObject({ state: 'scheduled', recipients: 2 });
    await ok(api.post(`/api/v1/mailing-subscribers/${leaver.id}/resubscribe`));
    expect((await ok(api.post(`/api/v1/email-campaigns/${camp.id}/send`))).recipients).toBe(3);
  });
});

describe('employees', () => {
  it('employees are numbered EMP-NNNNN in turn; a work email is used once; no one is their own manager', async () => {
    const a = await newEmployee('Majed Al-Ghamdi', { workEmail: 'majed@alnoor.sa' });
    const b = await newEmployee('Hessa Al-Rashid');
    expect(a.employeeNumber).toMatch(/^EMP-\d{5}$/);
    expect(Number(String(b.employeeNumber).slice(4))).toBe(Number(String(a.employeeNumber).slice(4)) + 1);
    await invalid(api.post('/api/v1/employees', { fullName: 'X', jobTitle: 'Y', joinDate: '2021-06-01', employeeNumber: 'EMP-1' }), '/employeeNumber');
    await repeated(api.post('/api/v1/employees', { fullName: 'Majed (duplicate)', jobTitle: 'Driver', joinDate: '2021-06-01', workEmail: 'majed@alnoor.sa' }), 'workEmail', a.id);
    const e = await invalid(api.patch(`/api/v1/employees/${a.id}`, { managerId: a.id }, AR), '/managerId');
    expect(e.details[0].message).toBe('لا يكون الموظف مديرًا لنفسه');
    expect((await ok(api.patch(`/api/v1/employees/${a.id}`, { managerId: b.id }))).managerId).toBe(b.id);
  });
});
