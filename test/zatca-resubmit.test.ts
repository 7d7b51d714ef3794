// A submission to ZATCA that used up the host's ladder, and the way out (issue: jobs nobody could
// see or retry), through the API on SQLite and PostgreSQL with a driven clock, against the local
// stand-in of ZATCA's API (test/zatca-stand-in.ts). ZATCA answers 500 to every attempt of a
// short ladder: the invoice stays `zatcaStatus: pending`, its job is `failed` and listed with
// its attempts; POST /invoices/{id}/zatca/resubmit puts the job back and the invoice is cleared.
// Resubmitting is refused (CONFLICT, in the caller's language) while the submission is under
// way, once ZATCA accepted the document, and for a rejected one, which a credit note corrects.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Host } from '../core/host.ts';
import type { ManualClock } from '../core/kernel/clock.ts';
import { databases } from './db.ts';
import { ARABIC, createCompany, expectError, type Client, type TestCompany } from './helpers.ts';
import { clearedOf, type StandIn } from './zatca-stand-in.ts';
import { OFFICE_SUPPLIES, zatcaCompany, type ZatcaCompany } from './zatca-company.ts';

// Two attempts: now, then 2 s later.
const JOBS = { ladder: [2], jitter: 0.1, timeoutMs: 3000, leaseMs: 10_000, concurrency: 4, pollMs: 1000 };


