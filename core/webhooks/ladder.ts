// The retry ladder (spec §3, §8): a failed attempt waits ladder[i] seconds before the next one;
// the attempt after the last step is final. Pure: the caller passes the time (a Clock's now())
// and the randomness.
//
// Beside the ladder, what the consumer says:
// - Jitter: each wait is moved by a random amount within ±`jitter` of its step (10 % by default,
//   DIWAN_WEBHOOK_JITTER), further bounded to just under half the distance to each neighbouring
//   step, so that step n+1 with its jitter always comes later than step n with its own.
// - Retry-After on a 429 or 503 (delta-seconds or an HTTP-date): the next attempt is at the time
//   asked, capped at RETRY_AFTER_CAP_MS, plus up to `jitter` of that wait (never earlier than
//   asked). Such an attempt is *deferred*: it does not count as a ladder step, so the delivery's
//   ladder position stays where it was (step = attempts − deferrals). At most MAX_DEFERRALS
//   Retry-After answers are honoured per delivery; after that they are ordinary failures on the
//   ladder, so every delivery ends within 1 + ladder.length + MAX_DEFERRALS attempts.

export type DeliveryState =
  | { state: 'delivered' }
  | { state: 'pending_retry'; nextAttemptAt: number; deferred?: true }
  | { state: 'dead' };

/** The longest wait a Retry-After gets (1 hour): a larger value is capped. */
export const RETRY_AFTER_CAP_MS = 3_600_000;
/** Retry-After answers honoured per delivery; later ones walk the ladder. */
export const MAX_DEFERRALS = 5;
/** Statuses whose Retry-After is honoured. */
export const RETRY_AFTER_STATUSES: ReadonlySet<number> = new Set([429, 503]);

export interface RetryOptions {
  /** Fraction of a step a retry time may move either way (0.1: ±10 %); 0 or absent: none. */
  jitter?: number;
  /** Uniform in [0, 1); Math.random by default. */
  random?: () => number;
  /** The wait a Retry-After asked for (ms from nowMs), or null/absent. */
  retryAfterMs?: number | null;
  /** Retry-After answers already honoured for this delivery. */
  deferrals?: number;
}

/** Every delivery gets at most this many ladder attempts (plus up to MAX_DEFERRALS deferred ones). */
export function maxAttempts(ladder: readonly number[]): number {
  return 1 + ladder.length;
}

/**
 * The most a wait of step `i` (0-based) moves either way: `jitter` of the step, and just under
 * half the gap to each neighbour (0 where the ladder does not rise), so the steps keep their order.
 */
export function jitterBoundMs(ladder: readonly number[], i: number, jitter: number): number {
  const s = ladder[i] * 1000;
  let bound = Math.max(0, jitter) * s;
  if (i > 0) bound = Math.min(bound, Math.max(0, s - ladder[i - 1] * 1000) * 0.49);
  if (i + 1 < ladder.length) bound = Math.min(bound, Math.max(0, ladder[i + 1] * 1000 - s) * 0.49);
  return bound;
}

/**
 * A Retry-After value as a wait in ms from `nowMs`: delta-seconds or an HTTP-date (a date in the
 * past is 0); null when absent or unreadable.
 */
export function parseRetryAfter(value: string | null | undefined, nowMs: number): number | null {
  if (value == null) return null;
  const v = value.trim();
  if (/^\d{1,10}$/.test(v)) return Number(v) * 1000;
  // An HTTP-date (RFC 9110: IMF-fixdate, or the obsolete forms Date.parse also reads); not bare numbers or ISO forms.
  if (!/^[A-Za-z]{3},? /.test(v) && !/^[A-Za-z]+day, /.test(v)) return null;
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, at - nowMs);
}

/**
 * The state after an attempt ended with `ok`. `step` is the delivery's ladder position: attempts
 * made, this one included, minus those deferred by a Retry-After (1 for a first attempt).
 * Failure at step k ≤ ladder.length → retry at nowMs + ladder[k-1] s (± jitter); failure of the
 * last → dead; a Retry-After honoured (see the header) → deferred, whatever the step.
 */
export function nextState(step: number, ok: boolean, ladder: readonly number[], nowMs: number, opts: RetryOptions = {}): DeliveryState {
  if (!Number.isInteger(step) || step < 1) {
    throw new RangeError(`the ladder step must be a whole number ≥ 1, got ${step}`);
  }
  if (ok) return { state: 'delivered' };
  const jitter = opts.jitter ?? 0;
  const random = opts.random ?? Math.random;
  if (opts.retryAfterMs != null && opts.retryAfterMs >= 0 && (opts.deferrals ?? 0) < MAX_DEFERRALS) {
    const wait = Math.min(opts.retryAfterMs, RETRY_AFTER_CAP_MS);
    return { state: 'pending_retry', nextAttemptAt: nowMs + Math.round(wait * (1 + Math.max(0, jitter) * random())), deferred: true };
  }
  if (step <= ladder.length) {
    const i = step - 1;
    const bound = jitter > 0 ? jitterBoundMs(ladder, i, jitter) : 0;
    const offset = bound > 0 ? (2 * random() - 1) * bound : 0;
    return { state: 'pending_retry', nextAttemptAt: nowMs + Math.round(ladder[i] * 1000 + offset) };
  }
  return { state: 'dead' };
}
