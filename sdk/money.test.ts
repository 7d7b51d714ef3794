// Minor units as exact decimal text: what a ZATCA XML, a PDF and a WPS file write amounts with.
import { describe, expect, it } from 'vitest';
import { minorText } from './money.ts';

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
