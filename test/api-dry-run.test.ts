// `?dryRun=true` on a document's create, update and transitions: the console's forms show computed
// fields and broken rules with it as a person types, and a guarded transition's button only when it
// would run. It answers what the write would store, by the same
// path (rules, hooks, locks), and leaves nothing behind: no row, no audit entry, no event, no
// spent Idempotency-Key. On SQLite, and again on PostgreSQL (vitest.config.ts's `onPostgres`).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Host } from '../core/host.ts';
import { firstPartySources } from '../core/apps/app-source.ts';
import { buildHost } from './db.ts';
import { createCompany, expectError, type Client, type TestCompany } from './helpers.ts';
import { tempDir } from './fixtures.ts';
import { rulesSource } from './rules-app.ts';

const APPS = ['employees', 'payroll'];

describe('a dry run computes and stores nothing', () => {
  let host: Host;
  let co: TestCompany;
  let api: Client;
  let runId: string;
  let employeeId: string;
  const payslip = (over: Record<string, unknown> = {}) => ({ runId, employeeId, basicSalary: 10_000, housingAllowance: 2_500, socialInsurance: 975, ...over });
  const counts = async () => ({
    payslips: (await api.get('/api/v1/payslips')).json().total as number,
    audit: (await api.get('/api/v1/audit-log?resource=payslips&pageSize=100')).json().data.length as number,
    events: (await api.get('/api/v1/events?limit=100')).json().data.length as number,
  });

  beforeAll(async () => {
    host = await buildHost({ sources: firstPartySources().filter((s) => APPS.includes(s.manifest.id)), config: { rateLimitPerMinute: 0 } });
    co = await createCompany(host, { currency: 'SAR', apps: APPS });
    api = co.as();
    employeeId = (await api.post('/api/v1/employees', { fullName: 'Sara Al-Harbi', jobTitle: 'Accountant', joinDate: '2019-01-01' })).json().data.id;
    runId = (await api.post('/api/v1/payroll-runs', { period: '2026-01', periodStart: '2026-01-01', periodEnd: '2026-01-31', payDate: '2026-01-27' })).json().data.id;
  });
  afterAll(() => host.close());

  it('answers the computed net pay (10,000 + 2,500 − 975 = 11,525) with 200, and writes no row, audit entry or event', async () => {
    const before = await counts();
    const res = await api.post('/api/v1/payslips?dryRun=true', payslip());
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({ basicSalary: 10_000, netPay: 11_525, state: 'draft' });
    expect(await counts()).toEqual(before);
    // The id it showed names nothing.
    expectError(await api.get(`/api/v1/payslips/${res.json().data.id}`), 404, 'NOT_FOUND');
  });

  it('answers every broken rule as the create would, in the caller language', async () => {
    const body = payslip({ basicSalary: 1_000, housingAllowance: 0, otherDeductions: 500 });
    const en = expectError(await api.post('/api/v1/payslips?dryRun=true', body), 400, 'VALIDATION_ERROR');
    expect(en.details).toEqual([expect.objectContaining({ pointer: '/netPay', rule: 'validation' })]);
    const ar = expectError(await api.post('/api/v1/payslips?dryRun=true', body, { 'accept-language': 'ar' }), 400, 'VALIDATION_ERROR');
    expect(ar.details[0].message).not.toBe(en.details[0].message);
    // A computed field sent by the client is refused in a dry run as in a create.
    const typed = expectError(await api.post('/api/v1/payslips?dryRun=true', payslip({ netPay: 50 })), 400, 'VALIDATION_ERROR');
    expect(typed.details[0]).toMatchObject({ pointer: '/netPay', rule: 'additionalProperties' });
  });

  it('previews an update (net pay after overtime) and leaves the stored payslip as it was', async () => {
    const slip = (await api.post('/api/v1/payslips', payslip())).json().data;
    const before = await counts();
    const res = await api.patch(`/api/v1/payslips/${slip.id}?dryRun=true`, { overtimePay: 320.25 });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.netPay).toBe(11_845.25);
    expect((await api.get(`/api/v1/payslips/${slip.id}`)).json().data).toMatchObject({ netPay: 11_525, updatedAt: slip.updatedAt });
    expect(await counts()).toEqual(before);
    // A locked payslip refuses the preview of an edit as it refuses the edit.
    await api.post(`/api/v1/payslips/${slip.id}/confirm`);
    expect(expectError(await api.patch(`/api/v1/payslips/${slip.id}?dryRun=true`, { overtimePay: 1 }), 409, 'CONFLICT').details[0]).toMatchObject({ reason: 'locked' });
  });

  it('does not spend an Idempotency-Key: the real create with the same key stores the payslip', async () => {
    const headers = { 'idempotency-key': 'slip-dry-run-1' };
    expect((await api.post('/api/v1/payslips?dryRun=true', payslip(), headers)).statusCode).toBe(200);
    const real = await api.post('/api/v1/payslips', payslip(), headers);
    expect(real.statusCode, real.body).toBe(201);
    expect(real.headers['idempotent-replayed']).toBeUndefined();
    expect((await api.get(`/api/v1/payslips/${real.json().data.id}`)).statusCode).toBe(200);
  });

  it('refuses a dryRun that is not a boolean, and an unknown query parameter', async () => {
    const e = expectError(await api.post('/api/v1/payslips?dryRun=maybe', payslip()), 400, 'VALIDATION_ERROR');
    expect(e.details[0]).toMatchObject({ in: 'query', pointer: '/dryRun' });
    expectError(await api.post('/api/v1/payslips?dry=true', payslip()), 400, 'VALIDATION_ERROR');
  });
});

