// Apps' durable jobs: enqueued by app code inside the request's unit of work (committed with
// its write or not at all; a key makes it idempotent), run by the workers on the same ideas as
// webhook deliveries (core/webhooks): a job is taken under a lease (two workers never run it at
// once; a crashed worker's lease ends and another takes it), retried along the ladder with
// bounded jitter (core/webhooks/ladder.ts) until it is `failed` with its last error, each
// attempt recorded. A handler's writes run in one unit of work per attempt, committed together
// with the job's `done` only while its lease holds: an attempt cut off (a crash, a lease lost)
// leaves no write behind, and the job runs again.
import type { AppContext, EnqueueOptions, JobContext, JobHandler } from '../../sdk/define-app.ts';
import type { Db } from '../storage/db.ts';
import type { AppJobsRepo, JobAttemptRow, JobRow, JobStateName, NewAttempt, NextJobState } from '../storage/repos/app-jobs.ts';
import type { Clock } from '../kernel/clock.ts';
import type { Lang } from '../kernel/i18n/i18n.ts';
import { DiwanError } from '../kernel/errors/diwan-error.ts';
import { isoNow, newId, newSortableId } from '../kernel/ids.ts';
import { maxAttempts, nextState, RETRY_AFTER_CAP_MS } from '../webhooks/ladder.ts';
import type { Company } from '../tenancy/companies.ts';
import type { UnitOfWork, WriteScope } from '../audit/unit-of-work.ts';
import type { Caller } from './doc-type.ts';
import { JOB_STATES } from '../storage/repos/app-jobs.ts';

export interface JobsConfig {
  /** Seconds before each retry: a job gets 1 + ladder.length attempts. */
  ladder: number[];
  /** Fraction of a step a retry may move either way (bounded as webhook retries are). */
  jitter: number;
  /** How long one attempt may take: its signal aborts then, and the attempt fails. */
  timeoutMs: number;
  /** How long a take holds a job: longer than an attempt may run, so that no other worker starts it meanwhile. */
  leaseMs: number;
  /** Attempts one process runs at a time. */
  concurrency: number;
  /** Longest the loop sleeps without looking (jobs other processes enqueued). */
  pollMs: number;
  /** Days a job that ended (done or failed) is kept, with its attempts, before the loop deletes it. */
  retentionDays: number;
}

/** 10 s, 1 min, 5 min, 30 min, 2 h, 6 h: a job is retried for about 9 hours before it fails. */
export const DEFAULT_JOBS_CONFIG: JobsConfig = {
  ladder: [10, 60, 300, 1800, 7200, 21_600],
  jitter: 0.1,
  timeoutMs: 30_000,
  leaseMs: 60_000,
  concurrency: 4,
  pollMs: 1000,
  retentionDays: 30,
};

export function jobsConfig(over: Partial<JobsConfig> = {}): JobsConfig {
  const c = { ...DEFAULT_JOBS_CONFIG, ...over };
  // A lease that ends while its attempt may still run would let a second worker start it.
  if (c.leaseMs < c.timeoutMs + 1000) throw new RangeError(`the jobs' lease (${c.leaseMs} ms) must be at least their time-out + 1000 ms (${c.timeoutMs + 1000})`);
  return c;
}

/** The largest payload a job takes, as JSON. */
export const MAX_PAYLOAD_BYTES = 64 * 1024;

/** A job as app code and operators see it. */
export interface Job {
  id: string;
  appId: string;
  name: string;
  key: string | null;
  payload: unknown;
  state: JobStateName;
  attempts: number;
  nextRunAt: string | null;
  lastError: string | null;
  createdAt: string;
  updatedAt: string;
  finishedAt: string | null;
}

export const toJob = (r: JobRow): Job => ({
  id: r.id,
  appId: r.app_id,
  name: r.name,
  key: r.job_key,
  payload: JSON.parse(r.payload),
  state: r.state,
  attempts: r.attempts,
  nextRunAt: r.state === 'pending' && r.next_run_at !== null ? isoNow(r.next_run_at) : null,
  lastError: r.last_error,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  finishedAt: r.finished_at,
});

/** One attempt of a job, as the attempt log shows it: what was recorded of it. */
export type JobAttempt = Omit<NewAttempt, 'jobId' | 'companyId'>;

