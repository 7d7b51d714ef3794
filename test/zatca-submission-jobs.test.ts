// Submission to ZATCA as a durable job of the invoicing app (issue 27, part 8), through the API,
// on SQLite and PostgreSQL with a driven clock, against the local stand-in of ZATCA's API
// (test/zatca-stand-in.ts). A company onboarded with ZATCA issues invoices and notes; each issue
// marks the document `zatcaStatus: pending` and enqueues its submission once; the job clears a
// standard document and reports a simplified one, writes ZATCA's answer on it (the cleared XML,
// which GET …/xml then answers; ZATCA's warnings and errors) and emits an event per outcome. A
// 5xx and a time-out walk the ladder, a 429's Retry-After is waited for, a refused CSID waits for
// a good one, a 303 reports a standard document; a rejection is final. A worker killed after
// the request went out and before the answer was written loses nothing, and ZATCA takes the
// document once (the resubmission is its duplicate). Before onboarding nothing is submitted;
// the company onboards through POST /company/zatca/onboard, against the stand-in too.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Host } from '../core/host.ts';
import type { ManualClock } from '../core/kernel/clock.ts';
import { saveZatcaAccount, storedZatcaAccount } from '../apps-installed/invoicing/zatca-account.ts';
import { SYSTEM_ACTOR } from '../core/kernel/actor.ts';
import { databases, type Location } from './db.ts';
import { OFFICE_SUPPLIES, zatcaCompany, type ZatcaCompany } from './zatca-company.ts';
import { createCompany, expectError, type Client, type TestCompany } from './helpers.ts';
import { spawnChild } from './jobs-app.ts';
import { pageQr } from './pdf-pages.ts';
import { clearedOf, clearedQr, REJECTION, WARNING, type StandIn } from './zatca-stand-in.ts';

// Attempts wait 2 s, then 60 s; one may take 3 s.
const JOBS = { ladder: [2, 60], jitter: 0.1, timeoutMs: 3000, leaseMs: 10_000, concurrency: 4, pollMs: 1000 };


const zatcaMessage = (type: 'error' | 'warning') => (m: { code: string; category: string; message: string }) => ({ type, code: m.code, category: m.category, message: m.message });