describe('a transition dry run tells whether it would run now', () => {
  let host: Host;
  let co: TestCompany;

  beforeAll(async () => {
    host = await buildHost({ sources: [rulesSource(tempDir())], config: { rateLimitPerMinute: 0 } });
    co = await createCompany(host, { apps: ['rules-lab'] });
  });
  afterAll(() => host.close());

  const order = async (unitPrice: number) => {
    const r = await co.as().post('/api/v1/orders', { customer: 'Al-Noor Trading', lines: [{ quantity: 2, unitPrice }] });
    expect(r.statusCode, r.body).toBe(201);
    return r.json().data as { id: string; updatedAt: string };
  };

  it('answers 200 with the sent order when its guard holds, and 409 naming the guard when it does not; nothing changes either way', async () => {
    const paid = await order(500);
    const ok = await co.as().post(`/api/v1/orders/${paid.id}/send?dryRun=true`, {});
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json().data).toMatchObject({ state: 'sent', total: 1_000 });
    expect((await co.as().get(`/api/v1/orders/${paid.id}`)).json().data).toMatchObject({ state: 'draft', updatedAt: paid.updatedAt });

    const free = await order(0);
    const e = expectError(await co.as().post(`/api/v1/orders/${free.id}/send?dryRun=true`, {}), 409, 'CONFLICT');
    expect(e.details[0]).toMatchObject({ reason: 'guard', transition: 'send' });
    // Input it needs and was not given is a 400, as the transition would answer: the console then asks for it.
    expectError(await co.as().post(`/api/v1/orders/${paid.id}/lose?dryRun=true`, {}), 400, 'VALIDATION_ERROR');
  });

  it('describes a guarded transition as such, and one limited to managers as not allowed to a member', async () => {
    const types = async (role: 'Member' | 'Manager') => ((await co.as(role).get('/api/v1/document-types')).json().data as { resource: string; transitions: { name: string; allowed: boolean; guarded?: boolean }[] }[]).find((d) => d.resource === 'orders')!.transitions;
    const member = await types('Member');
    expect(member.find((x) => x.name === 'send')).toMatchObject({ guarded: true });
    expect(member.find((x) => x.name === 'lose')!.guarded).toBeUndefined();
    expect(member.find((x) => x.name === 'approve')!.allowed).toBe(false);
    expect((await types('Manager')).find((x) => x.name === 'approve')!.allowed).toBe(true);
  });
});
