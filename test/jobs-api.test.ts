// The apps' jobs as operators see them (core/http/routes/jobs.ts, cli/commands/jobs.ts), on
// SQLite and PostgreSQL with a driven clock: a job that used up its ladder is `failed`, listed
// with filters and pages, shown with every attempt, and retried (pending again now, a fresh set
// of attempts, the earlier ones kept in its log; audited); any other state is CONFLICT naming
// it; another company's job is NOT_FOUND; the permissions are an Admin's. The app is
// test/jobs-app.ts (a parcel's `failTimes` makes its first attempts fail).
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildHost, type Host } from '../core/host.ts';
import { ManualClock } from '../core/kernel/clock.ts';
import { REPO_ROOT } from '../core/apps/app-source.ts';
import { jobs as jobsCommands } from '../cli/commands/jobs.ts';
import { CLI_ACTOR, type CommandContext } from '../cli/commands/command.ts';
import { databases, type Location } from './db.ts';
import { ARABIC, createCompany, expectError, type TestCompany } from './helpers.ts';
import { parcelsSource } from './jobs-app.ts';

/** One retry after 10 s: two attempts. The jitter's random is 0.5: exact times. */
const JOBS = { ladder: [10], jitter: 0.1, timeoutMs: 5000, leaseMs: 10_000, concurrency: 4, pollMs: 1000 };
const START = Date.UTC(2026, 10, 28, 9);

