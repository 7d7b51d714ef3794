import { describe, expect, it } from 'vitest';
import { ManualClock } from '../kernel/clock.ts';
import { jitterBoundMs, MAX_DEFERRALS, maxAttempts, nextState, parseRetryAfter, RETRY_AFTER_CAP_MS } from './ladder.ts';
import { DEFAULT_LADDER, parseLadder } from '../kernel/durations.ts';

describe('DEFAULT_LADDER', () => {
  it('is the spec ladder: 1 min, 5 min, 30 min, 2 h, 12 h', () => {
    expect(DEFAULT_LADDER).toEqual([60, 300, 1800, 7200, 43200]);
    expect(maxAttempts(DEFAULT_LADDER)).toBe(6);
  });
});

describe('parseLadder', () => {
  it('reads seconds, minutes, hours, days and bare seconds', () => {
    expect(parseLadder('1s,2s,5s')).toEqual([1, 2, 5]);
    expect(parseLadder('1m,5m')).toEqual([60, 300]);
    expect(parseLadder('1m, 5m, 30m, 2h, 12h')).toEqual([...DEFAULT_LADDER]);
    expect(parseLadder('90,1d')).toEqual([90, 86400]);
    expect(parseLadder('250ms,1.5s')).toEqual([0.25, 1.5]);
  });

  it('reads an empty string as no retries', () => {
    expect(parseLadder('')).toEqual([]);
    expect(parseLadder('  ')).toEqual([]);
  });

  it.each(['1x', '-1s', 's', '1s,,2s', '1 m 2', 'abc'])('rejects %j', (text) => {
    expect(() => parseLadder(text)).toThrow(/invalid retry step/);
  });
});

