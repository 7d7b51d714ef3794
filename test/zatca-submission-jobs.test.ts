// Submission to ZATCA as a durable job (issue 27, part 8), on SQLite and PostgreSQL with a driven
// clock, against the local stand-in of ZATCA's API: issuing an invoice enqueues its submission;
// the job clears a standard invoice and reports a simplified one, writes `zatcaStatus` and
// ZATCA's messages on the invoice and emits an event per outcome; a 5xx and a time-out are
// retried along the ladder, a rejection is not; a worker killed after the request went out and
// before the answer was written loses nothing, and ZATCA sees the invoice once more at most (its
// duplicate answer counts as reported). The app is test/einvoice-app.ts.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildHost, type Host } from '../core/host.ts';
import { ManualClock } from '../core/kernel/clock.ts';
import { REPO_ROOT } from '../core/apps/app-source.ts';
import { databases, type Location } from './db.ts';
import { count, createCompany, type TestCompany } from './helpers.ts';
import { spawnChild } from './jobs-app.ts';
import { einvoiceSource } from './einvoice-app.ts';
import { REJECTION, startZatcaStandIn, WARNING, type StandIn } from './zatca-stand-in.ts';
import { CSID, issuedDocument } from './zatca-submission-kit.ts';

const JOBS = { ladder: [10, 60], jitter: 0.1, timeoutMs: 5000, leaseMs: 10_000, concurrency: 4, pollMs: 1000 };
const line = (m: { code: string; message: string }) => `${m.code}: ${m.message}`;