describe.each(databases())('the jobs API and CLI ($name)', (db) => {
  let root: string;
  let loc: Location;
  let host: Host;
  let co: TestCompany;
  let other: TestCompany;
  const clock = new ManualClock(START);

  beforeAll(async () => {
    fs.mkdirSync(path.join(REPO_ROOT, '.tmp'), { recursive: true });
    root = fs.mkdtempSync(path.join(REPO_ROOT, '.tmp', 'jobs-api-'));
    loc = await db.location();
    host = await buildHost({
      ...(loc.url ? { databaseUrl: loc.url } : { dbFile: loc.file }),
      sources: [parcelsSource(root)], clock, config: { dataDir: path.join(root, 'data'), rateLimitPerMinute: 0 },
      jobs: { ...JOBS, random: () => 0.5 },
    });
    co = await createCompany(host, { name: 'Parcels Co', apps: ['parcels'] });
    other = await createCompany(host, { name: 'Other Co', apps: ['parcels'] });
  });

  afterAll(async () => {
    await host?.close();
    await loc?.drop();
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  /** Ships a parcel (its `notify` job is enqueued) and answers the job's id. */
  async function ship(c: TestCompany, fields: Record<string, unknown>): Promise<string> {
    const created = await c.as().post('/api/v1/parcels', { label: 'Box', ...fields });
    const id = created.json().data.id as string;
    expect((await c.as().post(`/api/v1/parcels/${id}/ship`, {})).statusCode).toBe(200);
    const listed = (await c.as('Admin').get('/api/v1/jobs?app=parcels&name=notify')).json().data as { id: string; key: string }[];
    return listed.find((j) => j.key === `notify:${id}`)!.id;
  }

  /** Runs what is due now, then after the ladder's step: a job failing every time is then `failed`. */
  async function useUpTheLadder(): Promise<void> {
    await host.jobRunner.runDue();
    clock.advance(10_000);
    await host.jobRunner.runDue();
  }

  const run = async (name: string, args: Record<string, string> = {}, opts: Record<string, string | boolean> = {}) => {
    const cmd = jobsCommands.commands.find((c) => c.name === name)!;
    const ctx: CommandContext = {
      services: async () => host, host: async () => host,
      args, opts: { company: co.company.id, json: true, ...opts }, lang: 'en', json: true, dataDir: '', actor: CLI_ACTOR,
    };
    return cmd.run(ctx);
  };

  it('lists a job that used up its ladder as failed, shows its attempts, retries it with a fresh set of attempts (the log kept), audited', async () => {
    const admin = co.as('Admin');
    const failing = await ship(co, { failTimes: 99 });
    const fine = await ship(co, {});
    await useUpTheLadder();

    const failed = await admin.get('/api/v1/jobs?state=failed');
    expect(failed.statusCode, failed.body).toBe(200);
    expect(failed.json()).toMatchObject({ total: 1, page: 1, pageSize: 20, data: [{ id: failing, appId: 'parcels', name: 'notify', state: 'failed', attempts: 2, nextRunAt: null }] });
    expect(failed.json().data[0].lastError).toBe('the carrier is unavailable (attempt 2)');
    expect((await admin.get('/api/v1/jobs?state=done')).json().data.map((j: { id: string }) => j.id)).toEqual([fine]);
    // Newest first, a page at a time; filters by app and name.
    const page1 = (await admin.get('/api/v1/jobs?pageSize=1')).json();
    expect(page1).toMatchObject({ total: 2, page: 1, pageSize: 1, data: [{ id: fine }] });
    expect((await admin.get('/api/v1/jobs?pageSize=1&page=2')).json().data.map((j: { id: string }) => j.id)).toEqual([failing]);
    expect((await admin.get('/api/v1/jobs?app=invoicing')).json()).toMatchObject({ total: 0, data: [] });
    expect((await admin.get('/api/v1/jobs?name=other')).json()).toMatchObject({ total: 0, data: [] });

    const shown = (await admin.get(`/api/v1/jobs/${failing}`)).json().data;
    expect(shown.attemptLog).toEqual([
      { attempt: 1, startedAt: new Date(START).toISOString(), endedAt: new Date(START).toISOString(), durationMs: 0, outcome: 'error', error: 'the carrier is unavailable (attempt 1)' },
      { attempt: 2, startedAt: new Date(START + 10_000).toISOString(), endedAt: new Date(START + 10_000).toISOString(), durationMs: 0, outcome: 'error', error: 'the carrier is unavailable (attempt 2)' },
    ]);

    const retried = await admin.post(`/api/v1/jobs/${failing}/retry`);
    expect(retried.statusCode, retried.body).toBe(202);
    expect(retried.json().data).toMatchObject({ id: failing, state: 'pending', attempts: 0, nextRunAt: new Date(START + 10_000).toISOString(), finishedAt: null });
    const audit = await host.storage.db.all<{ action: string; resource_id: string; app_id: string }>("SELECT action, resource_id, app_id FROM audit_log WHERE resource = 'jobs'");
    expect(audit).toEqual([{ action: 'retry', resource_id: failing, app_id: 'core' }]);
    // Its audit event is a topic of the catalogue, as every audited write's is.
    expect(host.catalogue.known().topics.has('audit.jobs.retry')).toBe(true);
    expect(Number((await host.storage.db.get<{ n: number }>("SELECT count(*) AS n FROM outbox WHERE topic = 'audit.jobs.retry' AND company_id = ?", [co.company.id]))!.n)).toBe(1);
    // Retried: it runs again as attempt 1 of a fresh set, and its log keeps the earlier two.
    expect(await host.jobRunner.runDue()).toBe(1);
    const again = (await admin.get(`/api/v1/jobs/${failing}`)).json().data;
    expect(again).toMatchObject({ state: 'pending', attempts: 1 });
    expect(again.attemptLog.map((a: { attempt: number; outcome: string }) => [a.attempt, a.outcome])).toEqual([[1, 'error'], [2, 'error'], [1, 'error']]);
    clock.advance(10_000);
    await host.jobRunner.runDue();
    expect((await admin.get(`/api/v1/jobs/${failing}`)).json().data).toMatchObject({ state: 'failed', attempts: 2 });
  });

  it('answers CONFLICT naming the state for a job that is not failed, in the caller’s language', async () => {
    const done = (await co.as('Admin').get('/api/v1/jobs?state=done')).json().data[0].id;
    const err = expectError(await co.as('Admin').post(`/api/v1/jobs/${done}/retry`), 409, 'CONFLICT');
    expect(err.details).toEqual([{ reason: 'job_not_failed', id: done, state: 'done' }]);
    expect(err.message).toContain('"done"');
    const ar = expectError(await co.as('Admin').post(`/api/v1/jobs/${done}/retry`, undefined, { 'accept-language': 'ar' }), 409, 'CONFLICT');
    expect(ar.message).toMatch(ARABIC);
    const pending = await ship(co, {});
    expect(expectError(await co.as('Admin').post(`/api/v1/jobs/${pending}/retry`), 409, 'CONFLICT').details).toEqual([{ reason: 'job_not_failed', id: pending, state: 'pending' }]);
    await host.jobRunner.runDue();
  });

  it('keeps companies apart, refuses unknown ids and filter values, and is for Admins', async () => {
    const theirs = await ship(other, { failTimes: 99 });
    await useUpTheLadder();
    expect((await other.as('Admin').get(`/api/v1/jobs/${theirs}`)).json().data.state).toBe('failed');
    // Another company's job is not found, as an unknown one is; it lists none of them.
    expectError(await co.as('Admin').get(`/api/v1/jobs/${theirs}`), 404, 'NOT_FOUND');
    expectError(await co.as('Admin').post(`/api/v1/jobs/${theirs}/retry`), 404, 'NOT_FOUND');
    expect((await co.as('Admin').get('/api/v1/jobs')).json().data.map((j: { id: string }) => j.id)).not.toContain(theirs);
    expectError(await co.as('Admin').get('/api/v1/jobs/job_nope'), 404, 'NOT_FOUND');
    expectError(await co.as('Admin').post('/api/v1/jobs/job_nope/retry'), 404, 'NOT_FOUND');
    const bad = expectError(await co.as('Admin').get('/api/v1/jobs?state=stuck&pageSize=0&colour=red'), 400, 'VALIDATION_ERROR');
    expect(bad.details.map((d) => d.pointer).sort()).toEqual(['/colour', '/pageSize', '/state']);
    const forbidden = expectError(await co.as('Manager').get('/api/v1/jobs'), 403, 'FORBIDDEN');
    expect(JSON.stringify(forbidden.details)).toContain('jobs:read');
    expect(JSON.stringify(expectError(await co.as('Manager').post(`/api/v1/jobs/${theirs}/retry`), 403, 'FORBIDDEN').details)).toContain('jobs:manage');
    expect((await other.as('Admin').post(`/api/v1/jobs/${theirs}/retry`)).statusCode).toBe(202);
  });

  it('diwan jobs list|show|retry --json: the same data as the API, refusals as errors', async () => {
    const failing = await ship(co, { failTimes: 99 });
    await useUpTheLadder();
    const listed = (await run('list', {}, { state: 'failed', app: 'parcels' })).data as { total: number; data: { id: string; state: string }[] };
    expect(listed.data.map((j) => j.id)).toContain(failing);
    expect(listed.data.every((j) => j.state === 'failed')).toBe(true);
    const api = (await co.as('Admin').get('/api/v1/jobs?state=failed&app=parcels&pageSize=50')).json();
    expect(listed).toEqual(api);
    const shown = (await run('show', { jobId: failing })).data as { attemptLog: { outcome: string }[] };
    expect(shown).toEqual((await co.as('Admin').get(`/api/v1/jobs/${failing}`)).json().data);
    expect(shown.attemptLog.map((a) => a.outcome)).toEqual(['error', 'error']);
    const text = (await run('show', { jobId: failing }, { json: false })).text!;
    expect(text).toContain('the carrier is unavailable (attempt 2)');
    expect((await run('retry', { jobId: failing })).data).toMatchObject({ id: failing, state: 'pending', attempts: 0 });
    await expect(run('retry', { jobId: failing })).rejects.toMatchObject({ code: 'CONFLICT', details: [{ reason: 'job_not_failed', state: 'pending' }] });
    await expect(run('show', { jobId: 'job_nope' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    const cli = await host.storage.db.get<{ actor_type: string }>("SELECT actor_type FROM audit_log WHERE resource = 'jobs' AND resource_id = ?", [failing]);
    expect(cli?.actor_type).toBe('cli');
    await host.jobRunner.runDue();
  });
});
