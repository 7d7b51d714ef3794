// Calendar days as an app counts them from its documents' dates.
import { describe, expect, it } from 'vitest';
import { calendarDays } from './dates.ts';

describe('calendarDays', () => {
  it('counts both ends, across months, leap days and years', () => {
    expect(calendarDays('2026-03-16', '2026-03-31')).toBe(16);
    expect(calendarDays('2026-03-01', '2026-03-01')).toBe(1);
    expect(calendarDays('2024-02-01', '2024-02-29')).toBe(29);
    expect(calendarDays('2025-12-31', '2026-01-01')).toBe(2);
    expect(calendarDays('2026-01-01', '2026-12-31')).toBe(365);
    expect(calendarDays('2026-03-31', '2026-03-16')).toBe(-14);
  });

  it('refuses an impossible date instead of rolling it over', () => {
    for (const bad of ['2026-02-30', '2026-13-01', '2026-1-1', '', '2025-02-29']) expect(() => calendarDays(bad, '2026-03-01')).toThrow(RangeError);
  });
});