const toAttempt = (a: JobAttemptRow): JobAttempt => ({
  attempt: Number(a.attempt), startedAt: a.started_at, endedAt: a.ended_at, durationMs: Number(a.duration_ms), outcome: a.outcome, error: a.error,
});

const nullable = (type: string) => ({ type: [type, 'null'] });

export const jobSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'appId', 'name', 'key', 'payload', 'state', 'attempts', 'nextRunAt', 'lastError', 'createdAt', 'updatedAt', 'finishedAt'],
  properties: {
    id: { type: 'string' },
    appId: { type: 'string', description: 'The app whose job it is' },
    name: { type: 'string', description: "The job's name in its app (`defineApp({ jobs })`)" },
    key: { ...nullable('string'), description: "The app's idempotency key (one job per key)" },
    payload: { description: 'What the app enqueued it with (JSON)' },
    state: { type: 'string', enum: [...JOB_STATES], description: '`failed`: every attempt of the ladder failed; `POST …/retry` puts it back' },
    attempts: { type: 'integer', description: 'Attempts made since it was enqueued or last retried' },
    nextRunAt: { ...nullable('string'), description: 'When a pending job is due' },
    lastError: { ...nullable('string'), description: "The last failed attempt's error" },
    createdAt: { type: 'string' },
    updatedAt: { type: 'string' },
    finishedAt: nullable('string'),
  },
} as const;

export const jobAttemptSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['attempt', 'startedAt', 'endedAt', 'durationMs', 'outcome', 'error'],
  properties: {
    attempt: { type: 'integer', description: 'From 1; a retried job counts afresh' },
    startedAt: { type: 'string' },
    endedAt: { type: 'string' },
    durationMs: { type: 'integer' },
    outcome: { type: 'string', description: 'done, error, timeout, lease_expired, interrupted' },
    error: nullable('string'),
  },
} as const;

export const jobWithAttemptsSchema = {
  ...jobSchema,
  required: [...jobSchema.required, 'attemptLog'],
  properties: { ...jobSchema.properties, attemptLog: { type: 'array', items: jobAttemptSchema, description: 'Every attempt, oldest first (those before a retry included)' } },
} as const;

/** A retry of a job that is not failed: CONFLICT naming its state, in the caller's language. */
const notFailed = (id: string, state: string, lang: Lang = 'en') =>
  new DiwanError('CONFLICT', [{ reason: 'job_not_failed', id, state }], {
    reason: lang === 'ar' ? `المهمة في الحالة "${state}": لا يُعاد إلا ما أخفق (failed)` : `the job is "${state}": only a failed job is retried`,
  });

/** The enqueueing side, shared by every app context of the process, and the operators' view (list, show, retry). */
export class AppJobs {
  private listeners = new Set<() => void>();

  constructor(private deps: { db: Db; repo: AppJobsRepo; clock: Clock; uow: UnitOfWork }) {}

