// The per-principal request limit (DIWAN_RATE_LIMIT per minute per API key or person). Where
// several servers share the database (PostgreSQL) the count is the database's, so that a key
// spread across processes behind a load balancer meets the same limit as on one: an atomic
// upsert into an unlogged table, one per request near the limit and one per batch of requests
// far from it (a write per request measured ~0.25 ms, a third of a list request on a local
// server). On the embedded SQLite file it stays in this process's memory (under a microsecond):
// a file is normally served by one server, and the CLI that shares it is not rate limited; a
// count there would be a write on every read, and while the CLI holds the file's write lock each
// request would block the event loop (better-sqlite3 waits synchronously). Measured:
// bench/rate-limit.ts, docs/benchmarks-history.md (2026-11-23).
import type { RateWindowsRepo } from '../storage/repos/rate-windows.ts';

export interface RateLimiter {
  /** Requests allowed per principal and window. */
  readonly limit: number;
  readonly windowSeconds: number;
  /** Counts one request of `key`: 0 when it may go on, else the seconds until its window ends. */
  hit(key: string): Promise<number>;
}

const waitSeconds = (windowEnd: number, now: number) => Math.max(1, Math.ceil((windowEnd - now) / 1000));

/** This process's own count: a window starts at the principal's first request. */
export function memoryRateLimiter(limit: number, now: () => number, windowMs = 60_000): RateLimiter {
  const windows = new Map<string, { start: number; count: number }>();
  let swept = now();
  return {
    limit,
    windowSeconds: windowMs / 1000,
    async hit(key) {
      const t = now();
      // Principals that stopped calling are forgotten, once per window.
      if (t - swept >= windowMs) {
        swept = t;
        for (const [k, w] of windows) if (t - w.start >= windowMs) windows.delete(k);
      }
      let w = windows.get(key);
      if (!w || t - w.start >= windowMs) windows.set(key, (w = { start: t, count: 0 }));
      return ++w.count > limit ? waitSeconds(w.start + windowMs, t) : 0;
    },
  };
}

/**
 * The database's count, shared by every process: windows aligned to the clock (every process
 * names the same window without asking), counts added with one upsert that answers the total.
 * Far from the limit a process adds its requests `batch` at a time (by default a hundredth of
 * the limit: one write per 60 requests of a key at the default 6000); once the total it knows
 * plus what it holds comes within a batch of the limit, it writes every request. A refusal is
 * always right (the total it reads only grows within a window); what other processes still hold
 * may let through at most `batch - 1` requests each beyond the limit. Ended windows are pruned by
 * whichever process first counts in a new one (the one before is kept, for processes whose clocks
 * run a little behind).
 */
export function sharedRateLimiter(
  repo: Pick<RateWindowsRepo, 'hit' | 'prune'>,
  limit: number,
  now: () => number,
  windowMs = 60_000,
  batch = Math.max(1, Math.floor(limit / 100)),
): RateLimiter {
  let pruned = 0;
  /** Per key, in the current window: the total the database last answered, and what this process counted since. */
  const held = new Map<string, { start: number; total: number; pending: number }>();
  return {
    limit,
    windowSeconds: windowMs / 1000,
    async hit(key) {
      const t = now();
      const start = t - (t % windowMs);
      if (start > pruned) {
        pruned = start;
        for (const [k, e] of held) if (e.start < start) held.delete(k);
        void repo.prune(start - windowMs).catch(() => {});
      }
      let e = held.get(key);
      if (!e || e.start !== start) held.set(key, (e = { start, total: 0, pending: 0 }));
      e.pending++;
      if (e.pending < batch && e.total + e.pending + batch <= limit) return 0;
      const n = e.pending;
      e.pending = 0;
      const total = await repo.hit(key, start, n);
      // Answers may come back out of order; within a window the total only grows.
      if (total > e.total) e.total = total;
      return total > limit ? waitSeconds(start + windowMs, t) : 0;
    },
  };
}