describe.each(databases())('submitting invoices to ZATCA as jobs ($name)', (db) => {
  let root: string;
  let loc: Location;
  let host: Host;
  let co: TestCompany;
  let zatca: StandIn;
  const clock = new ManualClock(Date.UTC(2026, 10, 28, 9, 30));

  beforeAll(async () => {
    // Inside the repository, so that the app's `diwan/sdk` import resolves in the child process too.
    fs.mkdirSync(path.join(REPO_ROOT, '.tmp'), { recursive: true });
    root = fs.mkdtempSync(path.join(REPO_ROOT, '.tmp', 'zatca-jobs-'));
    loc = await db.location();
    zatca = await startZatcaStandIn(CSID);
    host = await buildHost({
      ...(loc.url ? { databaseUrl: loc.url } : { dbFile: loc.file }),
      sources: [einvoiceSource(root)], clock, config: { dataDir: path.join(root, 'data'), rateLimitPerMinute: 0 },
      jobs: { ...JOBS, random: () => 0.5 },
    });
    co = await createCompany(host, { name: 'Riyadh Office Supplies Co', apps: ['einv'] });
    const settings = await co.as().patch('/api/v1/apps/einv/settings', { zatcaBaseUrl: zatca.url, csidToken: CSID.binarySecurityToken, csidSecret: CSID.secret, zatcaTimeoutMs: 1500 });
    expect(settings.statusCode).toBe(200);
  });

  afterAll(async () => {
    await host?.close();
    await zatca?.close();
    await loc?.drop();
    fs.rmSync(root, { recursive: true, force: true });
  });

  /** Creates and issues an invoice of `kind`; answers its id and uuid. */
  async function issue(kind: 'standard' | 'simplified'): Promise<{ id: string; uuid: string; xml: string }> {
    const doc = issuedDocument(kind);
    const created = await co.as().post('/api/v1/einvoices', { number: doc.number, kind, uuid: doc.uuid, invoiceHash: doc.invoiceHash, xml: doc.xml });
    expect(created.statusCode).toBe(201);
    const id = created.json().data.id as string;
    const issued = await co.as().post(`/api/v1/einvoices/${id}/issue`, {});
    expect(issued.json().data).toMatchObject({ state: 'issued', zatcaStatus: 'pending' });
    return { id, uuid: doc.uuid, xml: doc.xml };
  }
  const invoice = async (id: string) => (await co.as().get(`/api/v1/einvoices/${id}`)).json().data;
  const jobOf = async (id: string) => {
    const jobs = (await host.runtime.jobs.list(co.company.id, 'einv')).filter((j) => (j.payload as { invoiceId: string }).invoiceId === id);
    expect(jobs).toHaveLength(1);
    return (await host.runtime.jobs.get(co.company.id, jobs[0].id))!;
  };
  const events = async (topic: string, id: string) => Number(await count(host, 'SELECT count(*) AS n FROM outbox WHERE topic = ? AND data LIKE ?', topic, `%${id}%`));

  it('reports a simplified invoice: reported, its event emitted, ZATCA asked once', async () => {
    const inv = await issue('simplified');
    expect(await host.jobRunner.runDue()).toBe(1);
    expect(await invoice(inv.id)).toMatchObject({ zatcaStatus: 'reported' });
    expect((await invoice(inv.id)).zatcaMessages).toBeUndefined();
    expect(await events('einv.invoice.reported', inv.id)).toBe(1);
    expect(zatca.submissionsOf(inv.uuid).map((r) => [r.mode, r.status])).toEqual([['reporting', 200]]);
    expect((await jobOf(inv.id))).toMatchObject({ state: 'done', attempts: 1 });
  });

  it('clears a standard invoice: cleared, with the XML ZATCA cleared kept on it', async () => {
    const inv = await issue('standard');
    expect(await host.jobRunner.runDue()).toBe(1);
    const cleared = await invoice(inv.id);
    expect(cleared.zatcaStatus).toBe('cleared');
    expect(cleared.clearedXml).toBe(inv.xml);
    expect(await events('einv.invoice.cleared', inv.id)).toBe(1);
    expect(zatca.submissionsOf(inv.uuid).map((r) => [r.mode, r.headers['clearance-status'], r.status])).toEqual([['clearance', '1', 200]]);
  });

  it('keeps ZATCA’s warnings on an invoice accepted with warnings', async () => {
    zatca.next('warn');
    const inv = await issue('simplified');
    await host.jobRunner.runDue();
    expect(await invoice(inv.id)).toMatchObject({ zatcaStatus: 'reported', zatcaMessages: line(WARNING) });
    expect(await events('einv.invoice.reported', inv.id)).toBe(1);
  });

  it('records a rejection with ZATCA’s messages and does not retry it', async () => {
    zatca.next('reject');
    const inv = await issue('standard');
    expect(await host.jobRunner.runDue()).toBe(1);
    expect(await invoice(inv.id)).toMatchObject({ zatcaStatus: 'rejected', zatcaMessages: REJECTION.map(line).join('\n') });
    expect(await events('einv.invoice.rejected', inv.id)).toBe(1);
    expect(await jobOf(inv.id)).toMatchObject({ state: 'done', attempts: 1 });
    clock.advance(86_400_000);
    expect(await host.jobRunner.runDue()).toBe(0);
    expect(zatca.submissionsOf(inv.uuid)).toHaveLength(1);
    expect((await invoice(inv.id)).clearedXml).toBeUndefined();
  });

  it('retries a 5xx and a time-out along the ladder, then is reported', async () => {
    zatca.next('error500', 'timeout');
    const inv = await issue('simplified');
    expect(await host.jobRunner.runDue()).toBe(1);
    expect(await invoice(inv.id)).toMatchObject({ zatcaStatus: 'pending' });
    let job = await jobOf(inv.id);
    expect(job).toMatchObject({ state: 'pending', attempts: 1, nextRunAt: new Date(clock.now() + 10_000).toISOString() });
    expect(job.lastError).toMatch(/^ZATCA retry: ZATCA answered 500/);

    clock.advance(10_000);
    expect(await host.jobRunner.runDue()).toBe(1);
    job = await jobOf(inv.id);
    expect(job).toMatchObject({ state: 'pending', attempts: 2, lastError: 'ZATCA retry: no answer from ZATCA within 1500 ms' });

    clock.advance(60_000);
    expect(await host.jobRunner.runDue()).toBe(1);
    expect(await invoice(inv.id)).toMatchObject({ zatcaStatus: 'reported' });
    job = await jobOf(inv.id);
    expect(job.attemptLog.map((a) => a.outcome)).toEqual(['error', 'error', 'done']);
    expect(zatca.submissionsOf(inv.uuid).map((r) => r.status)).toEqual([500, null, 200]);
    expect(await events('einv.invoice.reported', inv.id)).toBe(1);
  });

  it('a worker killed after sending and before writing the answer loses nothing; ZATCA sees the invoice once more, a duplicate', async () => {
    // The child runs on the system clock: the job must be due by it.
    clock.set(Date.now() - 1000);
    const inv = await issue('simplified');
    // ZATCA reports it, and the answer never reaches the worker before it dies.
    zatca.next('hold');
    const before = zatca.received.length;
    const child = await spawnChild('test/jobs-child.ts', [loc.url ?? loc.file, path.join(root, 'child'), JSON.stringify(JOBS), path.join(root, 'einv-1.0.0')]);
    try {
      await Promise.race([zatca.waitForRequests(before + 1, 20_000), child.waitFor(/^ran /, 20_000).then((l) => Promise.reject(new Error(`the child ended first: ${l}`)))]);
    } finally {
      await child.kill();
    }
    expect(zatca.submissionsOf(inv.uuid)).toHaveLength(1);
    expect(await invoice(inv.id)).toMatchObject({ zatcaStatus: 'pending' });

    // While the dead worker's lease holds, nobody submits it again.
    clock.set(Date.now());
    expect(await host.jobRunner.runDue()).toBe(0);
    clock.set(Date.now() + JOBS.leaseMs + 1000);
    expect(await host.jobRunner.runDue()).toBe(1);
    expect(await invoice(inv.id)).toMatchObject({ zatcaStatus: 'reported' });
    expect(zatca.submissionsOf(inv.uuid).map((r) => r.status)).toEqual([null, 409]);
    expect((await jobOf(inv.id)).attemptLog.map((a) => [a.attempt, a.outcome])).toEqual([[1, 'lease_expired'], [2, 'done']]);
    expect(await events('einv.invoice.reported', inv.id)).toBe(1);
    clock.advance(86_400_000);
    expect(await host.jobRunner.runDue()).toBe(0);
    expect(zatca.submissionsOf(inv.uuid)).toHaveLength(2);
  });
});
