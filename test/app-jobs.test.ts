// Apps' durable jobs (core/apps/jobs.ts), on SQLite and PostgreSQL with a driven clock: a job
// enqueued in a request's unit of work runs once, its writes and event committed with its
// success; a failing one is retried along the ladder (its failed attempts' writes undone) and
// gives up after the last step; a worker killed mid-attempt loses nothing: once its lease ends
// the job runs again, exactly once more; two hosts on one PostgreSQL database never run a job
// twice. The app is test/jobs-app.ts.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildHost, type Host } from '../core/host.ts';
import { ManualClock } from '../core/kernel/clock.ts';
import { JobRunner, jobsConfig, type JobsConfig } from '../core/apps/jobs.ts';
import { databases, type Location } from './db.ts';
import { pgHosts } from './pg-hosts.ts';
import { tempDir } from './fixtures.ts';
import { REPO_ROOT } from '../core/apps/app-source.ts';
import { count, createCompany, expectError, type TestCompany } from './helpers.ts';
import { parcelsSource, spawnChild } from './jobs-app.ts';

/** Two retries, 10 s then 60 s: three attempts. The jitter's random is 0.5: no offset, exact times. */
const JOBS = { ladder: [10, 60], jitter: 0.1, timeoutMs: 5000, leaseMs: 10_000, concurrency: 4, pollMs: 1000 };
const START = Date.UTC(2026, 5, 1, 9);