  /** Hears each enqueue once committed (this process's runner wakes at once). */
  onEnqueued(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Inside the caller's transaction when there is one: the job commits with its write. */
  async enqueue(appId: string, caller: Caller, name: string, payload: unknown, opts: EnqueueOptions = {}): Promise<{ id: string; created: boolean }> {
    const fault = (rule: string, reason: string) => new DiwanError('APP_ERROR', [{ app: appId, rule, job: name }], { app: appId, reason });
    if (opts.key !== undefined && (typeof opts.key !== 'string' || opts.key.length === 0 || opts.key.length > 200)) {
      throw fault('job_key', 'a job key is a string of 1 to 200 characters');
    }
    const delay = opts.delayMs ?? 0;
    if (!Number.isFinite(delay) || delay < 0) throw fault('job_delay', 'a job delay is a number of milliseconds, 0 or more');
    const text = payload === undefined ? 'null' : JSON.stringify(payload);
    if (text === undefined) throw fault('job_payload', 'a job payload is plain JSON data');
    if (Buffer.byteLength(text) > MAX_PAYLOAD_BYTES) throw fault('job_payload', `a job payload is at most ${MAX_PAYLOAD_BYTES / 1024} KB of JSON: pass ids, not documents`);
    const now = this.deps.clock.now();
    return this.deps.db.transaction(async () => {
      const r = await this.deps.repo.insert(
        {
          id: newSortableId('job', now), companyId: caller.company.id, appId, name, payload: text, key: opts.key ?? null,
          actorType: caller.actor.type, actorId: caller.actor.id, lang: caller.lang, requestId: caller.requestId,
        },
        now + Math.round(delay), isoNow(now),
      );
      if (r.created) this.deps.db.afterCommit(() => this.listeners.forEach((fn) => fn()));
      return r;
    });
  }

  async get(companyId: string, id: string): Promise<(Job & { attemptLog: JobAttempt[] }) | undefined> {
    const r = await this.deps.repo.get(companyId, id);
    return r && { ...toJob(r), attemptLog: (await this.deps.repo.attempts(id)).map(toAttempt) };
  }

  /** One job of the company with its attempts; another company's is NOT_FOUND as an unknown one is. */
  async show(companyId: string, id: string): Promise<Job & { attemptLog: JobAttempt[] }> {
    const job = await this.get(companyId, id);
    if (!job) throw new DiwanError('NOT_FOUND', [{ resource: 'jobs', id }]);
    return job;
  }

  /** The company's jobs, newest first, a page at a time. */
  async page(companyId: string, q: { page: number; pageSize: number; app?: string; name?: string; state?: JobStateName }): Promise<{ data: Job[]; total: number }> {
    const { total, rows } = await this.deps.repo.page(companyId, { page: q.page, pageSize: q.pageSize, appId: q.app, name: q.name, state: q.state });
    return { total, data: rows.map(toJob) };
  }

  /**
   * A failed job pending again now, with a fresh set of attempts (the earlier ones stay in its
   * log); audited. Any other state: CONFLICT naming it.
   */
  retry(scope: WriteScope, id: string): Promise<Job> {
    return this.deps.uow.run(scope, async (w) => {
      const before = await this.show(scope.companyId, id);
      const now = this.deps.clock.now();
      if (!(await this.deps.repo.retry(id, now, isoNow(now)))) throw notFailed(id, before.state, scope.lang);
      const after = toJob((await this.deps.repo.get(scope.companyId, id))!);
      const { attemptLog: _, ...was } = before;
      await w.audit({ action: 'retry', resource: 'jobs', resourceId: id, before: was, after });
      this.deps.db.afterCommit(() => this.listeners.forEach((fn) => fn()));
      return after;
    });
  }

  /** An app's own retry of its job with `key` (SDK `ctx.jobs.retry`): null when there is none. */
  async retryKey(appId: string, caller: Caller, key: string): Promise<{ id: string; state: JobStateName; retried: boolean } | null> {
    const r = await this.deps.repo.byKey(caller.company.id, appId, key);
    if (!r) return null;
    if (r.state !== 'failed') return { id: r.id, state: r.state, retried: false };
    const job = await this.retry({ companyId: caller.company.id, actor: caller.actor, appId, requestId: caller.requestId, lang: caller.lang }, r.id);
    return { id: job.id, state: job.state, retried: true };
  }

  async list(companyId: string, appId: string, q: { name?: string; state?: JobStateName } = {}): Promise<Job[]> {
    return (await this.deps.repo.list(companyId, appId, q)).map(toJob);
  }
}

/** What the runner needs of the app runtime (the handlers and the contexts they run with). */
export interface JobHost {
  handler(appId: string, name: string): JobHandler | undefined;
  isEnabled(companyId: string, appId: string): Promise<boolean>;
  contextFor(appId: string, caller: Caller): AppContext;
  company(id: string): Promise<Company | undefined>;
}

export interface JobRunnerDeps {
  db: Db;
  repo: AppJobsRepo;
  jobs: AppJobs;
  host: JobHost;
  clock: Clock;
  config: JobsConfig;
  /** Uniform in [0, 1): the retries' jitter. */
  random?: () => number;
  /** Told of each failed attempt (the host logs it). */
  onError?: (err: unknown, job: { id: string; appId: string; name: string; attempt: number }) => void;
}

/** An attempt's error as stored: its message, bounded. */
const errorText = (err: unknown): string => {
  const m = err instanceof Error ? `${err.name === 'Error' ? '' : `${err.name}: `}${err.message}` : String(err);
  return m.length > 2000 ? `${m.slice(0, 1999)}…` : m;
};

class Fenced extends Error {}

/** The wait a handler's `RetryLater` (the SDK's, recognised by its brand) asked for, or null. */
const askedWait = (err: unknown): number | null => {
  if (typeof err !== 'object' || err === null || (err as Record<symbol, unknown>)[Symbol.for('diwan.retry-later')] !== true) return null;
  const ms = (err as { afterMs?: unknown }).afterMs;
  return typeof ms === 'number' && Number.isFinite(ms) && ms > 0 ? Math.min(ms, RETRY_AFTER_CAP_MS) : null;
};

/**
 * The handler's context for one attempt: the app's context in the job's company, with the job
 * and the attempt's signal. Once the attempt is over (its time was up and it was rolled back),
 * the context writes nothing more: a handler that ignored its signal cannot write outside the
 * attempt's unit of work.
 */
function attemptContext(base: AppContext, job: JobContext['job'], signal: AbortSignal, isOver: () => boolean): JobContext {
  const guard = <A extends unknown[], R>(fn: (...a: A) => R) => (...a: A): R => {
    if (isOver()) throw new Error(`the attempt of job ${job.id} is over (its time was up): its context writes nothing more`);
    return fn(...a);
  };
  const own: Partial<JobContext> = {
    job,
    signal,
    docs: (type: string) => {
      const h = base.docs(type);
      return { get: h.get, list: h.list, all: h.all, create: guard(h.create), update: guard(h.update), set: guard(h.set), transition: guard(h.transition), remove: guard(h.remove) };
    },
    events: { emit: guard(base.events.emit) },
    audit: { record: guard(base.audit.record) },
    jobs: { enqueue: guard(base.jobs.enqueue), retry: guard(base.jobs.retry) },
    transaction: <T,>(fn: () => Promise<T>): Promise<T> => guard(() => base.transaction(fn))(),
  };
  // Own properties over the base's (some of which are getters, which assignment could not replace).
  return Object.create(base, Object.fromEntries(Object.entries(own).map(([k, value]) => [k, { value, enumerable: true }]))) as JobContext;
}

export class JobRunner {
  private running = new Map<string, { token: string; done: Promise<void> }>();
  private started = false;
  private stopping = false;
  private wakeScheduled = false;
  private timer?: NodeJS.Timeout;
  private unlisten?: () => void;
  /** Attempts made by this process, by how they ended. */
  readonly outcomes = new Map<string, number>();

