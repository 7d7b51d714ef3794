// Minor units as exact decimal text (what a ZATCA XML, a PDF and a WPS file write amounts with),
// and a part of an amount (what a payslip pays for part of a month).
import { describe, expect, it } from 'vitest';
import { minorText, prorate } from './money.ts';

describe('minorText', () => {
  it('writes every minor digit, sign and leading zeros included, without going through a float', () => {
    expect(minorText(1_128_125n, 2)).toBe('11281.25');
    expect(minorText(460n, 2)).toBe('4.60');
    expect(minorText(5n, 2)).toBe('0.05');
    expect(minorText(-5n, 2)).toBe('-0.05');
    expect(minorText(0n, 2)).toBe('0.00');
    expect(minorText(1_000_376n, 3)).toBe('1000.376');
    expect(minorText(-1_500n, 0)).toBe('-1500');
    // Past 2^53: exact where a Number would not be.
    expect(minorText(9_007_199_254_740_993n, 2)).toBe('90071992547409.93');
  });
});

describe('prorate', () => {
  it("a month's pay for the days worked, rounded once: 16 of 31 days of 6,200 and 1,550", () => {
    expect(prorate(6200, 16, 31, 2)).toBe(3200);
    expect(prorate(1550, 16, 31, 2)).toBe(800);
    // 10,000 × 11 ÷ 30 = 3,666.666…: 3,666.67; half a fils away from zero in KWD.
    expect(prorate(10_000, 11, 30, 2)).toBe(3666.67);
    expect(prorate(0.005, 1, 2, 3)).toBe(0.003);
    expect(prorate(-0.005, 1, 2, 3)).toBe(-0.003);
    expect(prorate(1234.56, 30, 30, 2)).toBe(1234.56);
    expect(prorate(1234.56, 0, 30, 2)).toBe(0);
  });

  it('refuses what is not a part of a whole', () => {
    for (const [part, whole] of [[1, 0], [-1, 30], [1.5, 30], [1, 30.5]]) expect(() => prorate(100, part, whole, 2)).toThrow(RangeError);
  });
});