describe.each(databases())('submitting invoices and notes to ZATCA ($name)', (db) => {
  let k: ZatcaCompany;
  let root: string;
  let loc: Location;
  let host: Host;
  let co: TestCompany;
  let api: Client;
  let zatca: StandIn;
  let clock: ManualClock;
  let business: string;
  let walkIn: string;
  const onboard = (c: Client) => k.onboard(c);

  beforeAll(async () => {
    k = await zatcaCompany(db, 'zatca-jobs-', JOBS);
    ({ root, loc, host, co, api, zatca, clock } = k);
    business = (await api.post('/api/v1/customers', { name: 'Al Noor Trading', legalNameAr: 'شركة النور للتجارة', vatNumber: '300000000000003' })).json().data.id;
    walkIn = (await api.post('/api/v1/customers', { name: 'Walk-in customer' })).json().data.id;
  });

  afterAll(() => k?.close());

  /** Drafts and sends an invoice for the VAT-registered customer (standard) or the walk-in one (simplified). */
  async function issue(kind: 'standard' | 'simplified', c: Client = api, customerId = kind === 'standard' ? business : walkIn) {
    const draft = await c.post('/api/v1/invoices', { customerId, date: '2026-11-28', dueDate: '2026-12-28', lines: [{ description: 'A4 paper, 5 reams', quantity: 4, unitPrice: 112.5 }] });
    expect(draft.statusCode, draft.body).toBe(201);
    const sent = await c.post(`/api/v1/invoices/${draft.json().data.id}/send`, {});
    expect(sent.statusCode, sent.body).toBe(200);
    expect(sent.json().data).toMatchObject({ state: 'sent', kind, total: 517.5 });
    return sent.json().data as { id: string; uuid: string; hash: string; number: number; zatcaStatus?: string };
  }
  const get = async (resource: string, id: string) => (await api.get(`/api/v1/${resource}/${id}`)).json().data;
  const xmlOf = async (resource: string, id: string) => {
    const res = await api.get(`/api/v1/${resource}/${id}/xml`);
    expect(res.statusCode, res.body).toBe(200);
    return res.body;
  };
  const jobsOf = async (id: string) => (await host.runtime.jobs.list(co.company.id, 'invoicing')).filter((j) => (j.payload as { id: string }).id === id);
  const jobOf = async (id: string) => {
    const jobs = await jobsOf(id);
    expect(jobs).toHaveLength(1);
    return (await host.runtime.jobs.get(co.company.id, jobs[0].id))!;
  };
  /** The events of a topic about a document, as emitted. */
  const events = async (topic: string, id: string) =>
    (await host.storage.db.all<{ data: string }>('SELECT data FROM outbox WHERE topic = ? AND company_id = ? ORDER BY seq', [topic, co.company.id]))
      .map((r) => JSON.parse(r.data))
      .filter((d) => d.id === id);
  const submitted = (uuid: string) => zatca.submissionsOf(uuid).map((r) => [r.mode, r.status]);

  it('submits nothing before the company is onboarded: no job, no zatcaStatus', async () => {
    const other = await createCompany(host, { name: 'Not yet onboarded' });
    expect((await other.as().patch('/api/v1/company', OFFICE_SUPPLIES)).statusCode).toBe(200);
    const customer = (await other.as().post('/api/v1/customers', { name: 'Walk-in' })).json().data.id;
    const inv = await issue('simplified', other.as(), customer);
    expect(inv.hash).toEqual(expect.any(String));
    expect(inv.zatcaStatus).toBeUndefined();
    expect(await host.runtime.jobs.list(other.company.id, 'invoicing')).toEqual([]);
  });

  it('reports a simplified invoice: pending at issue, one job keyed by the invoice, then reported with its event; ZATCA got the issued XML once', async () => {
    const inv = await issue('simplified');
    expect(inv.zatcaStatus).toBe('pending');
    expect((await jobOf(inv.id)).key).toBe(`zatca:${inv.id}`);
    const issuedXml = await xmlOf('invoices', inv.id);

    expect(await host.jobRunner.runDue()).toBe(1);
    const done = await get('invoices', inv.id);
    expect(done).toMatchObject({ zatcaStatus: 'reported', state: 'sent' });
    expect(done.zatcaMessages).toBeUndefined();
    expect(done.clearedXml).toBeUndefined();
    expect(submitted(inv.uuid)).toEqual([['reporting', 200]]);
    const [sent] = zatca.submissionsOf(inv.uuid);
    expect(sent.body.invoiceHash).toBe(inv.hash);
    expect(sent.xml).toBe(issuedXml);
    expect(sent.headers['accept-language']).toBe('en');
    expect(await events('invoice.zatca.reported', inv.id)).toEqual([
      { documentType: 'invoice', id: inv.id, number: `INV-${String(inv.number).padStart(6, '0')}`, uuid: inv.uuid, kind: 'simplified', mode: 'reporting', zatcaStatus: 'reported', messages: [] },
    ]);
    expect(await jobOf(inv.id)).toMatchObject({ state: 'done', attempts: 1 });
    // A simplified invoice is given as issued.
    expect(await xmlOf('invoices', inv.id)).toBe(issuedXml);
  });

  it('clears a standard invoice: the cleared XML ZATCA returned is kept and is what GET …/xml answers from then on', async () => {
    const inv = await issue('standard');
    const issuedXml = await xmlOf('invoices', inv.id);
    expect(await host.jobRunner.runDue()).toBe(1);
    const done = await get('invoices', inv.id);
    expect(done.zatcaStatus).toBe('cleared');
    expect(done.clearedXml).toBe(clearedOf(issuedXml));
    expect(await xmlOf('invoices', inv.id)).toBe(clearedOf(issuedXml));
    // A file's text is answered by the document's own GET only: lists (and audit rows and events) leave it out.
    const listed = (await api.get('/api/v1/invoices?pageSize=100')).json().data.find((d: { id: string }) => d.id === inv.id);
    expect(listed).toMatchObject({ zatcaStatus: 'cleared' });
    expect(listed).not.toHaveProperty('clearedXml');
    // The PDF given to the buyer carries ZATCA's QR, not the one of issue.
    const pdf = await api.get(`/api/v1/invoices/${inv.id}/pdf`);
    expect(await pageQr(pdf.rawPayload)).toBe(clearedQr(done.qr as string));
    expect(zatca.submissionsOf(inv.uuid).map((r) => [r.mode, r.headers['clearance-status'], r.status])).toEqual([['clearance', '1', 200]]);
    expect(await events('invoice.zatca.cleared', inv.id)).toMatchObject([{ documentType: 'invoice', kind: 'standard', mode: 'clearance', zatcaStatus: 'cleared', messages: [] }]);
  });

  it('keeps ZATCA’s warnings on a document accepted with warnings, and in its event', async () => {
    zatca.next('warn');
    const inv = await issue('simplified');
    await host.jobRunner.runDue();
    const warning = zatcaMessage('warning')(WARNING);
    expect(await get('invoices', inv.id)).toMatchObject({ zatcaStatus: 'reported', zatcaMessages: [warning] });
    expect(await events('invoice.zatca.reported', inv.id)).toMatchObject([{ messages: [warning] }]);
  });

  it('records a rejection with ZATCA’s errors and its event, and does not submit it again', async () => {
    zatca.next('reject');
    const inv = await issue('standard');
    const issuedXml = await xmlOf('invoices', inv.id);
    expect(await host.jobRunner.runDue()).toBe(1);
    const rejected = await get('invoices', inv.id);
    expect(rejected).toMatchObject({ zatcaStatus: 'rejected', zatcaMessages: REJECTION.map(zatcaMessage('error')) });
    expect(rejected.clearedXml).toBeUndefined();
    expect(await events('invoice.zatca.rejected', inv.id)).toMatchObject([{ zatcaStatus: 'rejected', mode: 'clearance', messages: REJECTION.map(zatcaMessage('error')) }]);
    expect(await jobOf(inv.id)).toMatchObject({ state: 'done', attempts: 1 });
    clock.advance(86_400_000);
    expect(await host.jobRunner.runDue()).toBe(0);
    expect(zatca.submissionsOf(inv.uuid)).toHaveLength(1);
    expect(await xmlOf('invoices', inv.id)).toBe(issuedXml);
  });

  it('leaves ZATCA’s fields to ZATCA: a client cannot write them', async () => {
    const inv = await issue('simplified');
    await host.jobRunner.runDue();
    const err = expectError(await api.patch(`/api/v1/invoices/${inv.id}`, { zatcaStatus: 'cleared', clearedXml: '<Invoice/>' }), 400, 'VALIDATION_ERROR');
    expect(err.details.map((d) => d.pointer).sort()).toEqual(['/clearedXml', '/zatcaStatus']);
    expect(await get('invoices', inv.id)).toMatchObject({ zatcaStatus: 'reported' });
  });

  it('retries a 5xx and a time-out along the ladder, then is reported: ZATCA accepted it once', async () => {
    zatca.next('error500', 'timeout');
    const inv = await issue('simplified');
    expect(await host.jobRunner.runDue()).toBe(1);
    expect(await get('invoices', inv.id)).toMatchObject({ zatcaStatus: 'pending' });
    let job = await jobOf(inv.id);
    expect(job).toMatchObject({ state: 'pending', attempts: 1, nextRunAt: new Date(clock.now() + 2000).toISOString() });
    expect(job.lastError).toMatch(/^ZATCA retry \(500\): ZATCA answered 500/);

    clock.advance(2000);
    expect(await host.jobRunner.runDue()).toBe(1);
    job = await jobOf(inv.id);
    expect(job).toMatchObject({ state: 'pending', attempts: 2, lastError: `the attempt took longer than ${JOBS.timeoutMs} ms` });

    clock.advance(60_000);
    expect(await host.jobRunner.runDue()).toBe(1);
    expect(await get('invoices', inv.id)).toMatchObject({ zatcaStatus: 'reported' });
    job = await jobOf(inv.id);
    expect(job.attemptLog.map((a) => a.outcome)).toEqual(['error', 'timeout', 'done']);
    expect(zatca.submissionsOf(inv.uuid).map((r) => r.status)).toEqual([500, null, 200]);
    expect(await events('invoice.zatca.reported', inv.id)).toHaveLength(1);
  });

  it('waits as long as a 429’s Retry-After asks (7 s), though the ladder’s step is 2 s', async () => {
    zatca.next('busy429');
    const inv = await issue('standard');
    expect(await host.jobRunner.runDue()).toBe(1);
    const job = await jobOf(inv.id);
    expect(job).toMatchObject({ state: 'pending', attempts: 1, nextRunAt: new Date(clock.now() + 7000).toISOString() });
    expect(job.lastError).toMatch(/^RetryLater: ZATCA retry \(429\)/);
    clock.advance(6999);
    expect(await host.jobRunner.runDue()).toBe(0);
    clock.advance(1);
    expect(await host.jobRunner.runDue()).toBe(1);
    expect(await get('invoices', inv.id)).toMatchObject({ zatcaStatus: 'cleared' });
    expect(zatca.submissionsOf(inv.uuid).map((r) => r.status)).toEqual([429, 200]);
  });

  it('reports a standard invoice when ZATCA has clearance switched off (303), as ZATCA says', async () => {
    zatca.next('clearanceOff');
    const inv = await issue('standard');
    expect(await host.jobRunner.runDue()).toBe(1);
    const done = await get('invoices', inv.id);
    expect(done.zatcaStatus).toBe('reported');
    expect(done.clearedXml).toBeUndefined();
    expect(submitted(inv.uuid)).toEqual([['clearance', 303], ['reporting', 200]]);
    expect(await events('invoice.zatca.reported', inv.id)).toMatchObject([{ kind: 'standard', mode: 'reporting' }]);
  });

  it('keeps trying while ZATCA refuses the CSID (401), and goes through once the company is onboarded anew', async () => {
    // ZATCA no longer takes the CSID kept (as when it was revoked).
    const ctx = host.runtime.contextFor('invoicing', { company: co.company, actor: SYSTEM_ACTOR, lang: 'en', requestId: null });
    const kept = (await storedZatcaAccount(ctx))!;
    await saveZatcaAccount(ctx, { ...kept, credentials: { ...kept.credentials, secret: 'a revoked secret' } });
    const inv = await issue('simplified');
    expect(await host.jobRunner.runDue()).toBe(1);
    expect(await get('invoices', inv.id)).toMatchObject({ zatcaStatus: 'pending' });
    expect((await jobOf(inv.id)).lastError).toMatch(/^ZATCA unauthorized \(401\)/);
    await onboard(api);
    clock.advance(2000);
    expect(await host.jobRunner.runDue()).toBe(1);
    expect(await get('invoices', inv.id)).toMatchObject({ zatcaStatus: 'reported' });
    expect(zatca.submissionsOf(inv.uuid).map((r) => r.status)).toEqual([401, 200]);
  });

  it('submits credit and debit notes too: a standard debit note cleared, a simplified credit note reported', async () => {
    const standard = await issue('standard');
    const simplified = await issue('simplified');
    await host.jobRunner.runDue();
    const debit = await api.post('/api/v1/debit-notes', { invoiceId: standard.id, reason: 'Delivery charge left out', lines: [{ description: 'Delivery', quantity: 1, unitPrice: 40 }] });
    expect(debit.statusCode, debit.body).toBe(201);
    const credit = await api.post('/api/v1/credit-notes', { invoiceId: simplified.id, reason: 'One ream returned', lines: [{ description: 'A4 paper, 5 reams', quantity: 1, unitPrice: 112.5 }] });
    expect(credit.statusCode, credit.body).toBe(201);
    const d = debit.json().data;
    const c = credit.json().data;
    expect([d.zatcaStatus, c.zatcaStatus]).toEqual(['pending', 'pending']);
    const debitXml = await xmlOf('debit-notes', d.id);

    expect(await host.jobRunner.runDue()).toBe(2);
    expect(await get('debit-notes', d.id)).toMatchObject({ zatcaStatus: 'cleared', clearedXml: clearedOf(debitXml), total: 46 });
    expect(await xmlOf('debit-notes', d.id)).toBe(clearedOf(debitXml));
    expect(await get('credit-notes', c.id)).toMatchObject({ zatcaStatus: 'reported', total: 129.38 });
    expect(submitted(d.uuid)).toEqual([['clearance', 200]]);
    expect(submitted(c.uuid)).toEqual([['reporting', 200]]);
    expect(await events('invoice.zatca.cleared', d.id)).toMatchObject([{ documentType: 'debitNote', number: `DBN-${String(d.number).padStart(6, '0')}` }]);
    expect(await events('invoice.zatca.reported', c.id)).toMatchObject([{ documentType: 'creditNote', number: `CRN-${String(c.number).padStart(6, '0')}` }]);
    // The notes stay as issued: a client cannot change or delete them.
    expectError(await api.patch(`/api/v1/credit-notes/${c.id}`, { reason: 'x' }), 409, 'CONFLICT');
    expectError(await api.delete(`/api/v1/debit-notes/${d.id}`), 409, 'CONFLICT');
    // The invoices' settlement is untouched by the notes' ZATCA answers.
    expect(await get('invoices', standard.id)).toMatchObject({ debitedTotal: 46, balanceDue: 563.5, zatcaStatus: 'cleared' });
    expect(await get('invoices', simplified.id)).toMatchObject({ creditedTotal: 129.38, balanceDue: 388.12, zatcaStatus: 'reported' });
  });

  it('a worker killed after sending and before writing the answer loses nothing; ZATCA takes the invoice once (the resubmission is its duplicate)', async () => {
    // The child runs on the system clock: the job must be due by it.
    clock.set(Date.now() - 1000);
    const inv = await issue('standard');
    const issuedXml = await xmlOf('invoices', inv.id);
    // ZATCA clears it, and the answer never reaches the worker before it dies.
    zatca.next('hold');
    const before = zatca.received.length;
    const child = await spawnChild('test/jobs-child.ts', [loc.url ?? loc.file, path.join(root, 'child'), JSON.stringify(JOBS), 'invoicing']);
    try {
      await Promise.race([zatca.waitForRequests(before + 1, 20_000), child.waitFor(/^ran /, 20_000).then((l) => Promise.reject(new Error(`the child ended first: ${l}`)))]);
    } finally {
      await child.kill();
    }
    expect(zatca.submissionsOf(inv.uuid)).toHaveLength(1);
    expect(await get('invoices', inv.id)).toMatchObject({ zatcaStatus: 'pending' });

    // While the dead worker's lease holds, nobody submits it again.
    clock.set(Date.now());
    expect(await host.jobRunner.runDue()).toBe(0);
    clock.set(Date.now() + JOBS.leaseMs + 1000);
    expect(await host.jobRunner.runDue()).toBe(1);
    // What ZATCA said of the resubmission is kept: it had the invoice already.
    expect(await get('invoices', inv.id)).toMatchObject({
      zatcaStatus: 'cleared', clearedXml: clearedOf(issuedXml), zatcaMessages: [{ type: 'warning', code: 'Invoice-Warning', category: 'Duplicate-Invoice', message: 'Invoice Hash Previously submitted.' }],
    });
    expect(submitted(inv.uuid)).toEqual([['clearance', null], ['clearance', 208]]);
    expect((await jobOf(inv.id)).attemptLog.map((a) => [a.attempt, a.outcome])).toEqual([[1, 'lease_expired'], [2, 'done']]);
    expect(await events('invoice.zatca.cleared', inv.id)).toHaveLength(1);
    clock.advance(86_400_000);
    expect(await host.jobRunner.runDue()).toBe(0);
    expect(zatca.submissionsOf(inv.uuid)).toHaveLength(2);
  });
});
