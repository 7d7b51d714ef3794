// Apps' durable jobs and their attempts (schema.ts: app_jobs, app_job_attempts). States:
// `pending` (due at next_run_at), `running` (leased), `done`, `failed`. A take leases due jobs
// and counts the attempt at once, so that a job whose attempts crash their process still walks
// the ladder and ends; every state change of a leased job is fenced by its lease token.
import type { Db } from '../db.ts';

export const JOB_STATES = ['pending', 'running', 'done', 'failed'] as const;
export type JobStateName = (typeof JOB_STATES)[number];

export interface JobRow {
  id: string;
  company_id: string;
  app_id: string;
  name: string;
  payload: string;
  job_key: string | null;
  state: JobStateName;
  attempts: number;
  next_run_at: number | null;
  lease_until: number | null;
  lease_token: string | null;
  last_error: string | null;
  actor_type: string;
  actor_id: string;
  lang: string;
  request_id: string | null;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
}

export interface JobAttemptRow {
  job_id: string;
  attempt: number;
  started_at: string;
  ended_at: string;
  duration_ms: number;
  outcome: string;
  error: string | null;
}

export interface NewJob {
  id: string;
  companyId: string;
  appId: string;
  name: string;
  payload: string;
  key: string | null;
  actorType: string;
  actorId: string;
  lang: string;
  requestId: string | null;
}

export interface NewAttempt {
  jobId: string;
  companyId: string;
  attempt: number;
  startedAt: string;
  endedAt: string;
  durationMs: number;
  outcome: string;
  error: string | null;
}

/** Where a job goes after an attempt that did not succeed. */
export type NextJobState = { state: 'pending'; at: number } | { state: 'failed' };

const numbers = (r: JobRow): JobRow => ({
  ...r,
  attempts: Number(r.attempts),
  next_run_at: r.next_run_at == null ? null : Number(r.next_run_at),
  lease_until: r.lease_until == null ? null : Number(r.lease_until),
});

export class AppJobsRepo {
  constructor(private db: Db) {}

  /**
   * A new pending job due at `dueMs`, or (same company, app and key) the one already there:
   * answers the job's id and whether this call made it.
   */
  async insert(j: NewJob, dueMs: number, at: string): Promise<{ id: string; created: boolean }> {
    const { changes } = await this.db.run(
      `INSERT INTO app_jobs (id, company_id, app_id, name, payload, job_key, state, attempts, next_run_at, actor_type, actor_id, lang, request_id, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (company_id, app_id, job_key) DO NOTHING`,
      [j.id, j.companyId, j.appId, j.name, j.payload, j.key, dueMs, j.actorType, j.actorId, j.lang, j.requestId, at, at],
    );
    if (changes === 1 || j.key === null) return { id: j.id, created: true };
    const row = await this.db.get<{ id: string }>('SELECT id FROM app_jobs WHERE company_id = ? AND app_id = ? AND job_key = ?', [j.companyId, j.appId, j.key]);
    return { id: row!.id, created: false };
  }

  /**
   * Leases up to `limit` due jobs, oldest due first, in one statement, counting the attempt
   * (PostgreSQL: rows another worker is taking are skipped, never waited for or taken twice).
   */
  async lease(nowMs: number, limit: number, token: string, untilMs: number, at: string): Promise<JobRow[]> {
    const rows = await this.db.all<JobRow>(
      `UPDATE app_jobs SET state = 'running', attempts = attempts + 1, lease_until = ?, lease_token = ?, updated_at = ?
       WHERE seq IN (SELECT seq FROM app_jobs WHERE state = 'pending' AND next_run_at <= ? ORDER BY next_run_at, seq LIMIT ? ${this.db.dialect.skipLocked})
       RETURNING *`,
      [untilMs, token, at, nowMs, limit],
    );
    return rows.map(numbers).sort((a, b) => (a.next_run_at! - b.next_run_at!) || (a.id < b.id ? -1 : 1));
  }

  /** Jobs whose lease ended (their worker died or stopped mid-attempt), with the token they were taken under. */
  async expired(nowMs: number): Promise<JobRow[]> {
    const rows = await this.db.all<JobRow>(
      `SELECT * FROM app_jobs WHERE seq IN (SELECT seq FROM app_jobs WHERE state = 'running' AND lease_until <= ? ${this.db.dialect.skipLocked})`,
      [nowMs],
    );
    return rows.map(numbers);
  }

  /** A job still running under the lease `token`. */
  async leased(id: string, token: string): Promise<JobRow | undefined> {
    const r = await this.db.get<JobRow>("SELECT * FROM app_jobs WHERE id = ? AND state = 'running' AND lease_token = ?", [id, token]);
    return r && numbers(r);
  }

  /** A leased job succeeded: `done`, if the lease it ran under still holds (answers whether it did). */
  async complete(id: string, token: string, at: string): Promise<boolean> {
    const { changes } = await this.db.run(
      "UPDATE app_jobs SET state = 'done', lease_until = NULL, lease_token = NULL, last_error = NULL, updated_at = ?, finished_at = ? WHERE id = ? AND state = 'running' AND lease_token = ?",
      [at, at, id, token],
    );
    return changes === 1;
  }