describe.each(databases())('apps’ durable jobs ($name)', (db) => {
  let root: string;
  let loc: Location;
  let host: Host;
  let co: TestCompany;
  const clock = new ManualClock(START);

  const open = () =>
    buildHost({
      ...(loc.url ? { databaseUrl: loc.url } : { dbFile: loc.file }),
      sources: [parcelsSource(root)], clock, config: { dataDir: path.join(root, 'data'), rateLimitPerMinute: 0 },
      jobs: { ...JOBS, random: () => 0.5 },
    });

  beforeAll(async () => {
    // Inside the repository, so that the app's `diwan/sdk` import resolves in the child process too.
    fs.mkdirSync(path.join(REPO_ROOT, '.tmp'), { recursive: true });
    root = fs.mkdtempSync(path.join(REPO_ROOT, '.tmp', 'jobs-'));
    loc = await db.location();
    host = await open();
    co = await createCompany(host, { name: 'Parcels Co', apps: ['parcels'] });
  });

  afterAll(async () => {
    await host?.close();
    await loc?.drop();
    fs.rmSync(root, { recursive: true, force: true });
  });

  async function ship(fields: Record<string, unknown> = {}): Promise<string> {
    const created = await co.as().post('/api/v1/parcels', { label: 'Box', ...fields });
    expect(created.statusCode).toBe(201);
    const id = created.json().data.id as string;
    expect((await co.as().post(`/api/v1/parcels/${id}/ship`, {})).statusCode).toBe(200);
    return id;
  }
  const parcel = async (id: string) => (await co.as().get(`/api/v1/parcels/${id}`)).json().data;
  const jobOf = async (id: string) => {
    const jobs = (await host.runtime.jobs.list(co.company.id, 'parcels')).filter((j) => (j.payload as { parcelId: string }).parcelId === id);
    expect(jobs).toHaveLength(1);
    return (await host.runtime.jobs.get(co.company.id, jobs[0].id))!;
  };
  const notices = (id: string) => count(host, "SELECT count(*) AS n FROM outbox WHERE topic = 'parcels.parcel.notified' AND data LIKE ?", `%${id}%`);

  it('runs a job a transition enqueued, once: its write and its event commit with its success', async () => {
    const id = await ship();
    expect(await jobOf(id)).toMatchObject({ name: 'notify', key: `notify:${id}`, state: 'pending', attempts: 0 });
    expect(await host.jobRunner.runDue()).toBe(1);
    expect(await parcel(id)).toMatchObject({ deliveries: 1, notice: 'sent on attempt 1' });
    const job = await jobOf(id);
    expect(job).toMatchObject({ state: 'done', attempts: 1, lastError: null, finishedAt: new Date(START).toISOString() });
    expect(job.attemptLog.map((a) => [a.attempt, a.outcome])).toEqual([[1, 'done']]);
    expect(Number(await notices(id))).toBe(1);
    // Nothing is due any more.
    clock.advance(3600_000);
    expect(await host.jobRunner.runDue()).toBe(0);
    expect((await parcel(id)).deliveries).toBe(1);
  });

  it('retries a failing job along the ladder, undoing each failed attempt’s writes, until it succeeds', async () => {
    const id = await ship({ failTimes: 2 });
    const t0 = clock.now();
    expect(await host.jobRunner.runDue()).toBe(1);
    let job = await jobOf(id);
    expect(job).toMatchObject({ state: 'pending', attempts: 1, lastError: 'the carrier is unavailable (attempt 1)', nextRunAt: new Date(t0 + 10_000).toISOString() });
    // The attempt counted a delivery, then threw: the count is undone with it.
    expect((await parcel(id)).deliveries).toBeUndefined();

    clock.advance(9_999);
    expect(await host.jobRunner.runDue()).toBe(0);
    clock.advance(1);
    expect(await host.jobRunner.runDue()).toBe(1);
    job = await jobOf(id);
    expect(job).toMatchObject({ state: 'pending', attempts: 2, nextRunAt: new Date(t0 + 10_000 + 60_000).toISOString() });

    clock.advance(60_000);
    expect(await host.jobRunner.runDue()).toBe(1);
    job = await jobOf(id);
    expect(job).toMatchObject({ state: 'done', attempts: 3, lastError: null });
    expect(job.attemptLog.map((a) => [a.attempt, a.outcome, a.error])).toEqual([
      [1, 'error', 'the carrier is unavailable (attempt 1)'],
      [2, 'error', 'the carrier is unavailable (attempt 2)'],
      [3, 'done', null],
    ]);
    expect(await parcel(id)).toMatchObject({ deliveries: 1, notice: 'sent on attempt 3' });
    expect(Number(await notices(id))).toBe(1);
  });

  it('gives up after the last step of the ladder: failed, with the last error, each attempt recorded', async () => {
    const id = await ship({ failTimes: 9 });
    expect(await host.jobRunner.runDue()).toBe(1);
    clock.advance(10_000);
    expect(await host.jobRunner.runDue()).toBe(1);
    clock.advance(60_000);
    expect(await host.jobRunner.runDue()).toBe(1);
    const job = await jobOf(id);
    expect(job).toMatchObject({ state: 'failed', attempts: 3, lastError: 'the carrier is unavailable (attempt 3)', nextRunAt: null, finishedAt: new Date(clock.now()).toISOString() });
    expect(job.attemptLog.map((a) => a.outcome)).toEqual(['error', 'error', 'error']);
    clock.advance(86_400_000);
    expect(await host.jobRunner.runDue()).toBe(0);
    expect((await parcel(id)).deliveries).toBeUndefined();
    expect(Number(await notices(id))).toBe(0);
  });

  /** Another worker on the same host's database, with its own settings and randomness. */
  const runner = (config: Partial<JobsConfig>, random: () => number) =>
    new JobRunner({ db: host.storage.db, repo: host.storage.jobs, jobs: host.runtime.jobs, host: host.runtime.jobHost(), clock, config: jobsConfig({ ...JOBS, ...config }), random });

  it('refuses a job the app does not declare, a payload too large and a bad key, as faults of the app', async () => {
    const ctx = host.runtime.contextFor('parcels', { company: co.company, actor: { type: 'system', id: 'test' }, lang: 'en', requestId: null });
    const refused = async (p: Promise<unknown>) => ((await p.then(() => null, (e: { details?: { rule: string }[] }) => e)) as { details: { rule: string }[] }).details[0].rule;
    expect(await refused(ctx.jobs.enqueue('nosuch', {}))).toBe('undeclared_job');
    expect(await refused(ctx.jobs.enqueue('notify', { blob: 'x'.repeat(70_000) }))).toBe('job_payload');
    expect(await refused(ctx.jobs.enqueue('notify', {}, { key: '' }))).toBe('job_key');
    expect(await refused(ctx.jobs.enqueue('notify', {}, { delayMs: -1 }))).toBe('job_delay');
  });

  it('moves each retry by its jitter, never past the bound (±10 % of the step, under half the gap to the next)', async () => {
    const late = await ship({ failTimes: 1 });
    const t0 = clock.now();
    expect(await runner({}, () => 0.999).runDue()).toBe(1);
    // 10 s + (2·0.999 − 1) · 1 s.
    expect((await jobOf(late)).nextRunAt).toBe(new Date(t0 + 10_998).toISOString());
    const early = await ship({ failTimes: 1 });
    expect(await runner({}, () => 0).runDue()).toBe(1);
    expect((await jobOf(early)).nextRunAt).toBe(new Date(t0 + 9000).toISOString());
    clock.advance(11_000);
    expect(await host.jobRunner.runDue()).toBe(2);
    expect([(await parcel(late)).deliveries, (await parcel(early)).deliveries]).toEqual([1, 1]);
  });

  it('fails an attempt that outlasts its time: rolled back, retried, and a late write of its handler refused', async () => {
    const id = await ship({ workMs: 400 });
    const quick = runner({ timeoutMs: 100, leaseMs: 1100 }, () => 0.5);
    expect(await quick.runDue()).toBe(1);
    let job = await jobOf(id);
    expect(job).toMatchObject({ state: 'pending', attempts: 1, lastError: 'the attempt took longer than 100 ms' });
    expect(job.attemptLog.map((a) => a.outcome)).toEqual(['timeout']);
    // The handler wakes after its time and tries to write: nothing lands.
    await new Promise((r) => setTimeout(r, 500));
    expect((await parcel(id)).deliveries).toBeUndefined();
    expect(quick.outcomes.get('timeout')).toBe(1);
    clock.advance(10_000);
    expect(await host.jobRunner.runDue()).toBe(1);
    job = await jobOf(id);
    expect(job.state).toBe('done');
    expect((await parcel(id)).deliveries).toBe(1);
  });

  it('enqueues in the request’s unit of work (a refused request leaves no job) and once per key', async () => {
    const created = await co.as().post('/api/v1/parcels', { label: 'Crate' });
    const id = created.json().data.id as string;
    expectError(await co.as().post(`/api/v1/parcels/${id}/renotify`, { fail: true }), 409, 'CONFLICT');
    expect((await host.runtime.jobs.list(co.company.id, 'parcels')).filter((j) => (j.payload as { parcelId: string }).parcelId === id)).toEqual([]);
    expect((await parcel(id)).notice).toBeUndefined();

    const first = await co.as().post(`/api/v1/parcels/${id}/renotify`, {});
    expect(first.json().data).toMatchObject({ created: true });
    const again = await co.as().post(`/api/v1/parcels/${id}/renotify`, {});
    expect(again.json().data).toEqual({ id: first.json().data.id, created: false });
    // Shipping enqueues under the same key: still the one job, run once.
    expect((await co.as().post(`/api/v1/parcels/${id}/ship`, {})).statusCode).toBe(200);
    expect(await host.jobRunner.runDue()).toBe(1);
    expect((await jobOf(id)).state).toBe('done');
    expect((await parcel(id)).deliveries).toBe(1);
  });

  it('deletes the jobs that ended more than 30 days ago, with their attempts, and keeps the rest', async () => {
    const old = await ship();
    expect(await host.jobRunner.runDue()).toBe(1);
    const oldJob = await jobOf(old);
    clock.advance(20 * 86_400_000);
    const recent = await ship();
    expect(await host.jobRunner.runDue()).toBe(1);
    const pending = await ship({ failTimes: 9 });
    clock.advance(11 * 86_400_000);
    const pruned = await host.jobRunner.prune();
    expect(pruned).toBeGreaterThanOrEqual(1);
    expect(await host.runtime.jobs.get(co.company.id, oldJob.id)).toBeUndefined();
    expect(Number(await count(host, 'SELECT count(*) AS n FROM app_job_attempts WHERE job_id = ?', oldJob.id))).toBe(0);
    expect((await jobOf(recent)).state).toBe('done');
    expect((await jobOf(pending)).state).toBe('pending');
    // The document it changed stays.
    expect((await parcel(old)).deliveries).toBe(1);
    // The pending one runs to its end (failed), so that the tests after this one find nothing due.
    for (let i = 0; i < 3; i++, clock.advance(61_000)) expect(await host.jobRunner.runDue()).toBe(1);
    expect((await jobOf(pending)).state).toBe('failed');
  });

  it('the worker loop runs a job as soon as it is committed, and stops when told', async () => {
    host.jobRunner.start();
    try {
      const id = await ship();
      const until = Date.now() + 10_000;
      while ((await parcel(id)).deliveries !== 1 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      expect(await parcel(id)).toMatchObject({ deliveries: 1, notice: 'sent on attempt 1' });
      expect((await jobOf(id)).state).toBe('done');
    } finally {
      await host.jobRunner.stop();
    }
    const later = await ship();
    await new Promise((r) => setTimeout(r, 200));
    expect((await jobOf(later)).state).toBe('pending');
    expect(await host.jobRunner.runDue()).toBe(1);
  });

  it('a worker killed mid-attempt loses nothing: once its lease ends the job runs again, exactly once more', async () => {
    const id = await ship({ hangOnFirst: true });
    const child = await spawnChild('test/jobs-child.ts', [loc.url ?? loc.file, path.join(root, 'child'), JSON.stringify(JOBS), path.join(root, 'parcels-1.0.0')]);
    try {
      await child.waitFor(new RegExp(`^hanging ${id}$`));
    } finally {
      await child.kill();
    }
    // The child ran on the system clock: its lease ends JOBS.leaseMs after it took the job.
    clock.set(Date.now());
    expect(await jobOf(id)).toMatchObject({ state: 'running', attempts: 1 });
    expect(await host.jobRunner.runDue()).toBe(0);
    expect((await parcel(id)).deliveries).toBeUndefined();

    clock.set(Date.now() + JOBS.leaseMs + 1000);
    expect(await host.jobRunner.runDue()).toBe(1);
    const job = await jobOf(id);
    expect(job).toMatchObject({ state: 'done', attempts: 2 });
    expect(job.attemptLog.map((a) => [a.attempt, a.outcome])).toEqual([[1, 'lease_expired'], [2, 'done']]);
    expect(await parcel(id)).toMatchObject({ deliveries: 1, notice: 'sent on attempt 2' });
    expect(Number(await notices(id))).toBe(1);
    clock.advance(86_400_000);
    expect(await host.jobRunner.runDue()).toBe(0);
  });
});

describe.skipIf(process.env.DIWAN_TEST_DATABASES === 'sqlite')('apps’ jobs across two hosts on one PostgreSQL database', () => {
  it('runs every job once: no job is taken by both hosts', async () => {
    const root = tempDir();
    const clock = new ManualClock(START);
    const pg = await pgHosts(2, { sources: [parcelsSource(root)], clock, config: { rateLimitPerMinute: 0 }, jobs: { ...JOBS, random: () => 0.5 } });
    try {
      const [a, b] = pg.hosts;
      const co = await createCompany(a, { name: 'Shared Co', apps: ['parcels'] });
      const ids: string[] = [];
      for (let i = 0; i < 24; i++) {
        const id = (await co.as().post('/api/v1/parcels', { label: `Box ${i}`, workMs: 15 })).json().data.id as string;
        expect((await co.as().post(`/api/v1/parcels/${id}/ship`, {})).statusCode).toBe(200);
        ids.push(id);
      }
      const [ranA, ranB] = await Promise.all([a.jobRunner.runDue(), b.jobRunner.runDue()]);
      expect(ranA + ranB).toBe(24);
      // Both took a share, side by side.
      expect(Math.min(ranA, ranB)).toBeGreaterThan(0);
      const jobs = await a.runtime.jobs.list(co.company.id, 'parcels');
      expect(jobs.map((j) => [j.state, j.attempts])).toEqual(ids.map(() => ['done', 1]));
      for (const id of ids) expect((await co.as().get(`/api/v1/parcels/${id}`)).json().data.deliveries).toBe(1);
      expect(Number(await count(a, "SELECT count(*) AS n FROM app_job_attempts WHERE company_id = ?", co.company.id))).toBe(24);
    } finally {
      await pg.close();
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