  constructor(private deps: JobRunnerDeps) {}

  private count(outcome: string): void {
    this.outcomes.set(outcome, (this.outcomes.get(outcome) ?? 0) + 1);
  }

  /**
   * Jobs whose lease ended (their worker died or stopped mid-attempt): their attempt is recorded
   * as `lease_expired`, and they are due again now, or `failed` if that was their last.
   */
  async reclaimExpired(): Promise<number> {
    const now = this.deps.clock.now();
    const at = isoNow(now);
    const max = maxAttempts(this.deps.config.ladder);
    return this.deps.db.transaction(async () => {
      let n = 0;
      for (const r of await this.deps.repo.expired(now)) {
        // Not ours to judge while this process still runs it (a stop gives those back itself).
        if (this.running.get(r.id)?.token === r.lease_token) continue;
        const error = 'the attempt did not finish: its worker stopped or died before its lease ended';
        const next: NextJobState = r.attempts >= max ? { state: 'failed' } : { state: 'pending', at: now };
        if (!(await this.deps.repo.settle(r.id, r.lease_token!, next, error, at))) continue;
        await this.deps.repo.insertAttempt({
          jobId: r.id, companyId: r.company_id, attempt: r.attempts, startedAt: r.updated_at, endedAt: at,
          durationMs: now - Date.parse(r.updated_at), outcome: 'lease_expired', error,
        });
        n++;
      }
      return n;
    });
  }

  /** Takes what is due now (up to the free slots) and starts each; answers the attempts started. */
  private async take(limit: number): Promise<Promise<void>[]> {
    if (limit <= 0) return [];
    const now = this.deps.clock.now();
    const token = newId('jls');
    const rows = await this.deps.db.transaction(() => this.deps.repo.lease(now, limit, token, now + this.deps.config.leaseMs, isoNow(now)));
    return rows.map((r) => this.attempt(r, token));
  }

