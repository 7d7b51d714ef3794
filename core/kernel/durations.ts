// Durations as people write them in settings: `30s`, `5m`, `2h`, `1d`, `250ms`; a bare number is seconds.

/** 1 min, 5 min, 30 min, 2 h, 12 h, in seconds: the spec's retry ladder. */
export const DEFAULT_LADDER: readonly number[] = Object.freeze([60, 300, 1800, 7200, 43200]);

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

