// Naming series: the name from the format, the period a series counts within, the date used.
import { describe, expect, it } from 'vitest';
import { formatName, namingDate, periodOf, seriesKey } from './naming.ts';

describe('naming series', () => {
  const inv = { field: 'number', format: 'INV-{YYYY}-{#####}', date: 'date' };

  it('pads the number to as many digits as the format has #, and fills the date tokens', () => {
    expect(formatName(inv, '2026-03-14', 7)).toBe('INV-2026-00007');
    expect(formatName(inv, '2026-03-14', 123456)).toBe('INV-2026-123456');
    expect(formatName({ field: 'n', format: 'PO/{YY}{MM}/{###}' }, '2027-11-02', 42)).toBe('PO/2711/042');
  });

  it('counts per period: a yearly series has one counter per year, a monthly one per month, a plain one a single counter', () => {
    expect(seriesKey('invoice', inv, '2026-01-01')).toBe(seriesKey('invoice', inv, '2026-12-31'));
    expect(seriesKey('invoice', inv, '2026-12-31')).not.toBe(seriesKey('invoice', inv, '2027-01-01'));
    const monthly = { field: 'n', format: 'PO-{YYYY}{MM}-{####}' };
    expect(seriesKey('order', monthly, '2026-01-31')).not.toBe(seriesKey('order', monthly, '2026-02-01'));
    const plain = { field: 'n', format: 'ADM{######}' };
    expect(seriesKey('admission', plain, '2026-01-01')).toBe(seriesKey('admission', plain, '2030-06-01'));
    expect(periodOf('INV-{YYYY}-{#####}', '2026-05-01')).toBe('INV-2026-{#####}');
  });

  it("takes the document's date when it has one, else today", () => {
    expect(namingDate(inv, { date: '2025-12-31' }, '2026-01-02')).toBe('2025-12-31');
    expect(namingDate(inv, {}, '2026-01-02')).toBe('2026-01-02');
    expect(namingDate({ field: 'n', format: '{#}' }, { date: '2025-12-31' }, '2026-01-02')).toBe('2026-01-02');
  });
});