  private attempt(r: JobRow, token: string): Promise<void> {
    const p = this.run(r, token).finally(() => {
      this.running.delete(r.id);
      if (this.started && !this.stopping) this.wake();
    });
    this.running.set(r.id, { token, done: p });
    return p;
  }

  private async run(r: JobRow, token: string): Promise<void> {
    const { db, repo, clock, config, host } = this.deps;
    const startedMs = clock.now();
    const startedAt = isoNow(startedMs);
    const max = maxAttempts(config.ladder);
    let outcome = 'done';
    let error: unknown;
    try {
      const handler = host.handler(r.app_id, r.name);
      if (!handler) throw new Error(`the app ${r.app_id} has no job handler ${r.name} on this host`);
      const company = await host.company(r.company_id);
      if (!company) throw new Error(`the company ${r.company_id} is gone`);
      if (!(await host.isEnabled(r.company_id, r.app_id))) throw new Error(`the app ${r.app_id} is not enabled in the company`);
      const caller: Caller = { company, actor: { type: 'system', id: 'jobs' }, lang: (r.lang === 'ar' ? 'ar' : 'en') as Lang, requestId: r.request_id };
      const abort = new AbortController();
      let over = false;
      const ctx = attemptContext(host.contextFor(r.app_id, caller), { id: r.id, name: r.name, attempt: r.attempts, maxAttempts: max, key: r.job_key }, abort.signal, () => over);
      let timer: NodeJS.Timeout | undefined;
      const timeUp = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          over = true;
          abort.abort(new Error(`the attempt took longer than ${config.timeoutMs} ms`));
          reject(Object.assign(new Error(`the attempt took longer than ${config.timeoutMs} ms`), { outcome: 'timeout' }));
        }, config.timeoutMs);
        timer.unref();
      });
      try {
        // One unit of work: the handler's writes and the job's `done`, only while the lease holds.
        // Lazy: what the handler does before its first write (an HTTP call) holds no connection.
        timeUp.catch(() => {});
        await db.transaction(() => {
          const work = (async () => {
            await handler(JSON.parse(r.payload), ctx);
            const at = isoNow(clock.now());
            if (!(await repo.complete(r.id, token, at))) throw new Fenced('the lease ended before the attempt did: another worker has the job');
            await repo.insertAttempt({ jobId: r.id, companyId: r.company_id, attempt: r.attempts, startedAt, endedAt: at, durationMs: clock.now() - startedMs, outcome: 'done', error: null });
          })();
          // A handler that ends after its time was up has nobody to tell.
          work.catch(() => {});
          return Promise.race([work, timeUp]);
        }, { lazy: true });
      } finally {
        clearTimeout(timer);
        over = true;
      }
    } catch (err) {
      error = err;
      outcome = err instanceof Fenced ? 'fenced' : ((err as { outcome?: string }).outcome ?? 'error');
    }
    this.count(outcome);
    if (outcome === 'done' || outcome === 'fenced') return;
    this.deps.onError?.(error, { id: r.id, appId: r.app_id, name: r.name, attempt: r.attempts });
    const now = clock.now();
    const at = isoNow(now);
    const next = nextState(r.attempts, false, config.ladder, now, { jitter: config.jitter, random: this.deps.random });
    // A RetryLater's wait is a floor under the ladder's step (never earlier than the other side asked).
    const wait = askedWait(error);
    const text = errorText(error);
    await db
      .transaction(async () => {
        const settled = await repo.settle(r.id, token, next.state === 'pending_retry' ? { state: 'pending', at: Math.max(next.nextAttemptAt, now + (wait ?? 0)) } : { state: 'failed' }, text, at);
        if (settled) await repo.insertAttempt({ jobId: r.id, companyId: r.company_id, attempt: r.attempts, startedAt, endedAt: at, durationMs: now - startedMs, outcome, error: text });
      })
      // The store is closed or unreachable: the job stays leased until its lease ends, then runs again.
      .catch(() => {});
  }

  /**
   * One step for tests and tools: reclaims ended leases, then runs everything due now (up to
   * `concurrency` at a time) until nothing is; answers the attempts made.
   */
  async runDue(maxRounds = 50): Promise<number> {
    await this.reclaimExpired();
    let total = 0;
    for (let i = 0; i < maxRounds; i++) {
      const started = await this.take(this.deps.config.concurrency);
      if (!started.length) break;
      await Promise.all(started);
      total += started.length;
    }
    return total;
  }

  /** Deletes the jobs that ended more than `retentionDays` ago, with their attempts; answers how many. */
  async prune(): Promise<number> {
    const before = isoNow(this.deps.clock.now() - this.deps.config.retentionDays * 86_400_000);
    let total = 0;
    for (;;) {
      const n = await this.deps.db.transaction(() => this.deps.repo.pruneFinished(before));
      total += n;
      if (n < 1000) return total;
    }
  }

  private prunedAt = -Infinity;

  /** When the next job is due or the next lease ends (ms), or null. */
  nextDue(): Promise<number | null> {
    return this.deps.repo.nextDue();
  }

  get inFlight(): number {
    return this.running.size;
  }

  /** The worker loop: woken by enqueues here, finished attempts, and a timer (the next due job, or `pollMs`). */
  start(): void {
    if (this.started) return;
    this.started = true;
    this.stopping = false;
    this.unlisten = this.deps.jobs.onEnqueued(() => this.wake());
    this.wake();
  }

  /**
   * Wakes the loop (coalesced into one run per turn). Idle, a run is one read (when is the next
   * job due, or the next lease over?); it writes only when something is due.
   */
  wake(): void {
    if (!this.started || this.stopping || this.wakeScheduled) return;
    this.wakeScheduled = true;
    setImmediate(async () => {
      this.wakeScheduled = false;
      if (this.stopping) return;
      const { repo, clock, config } = this.deps;
      let delay = config.pollMs;
      try {
        // Hourly, what ended long ago goes.
        if (clock.now() - this.prunedAt > 3_600_000) {
          this.prunedAt = clock.now();
          await this.prune();
        }
        let next = await repo.nextDue();
        const free = config.concurrency - this.running.size;
        if (next !== null && next <= clock.now() && free > 0) {
          await this.reclaimExpired();
          await this.take(free);
          next = await repo.nextDue();
        }
        // With every slot taken, a finished attempt wakes the loop.
        if (next !== null && this.running.size < config.concurrency) delay = Math.min(delay, Math.max(20, next - clock.now()));
      } catch {
        // A busy database, a lost connection: look again shortly.
        delay = Math.min(delay, 250);
      }
      this.setTimer(delay);
    });
  }

  private setTimer(delay: number): void {
    if (this.stopping || !this.started) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.wake();
    }, delay);
    this.timer.unref();
  }

  /**
   * Stops taking jobs and waits up to `waitMs` for the attempts under way; those still running
   * then are given back (due again now for any worker; their late result is fenced off).
   */
  async stop(waitMs = this.deps.config.timeoutMs + 1000): Promise<void> {
    this.stopping = true;
    this.started = false;
    this.unlisten?.();
    this.unlisten = undefined;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.running.size) {
      let t: NodeJS.Timeout | undefined;
      await Promise.race([Promise.allSettled([...this.running.values()].map((r) => r.done)), new Promise((r) => (t = setTimeout(r, waitMs)))]);
      clearTimeout(t);
    }
    const now = this.deps.clock.now();
    const at = isoNow(now);
    const max = maxAttempts(this.deps.config.ladder);
    for (const [id, { token }] of this.running) {
      await this.deps.db
        .transaction(async () => {
          const r = await this.deps.repo.leased(id, token);
          if (!r) return;
          const error = 'the attempt was cut off: its worker stopped';
          if (await this.deps.repo.settle(id, token, r.attempts >= max ? { state: 'failed' } : { state: 'pending', at: now }, error, at)) {
            await this.deps.repo.insertAttempt({ jobId: id, companyId: r.company_id, attempt: r.attempts, startedAt: r.updated_at, endedAt: at, durationMs: now - Date.parse(r.updated_at), outcome: 'interrupted', error });
          }
        })
        .catch(() => {});
    }
  }
}
