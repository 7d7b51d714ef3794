// The retry ladder (spec §3, §8): a failed attempt waits ladder[i] seconds before the next one;
// the attempt after the last step is final. Pure: the caller passes the time (a Clock's now()).

/** 1 min, 5 min, 30 min, 2 h, 12 h, in seconds. */
export const DEFAULT_LADDER: readonly number[] = Object.freeze([60, 300, 1800, 7200, 43200]);

export type DeliveryState =
  | { state: 'delivered' }
  | { state: 'pending_retry'; nextAttemptAt: number }
  | { state: 'dead' };

const UNIT_SECONDS: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400 };

/**
 * `"1s,2s,5s"`, `"1m,5m"`, `"90, 1h"` (a bare number is seconds) → seconds per step.
 * An empty string means no retries: one attempt, then dead.
 */
export function parseLadder(text: string): number[] {
  if (text.trim() === '') return [];
  return text.split(',').map((part) => {
    const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(part);
    if (!m) throw new Error(`invalid retry step "${part.trim()}" in "${text}": expected e.g. 30s, 5m, 2h`);
    return Number(m[1]) * UNIT_SECONDS[m[2] ?? 's'];
  });
}

/** Every delivery gets at most this many attempts. */
export function maxAttempts(ladder: readonly number[]): number {
  return 1 + ladder.length;
}

/**
 * The state after attempt number `attemptsMade` (1 for the first) ended with `ok`.
 * Failure of attempt k ≤ ladder.length → retry at nowMs + ladder[k-1] s; failure of the last → dead.
 */
export function nextState(attemptsMade: number, ok: boolean, ladder: readonly number[], nowMs: number): DeliveryState {
  if (!Number.isInteger(attemptsMade) || attemptsMade < 1) {
    throw new RangeError(`attemptsMade must be a whole number ≥ 1, got ${attemptsMade}`);
  }
  if (ok) return { state: 'delivered' };
  if (attemptsMade <= ladder.length) {
    return { state: 'pending_retry', nextAttemptAt: nowMs + Math.round(ladder[attemptsMade - 1] * 1000) };
  }
  return { state: 'dead' };
}