  /** A leased job's attempt failed: pending again at a time, or failed for good, if its lease still holds. */
  async settle(id: string, token: string, next: NextJobState, error: string, at: string): Promise<boolean> {
    const { changes } = await this.db.run(
      `UPDATE app_jobs SET state = ?, next_run_at = ?, lease_until = NULL, lease_token = NULL, last_error = ?, updated_at = ?, finished_at = ?
       WHERE id = ? AND state = 'running' AND lease_token = ?`,
      [next.state, next.state === 'pending' ? next.at : null, error, at, next.state === 'failed' ? at : null, id, token],
    );
    return changes === 1;
  }

  /** Deletes the jobs that ended (done or failed) before `beforeIso`, with their attempts; answers how many jobs. */
  async pruneFinished(beforeIso: string, limit = 1000): Promise<number> {
    const rows = await this.db.all<{ id: string }>(
      "SELECT id FROM app_jobs WHERE state IN ('done', 'failed') AND finished_at < ? ORDER BY seq LIMIT ?",
      [beforeIso, limit],
    );
    for (const { id } of rows) {
      await this.db.run('DELETE FROM app_job_attempts WHERE job_id = ?', [id]);
      await this.db.run('DELETE FROM app_jobs WHERE id = ?', [id]);
    }
    return rows.length;
  }

  async insertAttempt(a: NewAttempt): Promise<void> {
    await this.db.run(
      'INSERT INTO app_job_attempts (job_id, company_id, attempt, started_at, ended_at, duration_ms, outcome, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      [a.jobId, a.companyId, a.attempt, a.startedAt, a.endedAt, Math.round(a.durationMs), a.outcome, a.error],
    );
  }

  /** When the next pending job falls due or the next lease ends (ms), or null. */
  async nextDue(): Promise<number | null> {
    const r = await this.db.get<{ due: number | null; lease: number | null }>(
      "SELECT (SELECT min(next_run_at) FROM app_jobs WHERE state = 'pending') AS due, (SELECT min(lease_until) FROM app_jobs WHERE state = 'running') AS lease",
    );
    const times = [r?.due, r?.lease].filter((t) => t != null).map(Number);
    return times.length ? Math.min(...times) : null;
  }

  async get(companyId: string, id: string): Promise<JobRow | undefined> {
    const r = await this.db.get<JobRow>('SELECT * FROM app_jobs WHERE company_id = ? AND id = ?', [companyId, id]);
    return r && numbers(r);
  }

  /** An app's jobs in a company, newest first, optionally of one name or state. */
  async list(companyId: string, appId: string, q: { name?: string; state?: JobStateName; limit?: number } = {}): Promise<JobRow[]> {
    const where = ['company_id = ?', 'app_id = ?'];
    const params: unknown[] = [companyId, appId];
    if (q.name) (where.push('name = ?'), params.push(q.name));
    if (q.state) (where.push('state = ?'), params.push(q.state));
    const rows = await this.db.all<JobRow>(`SELECT * FROM app_jobs WHERE ${where.join(' AND ')} ORDER BY seq DESC LIMIT ?`, [...params, q.limit ?? 100]);
    return rows.map(numbers);
  }

  /** A company's jobs, newest first, a page at a time, optionally of one app, name or state (the operators' list). */
  async page(companyId: string, q: { page: number; pageSize: number; appId?: string; name?: string; state?: JobStateName }): Promise<{ total: number; rows: JobRow[] }> {
    const where = ['company_id = ?'];
    const params: unknown[] = [companyId];
    if (q.appId) (where.push('app_id = ?'), params.push(q.appId));
    if (q.name) (where.push('name = ?'), params.push(q.name));
    if (q.state) (where.push('state = ?'), params.push(q.state));
    const total = (await this.db.get<{ n: number }>(`SELECT count(*) AS n FROM app_jobs WHERE ${where.join(' AND ')}`, params))!.n;
    const rows = await this.db.all<JobRow>(`SELECT * FROM app_jobs WHERE ${where.join(' AND ')} ORDER BY seq DESC LIMIT ? OFFSET ?`, [...params, q.pageSize, (q.page - 1) * q.pageSize]);
    return { total: Number(total), rows: rows.map(numbers) };
  }

  async byKey(companyId: string, appId: string, key: string): Promise<JobRow | undefined> {
    const r = await this.db.get<JobRow>('SELECT * FROM app_jobs WHERE company_id = ? AND app_id = ? AND job_key = ?', [companyId, appId, key]);
    return r && numbers(r);
  }

  /** A failed job pending again, due at `dueMs`, with a fresh set of attempts (its attempt log kept); answers whether it was failed. */
  async retry(id: string, dueMs: number, at: string): Promise<boolean> {
    const { changes } = await this.db.run(
      "UPDATE app_jobs SET state = 'pending', attempts = 0, next_run_at = ?, updated_at = ?, finished_at = NULL WHERE id = ? AND state = 'failed'",
      [dueMs, at, id],
    );
    return changes === 1;
  }

  attempts(jobId: string): Promise<JobAttemptRow[]> {
    return this.db.all<JobAttemptRow>('SELECT job_id, attempt, started_at, ended_at, duration_ms, outcome, error FROM app_job_attempts WHERE job_id = ? ORDER BY seq', [jobId]);
  }
}
