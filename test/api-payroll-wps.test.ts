// The payroll run's WPS salary file, through the API alone: Odoo's Saudi layout (see
// apps-installed/payroll/server.ts) with the establishment's header, one row per payslip with
// the numbers the payslips computed, then `-`; only for a run whose pay is final, every missing
// IBAN or ID named at once, another company's run out of reach. On SQLite and on PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Host } from '../core/host.ts';
import { firstPartySources } from '../core/apps/app-source.ts';
import { buildHost } from './db.ts';
import { ARABIC, createCompany, expectError, type Client } from './helpers.ts';

const APPS = ['employees', 'payroll'];
const SETTINGS = { molEstablishmentId: '7001234567', establishmentIban: 'SA0380000000608010167519', establishmentBankSarieId: 'RJHI', bankEstablishmentId: '000123456' };

describe('the WPS salary file of a payroll run', () => {
  let host: Host;
  let api: Client;
  let other: Client;

  beforeAll(async () => {
    host = await buildHost({ sources: firstPartySources().filter((s) => APPS.includes(s.manifest.id)), config: { rateLimitPerMinute: 0 } });
    api = (await createCompany(host, { currency: 'SAR', apps: APPS })).as();
    other = (await createCompany(host, { name: 'Other Co', currency: 'SAR', apps: APPS })).as();
    expect((await api.patch('/api/v1/apps/payroll/settings', SETTINGS)).statusCode).toBe(200);
  });
  afterAll(() => host.close());

  async function created(path: string, body: unknown, as: Client = api): Promise<Record<string, unknown> & { id: string }> {
    const r = await as.post(path, body);
    expect(r.statusCode, r.body).toBe(201);
    return r.json().data;
  }
  const employee = (fullName: string, more: Record<string, unknown> = {}) =>
    created('/api/v1/employees', { fullName, jobTitle: 'Engineer', joinDate: '2020-01-01', gosiEmployeeRate: 9.75, ...more });
  const run = (period: string, as: Client = api) => created('/api/v1/payroll-runs', { period, periodStart: `${period}-01`, periodEnd: `${period}-28`, payDate: `${period}-27` }, as);
  async function approve(id: string, as: Client = api): Promise<Record<string, unknown>> {
    expect((await as.post(`/api/v1/payroll-runs/${id}/calculate`)).statusCode).toBe(200);
    const r = await as.post(`/api/v1/payroll-runs/${id}/approve`);
    expect(r.statusCode, r.body).toBe(200);
    return r.json().data;
  }

  it("lists every payslip's pay under the establishment's header: basic 10,000 + housing 2,500 − GOSI 1,218.75 = 11,281.25", async () => {
    const sara = await employee('Sara Al-Harbi', { identityNumber: '1012345678', iban: 'SA0380000000608010167519', bankSarieId: 'RJHI' });
    const omar = await employee('Omar Khan', { identityNumber: '2456789012', iban: 'SA4420000001234567891234', bankSarieId: 'RIBL', gosiEmployeeRate: 0 });
    const r = await run('2026-03');
    await created('/api/v1/payslips', { runId: r.id, employeeId: sara.id, basicSalary: 10_000, housingAllowance: 2_500 });
    await created('/api/v1/payslips', { runId: r.id, employeeId: omar.id, basicSalary: 6_000, housingAllowance: 1_500, transportAllowance: 500, overtimePay: 250.5, otherDeductions: 100 });
    const approved = await approve(r.id);
    expect(approved.wpsFileRef).toBe('WPS2026030000001');

    const res = await api.get(`/api/v1/payroll-runs/${r.id}/wps-file`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/csv/);
    expect(res.headers['content-disposition']).toBe('attachment; filename="WPS-2026-03.csv"');
    const rows = res.body.split('\r\n').map((line) => line.split('\t'));
    expect(rows).toEqual([
      ['[DEST-ID]', '[ESTB-ID]', '[BANK-ACC]', '[32A-CCY]', '[32A-VAL]', '[32A-AMT]', '[D-DATE]', '[FILE-REF]', '[FILE-REJCDE]', '[MOL-ESTBID]'],
      // 11,281.25 + 8,150.50 (6,000 + 1,500 + 500 + 250.50 − 100)
      ['RJHI', '000123456', 'SA0380000000608010167519', 'SAR', '20260327', '19431.75', '', 'WPS2026030000001', '', '7001234567'],
      ['[32B-AMT]', '[59-ACC]', '[59-NAME]', '[57-BANK]', '[70-DET]', '[RET-CODE]', '[MOL-BAS]', '[MOL-HAL]', '[MOL-OEA]', '[MOL-DED]', '[MOL-ID]', '[TRN-REF]', '[TRN-STATUS]', '[TRN-DATE]'],
      // Sara banks with the establishment's bank: no bank named.
      ['11281.25', 'SA0380000000608010167519', 'Sara Al-Harbi', '', '', '', '10000.00', '2500.00', '0.00', '1218.75', '1012345678', '', '', ''],
      ['8150.50', 'SA4420000001234567891234', 'Omar Khan', 'RIBL', '', '', '6000.00', '1500.00', '750.50', '100.00', '2456789012', '', '', ''],
      ['-'],
      [''],
    ]);

    // Paid, the file is the same; reopened and approved again, the run keeps its reference.
    expect((await api.post(`/api/v1/payroll-runs/${r.id}/markPaid`)).statusCode).toBe(200);
    expect((await api.get(`/api/v1/payroll-runs/${r.id}/wps-file`)).body).toBe(res.body);
  });

  it('keeps its reference when a run is reopened and approved again; a client cannot type one', async () => {
    const r = await run('2026-04');
    const first = await approve(r.id);
    expect((await api.post(`/api/v1/payroll-runs/${r.id}/reopen`)).statusCode).toBe(200);
    expect((await approve(r.id)).wpsFileRef).toBe(first.wpsFileRef);
    expect(first.wpsFileRef).toMatch(/^WPS202604\d{7}$/);
    const typed = expectError(await api.post('/api/v1/payroll-runs', { period: '2026-05', periodStart: '2026-05-01', periodEnd: '2026-05-31', payDate: '2026-05-27', wpsFileRef: 'X' }), 400, 'VALIDATION_ERROR');
    expect(typed.details[0]).toMatchObject({ pointer: '/wpsFileRef' });
  });

  it("refuses a run whose pay is not final, in the caller's language", async () => {
    const r = await run('2026-06');
    const en = expectError(await api.get(`/api/v1/payroll-runs/${r.id}/wps-file`), 409, 'CONFLICT');
    expect(en.details[0]).toMatchObject({ reason: 'not_final', state: 'draft' });
    expect(en.message).toContain('approved or paid');
    const ar = expectError(await api.get(`/api/v1/payroll-runs/${r.id}/wps-file`, { 'accept-language': 'ar' }), 409, 'CONFLICT');
    expect(ar.message).toMatch(ARABIC);
  });

  it('names every employee without an IBAN, an ID or a bank, each by id, and every empty setting', async () => {
    const noIban = await employee('Huda Al-Qahtani', { identityNumber: '1098765432', bankSarieId: 'RJHI' });
    const nothing = await employee('Ali Hassan');
    const r = await run('2026-07');
    await created('/api/v1/payslips', { runId: r.id, employeeId: noIban.id, basicSalary: 8_000 });
    await created('/api/v1/payslips', { runId: r.id, employeeId: nothing.id, basicSalary: 5_000 });
    await approve(r.id);
    const e = expectError(await api.get(`/api/v1/payroll-runs/${r.id}/wps-file`), 400, 'VALIDATION_ERROR');
    expect(e.details.map((d) => [d.id, d.pointer])).toEqual([
      [noIban.id, '/iban'],
      [nothing.id, '/identityNumber'],
      [nothing.id, '/iban'],
      [nothing.id, '/bankSarieId'],
    ]);
    expect(e.message).toContain('Huda Al-Qahtani');

    // Another company's establishment is not set up: its settings are named too.
    const otherEmployee = await created('/api/v1/employees', { fullName: 'Fahad', jobTitle: 'Driver', joinDate: '2020-01-01', identityNumber: '1011111111', iban: 'SA0380000000608010167519', bankSarieId: 'RJHI' }, other);
    const theirs = await run('2026-07', other);
    await created('/api/v1/payslips', { runId: theirs.id, employeeId: otherEmployee.id, basicSalary: 4_000 }, other);
    await approve(theirs.id, other);
    const unset = expectError(await other.get(`/api/v1/payroll-runs/${theirs.id}/wps-file`), 400, 'VALIDATION_ERROR');
    expect(unset.details.map((d) => d.pointer)).toEqual(['/establishmentBankSarieId', '/bankEstablishmentId', '/establishmentIban', '/molEstablishmentId']);

    // Tenant isolation: one company never reaches the other's run.
    expectError(await api.get(`/api/v1/payroll-runs/${theirs.id}/wps-file`), 404, 'NOT_FOUND');
    expectError(await other.get(`/api/v1/payroll-runs/${r.id}/wps-file`), 404, 'NOT_FOUND');
  });

  it("checks the employee's IBAN, ID and bank as Saudi ones", async () => {
    const e = expectError(await api.post('/api/v1/employees', { fullName: 'X', jobTitle: 'Y', joinDate: '2020-01-01', identityNumber: '3012345678', iban: 'SA03800000006080101675XX', bankSarieId: 'rjhi' }), 400, 'VALIDATION_ERROR');
    expect(e.details.map((d) => d.pointer).sort()).toEqual(['/bankSarieId', '/iban', '/identityNumber']);
  });
});
