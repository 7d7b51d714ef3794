// How a child's write moves its parents' aggregates: created, changed, moved to another parent,
// into a state that does not count, deleted; money exact in minor units.
import { describe, expect, it } from 'vitest';
import { addToAggregate, aggregateDeltas, aggregatedBy, distinctMoves } from './aggregates.ts';
import { staysManifest } from '../../../test/rules-gaps-app.ts';
import { rulesManifest } from '../../../test/rules-app.ts';

const [order, book] = rulesManifest().documentTypes!;
const list = aggregatedBy(rulesManifest().documentTypes!, order);
const moves = (before?: Record<string, unknown>, after?: Record<string, unknown>) =>
  Object.fromEntries(aggregateDeltas(list, before, after, 2).map((m) => [m.parent, Object.fromEntries(m.deltas)]));

describe('aggregates over child documents', () => {
  it('finds the aggregates over a type', () => {
    expect(list.map((a) => [a.parent, a.field.name, a.summed?.name])).toEqual([['book', 'committed', 'total'], ['book', 'orders', undefined]]);
    expect(aggregatedBy(rulesManifest().documentTypes!, book)).toEqual([]);
  });

  it('moves by what the child counted for before and counts for now', () => {
    // A draft counts in the number of orders, not in what is committed.
    expect(moves(undefined, { state: 'draft', bookId: 'bk_a', total: 100.1 })).toEqual({ bk_a: { orders: 1n } });
    // Sent: its total is committed (in minor units).
    expect(moves({ state: 'draft', bookId: 'bk_a', total: 100.1 }, { state: 'sent', bookId: 'bk_a', total: 100.1 })).toEqual({ bk_a: { committed: 10010n } });
    // Its total changes while sent: the difference, exactly.
    expect(moves({ state: 'sent', bookId: 'bk_a', total: 100.1 }, { state: 'sent', bookId: 'bk_a', total: 100.3 })).toEqual({ bk_a: { committed: 20n } });
    // Moved to another book: out of one, into the other.
    expect(moves({ state: 'sent', bookId: 'bk_a', total: 50 }, { state: 'sent', bookId: 'bk_b', total: 50 })).toEqual({ bk_a: { committed: -5000n, orders: -1n }, bk_b: { committed: 5000n, orders: 1n } });
    // Lost: out of both; deleted: out of what it counted for.
    expect(moves({ state: 'sent', bookId: 'bk_a', total: 50 }, { state: 'lost', bookId: 'bk_a', total: 50 })).toEqual({ bk_a: { committed: -5000n, orders: -1n } });
    expect(moves({ state: 'draft', bookId: 'bk_a', total: 50 }, undefined)).toEqual({ bk_a: { orders: -1n } });
    // Nothing that counts moved: no parent is touched.
    expect(moves({ state: 'sent', bookId: 'bk_a', total: 50, notes: 'x' }, { state: 'sent', bookId: 'bk_a', total: 50, notes: 'y' })).toEqual({});
    expect(moves(undefined, { state: 'draft', total: 50 })).toEqual({});
    // Parents in the order they are locked: by id, whichever the child left.
    expect(aggregateDeltas(list, { state: 'sent', bookId: 'bk_b', total: 50 }, { state: 'sent', bookId: 'bk_a', total: 50 }, 2).map((m) => m.parent)).toEqual(['bk_a', 'bk_b']);
  });

  it('adds to the stored value exactly', () => {
    const committed = book.fields.find((f) => f.name === 'committed')!;
    // 0.1 + 0.2 in floating point is 0.30000000000000004; in minor units it is 0.30.
    expect(addToAggregate(committed, addToAggregate(committed, 0.1, 20n, 2), 0n, 2)).toBe(0.3);
    expect(addToAggregate(committed, 11_525, 805_050n, 2)).toBe(19_575.5);
    expect(addToAggregate(committed, undefined, -1n, 3)).toBe(-0.001);
  });

  it('finds the values a write brings into or takes out of a distinct count (whether each counts is asked of the other children)', () => {
    const [, stay] = staysManifest().documentTypes!;
    const guests = aggregatedBy(staysManifest().documentTypes!, stay);
    const moves = (before?: Record<string, unknown>, after?: Record<string, unknown>) => distinctMoves(guests, before, after).map((m) => [m.parent, m.by, m.value]);
    expect(moves(undefined, { state: 'booked', roomId: 'rm_a', guest: 'Aisha' })).toEqual([['rm_a', 1n, 'Aisha']]);
    // The same guest in the same room: nothing moves; another guest or room: out of one, into the other.
    expect(moves({ state: 'booked', roomId: 'rm_a', guest: 'Aisha' }, { state: 'in', roomId: 'rm_a', guest: 'Aisha' })).toEqual([]);
    expect(moves({ state: 'booked', roomId: 'rm_a', guest: 'Aisha' }, { state: 'booked', roomId: 'rm_b', guest: 'Aisha' })).toEqual([['rm_a', -1n, 'Aisha'], ['rm_b', 1n, 'Aisha']]);
    // Cancelled, or with no guest: it counts for nothing.
    expect(moves({ state: 'booked', roomId: 'rm_a', guest: 'Aisha' }, { state: 'cancelled', roomId: 'rm_a', guest: 'Aisha' })).toEqual([['rm_a', -1n, 'Aisha']]);
    expect(moves(undefined, { state: 'booked', roomId: 'rm_a' })).toEqual([]);
  });
});
