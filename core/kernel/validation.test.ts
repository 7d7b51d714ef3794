import { describe, expect, it } from 'vitest';
import { createTranslator } from './i18n/i18n.ts';
import { nulDetails } from './validation.ts';

describe('nulDetails', () => {
  const tr = createTranslator();
  const pointers = (v: unknown) => nulDetails(v, 'body', 'en', tr).map((d) => d.pointer);

  it('names every string and key holding U+0000, and nothing in a clean value', () => {
    expect(pointers({ a: 'x', b: [1, 'y', { c: null }], d: true })).toEqual([]);
    expect(pointers({ a: 'x\0', b: ['ok', 'y\0'], 'k\0': 1, 'p/q~': { r: '\0' } }).sort()).toEqual(['/a', '/b/1', '/k\0', '/p~1q~0/r']);
  });

  it('finds it at any depth and at the end of a long array without overflowing the stack', () => {
    let deep: unknown = '\0';
    for (let i = 0; i < 20_000; i++) deep = [deep];
    expect(pointers({ x: deep })).toEqual([`/x${'/0'.repeat(20_000)}`]);
    const long = [...Array.from({ length: 300_000 }, () => 0), '\0'];
    expect(pointers({ x: long })).toEqual(['/x/300000']);
  });
});
