// The host's scheduler: time-based events (overdue, expiring, due, reminders, pending too long)
// declared as document-type schedules. Each tick asks every schedule, across all companies at
// once, for the documents due now (an indexed query, not a scan of every row) and fires each
// (document, schedule, date value) once: the firing is claimed in the database in the
// transaction that writes the event, so restarts and several processes never fire it twice
// (on PostgreSQL a worker skips a firing another is making at that moment: documents repo `claim`).
// A firing that fails is rolled back and left for the next tick; the rest of the tick goes on.
import type { Clock } from '../kernel/clock.ts';
import type { Companies } from '../tenancy/companies.ts';
import type { AppRuntime } from './runtime.ts';

export class Scheduler {
  private timer?: NodeJS.Timeout;
  private running?: Promise<number>;
  /** When the last tick started (clock ms), or null before the first. */
  lastTickAt: number | null = null;
  /** Firings (or due-queries) that failed in the last tick, and since the process started. */
  lastTickFailures = 0;
  failuresTotal = 0;
  /** The last tick's first few failures (a test host throws the first). */
  lastTickErrors: unknown[] = [];

  constructor(
    private runtime: AppRuntime,
    private companies: Companies,
    private clock: Clock,
    private intervalMs = 30_000,
    /** Told of each failure (the host logs it). */
    private onError: (err: unknown, where: { appId: string; type: string; companyId?: string; docId?: string; schedule?: string }) => void = () => {},
  ) {}

  /** Fires everything due at the clock's now; returns how many events it wrote. */
  tick(): Promise<number> {
    this.running ??= (async () => {
      try {
        let fired = 0;
        let failures = 0;
        const errors: unknown[] = [];
        const now = this.clock.now();
        this.lastTickAt = now;
        for (const app of this.runtime.list()) {
          for (const [type, dt] of app.docTypes) {
            if (!dt.decl.schedules?.length) continue;
            const failed = (err: unknown, at: { companyId?: string; docId?: string; schedule?: string } = {}) => {
              failures++;
              this.failuresTotal++;
              if (errors.length < 10) errors.push(err);
              this.onError(err, { appId: app.manifest.id, type, ...at });
            };
            // A type whose due documents cannot even be asked for does not stop the other types.
            try {
              fired += await dt.fireDue(now, (id) => this.companies.get(id), failed);
            } catch (err) {
              failed(err);
            }
          }
        }
        this.lastTickFailures = failures;
        this.lastTickErrors = errors;
        return fired;
      } finally {
        this.running = undefined;
      }
    })();
    return this.running;
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.tick().catch(() => {}), this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => {});
  }
}