describe.each(databases())('resubmitting to ZATCA after the submission failed ($name)', (db) => {
  let k: ZatcaCompany;
  let host: Host;
  let api: Client;
  let zatca: StandIn;
  let clock: ManualClock;
  let co: TestCompany;
  let business: string;

  beforeAll(async () => {
    k = await zatcaCompany(db, 'zatca-resubmit-', JOBS);
    ({ host, api, zatca, clock, co } = k);
    business = (await api.post('/api/v1/customers', { name: 'Al Noor Trading', legalNameAr: 'شركة النور للتجارة', vatNumber: '300000000000003' })).json().data.id;
  });

  afterAll(() => k?.close());

  async function issueStandard() {
    const draft = await api.post('/api/v1/invoices', { customerId: business, date: '2026-11-28', dueDate: '2026-12-28', lines: [{ description: 'A4 paper, 5 reams', quantity: 4, unitPrice: 112.5 }] });
    expect(draft.statusCode, draft.body).toBe(201);
    const sent = await api.post(`/api/v1/invoices/${draft.json().data.id}/send`, {});
    expect(sent.statusCode, sent.body).toBe(200);
    return sent.json().data as { id: string; uuid: string; zatcaStatus: string; total: number };
  }
  const get = async (resource: string, id: string) => (await api.get(`/api/v1/${resource}/${id}`)).json().data;
  const jobFor = async (id: string) => {
    const listed = (await api.get('/api/v1/jobs?app=invoicing&name=submitToZatca&pageSize=100')).json().data as { id: string; key: string }[];
    return (await api.get(`/api/v1/jobs/${listed.find((j) => j.key === `zatca:${id}`)!.id}`)).json().data;
  };

  it('ZATCA down for every attempt: the invoice stays pending, its job is failed with its attempts; resubmit, and it is cleared', async () => {
    zatca.next('error500', 'error500');
    const inv = await issueStandard();
    expect(inv).toMatchObject({ zatcaStatus: 'pending', total: 517.5 });
    const issuedXml = (await api.get(`/api/v1/invoices/${inv.id}/xml`)).body;
    expect(await host.jobRunner.runDue()).toBe(1);
    // The first attempt failed: the submission is under way, not to be resubmitted yet.
    const early = expectError(await api.post(`/api/v1/invoices/${inv.id}/zatca/resubmit`), 409, 'CONFLICT');
    expect(early.details).toEqual([{ reason: 'submission_under_way', id: inv.id, state: 'pending' }]);
    clock.advance(2000);
    expect(await host.jobRunner.runDue()).toBe(1);
    // Nothing more is tried, however long one waits.
    clock.advance(86_400_000);
    expect(await host.jobRunner.runDue()).toBe(0);
    expect(await get('invoices', inv.id)).toMatchObject({ zatcaStatus: 'pending' });
    const failed = await jobFor(inv.id);
    expect(failed).toMatchObject({ appId: 'invoicing', name: 'submitToZatca', state: 'failed', attempts: 2, payload: { kind: 'invoice', id: inv.id } });
    expect(failed.attemptLog.map((a: { attempt: number; outcome: string }) => [a.attempt, a.outcome])).toEqual([[1, 'error'], [2, 'error']]);
    expect(failed.attemptLog[1].error).toMatch(/^ZATCA retry \(500\)/);
    expect((await api.get('/api/v1/jobs?state=failed')).json().data.map((j: { id: string }) => j.id)).toContain(failed.id);

    const resubmitted = await api.post(`/api/v1/invoices/${inv.id}/zatca/resubmit`);
    expect(resubmitted.statusCode, resubmitted.body).toBe(202);
    expect(resubmitted.json().data).toEqual({ id: inv.id, zatcaStatus: 'pending', jobId: failed.id });
    expect(await host.jobRunner.runDue()).toBe(1);
    const cleared = await get('invoices', inv.id);
    expect(cleared.zatcaStatus).toBe('cleared');
    expect(cleared.clearedXml).toBe(clearedOf(issuedXml));
    expect(zatca.submissionsOf(inv.uuid).map((r) => r.status)).toEqual([500, 500, 200]);
    const done = await jobFor(inv.id);
    expect(done).toMatchObject({ state: 'done', attempts: 1 });
    expect(done.attemptLog.map((a: { attempt: number; outcome: string }) => [a.attempt, a.outcome])).toEqual([[1, 'error'], [2, 'error'], [1, 'done']]);
    const audit = await host.storage.db.all<{ app_id: string; resource_id: string }>("SELECT app_id, resource_id FROM audit_log WHERE resource = 'jobs' AND action = 'retry'");
    expect(audit).toContainEqual({ app_id: 'invoicing', resource_id: failed.id });

    // Cleared: nothing to send again.
    const accepted = expectError(await api.post(`/api/v1/invoices/${inv.id}/zatca/resubmit`), 409, 'CONFLICT');
    expect(accepted.details).toEqual([{ reason: 'already_accepted', id: inv.id, status: 'cleared' }]);
  });

  it('refuses a rejected document in both languages (a credit note corrects it), and notes the same way; an unknown id is not found', async () => {
    zatca.next('reject');
    const inv = await issueStandard();
    expect(await host.jobRunner.runDue()).toBe(1);
    expect(await get('invoices', inv.id)).toMatchObject({ zatcaStatus: 'rejected' });
    const en = expectError(await api.post(`/api/v1/invoices/${inv.id}/zatca/resubmit`), 409, 'CONFLICT');
    expect(en.details).toEqual([{ reason: 'rejected', id: inv.id }]);
    expect(en.message).toContain('credit note');
    const ar = expectError(await api.post(`/api/v1/invoices/${inv.id}/zatca/resubmit`, undefined, { 'accept-language': 'ar' }), 409, 'CONFLICT');
    expect(ar.message).toMatch(ARABIC);
    expect(ar.message).toContain('إشعارًا دائنًا');

    // A credit note whose submission failed is resubmitted the same way.
    zatca.next('error500', 'error500');
    const credit = await api.post('/api/v1/credit-notes', { invoiceId: inv.id, reason: 'Rejected by ZATCA', lines: [{ description: 'A4 paper, 5 reams', quantity: 4, unitPrice: 112.5 }] });
    expect(credit.statusCode, credit.body).toBe(201);
    const note = credit.json().data;
    await host.jobRunner.runDue();
    clock.advance(2000);
    await host.jobRunner.runDue();
    expect(await get('credit-notes', note.id)).toMatchObject({ zatcaStatus: 'pending' });
    expect((await api.post(`/api/v1/credit-notes/${note.id}/zatca/resubmit`)).statusCode).toBe(202);
    expect(await host.jobRunner.runDue()).toBe(1);
    expect(await get('credit-notes', note.id)).toMatchObject({ zatcaStatus: 'cleared' });

    expectError(await api.post('/api/v1/invoices/inv_nope/zatca/resubmit'), 404, 'NOT_FOUND');
    expectError(await api.post(`/api/v1/debit-notes/${inv.id}/zatca/resubmit`), 404, 'NOT_FOUND');
    // A Viewer cannot change invoices.
    expectError(await co.as('Viewer').post(`/api/v1/invoices/${inv.id}/zatca/resubmit`), 403, 'FORBIDDEN');
  });
  it('a failed job deleted after the retention is enqueued afresh; a document issued before onboarding is not submitted', async () => {
    zatca.next('error500', 'error500');
    const inv = await issueStandard();
    await host.jobRunner.runDue();
    clock.advance(2000);
    await host.jobRunner.runDue();
    const failed = await jobFor(inv.id);
    expect(failed.state).toBe('failed');
    // 31 days on, the host's retention deleted the failed job with its attempts.
    clock.advance(31 * 86_400_000);
    expect(await host.jobRunner.prune()).toBeGreaterThan(0);
    expectError(await api.get(`/api/v1/jobs/${failed.id}`), 404, 'NOT_FOUND');
    const again = await api.post(`/api/v1/invoices/${inv.id}/zatca/resubmit`);
    expect(again.statusCode, again.body).toBe(202);
    expect(again.json().data.jobId).not.toBe(failed.id);
    expect(await host.jobRunner.runDue()).toBe(1);
    expect(await get('invoices', inv.id)).toMatchObject({ zatcaStatus: 'cleared' });

    const early = await createCompany(host, { name: 'Not yet onboarded' });
    expect((await early.as().patch('/api/v1/company', OFFICE_SUPPLIES)).statusCode).toBe(200);
    const customer = (await early.as().post('/api/v1/customers', { name: 'Walk-in' })).json().data.id;
    const draft = (await early.as().post('/api/v1/invoices', { customerId: customer, date: '2026-11-28', dueDate: '2026-12-28', lines: [{ description: 'Pens', quantity: 1, unitPrice: 10 }] })).json().data;
    expect((await early.as().post(`/api/v1/invoices/${draft.id}/send`, {})).statusCode).toBe(200);
    const err = expectError(await early.as().post(`/api/v1/invoices/${draft.id}/zatca/resubmit`), 409, 'CONFLICT');
    expect(err.details).toEqual([{ reason: 'not_submitted', id: draft.id }]);
    // Another company's invoice is not found.
    expectError(await api.post(`/api/v1/invoices/${draft.id}/zatca/resubmit`), 404, 'NOT_FOUND');
  });
});
