import { describe, expect, it } from 'vitest';
import { newId, newSortableId } from './ids.ts';

describe('ids', () => {
  it('newId: the prefix and 20 random characters', () => {
    expect(newId('co')).toMatch(/^co_[0-9a-z]{20}$/);
    expect(newId('co')).not.toBe(newId('co'));
  });

  it('newSortableId: the same shape, ordered by the time given, unique within a millisecond', () => {
    const t = Date.UTC(2026, 10, 27, 12);
    const ids = [t - 1, t, t, t + 1, t + 86_400_000].map((ms) => newSortableId('evt', ms));
    for (const id of ids) expect(id).toMatch(/^evt_[0-9a-z]{20}$/);
    expect(ids[0] < ids[1] && ids[0] < ids[2] && ids[1] < ids[3] && ids[2] < ids[3] && ids[3] < ids[4]).toBe(true);
    expect(ids[1]).not.toBe(ids[2]);
    // Nine characters of base-36 milliseconds run to the year 5188; an earlier time (a driven clock) still fits.
    expect(newSortableId('evt', 0)).toMatch(/^evt_0{9}[0-9a-z]{11}$/);
    expect(newSortableId('evt', 36 ** 9 - 1)).toMatch(/^evt_z{9}[0-9a-z]{11}$/);
  });
});
