import { describe, expect, it } from 'vitest';
import { ManualClock } from '../kernel/clock.ts';
import { maxAttempts, nextState } from './ladder.ts';
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

  it.each([0, -1, 1.5, NaN])('rejects attemptsMade %s', (n) => {
    expect(() => nextState(n, false, DEFAULT_LADDER, now)).toThrow(RangeError);
  });
});
