// The first-party apps' rules, driven through the API alone with the numbers the business gives:
// payroll (net pay, GOSI from the employee's and the employer's shares, proposed again when the
// pay changes, overtime at the Labour Law's rate, a period in order, locked payslips, the Saudi
// end-of-service award with the years of service counted from the dates), time off (days counted from the dates, the Labour
// Law's days allocated and prorated in the year of the fifth anniversary, maternity leave of 84
// days, Hajj leave of 10 to 15 days after two years of service and once in it, a rejection with
// its reason) and CRM (a lost reason required, a won deal at 100 %), a payroll run's totals kept
// by its payslips, and a construction contract whose recorded costs pass its value (the overrun
// event fired by that computation, not by a typed status). On SQLite, and again on PostgreSQL
// (vitest.config.ts's `onPostgres`).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Host } from '../core/host.ts';
import { firstPartySources } from '../core/apps/app-source.ts';
import { checkManifest } from '../core/apps/manifest-check.ts';
import { buildHost } from './db.ts';
import { ARABIC, count, createCompany, createCustomer, expectError, type Client, type TestCompany } from './helpers.ts';

const APPS = ['employees', 'invoicing', 'payroll', 'time-off', 'crm', 'construction'];

describe('the apps do their business', () => {
  let host: Host;
  let co: TestCompany;
  let api: Client;
  let employeeId: string;
  let runId: string;

  beforeAll(async () => {
    host = await buildHost({ sources: firstPartySources().filter((s) => APPS.includes(s.manifest.id)), config: { rateLimitPerMinute: 0 } });
    co = await createCompany(host, { currency: 'SAR', apps: APPS });
    api = co.as();
    employeeId = (await created(api.post('/api/v1/employees', { fullName: 'Sara Al-Harbi', jobTitle: 'Accountant', joinDate: '2019-01-01' }))).id;
    runId = (await created(api.post('/api/v1/payroll-runs', { period: '2026-01', periodStart: '2026-01-01', periodEnd: '2026-01-31', payDate: '2026-01-27' }))).id;
  });
  afterAll(() => host.close());

  /** A PATCH answered 200: the document as stored. */
  async function updated(url: string, body: Record<string, unknown>): Promise<Record<string, unknown>> {
    const r = await api.patch(url, body);
    expect(r.statusCode, r.body).toBe(200);
    return r.json().data;
  }

  async function created(res: Promise<Awaited<ReturnType<Client['post']>>>): Promise<Record<string, unknown> & { id: string }> {
    const r = await res;
    expect(r.statusCode, r.body).toBe(201);
    return r.json().data;
  }

  describe('payroll', () => {
    const payslip = (over: Record<string, unknown> = {}) => ({ runId, employeeId, basicSalary: 10_000, housingAllowance: 2_500, socialInsurance: 975, ...over });

    it('computes net pay: basic 10,000 + housing 2,500 − social insurance 975 = 11,525.00', async () => {
      const slip = await created(api.post('/api/v1/payslips', payslip()));
      expect(slip.netPay).toBe(11_525);
      const more = await api.patch(`/api/v1/payslips/${slip.id}`, { transportAllowance: 500.5, overtimePay: 320.25, otherDeductions: 100.1 });
      expect(more.json().data.netPay).toBe(12_245.65);
      // Net pay is the payroll's to compute: a client that sends it is refused.
      const typed = expectError(await api.post('/api/v1/payslips', payslip({ netPay: 50 })), 400, 'VALIDATION_ERROR');
      expect(typed.details[0]).toMatchObject({ pointer: '/netPay', rule: 'additionalProperties' });
    });

    it("proposes GOSI from the employee's and the employer's shares of basic + housing, the wage taken between 1,500 and 45,000 SAR; the employer's is no deduction; a typed amount stays", async () => {
      const person = async (fullName: string, gosiEmployeeRate?: number, gosiEmployerRate?: number) =>
        (await created(api.post('/api/v1/employees', { fullName, jobTitle: 'Engineer', joinDate: '2020-01-01', ...(gosiEmployeeRate === undefined ? {} : { gosiEmployeeRate }), ...(gosiEmployerRate === undefined ? {} : { gosiEmployerRate }) }))).id;
      const slip = async (employee: string, pay: Record<string, unknown>) => {
        const { socialInsurance: _, ...body } = payslip({ employeeId: employee, ...pay });
        return created(api.post('/api/v1/payslips', body));
      };
      // A Saudi registered before July 2024: the employee 9.75 % of 10,000 + 2,500 = 1,218.75, net 12,500 − 1,218.75;
      // the employer 11.75 % (annuities 9 + SANED 0.75 + occupational hazards 2) = 1,468.75, a cost that leaves net pay alone.
      const saudi = await person('Abdullah Al-Qahtani', 9.75, 11.75);
      expect(await slip(saudi, { basicSalary: 10_000, housingAllowance: 2_500 })).toMatchObject({
        socialInsurance: 1_218.75, employerSocialInsurance: 1_468.75, grossPay: 12_500, totalDeductions: 1_218.75, netPay: 11_281.25,
      });
      // Above the ceiling: 40,000 + 10,000 counts as 45,000, 9.75 % = 4,387.50; so does a basic of 50,000, and the employer's 11.75 % of it is 5,287.50.
      expect((await slip(saudi, { basicSalary: 40_000, housingAllowance: 10_000 })).socialInsurance).toBe(4_387.5);
      expect(await slip(saudi, { basicSalary: 50_000, housingAllowance: 0 })).toMatchObject({ socialInsurance: 4_387.5, employerSocialInsurance: 5_287.5, netPay: 45_612.5 });
      // Below the floor: 1,000 counts as 1,500, 9.75 % = 146.25, 11.75 % = 176.25.
      expect(await slip(saudi, { basicSalary: 1_000, housingAllowance: 0 })).toMatchObject({ socialInsurance: 146.25, employerSocialInsurance: 176.25 });
      // Registered under the 2024 law, in its second year of steps (annuities 10 % each + SANED 0.75 % each, hazards 2 % the employer's):
      // 10.75 % of 8,000 + 2,000 = 1,075 and 12.75 % = 1,275.
      expect(await slip(await person('Noura Al-Otaibi', 10.75, 12.75), { basicSalary: 8_000, housingAllowance: 2_000 })).toMatchObject({ socialInsurance: 1_075, employerSocialInsurance: 1_275 });
      // A non-Saudi pays no employee share; the employer pays occupational hazards, 2 % of 12,500 = 250.00, and net pay is the whole 12,500.
      expect(await slip(await person('Ravi Kumar', 0, 2), { basicSalary: 10_000, housingAllowance: 2_500 })).toMatchObject({ socialInsurance: 0, employerSocialInsurance: 250, netPay: 12_500 });
      // Occupational hazards alone start at a 400 wage (GOSI), not the annuities' 1,500: 300 counts as 400, 2 % = 8.00.
      expect(await slip(await person('Sunil Perera', 0, 2), { basicSalary: 300, housingAllowance: 0 })).toMatchObject({ socialInsurance: 0, employerSocialInsurance: 8, netPay: 300 });
      // An employee with no shares recorded: none proposed (the absent rate counts as 0).
      expect(await slip(await person('Unrecorded'), { basicSalary: 6_000, housingAllowance: 1_500 })).toMatchObject({ employerSocialInsurance: 0, netPay: 7_500 });
      // What the payroll officer types is kept.
      expect(await created(api.post('/api/v1/payslips', payslip({ employeeId: saudi, socialInsurance: 900, employerSocialInsurance: 1_000 })))).toMatchObject({ socialInsurance: 900, employerSocialInsurance: 1_000, netPay: 11_600 });
      // The shares are percentages: 30 is refused, in the caller's language.
      const e = expectError(await api.post('/api/v1/employees', { fullName: 'X', jobTitle: 'Y', joinDate: '2020-01-01', gosiEmployeeRate: 30 }), 400, 'VALIDATION_ERROR');
      expect(e.details[0]).toMatchObject({ pointer: '/gosiEmployeeRate', rule: 'maximum' });
      const er = expectError(await api.post('/api/v1/employees', { fullName: 'X', jobTitle: 'Y', joinDate: '2020-01-01', gosiEmployerRate: 30 }, { 'accept-language': 'ar' }), 400, 'VALIDATION_ERROR');
      expect(er.details).toEqual([expect.objectContaining({ pointer: '/gosiEmployerRate', rule: 'maximum' })]);
      expect(er.message).toMatch(ARABIC);
    });

    it('proposes GOSI again when the pay or the employee it was proposed from changes, unless the update sends it; a typed amount stays until then', async () => {
      const saudi = (await created(api.post('/api/v1/employees', { fullName: 'Faisal Al-Dosari', jobTitle: 'Engineer', joinDate: '2020-01-01', gosiEmployeeRate: 9.75, gosiEmployerRate: 11.75 }))).id;
      const expat = (await created(api.post('/api/v1/employees', { fullName: 'Maria Santos', jobTitle: 'Engineer', joinDate: '2020-01-01', gosiEmployeeRate: 0, gosiEmployerRate: 2 }))).id;
      const { socialInsurance: _, ...body } = payslip({ employeeId: saudi, basicSalary: 10_000, housingAllowance: 2_500 });
      const slip = await created(api.post('/api/v1/payslips', body));
      expect(slip).toMatchObject({ socialInsurance: 1_218.75, employerSocialInsurance: 1_468.75, netPay: 11_281.25 });
      const patch = (p: Record<string, unknown>) => updated(`/api/v1/payslips/${slip.id}`, p);
      // The basic corrected to 12,000: 9.75 % of 14,500 = 1,413.75, 11.75 % = 1,703.75, net 14,500 − 1,413.75 = 13,086.25.
      expect(await patch({ basicSalary: 12_000 })).toMatchObject({ socialInsurance: 1_413.75, employerSocialInsurance: 1_703.75, grossPay: 14_500, netPay: 13_086.25 });
      // A typed employee share stays through an edit of what it was not proposed from (transport is not in GOSI's wage)…
      expect(await patch({ socialInsurance: 1_400 })).toMatchObject({ socialInsurance: 1_400, employerSocialInsurance: 1_703.75, netPay: 13_100 });
      expect(await patch({ transportAllowance: 500 })).toMatchObject({ socialInsurance: 1_400, grossPay: 15_000, netPay: 13_600 });
      // …and an update that sends it with the new pay keeps what it sends, while the employer's share follows the pay: 11.75 % of 15,000 = 1,762.50.
      expect(await patch({ housingAllowance: 3_000, socialInsurance: 1_450 })).toMatchObject({ socialInsurance: 1_450, employerSocialInsurance: 1_762.5 });
      // Another employee: both shares proposed from the new one's rates, 0 % and 2 % of 15,000 = 300.00.
      expect(await patch({ employeeId: expat })).toMatchObject({ socialInsurance: 0, employerSocialInsurance: 300, netPay: 15_500 });
      // The stored payslip says the same.
      expect((await api.get(`/api/v1/payslips/${slip.id}`)).json().data).toMatchObject({ socialInsurance: 0, employerSocialInsurance: 300, netPay: 15_500 });
    });

    it('pays overtime hours at the Labour Law rate (art. 107): the hour\'s wage plus half the hour\'s basic wage, the hour being the month over 240', async () => {
      const { socialInsurance: _, ...body } = payslip({ basicSalary: 10_000, housingAllowance: 2_500, transportAllowance: 500, overtimeHours: 10 });
      // Wage 13,000 a month is 54.1667 an hour, basic 10,000 is 41.6667: 54.1667 + 20.8333 = 75.00 an hour, 10 hours 750.00.
      const slip = await created(api.post('/api/v1/payslips', { ...body, socialInsurance: 975 }));
      expect(slip).toMatchObject({ overtimePay: 750, grossPay: 13_750, netPay: 12_775 });
      const patch = (p: Record<string, unknown>) => updated(`/api/v1/payslips/${slip.id}`, p);
      // 12.5 hours: 937.50; the basic raised to 12,000 (wage 15,000): (15,000 + 6,000) × 12.5 / 240 = 1,093.75.
      expect((await patch({ overtimeHours: 12.5 })).overtimePay).toBe(937.5);
      // Sara's GOSI shares are not recorded: the 975 typed stays through the change of pay.
      expect(await patch({ basicSalary: 12_000 })).toMatchObject({ overtimePay: 1_093.75, grossPay: 16_093.75, socialInsurance: 975, netPay: 15_118.75 });
      // A typed amount stays until the hours or the pay change.
      expect((await patch({ overtimePay: 1_000 })).overtimePay).toBe(1_000);
      expect((await patch({ otherDeductions: 50 })).overtimePay).toBe(1_000);
      // Without hours, what is typed is what is paid, whatever else changes.
      const typed = await created(api.post('/api/v1/payslips', payslip({ overtimePay: 320.25 })));
      expect(typed.overtimePay).toBe(320.25);
      const r = await api.patch(`/api/v1/payslips/${typed.id}`, { basicSalary: 11_000 });
      expect(r.json().data).toMatchObject({ overtimePay: 320.25, grossPay: 13_820.25 });
      // More than the year's 720 hours in a month is refused.
      expectError(await api.post('/api/v1/payslips', payslip({ overtimeHours: 721 })), 400, 'VALIDATION_ERROR');
    });

    it('deducts days of absence at the month\'s wage over 30: 3 days of 13,000 = 1,300.00', async () => {
      const slip = await created(api.post('/api/v1/payslips', payslip({ transportAllowance: 500, absenceDays: 3 })));
      // Gross 13,000; deductions 975 + 1,300 = 2,275; net 10,725.
      expect(slip).toMatchObject({ absenceDeduction: 1_300, totalDeductions: 2_275, netPay: 10_725 });
      const patch = (p: Record<string, unknown>) => updated(`/api/v1/payslips/${slip.id}`, p);
      // Half a day: 216.67; a typed amount stays until the days or the pay change.
      expect(await patch({ absenceDays: 0.5 })).toMatchObject({ absenceDeduction: 216.67, netPay: 11_808.33 });
      expect((await patch({ absenceDeduction: 200 })).absenceDeduction).toBe(200);
      expect((await patch({ otherDeductions: 25 })).absenceDeduction).toBe(200);
      expect((await patch({ basicSalary: 11_000 })).absenceDeduction).toBe(233.33);
    });

    it('refuses a negative net pay', async () => {
      const e = expectError(await api.post('/api/v1/payslips', payslip({ basicSalary: 1_000, housingAllowance: 0, socialInsurance: 975, otherDeductions: 500 })), 400, 'VALIDATION_ERROR');
      expect(e.details).toEqual([expect.objectContaining({ pointer: '/netPay', rule: 'validation', message: 'Deductions cannot exceed the pay: the net pay would be negative' })]);
    });

    it('locks a confirmed or published payslip: only its transitions change it', async () => {
      const slip = await created(api.post('/api/v1/payslips', payslip()));
      expect((await api.post(`/api/v1/payslips/${slip.id}/confirm`)).json().data.state).toBe('confirmed');
      const e = expectError(await api.patch(`/api/v1/payslips/${slip.id}`, { basicSalary: 1 }), 409, 'CONFLICT');
      expect(e.details[0]).toMatchObject({ reason: 'locked', state: 'confirmed' });
      expect((await api.post(`/api/v1/payslips/${slip.id}/publish`)).json().data.state).toBe('published');
      expectError(await api.patch(`/api/v1/payslips/${slip.id}`, { iban: 'SA0000' }), 409, 'CONFLICT');
      expect((await api.get(`/api/v1/payslips/${slip.id}`)).json().data).toMatchObject({ basicSalary: 10_000, netPay: 11_525 });
    });

    it('refuses a payroll run whose period ends before it starts, in both languages', async () => {
      const body = { period: '2026-02', periodStart: '2026-02-28', periodEnd: '2026-02-01', payDate: '2026-02-27' };
      const en = expectError(await api.post('/api/v1/payroll-runs', body), 400, 'VALIDATION_ERROR');
      expect(en.details).toEqual([expect.objectContaining({ pointer: '/periodEnd', message: 'The period cannot end before it starts' })]);
      const ar = expectError(await api.post('/api/v1/payroll-runs', body, { 'accept-language': 'ar' }), 400, 'VALIDATION_ERROR');
      expect(ar.details[0].message).toBe('لا يجوز أن تنتهي الفترة قبل بدايتها');
    });

    describe("a run's totals follow its payslips", () => {
      const newRun = async (period: string, start: string, end: string) => created(api.post('/api/v1/payroll-runs', { period, periodStart: start, periodEnd: end, payDate: end }));
      const getRun = async (id: string) => (await api.get(`/api/v1/payroll-runs/${id}`)).json().data;

      it('three payslips: headcount 3, gross 26,083.93, deductions 2,175.00, net 23,908.93; moved and cancelled payslips move them', async () => {
        const feb = await newRun('2026-02', '2026-02-01', '2026-02-28');
        const mar = await newRun('2026-03', '2026-03-01', '2026-03-31');
        expect(await getRun(feb.id)).toMatchObject({ employeeCount: 0, grossTotal: 0, deductionsTotal: 0, netTotal: 0, employerSocialInsuranceTotal: 0 });
        // 10,000 + 2,500 − 975 = 11,525.00
        const a = await created(api.post('/api/v1/payslips', payslip({ runId: feb.id })));
        // 7,000 + 1,750 + 500.50 − 682.50 − 517.50 = 8,050.50
        const b = await created(api.post('/api/v1/payslips', payslip({ runId: feb.id, basicSalary: 7_000, housingAllowance: 1_750, transportAllowance: 500.5, socialInsurance: 682.5, otherDeductions: 517.5 })));
        // 4,000.10 + 333.33 overtime, no employee share of social insurance = 4,333.43
        const c = await created(api.post('/api/v1/payslips', payslip({ runId: feb.id, basicSalary: 4_000.1, housingAllowance: 0, overtimePay: 333.33, socialInsurance: 0 })));
        expect([a.netPay, b.netPay, c.netPay]).toEqual([11_525, 8_050.5, 4_333.43]);
        expect([a.grossPay, b.grossPay, c.grossPay]).toEqual([12_500, 9_250.5, 4_333.43]);
        expect(await getRun(feb.id)).toMatchObject({ employeeCount: 3, grossTotal: 26_083.93, deductionsTotal: 2_175, netTotal: 23_908.93 });
        // The third payslip belongs to March: the totals go with it.
        expect((await api.patch(`/api/v1/payslips/${c.id}`, { runId: mar.id })).statusCode).toBe(200);
        expect(await getRun(feb.id)).toMatchObject({ employeeCount: 2, grossTotal: 21_750.5, deductionsTotal: 2_175, netTotal: 19_575.5 });
        expect(await getRun(mar.id)).toMatchObject({ employeeCount: 1, grossTotal: 4_333.43, netTotal: 4_333.43 });
        // A cancelled payslip counts no more; a confirmed one still does.
        await api.post(`/api/v1/payslips/${b.id}/cancel`);
        await api.post(`/api/v1/payslips/${a.id}/confirm`);
        expect(await getRun(feb.id)).toMatchObject({ employeeCount: 1, grossTotal: 12_500, deductionsTotal: 975, netTotal: 11_525 });
        // The totals are the payroll's to keep: a client that types one is refused.
        expectError(await api.patch(`/api/v1/payroll-runs/${feb.id}`, { netTotal: 50 }), 400, 'VALIDATION_ERROR');
      });

      it("the employer's GOSI: 1,468.75 + 1,028.13 + 80.00 = 2,576.88 beside net 23,178.22; moved, cancelled and deleted payslips move it", async () => {
        const aug = await newRun('2026-08', '2026-08-01', '2026-08-31');
        const sep = await newRun('2026-09', '2026-09-01', '2026-09-30');
        const person = async (fullName: string, gosiEmployeeRate: number, gosiEmployerRate: number) =>
          (await created(api.post('/api/v1/employees', { fullName, jobTitle: 'Engineer', joinDate: '2020-01-01', gosiEmployeeRate, gosiEmployerRate }))).id;
        const saudi = await person('Khalid Al-Dossari', 9.75, 11.75);
        const expat = await person('Joseph Mathew', 0, 2);
        const slip = async (over: Record<string, unknown>) => {
          const { socialInsurance: _, ...body } = payslip({ runId: aug.id, ...over });
          return created(api.post('/api/v1/payslips', body));
        };
        // 12,500 × 11.75 % = 1,468.75 (the employee's 9.75 % = 1,218.75, net 11,281.25)
        const a = await slip({ employeeId: saudi });
        // 8,750 × 11.75 % = 1,028.125 → 1,028.13 (the employee's 853.125 → 853.13, net 7,896.87)
        const b = await slip({ employeeId: saudi, basicSalary: 7_000, housingAllowance: 1_750 });
        // 4,000.10 × 2 % = 80.002 → 80.00 (no employee share, net 4,000.10)
        const c = await slip({ employeeId: expat, basicSalary: 4_000.1, housingAllowance: 0 });
        expect([a.employerSocialInsurance, b.employerSocialInsurance, c.employerSocialInsurance]).toEqual([1_468.75, 1_028.13, 80]);
        expect([a.netPay, b.netPay, c.netPay]).toEqual([11_281.25, 7_896.87, 4_000.1]);
        // Gross 25,250.10 − deductions 2,071.88 (the employees' shares) = net 23,178.22: the employer's 2,576.88 is not taken from it.
        expect(await getRun(aug.id)).toMatchObject({ employeeCount: 3, grossTotal: 25_250.1, deductionsTotal: 2_071.88, netTotal: 23_178.22, employerSocialInsuranceTotal: 2_576.88 });
        // The expatriate's payslip belongs to September: his 80.00 goes with it.
        expect((await api.patch(`/api/v1/payslips/${c.id}`, { runId: sep.id })).statusCode).toBe(200);
        expect(await getRun(aug.id)).toMatchObject({ employeeCount: 2, employerSocialInsuranceTotal: 2_496.88 });
        expect(await getRun(sep.id)).toMatchObject({ employeeCount: 1, employerSocialInsuranceTotal: 80 });
        // A corrected amount moves the total by the difference: 1,028.13 → 1,000.00.
        expect((await api.patch(`/api/v1/payslips/${b.id}`, { employerSocialInsurance: 1_000 })).json().data.employerSocialInsurance).toBe(1_000);
        expect((await getRun(aug.id)).employerSocialInsuranceTotal).toBe(2_468.75);
        // A cancelled payslip counts no more, a confirmed one still does, a deleted one is gone.
        await api.post(`/api/v1/payslips/${b.id}/cancel`);
        await api.post(`/api/v1/payslips/${a.id}/confirm`);
        expect(await getRun(aug.id)).toMatchObject({ employeeCount: 1, netTotal: 11_281.25, employerSocialInsuranceTotal: 1_468.75 });
        expect((await api.delete(`/api/v1/payslips/${c.id}`)).statusCode).toBe(200);
        expect(await getRun(sep.id)).toMatchObject({ employeeCount: 0, employerSocialInsuranceTotal: 0 });
        // The total is the payroll's to keep: a client that types it is refused.
        const typed = expectError(await api.patch(`/api/v1/payroll-runs/${aug.id}`, { employerSocialInsuranceTotal: 50 }), 400, 'VALIDATION_ERROR');
        expect(typed.details[0]).toMatchObject({ pointer: '/employerSocialInsuranceTotal', rule: 'additionalProperties' });
      });

      it('an approved run refuses a payslip that would move its totals, naming the run, and keeps nothing of it', async () => {
        const run = await newRun('2026-04', '2026-04-01', '2026-04-30');
        await created(api.post('/api/v1/payslips', payslip({ runId: run.id })));
        await api.post(`/api/v1/payroll-runs/${run.id}/calculate`);
        expect((await api.post(`/api/v1/payroll-runs/${run.id}/approve`)).json().data.state).toBe('approved');
        const e = expectError(await api.post('/api/v1/payslips', payslip({ runId: run.id, basicSalary: 5_000 }), { 'accept-language': 'ar' }), 409, 'CONFLICT');
        expect(e.details[0]).toMatchObject({ reason: 'parentLocked', resource: 'payroll-runs', id: run.id, state: 'approved' });
        expect(e.message).toMatch(ARABIC);
        expect((await api.get(`/api/v1/payslips?runId=${run.id}`)).json().total).toBe(1);
        expect(await getRun(run.id)).toMatchObject({ employeeCount: 1, netTotal: 11_525 });
      });

      it('refuses a payslip that would carry a total past what money holds (10^12), naming the run, and keeps the totals', async () => {
        const run = await newRun('2026-06', '2026-06-01', '2026-06-30');
        const huge = { runId: run.id, basicSalary: 600_000_000_000, housingAllowance: 0, socialInsurance: 0 };
        await created(api.post('/api/v1/payslips', payslip(huge)));
        const e = expectError(await api.post('/api/v1/payslips', payslip(huge)), 409, 'CONFLICT');
        expect(e.details[0]).toMatchObject({ reason: 'parentRule', resource: 'payroll-runs', id: run.id });
        expect(e.details[0].problems).toEqual(expect.arrayContaining([expect.objectContaining({ pointer: '/grossTotal', rule: 'maximum' })]));
        expect((await api.get(`/api/v1/payslips?runId=${run.id}`)).json().total).toBe(1);
        expect(await getRun(run.id)).toMatchObject({ employeeCount: 1, grossTotal: 600_000_000_000, netTotal: 600_000_000_000 });
      });

      it('totals to the fils in a three-digit currency: 1,000.125 + 0.250 + 0.001 = 1,000.376 KWD', async () => {
        const kw = await createCompany(host, { currency: 'KWD', apps: APPS });
        const kwApi = kw.as();
        const emp = await created(kwApi.post('/api/v1/employees', { fullName: 'Fahad Al-Sabah', jobTitle: 'Clerk', joinDate: '2020-01-01' }));
        const kwRun = await created(kwApi.post('/api/v1/payroll-runs', { period: '2026-07', periodStart: '2026-07-01', periodEnd: '2026-07-31', payDate: '2026-07-30' }));
        for (const basicSalary of [1_000.125, 0.25, 0.001]) {
          await created(kwApi.post('/api/v1/payslips', { runId: kwRun.id, employeeId: emp.id, basicSalary, housingAllowance: 0, socialInsurance: 0 }));
        }
        expect((await kwApi.get(`/api/v1/payroll-runs/${kwRun.id}`)).json().data).toMatchObject({ employeeCount: 3, grossTotal: 1_000.376, netTotal: 1_000.376 });
      });

      it('pays by bank transfer unless told otherwise, and refuses a payslip for an employee who joins after the period', async () => {
        const run = await newRun('2026-05', '2026-05-01', '2026-05-31');
        expect((await created(api.post('/api/v1/payslips', payslip({ runId: run.id })))).paymentMethod).toBe('bank_transfer');
        expect((await created(api.post('/api/v1/payslips', payslip({ runId: run.id, paymentMethod: 'cash' })))).paymentMethod).toBe('cash');
        const late = await created(api.post('/api/v1/employees', { fullName: 'Omar Al-Qahtani', jobTitle: 'Driver', joinDate: '2026-06-01' }));
        const e = expectError(await api.post('/api/v1/payslips', payslip({ runId: run.id, employeeId: late.id })), 400, 'VALIDATION_ERROR');
        expect(e.details).toEqual([expect.objectContaining({ pointer: '/employeeId', rule: 'validation', message: "The employee joins after the run's period ends: no payslip in it" })]);
      });
    });

    it("calculates a run into a payslip per employee from the salary in force at the period's end, prorating a joiner by calendar days; typed payslips stay, leavers and future salaries are left out", async () => {
      const co2 = await createCompany(host, { currency: 'SAR', apps: APPS });
      const hr = co2.as();
      const person = async (fullName: string, joinDate: string, over: Record<string, unknown> = {}) =>
        (await created(hr.post('/api/v1/employees', { fullName, jobTitle: 'Engineer', joinDate, gosiEmployeeRate: 9.75, gosiEmployerRate: 11.75, ...over }))).id;
      const salary = (employeeId: string, fromDate: string, pay: Record<string, unknown>) => created(hr.post('/api/v1/salary-assignments', { employeeId, fromDate, ...pay }));
      const yousef = await person('Yousef Al-Mutairi', '2018-05-01');
      await salary(yousef, '2025-01-01', { basicSalary: 9_000, housingAllowance: 2_250 });
      await salary(yousef, '2026-03-01', { basicSalary: 10_000, housingAllowance: 2_500, transportAllowance: 500 });
      // Lina joins on 16 March: 16 of March's 31 days.
      const lina = await person('Lina Al-Harthi', '2026-03-16');
      await salary(lina, '2026-03-16', { basicSalary: 6_200, housingAllowance: 1_550 });
      const ahmed = await person('Ahmed Al-Malki', '2015-01-01', { exitDate: '2026-02-28' });
      await salary(ahmed, '2020-01-01', { basicSalary: 20_000 });
      const nasser = await person('Nasser Al-Juhani', '2026-04-01');
      await salary(nasser, '2026-04-01', { basicSalary: 8_000 });
      const ravi = await person('Ravi Menon', '2022-01-01', { gosiEmployeeRate: 0, gosiEmployerRate: 2 });
      await salary(ravi, '2022-01-01', { basicSalary: 4_000 });
      // One employee and day, one salary: a second is refused.
      expectError(await hr.post('/api/v1/salary-assignments', { employeeId: lina, fromDate: '2026-03-16', basicSalary: 1 }), 409, 'CONFLICT');
      const bad = expectError(await hr.post('/api/v1/salary-assignments', { employeeId: lina, fromDate: '2026-05-01', basicSalary: -1 }), 400, 'VALIDATION_ERROR');
      expect(bad.details[0]).toMatchObject({ pointer: '/basicSalary', rule: 'minimum' });

      const run = await created(hr.post('/api/v1/payroll-runs', { period: '2026-03', periodStart: '2026-03-01', periodEnd: '2026-03-31', payDate: '2026-03-26' }));
      // Ravi's March pay was typed before the run was calculated: it stays (5,000 this month, GOSI 2 % of 5,000 = 100).
      await created(hr.post('/api/v1/payslips', { runId: run.id, employeeId: ravi, basicSalary: 5_000 }));
      const calculated = await hr.post(`/api/v1/payroll-runs/${run.id}/calculate`);
      expect(calculated.statusCode, calculated.body).toBe(200);
      const listed = await hr.get(`/api/v1/payslips?runId=${run.id}`);
      expect(listed.statusCode, listed.body).toBe(200);
      const slips = listed.json().data as Record<string, unknown>[];
      const of = (id: string) => slips.filter((s) => s.employeeId === id);
      expect(slips).toHaveLength(3);
      // Yousef, on the salary from 1 March: 12,500 counts for GOSI, 9.75 % = 1,218.75; net 13,000 − 1,218.75.
      expect(of(yousef)).toEqual([expect.objectContaining({ state: 'draft', basicSalary: 10_000, housingAllowance: 2_500, transportAllowance: 500, socialInsurance: 1_218.75, employerSocialInsurance: 1_468.75, netPay: 11_781.25 })]);
      // Lina: 6,200 × 16/31 = 3,200.00 and 1,550 × 16/31 = 800.00; GOSI 9.75 % of 4,000 = 390.00.
      expect(of(lina)).toEqual([expect.objectContaining({ basicSalary: 3_200, housingAllowance: 800, socialInsurance: 390, employerSocialInsurance: 470, netPay: 3_610 })]);
      expect(of(ravi)).toEqual([expect.objectContaining({ basicSalary: 5_000, employerSocialInsurance: 100, netPay: 5_000 })]);
      expect([of(ahmed), of(nasser)]).toEqual([[], []]);
      // The run totals them in the same unit of work: 11,781.25 + 3,610 + 5,000 = 20,391.25; the employer's 1,468.75 + 470 + 100.
      const totals = (await hr.get(`/api/v1/payroll-runs/${run.id}`)).json().data;
      expect(totals).toMatchObject({ state: 'calculated', employeeCount: 3, grossTotal: 22_000, netTotal: 20_391.25, employerSocialInsuranceTotal: 2_038.75 });
      // Reopened and calculated again: nobody is paid twice.
      expect((await hr.post(`/api/v1/payroll-runs/${run.id}/reopen`)).statusCode).toBe(200);
      expect((await hr.post(`/api/v1/payroll-runs/${run.id}/calculate`)).statusCode).toBe(200);
      expect((await hr.get(`/api/v1/payslips?runId=${run.id}`)).json().total).toBe(3);
      // Approved, then paid: each payslip is confirmed and published to its employee, one event each.
      expect((await hr.post(`/api/v1/payroll-runs/${run.id}/approve`)).statusCode).toBe(200);
      expect(((await hr.get(`/api/v1/payslips?runId=${run.id}`)).json().data as { state: string }[]).map((s) => s.state)).toEqual(['draft', 'draft', 'draft']);
      const paid = await hr.post(`/api/v1/payroll-runs/${run.id}/markPaid`);
      expect(paid.statusCode, paid.body).toBe(200);
      expect(((await hr.get(`/api/v1/payslips?runId=${run.id}`)).json().data as { state: string }[]).map((s) => s.state)).toEqual(['published', 'published', 'published']);
      const published = await count(host, "SELECT count(*) FROM outbox WHERE company_id = ? AND topic = 'payroll.payslip.published'", co2.company.id);
      expect(published).toBe(3);
    });

    describe('end of service (Labour Law Arts. 84–85)', () => {
      const settle = (serviceYears: number, reason: string, over: Record<string, unknown> = {}) =>
        created(api.post('/api/v1/eos-settlements', { employeeId, lastWorkingDay: '2026-01-31', reason, serviceYears, lastBasicSalary: 10_000, ...over }));

      it("names each reason for the end of service in the caller's language, as the Labour Law does", async () => {
        for (const [lang, labels] of [['ar', ['الاستقالة', 'إنهاء من صاحب العمل', 'انتهاء مدة العقد', 'التقاعد', 'الوفاة']], ['en', ['Resignation', 'Termination by the employer', 'End of contract', 'Retirement', 'Death']]] as const) {
          const meta = (await api.get('/api/v1/document-types', { 'accept-language': lang })).json().data.find((d: { name: string }) => d.name === 'eosSettlement');
          const reason = meta.fields.find((f: { name: string }) => f.name === 'reason');
          expect(reason.options.map((o: { label: string }) => o.label)).toEqual(labels);
        }
      });

      it('names the states of a settlement (تسوية) and of a payslip (قسيمة) in the feminine, those of a run (مسير) in the masculine', async () => {
        const states = async (lang: string, type: string) =>
          Object.fromEntries(((await api.get('/api/v1/document-types', { 'accept-language': lang })).json().data.find((d: { name: string }) => d.name === type).states as { name: string; label: string }[]).map((x) => [x.name, x.label]));
        expect(await states('ar', 'eosSettlement')).toEqual({ draft: 'مسودة', approved: 'معتمدة', paid: 'مدفوعة', cancelled: 'ملغاة' });
        expect(await states('ar', 'payslip')).toMatchObject({ confirmed: 'مؤكدة', published: 'منشورة', cancelled: 'ملغاة' });
        expect(await states('ar', 'payrollRun')).toMatchObject({ approved: 'معتمد', paid: 'مدفوع', cancelled: 'ملغى' });
        expect(await states('en', 'eosSettlement')).toMatchObject({ approved: 'Approved', cancelled: 'Cancelled' });
      });

      it('7 years at 10,000 ended by the employer: 5 × 5,000 + 2 × 10,000 = 45,000', async () => {
        expect(await settle(7, 'termination')).toMatchObject({ fullAward: 45_000, gratuity: 45_000, totalPayable: 45_000 });
      });

      it('the same resigning gets two thirds: 30,000; after 1.5 years nothing; 3 years a third; 12 years the full award', async () => {
        expect(await settle(7, 'resignation')).toMatchObject({ fullAward: 45_000, gratuity: 30_000 });
        expect(await settle(1.5, 'resignation')).toMatchObject({ fullAward: 7_500, gratuity: 0, totalPayable: 0 });
        expect(await settle(3, 'resignation')).toMatchObject({ fullAward: 15_000, gratuity: 5_000 });
        expect(await settle(12, 'resignation')).toMatchObject({ gratuity: 95_000 });
      });

      it('counts the allowances of the wage and parts of a year; total = gratuity + leave encashment − deductions', async () => {
        // Wage 12,500; 6.5 years: 2.5 + 1.5 = 4 months = 50,000; + 3,000.50 − 1,200.25.
        const s = await settle(6.5, 'end_of_contract', { lastAllowances: 2_500, leaveEncashment: 3_000.5, deductions: 1_200.25 });
        expect(s).toMatchObject({ fullAward: 50_000, gratuity: 50_000, totalPayable: 51_800.25 });
        const e = expectError(await api.post('/api/v1/eos-settlements', { employeeId, lastWorkingDay: '2026-01-31', reason: 'resignation', serviceYears: 1, lastBasicSalary: 10_000, deductions: 1 }), 400, 'VALIDATION_ERROR');
        expect(e.details[0]).toMatchObject({ pointer: '/deductions', rule: 'validation' });
        expectError(await api.post('/api/v1/eos-settlements', { employeeId, lastWorkingDay: '2026-01-31', reason: 'termination', serviceYears: 2, lastBasicSalary: 10_000, gratuity: 1 }), 400, 'VALIDATION_ERROR');
      });

      it('pays the unused leave days at the last wage over 30 (art. 111): 18 days of 12,500 = 7,500.00, with the award', async () => {
        // Seven years ended by the employer: 2.5 + 2 = 4.5 months of 12,500 = 56,250; with 18 days' leave pay, 63,750 − 1,000.
        const s = await settle(7, 'termination', { lastAllowances: 2_500, unusedLeaveDays: 18, deductions: 1_000 });
        expect(s).toMatchObject({ fullAward: 56_250, leaveEncashment: 7_500, totalPayable: 62_750 });
        // 4.5 days: 1,875.00; the wage raised to 15,000: 2,250.00. A typed amount stays until the days or the wage change.
        const patch = (p: Record<string, unknown>) => updated(`/api/v1/eos-settlements/${s.id}`, p);
        expect((await patch({ unusedLeaveDays: 4.5 })).leaveEncashment).toBe(1_875);
        expect((await patch({ lastBasicSalary: 12_500 })).leaveEncashment).toBe(2_250);
        expect((await patch({ leaveEncashment: 2_000 })).leaveEncashment).toBe(2_000);
        expect(await patch({ deductions: 0 })).toMatchObject({ leaveEncashment: 2_000 });
        // Without days, what is typed is paid.
        expect(await settle(7, 'termination', { leaveEncashment: 3_000.5 })).toMatchObject({ leaveEncashment: 3_000.5, totalPayable: 48_000.5 });
      });

      it('counts the years of service from the join date to the last working day when none are sent, and again when the day moves', async () => {
        const count = (over: Record<string, unknown>) => created(api.post('/api/v1/eos-settlements', { employeeId, reason: 'termination', lastBasicSalary: 10_000, ...over }));
        // Sara joined on 2019-01-01; to 31 December 2025, both included, is seven whole years (two leap days inside): 45,000.
        expect(await count({ lastWorkingDay: '2025-12-31' })).toMatchObject({ serviceYears: 7, fullAward: 45_000, gratuity: 45_000 });
        // Joined 15 March 2021, leaving on 14 September 2026: 5 years and the 184 days from 15 March, 5 + 184/365.
        // 10,000 × (2.5 + 184/365) = 30,041.10; resigning after five years, two thirds: 20,027.40.
        const joined = (await created(api.post('/api/v1/employees', { fullName: 'Huda Al-Ghamdi', jobTitle: 'Analyst', joinDate: '2021-03-15' }))).id;
        const s = await count({ employeeId: joined, lastWorkingDay: '2026-09-14', reason: 'resignation' });
        expect(s.serviceYears).toBeCloseTo(5 + 184 / 365, 12);
        expect(s).toMatchObject({ fullAward: 30_041.1, gratuity: 20_027.4 });
        // The last working day moved to 14 March 2026: five whole years, counted again: 25,000, two thirds 16,666.67.
        const moved = await api.patch(`/api/v1/eos-settlements/${s.id}`, { lastWorkingDay: '2026-03-14' });
        expect(moved.statusCode, moved.body).toBe(200);
        expect(moved.json().data).toMatchObject({ serviceYears: 5, fullAward: 25_000, gratuity: 16_666.67 });
        // Joined on 29 February 2020: the anniversary in a year without one is 28 February, so to 27 February 2025 is five years.
        const leapling = (await created(api.post('/api/v1/employees', { fullName: 'Omar Al-Shehri', jobTitle: 'Driver', joinDate: '2020-02-29' }))).id;
        expect(await count({ employeeId: leapling, lastWorkingDay: '2025-02-27' })).toMatchObject({ serviceYears: 5, fullAward: 25_000 });
        // A last working day before the join date is refused at its field, in the caller's language.
        for (const lang of ['en', 'ar'] as const) {
          const e = expectError(await api.post('/api/v1/eos-settlements', { employeeId: joined, lastWorkingDay: '2021-03-14', reason: 'termination', lastBasicSalary: 10_000, serviceYears: 0 }, { 'accept-language': lang }), 400, 'VALIDATION_ERROR');
          expect(e.details).toEqual([expect.objectContaining({ pointer: '/lastWorkingDay', rule: 'validation', message: lang === 'en' ? 'The last working day cannot be before the employee joined' : 'لا يجوز أن يكون آخر يوم عمل قبل تاريخ التحاق الموظف' })]);
        }
      });
    });
  });

  describe('time off', () => {
    const request = (over: Record<string, unknown> = {}) => ({ employeeId, leaveType: 'annual', startDate: '2026-02-26', endDate: '2026-03-02', ...over });

    it('counts the days from the dates, both included, and refuses an end before the start', async () => {
      expect((await created(api.post('/api/v1/leave-requests', request()))).days).toBe(5);
      expect((await created(api.post('/api/v1/leave-requests', request({ endDate: '2026-02-26', halfDay: true })))).days).toBe(0.5);
      const e = expectError(await api.post('/api/v1/leave-requests', request({ endDate: '2026-02-20' }), { 'accept-language': 'ar' }), 400, 'VALIDATION_ERROR');
      expect(e.details).toEqual([expect.objectContaining({ pointer: '/endDate', rule: 'validation', message: 'لا يجوز أن تنتهي الإجازة قبل بدايتها' })]);
      expectError(await api.post('/api/v1/leave-requests', request({ days: 300 })), 400, 'VALIDATION_ERROR');
      const half = expectError(await api.post('/api/v1/leave-requests', request({ halfDay: true })), 400, 'VALIDATION_ERROR');
      expect(half.details[0]).toMatchObject({ pointer: '/halfDay' });
    });

    it("allocates the Labour Law's days when none are sent: annual 21, or 30 after five years of service; sick 120, Hajj 10, marriage 5, paternity 3", async () => {
      const allocate = async (over: Record<string, unknown>) => api.post('/api/v1/leave-allocations', { employeeId, leaveType: 'annual', validFrom: '2026-01-01', validTo: '2026-12-31', ...over });
      const days = async (over: Record<string, unknown>) => {
        const res = await allocate(over);
        expect(res.statusCode, res.body).toBe(201);
        return res.json().data.days;
      };
      // Sara joined on 2019-01-01: seven years of service by 2026.
      expect(await days({})).toBe(30);
      const newcomer = (await created(api.post('/api/v1/employees', { fullName: 'Khalid Al-Dosari', jobTitle: 'Technician', joinDate: '2023-06-15' }))).id;
      expect(await days({ employeeId: newcomer })).toBe(21);
      // His fifth anniversary, 2028-06-15: 21 for a year ending the day before, 30 for one starting on it.
      expect(await days({ employeeId: newcomer, validFrom: '2027-06-15', validTo: '2028-06-14' })).toBe(21);
      expect(await days({ employeeId: newcomer, validFrom: '2028-06-15', validTo: '2029-06-14' })).toBe(30);
      expect([await days({ leaveType: 'sick' }), await days({ leaveType: 'hajj' }), await days({ leaveType: 'marriage' }), await days({ leaveType: 'paternity' })]).toEqual([120, 10, 5, 3]);
      // What is sent stays; a type the law gives no number of days must be sent its days.
      expect(await days({ days: 25 })).toBe(25);
      const e = expectError(await allocate({ leaveType: 'unpaid' }), 400, 'VALIDATION_ERROR');
      expect(e.details).toEqual([expect.objectContaining({ pointer: '/days', rule: 'required' })]);
    });

    it('allocates maternity leave of twelve weeks, 84 days (art. 151 as amended from 19 February 2025), drawn on by the leave', async () => {
      const noura = (await created(api.post('/api/v1/employees', { fullName: 'Noura Al-Otaibi', jobTitle: 'Pharmacist', joinDate: '2022-09-01' }))).id;
      const allocation = await created(api.post('/api/v1/leave-allocations', { employeeId: noura, leaveType: 'maternity', validFrom: '2026-01-01', validTo: '2026-12-31' }));
      expect(allocation).toMatchObject({ days: 84, daysLeft: 84 });
      const leave = (endDate: string) => ({ employeeId: noura, leaveType: 'maternity', startDate: '2026-03-01', endDate, allocationId: allocation.id });
      // 1 March to 23 May: 31 + 30 + 23 = 84 days; a day more is longer than the allocation.
      const over = expectError(await api.post('/api/v1/leave-requests', leave('2026-05-24')), 400, 'VALIDATION_ERROR');
      expect(over.details).toEqual([expect.objectContaining({ pointer: '/days', message: 'The leave is longer than the days left of the allocation' })]);
      const taken = await created(api.post('/api/v1/leave-requests', leave('2026-05-23')));
      expect(taken.days).toBe(84);
      expect((await api.post(`/api/v1/leave-requests/${taken.id}/approve`)).json().data.state).toBe('approved');
      expect((await api.get(`/api/v1/leave-allocations/${allocation.id}`)).json().data).toMatchObject({ days: 84, daysTaken: 84, daysLeft: 0 });
    });

    it('prorates annual leave in the year of the fifth anniversary: 21 days a year before it, 30 from it (art. 109), to the nearest half day', async () => {
      const joined = async (joinDate: string) => (await created(api.post('/api/v1/employees', { fullName: `Joined ${joinDate}`, jobTitle: 'Analyst', joinDate }))).id;
      const days = async (employee: string, validFrom: string, validTo: string, over: Record<string, unknown> = {}) =>
        (await created(api.post('/api/v1/leave-allocations', { employeeId: employee, leaveType: 'annual', validFrom, validTo, ...over }))).days;
      // Joined 2021-07-01, fifth anniversary 2026-07-01: 181 days of 2026 before it (Jan 1–Jun 30), 184 from it.
      // 21 × 181/365 + 30 × 184/365 = 10.41 + 15.12 = 25.54, to the nearest half day 25.5.
      const fahad = await joined('2021-07-01');
      expect(await days(fahad, '2026-01-01', '2026-12-31')).toBe(25.5);
      // The anniversary after the period: 21; on or before its first day: 30.
      expect(await days(fahad, '2025-01-01', '2025-12-31')).toBe(21);
      expect(await days(fahad, '2027-01-01', '2027-12-31')).toBe(30);
      expect(await days(fahad, '2026-07-01', '2027-06-30')).toBe(30);
      // Joined 2021-10-01: 21 × 273/365 + 30 × 92/365 = 15.71 + 7.56 = 23.27, nearer 23.5 than 23.
      expect(await days(await joined('2021-10-01'), '2026-01-01', '2026-12-31')).toBe(23.5);
      // Joined 2021-04-01: 21 × 90/365 + 30 × 275/365 = 5.18 + 22.60 = 27.78, nearer 28 than 27.5.
      const early = await joined('2021-04-01');
      expect(await days(early, '2026-01-01', '2026-12-31')).toBe(28);
      // A leap year counts 366 days: joined 2023-06-15, period 2027-06-16..2028-06-15 holds the anniversary as its last day,
      // 21 × 365/366 + 30 × 1/366 = 21.02, so 21.
      expect(await days(await joined('2023-06-15'), '2027-06-16', '2028-06-15')).toBe(21);
      // Joined on 29 February 2020: the fifth anniversary is 28 February 2025 (addYears, as ERPNext's add_years), so a
      // service year from that day gets 30, and the calendar year 2025 21 × 58/365 + 30 × 307/365 = 28.57, to the half day 28.5.
      const leapDay = await joined('2020-02-29');
      expect(await days(leapDay, '2025-02-28', '2026-02-27')).toBe(30);
      expect(await days(leapDay, '2025-01-01', '2025-12-31')).toBe(28.5);
      // What is typed stays, and the days left follow it.
      const typed = await created(api.post('/api/v1/leave-allocations', { employeeId: early, leaveType: 'annual', validFrom: '2026-01-01', validTo: '2026-12-31', days: 26 }));
      expect(typed).toMatchObject({ days: 26, daysLeft: 26 });
    });

    it('grants Hajj leave from two years of service, counted to its first day (art. 114), in both languages', async () => {
      const joined = (await created(api.post('/api/v1/employees', { fullName: 'Majed Al-Shehri', jobTitle: 'Driver', joinDate: '2024-05-20' }))).id;
      const hajj = (startDate: string, endDate: string) => ({ employeeId: joined, leaveType: 'hajj', startDate, endDate });
      const en = expectError(await api.post('/api/v1/leave-requests', hajj('2026-05-19', '2026-05-28')), 400, 'VALIDATION_ERROR');
      expect(en.details).toEqual([expect.objectContaining({ pointer: '/leaveType', rule: 'validation', message: 'Hajj leave is for an employee with two years of service when it starts (Labour Law, art. 114)' })]);
      const ar = expectError(await api.post('/api/v1/leave-requests', hajj('2026-05-19', '2026-05-28'), { 'accept-language': 'ar' }), 400, 'VALIDATION_ERROR');
      expect(ar.details[0].message).toMatch(ARABIC);
      expect((await created(api.post('/api/v1/leave-requests', hajj('2026-05-20', '2026-05-29')))).days).toBe(10);
      // Other leave is not held to it.
      expect((await created(api.post('/api/v1/leave-requests', { ...hajj('2026-01-04', '2026-01-05'), leaveType: 'annual' }))).days).toBe(2);
    });

    it('counts the two years of a 29 February joiner to 28 February when the year has no 29th', async () => {
      const joined = (await created(api.post('/api/v1/employees', { fullName: 'Turki Al-Mutairi', jobTitle: 'Driver', joinDate: '2032-02-29' }))).id;
      const hajj = (startDate: string, endDate: string) => ({ employeeId: joined, leaveType: 'hajj', startDate, endDate });
      const early = expectError(await api.post('/api/v1/leave-requests', hajj('2034-02-27', '2034-03-08')), 400, 'VALIDATION_ERROR');
      expect(early.details).toEqual([expect.objectContaining({ pointer: '/leaveType', rule: 'validation' })]);
      expect((await created(api.post('/api/v1/leave-requests', hajj('2034-02-28', '2034-03-09')))).days).toBe(10);
    });

    it('grants Hajj leave of 10 to 15 days, Eid al-Adha included (art. 114), and refuses 9 or 16 in both languages', async () => {
      const joined = (await created(api.post('/api/v1/employees', { fullName: 'Bandar Al-Zahrani', jobTitle: 'Surveyor', joinDate: '2020-01-01' }))).id;
      const hajj = (endDate: string) => ({ employeeId: joined, leaveType: 'hajj', startDate: '2026-05-20', endDate });
      const message = { en: 'Hajj leave is 10 to 15 days, Eid al-Adha included (Labour Law, art. 114)', ar: 'إجازة الحج من 10 أيام إلى 15 يومًا، بما فيها عطلة عيد الأضحى (نظام العمل، المادة 114)' };
      // 20 May to 28 May is 9 days, to 4 June 16.
      for (const endDate of ['2026-05-28', '2026-06-04'])
        for (const lang of ['en', 'ar'] as const) {
          const e = expectError(await api.post('/api/v1/leave-requests', hajj(endDate), { 'accept-language': lang }), 400, 'VALIDATION_ERROR');
          expect(e.details).toEqual([expect.objectContaining({ pointer: '/days', rule: 'validation', message: message[lang] })]);
        }
      const half = expectError(await api.post('/api/v1/leave-requests', { ...hajj('2026-05-20'), halfDay: true }), 400, 'VALIDATION_ERROR');
      expect(half.details).toEqual([expect.objectContaining({ pointer: '/days', message: message.en })]);
      // To 31 May: 12 days.
      expect((await created(api.post('/api/v1/leave-requests', hajj('2026-05-31')))).days).toBe(12);
      // Other leave of 9 days is not held to it.
      expect((await created(api.post('/api/v1/leave-requests', { ...hajj('2026-05-28'), leaveType: 'annual' }))).days).toBe(9);
      // An allocation of Hajj leave is held to the same range: 15 (Eid included) is allocated, 9 and 20 are refused.
      const allocate = (days: number, lang: 'en' | 'ar' = 'en') => api.post('/api/v1/leave-allocations', { employeeId: joined, leaveType: 'hajj', validFrom: '2026-01-01', validTo: '2026-12-31', days }, { 'accept-language': lang });
      expect((await created(allocate(15))).days).toBe(15);
      for (const [days, lang] of [[9, 'en'], [20, 'ar']] as const) {
        const e = expectError(await allocate(days, lang), 400, 'VALIDATION_ERROR');
        expect(e.details).toEqual([expect.objectContaining({ pointer: '/days', rule: 'validation', message: message[lang] })]);
      }
    });

    it("grants Hajj leave once in the employee's service (art. 114): a second request is refused while one holds, a rejected or cancelled one does not count", async () => {
      const person = async (fullName: string) => (await created(api.post('/api/v1/employees', { fullName, jobTitle: 'Engineer', joinDate: '2023-03-01' }))).id;
      const omar = await person('Omar Al-Ghamdi');
      const hajj = (employee: string, startDate = '2026-05-24', endDate = '2026-06-02') => ({ employeeId: employee, leaveType: 'hajj', startDate, endDate });
      // Three years of service: a first request, rejected, and a second, cancelled, leave him his Hajj leave.
      const rejected = await created(api.post('/api/v1/leave-requests', hajj(omar)));
      expect((await api.post(`/api/v1/leave-requests/${rejected.id}/reject`, { reason: 'Peak season' })).json().data.state).toBe('rejected');
      const cancelled = await created(api.post('/api/v1/leave-requests', hajj(omar)));
      expect((await api.post(`/api/v1/leave-requests/${cancelled.id}/cancel`)).json().data.state).toBe('cancelled');
      const taken = await created(api.post('/api/v1/leave-requests', hajj(omar)));
      expect(taken.days).toBe(10);
      expect((await api.post(`/api/v1/leave-requests/${taken.id}/approve`)).json().data.state).toBe('approved');
      // A second Hajj leave, another year, is refused: the host's uniqueness conflict, naming the approved one.
      const again = expectError(await api.post('/api/v1/leave-requests', hajj(omar, '2027-05-13', '2027-05-22')), 409, 'CONFLICT');
      expect(again.details).toEqual([{ reason: 'unique', field: 'leaveType', pointer: '/leaveType', value: 'hajj', other: taken.id, within: 'employeeId', parent: omar }]);
      expect(again.message).toContain(taken.id);
      const ar = expectError(await api.post('/api/v1/leave-requests', hajj(omar, '2027-05-13', '2027-05-22'), { 'accept-language': 'ar' }), 409, 'CONFLICT');
      expect(ar.message).toMatch(ARABIC);
      // Nor can other leave be turned into Hajj leave; other leave types repeat.
      const annual = await created(api.post('/api/v1/leave-requests', { ...hajj(omar, '2027-05-13', '2027-05-22'), leaveType: 'annual' }));
      expect((await created(api.post('/api/v1/leave-requests', { ...hajj(omar, '2027-08-01', '2027-08-05'), leaveType: 'annual' }))).days).toBe(5);
      const turned = expectError(await api.patch(`/api/v1/leave-requests/${annual.id}`, { leaveType: 'hajj' }), 409, 'CONFLICT');
      expect(turned.details[0]).toMatchObject({ reason: 'unique', field: 'leaveType', other: taken.id });
      // A colleague takes his own.
      expect((await created(api.post('/api/v1/leave-requests', hajj(await person('Yousef Al-Malki'))))).days).toBe(10);
      // A pending request holds too, until it is rejected.
      const salem = await person('Salem Al-Subaie');
      const pending = await created(api.post('/api/v1/leave-requests', hajj(salem)));
      expect(expectError(await api.post('/api/v1/leave-requests', hajj(salem)), 409, 'CONFLICT').details[0]).toMatchObject({ other: pending.id });
      await api.post(`/api/v1/leave-requests/${pending.id}/reject`, { reason: 'Overlaps the audit' });
      expect((await created(api.post('/api/v1/leave-requests', hajj(salem)))).state).toBe('to_approve');
    });

    it('refuses in the manifest a Hajj-once rule naming a leave type it does not have, at its pointer', () => {
      const manifest = structuredClone(firstPartySources().find((s) => s.manifest.id === 'time-off')!.manifest);
      const leaveType = manifest.documentTypes![0].fields.find((f) => f.name === 'leaveType')!;
      expect(leaveType.uniqueValues).toEqual(['hajj']);
      const i = manifest.documentTypes![0].fields.indexOf(leaveType);
      leaveType.uniqueValues = ['hajj', 'umrah'];
      expect(checkManifest(manifest).problems).toEqual([expect.objectContaining({ pointer: `/documentTypes/0/fields/${i}/uniqueValues/1`, rule: 'enum' })]);
      delete leaveType.uniqueWithin;
      leaveType.uniqueValues = ['hajj'];
      expect(checkManifest(manifest).problems.map((p) => [p.pointer, p.rule])).toEqual([
        [`/documentTypes/0/fields/${i}/uniqueExceptIn`, 'unique'],
        [`/documentTypes/0/fields/${i}/uniqueValues`, 'unique'],
      ]);
    });

    it('rejects with a reason, kept on the request, which is then locked', async () => {
      const req = await created(api.post('/api/v1/leave-requests', request()));
      const missing = expectError(await api.post(`/api/v1/leave-requests/${req.id}/reject`), 400, 'VALIDATION_ERROR');
      expect(missing.details[0]).toMatchObject({ pointer: '/reason', rule: 'required' });
      const rejected = await api.post(`/api/v1/leave-requests/${req.id}/reject`, { reason: 'Year-end closing' });
      expect(rejected.json().data).toMatchObject({ state: 'rejected', rejectionReason: 'Year-end closing' });
      const locked = expectError(await api.patch(`/api/v1/leave-requests/${req.id}`, { endDate: '2026-03-03' }, { 'accept-language': 'ar' }), 409, 'CONFLICT');
      expect(locked.message).toMatch(ARABIC);
    });
  });

  describe('crm', () => {
    it('a won opportunity is at 100 %; markLost needs a reason, kept as the lost reason', async () => {
      const won = await created(api.post('/api/v1/leads', { title: 'ERP for Acme', probability: 40, expectedRevenue: 120_000 }));
      await api.post(`/api/v1/leads/${won.id}/convert`);
      expect((await api.post(`/api/v1/leads/${won.id}/markWon`)).json().data).toMatchObject({ state: 'won', probability: 100 });

      const lost = await created(api.post('/api/v1/leads', { title: 'Payroll for Beta' }));
      const missing = expectError(await api.post(`/api/v1/leads/${lost.id}/markLost`), 400, 'VALIDATION_ERROR');
      expect(missing.details[0]).toMatchObject({ pointer: '/reason', rule: 'required' });
      expectError(await api.post(`/api/v1/leads/${lost.id}/markLost`, { reason: 'weather' }), 400, 'VALIDATION_ERROR');
      expect((await api.post(`/api/v1/leads/${lost.id}/markLost`, { reason: 'competitor' })).json().data).toMatchObject({ state: 'lost', lostReason: 'competitor' });
    });
  });

  describe('construction', () => {
    it('a contract overruns when its recorded costs pass its revised value: the event fires then, once, never for a typed status', async () => {
      const client = await createCustomer(api, 'Riyadh Developments');
      const contract = await created(api.post('/api/v1/construction-contracts', { contractNumber: 'C-2026-014', title: 'Villa shell and core', clientId: client.id, contractValue: 1_000_000, budget: 900_000 }));
      expect(contract).toMatchObject({ revisedValue: 1_000_000, actualCost: 0, costStatus: 'within_budget' });
      const typed = expectError(await api.patch(`/api/v1/construction-contracts/${contract.id}`, { costStatus: 'overrun' }), 400, 'VALIDATION_ERROR');
      expect(typed.details[0]).toMatchObject({ pointer: '/costStatus', rule: 'additionalProperties' });
      const cost = (amount: number, category: string) => created(api.post('/api/v1/construction-costs', { contractId: contract.id, date: '2026-03-01', category, amount }));
      const getContract = async () => (await api.get(`/api/v1/construction-contracts/${contract.id}`)).json().data;
      const overruns = () => count(host, "SELECT count(*) FROM outbox WHERE company_id = ? AND topic = 'construction.contract.overrun'", co.company.id);

      await cost(450_000.25, 'materials');
      await cost(300_000, 'labour');
      await cost(200_000, 'subcontract');
      // 950,000.25 spent: past the budget (at risk), within the value.
      expect(await getContract()).toMatchObject({ actualCost: 950_000.25, costStatus: 'at_risk' });
      // An approved variation of 100,000 raises the value to 1,100,000.
      await api.post(`/api/v1/construction-contracts/${contract.id}/start`);
      const vo = await created(api.post('/api/v1/variation-orders', { contractId: contract.id, variationNumber: 'VO-01', description: 'Basement waterproofing', value: 100_000 }));
      expect((await getContract()).revisedValue).toBe(1_000_000);
      await api.post(`/api/v1/variation-orders/${vo.id}/approve`);
      expect(await getContract()).toMatchObject({ approvedVariations: 100_000, revisedValue: 1_100_000 });
      expect(await overruns()).toBe(0);
      // 150,000 more: 1,100,000.25 > 1,100,000.00 by a quarter riyal.
      await cost(150_000, 'equipment');
      const events = await host.storage.db.all<{ data: string }>("SELECT data FROM outbox WHERE company_id = ? AND topic = 'construction.contract.overrun'", [co.company.id]);
      expect(events.map((e) => JSON.parse(e.data))).toEqual([expect.objectContaining({ id: contract.id, actualCost: 1_100_000.25, revisedValue: 1_100_000, costStatus: 'overrun', previous: { costStatus: 'at_risk' } })]);
      await cost(10, 'overheads');
      expect(await overruns()).toBe(1);
      // A closed contract takes no more costs.
      await api.post(`/api/v1/construction-contracts/${contract.id}/handOver`);
      await api.post(`/api/v1/construction-contracts/${contract.id}/close`);
      const e = expectError(await api.post('/api/v1/construction-costs', { contractId: contract.id, date: '2026-09-01', category: 'labour', amount: 1 }), 409, 'CONFLICT');
      expect(e.details[0]).toMatchObject({ reason: 'parentLocked', resource: 'construction-contracts', id: contract.id, state: 'closed' });
      expect((await getContract()).actualCost).toBe(1_100_010.25);
    });
  });

  it("refuses at install a rule that reads a field another app's document does not have (unknown when the manifest alone is validated)", async () => {
    const sources = firstPartySources().filter((s) => s.manifest.id === 'employees' || s.manifest.id === 'payroll');
    const payroll = sources.find((s) => s.manifest.id === 'payroll')!;
    const manifest = structuredClone(payroll.manifest);
    const slip = manifest.documentTypes!.find((d) => d.name === 'payslip')!;
    slip.validations![1].rule = 'ref.employeeId.salaryGrade > 3';
    const i = manifest.documentTypes!.indexOf(slip);
    expect(checkManifest(manifest).problems).toEqual([]);
    const h = await buildHost({ sources: sources.filter((s) => s.manifest.id === 'employees'), config: { rateLimitPerMinute: 0 } });
    try {
      await expect(h.runtime.load({ ...payroll, manifest })).rejects.toMatchObject({
        code: 'MANIFEST_INVALID',
        details: [expect.objectContaining({ pointer: `/documentTypes/${i}/validations/1/rule`, rule: 'expressionType' })],
      });
      expect(h.runtime.get('payroll')).toBeUndefined();
      // As written, it loads.
      await h.runtime.load(payroll);
      expect(h.runtime.get('payroll')).toBeDefined();
    } finally {
      await h.close();
    }
  });
});
