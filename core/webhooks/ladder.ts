// The retry ladder (spec §3, §8): a failed attempt waits ladder[i] seconds before the next one;
// the attempt after the last step is final. Pure: the caller passes the time (a Clock's now()).

export type DeliveryState =
  | { state: 'delivered' }
  | { state: 'pending_retry'; nextAttemptAt: number }
  | { state: 'dead' };

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