describe('nextState', () => {
  const clock = new ManualClock();
  const now = clock.now();

  it('any successful attempt is delivered', () => {
    for (let attempt = 1; attempt <= 6; attempt++) {
      expect(nextState(attempt, true, DEFAULT_LADDER, now)).toEqual({ state: 'delivered' });
    }
  });

  it('each failed attempt but the last waits for its ladder step', () => {
    expect(nextState(1, false, DEFAULT_LADDER, now)).toEqual({ state: 'pending_retry', nextAttemptAt: now + 60_000 });
    expect(nextState(2, false, DEFAULT_LADDER, now)).toEqual({ state: 'pending_retry', nextAttemptAt: now + 300_000 });
    expect(nextState(3, false, DEFAULT_LADDER, now)).toEqual({ state: 'pending_retry', nextAttemptAt: now + 1_800_000 });
    expect(nextState(4, false, DEFAULT_LADDER, now)).toEqual({ state: 'pending_retry', nextAttemptAt: now + 7_200_000 });
    expect(nextState(5, false, DEFAULT_LADDER, now)).toEqual({ state: 'pending_retry', nextAttemptAt: now + 43_200_000 });
  });

  it('the attempt after the last step failing is dead', () => {
    expect(nextState(6, false, DEFAULT_LADDER, now)).toEqual({ state: 'dead' });
    expect(nextState(7, false, DEFAULT_LADDER, now)).toEqual({ state: 'dead' });
  });

  it('walks a whole delivery on a manual clock: six attempts, then dead', () => {
    const c = new ManualClock();
    const start = c.now();
    const attemptsAt: number[] = [];
    let attempt = 0;
    for (;;) {
      attempt++;
      attemptsAt.push(c.now() - start);
      const s = nextState(attempt, false, DEFAULT_LADDER, c.now());
      if (s.state !== 'pending_retry') {
        expect(s.state).toBe('dead');
        break;
      }
      c.set(s.nextAttemptAt);
    }
    expect(attempt).toBe(maxAttempts(DEFAULT_LADDER));
    // Cumulative offsets: 0, 1 min, 6 min, 36 min, 2 h 36 min, 14 h 36 min.
    expect(attemptsAt.map((ms) => ms / 1000)).toEqual([0, 60, 360, 2160, 9360, 52560]);
  });

  it('follows a configured ladder, including fractional seconds', () => {
    const ladder = parseLadder('250ms,2s');
    expect(nextState(1, false, ladder, 1000)).toEqual({ state: 'pending_retry', nextAttemptAt: 1250 });
    expect(nextState(2, false, ladder, 1000)).toEqual({ state: 'pending_retry', nextAttemptAt: 3000 });
    expect(nextState(3, false, ladder, 1000)).toEqual({ state: 'dead' });
  });

  it('with an empty ladder a single failure is dead', () => {
    expect(nextState(1, false, [], now)).toEqual({ state: 'dead' });
    expect(nextState(1, true, [], now)).toEqual({ state: 'delivered' });
  });

  it('jitter: each retry time stays within ±10 % of its step, and step n+1 with jitter always comes after step n with jitter', () => {
    const draws = [0, 0.999999, 0.5, ...Array.from({ length: 200 }, () => Math.random())];
    const lows: number[] = [];
    const highs: number[] = [];
    DEFAULT_LADDER.forEach((step, i) => {
      const seen = draws.map((r) => {
        const s = nextState(i + 1, false, DEFAULT_LADDER, now, { jitter: 0.1, random: () => r });
        if (s.state !== 'pending_retry') throw new Error('expected a retry');
        return s.nextAttemptAt - now;
      });
      for (const wait of seen) {
        expect(wait).toBeGreaterThanOrEqual(step * 1000 * 0.9);
        expect(wait).toBeLessThanOrEqual(step * 1000 * 1.1);
      }
      // The extremes of the draw reach the bound (the spec ladder's steps are far enough apart).
      expect(Math.min(...seen)).toBe(step * 1000 * 0.9);
      expect(Math.max(...seen)).toBeGreaterThan(step * 1000 * 1.1 - 10);
      lows.push(Math.min(...seen));
      highs.push(Math.max(...seen));
    });
    for (let i = 0; i + 1 < DEFAULT_LADDER.length; i++) expect(lows[i + 1]).toBeGreaterThan(highs[i]);
  });

  it('jitter keeps the order of a ladder whose steps are close, and moves nothing where steps are equal', () => {
    const ladder = [10, 11, 11, 30];
    expect(jitterBoundMs(ladder, 0, 0.1)).toBeCloseTo(490); // under half the 1 s gap, not 10 % of 10 s
    expect(jitterBoundMs(ladder, 1, 0.1)).toBe(0);
    expect(jitterBoundMs(ladder, 3, 0.1)).toBe(3000);
    const wait = (step: number, r: number) => {
      const s = nextState(step, false, ladder, 0, { jitter: 0.1, random: () => r });
      return s.state === 'pending_retry' ? s.nextAttemptAt : NaN;
    };
    expect(wait(1, 0.999999)).toBeLessThan(wait(2, 0));
    expect(wait(3, 0.999999)).toBeLessThan(wait(4, 0));
    expect(wait(2, 0)).toBe(11_000);
  });

  it('no jitter unless asked', () => {
    expect(nextState(1, false, DEFAULT_LADDER, now, { random: () => 0 })).toEqual({ state: 'pending_retry', nextAttemptAt: now + 60_000 });
  });

  it('a Retry-After defers the next attempt as asked (plus up to the jitter, never earlier), capped at an hour, whatever the step', () => {
    const at = (retryAfterMs: number, opts = {}) => nextState(3, false, DEFAULT_LADDER, now, { retryAfterMs, ...opts });
    expect(at(120_000)).toEqual({ state: 'pending_retry', nextAttemptAt: now + 120_000, deferred: true });
    expect(at(0)).toEqual({ state: 'pending_retry', nextAttemptAt: now, deferred: true });
    expect(at(5 * 3_600_000)).toEqual({ state: 'pending_retry', nextAttemptAt: now + RETRY_AFTER_CAP_MS, deferred: true });
    expect(at(120_000, { jitter: 0.1, random: () => 0.5 })).toEqual({ state: 'pending_retry', nextAttemptAt: now + 126_000, deferred: true });
    // Even the last step's failure is deferred, not dead.
    expect(nextState(6, false, DEFAULT_LADDER, now, { retryAfterMs: 1000 })).toEqual({ state: 'pending_retry', nextAttemptAt: now + 1000, deferred: true });
    // After MAX_DEFERRALS, Retry-After is an ordinary failure on the ladder.
    expect(nextState(3, false, DEFAULT_LADDER, now, { retryAfterMs: 1000, deferrals: MAX_DEFERRALS })).toEqual({ state: 'pending_retry', nextAttemptAt: now + 1_800_000 });
    expect(nextState(6, false, DEFAULT_LADDER, now, { retryAfterMs: 1000, deferrals: MAX_DEFERRALS })).toEqual({ state: 'dead' });
    expect(nextState(3, true, DEFAULT_LADDER, now, { retryAfterMs: 1000 })).toEqual({ state: 'delivered' });
  });

  it('parseRetryAfter reads delta-seconds and HTTP-dates, and nothing else', () => {
    const t = Date.UTC(2026, 0, 15, 9, 0, 0);
    expect(parseRetryAfter('120', t)).toBe(120_000);
    expect(parseRetryAfter(' 0 ', t)).toBe(0);
    expect(parseRetryAfter(new Date(t + 90_000).toUTCString(), t)).toBe(90_000);
    expect(parseRetryAfter('Thu, 15 Jan 2026 09:02:00 GMT', t)).toBe(120_000);
    expect(parseRetryAfter('Thursday, 15-Jan-26 09:02:00 GMT', t)).toBe(120_000);
    expect(parseRetryAfter('Thu, 15 Jan 2026 08:00:00 GMT', t)).toBe(0); // in the past: now
    for (const bad of [undefined, null, '', '-5', '1.5', 'soon', '2026-01-15T09:02:00Z', 'Thu, 99 Foo 2026']) expect(parseRetryAfter(bad, t)).toBeNull();
  });

  it.each([0, -1, 1.5, NaN])('rejects attemptsMade %s', (n) => {
    expect(() => nextState(n, false, DEFAULT_LADDER, now)).toThrow(RangeError);
  });
});
