import { describe, expect, it } from 'vitest';
import { bodyAjv, check } from './validation.ts';
import { createTranslator } from './i18n/i18n.ts';
import { unstorableDetails } from './validation.ts';
import { DiwanError } from './errors/diwan-error.ts';

describe('unstorableDetails', () => {
  const tr = createTranslator();
  const details = (v: unknown, lang: 'en' | 'ar' = 'en') => unstorableDetails(v, 'body', lang, tr);
  const pointers = (v: unknown) => details(v).map((d) => d.pointer);
  const rules = (v: unknown) => Object.fromEntries(details(v).map((d) => [d.pointer, d.rule]));

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

  it('names a lone high or low surrogate anywhere in a string: start, middle, end, alone, reversed pair', () => {
    const lone = { hiEnd: 'a\ud800', loMid: 'a\udfffb', loStart: '\udc00x', hiAlone: '\udbff', reversed: '\udc00\ud800', twoHighs: '\ud83d\ud83d' };
    expect(rules(lone)).toEqual({ '/hiEnd': 'surrogate', '/loMid': 'surrogate', '/loStart': 'surrogate', '/hiAlone': 'surrogate', '/reversed': 'surrogate', '/twoHighs': 'surrogate' });
  });

  it('names both problems of a string that holds U+0000 and a lone surrogate, each at its pointer', () => {
    expect(details({ phone: 'a\0b\udfff' }).map((d) => [d.pointer, d.rule])).toEqual([['/phone', 'nul'], ['/phone', 'surrogate']]);
    expect(details({ 'k\0\ud800': 1 }).map((d) => d.rule)).toEqual(['nul', 'surrogate']);
  });

  it('accepts valid pairs (emoji, the last code point) and the replacement character', () => {
    expect(pointers({ emoji: '😀 ok', last: '\u{10ffff}', pairByHand: '\ud83d\ude00', replacement: '\ufffd', arabic: 'عميل' })).toEqual([]);
  });

  it('checks keys, reporting the key itself and not what it holds; and values nested in arrays and objects', () => {
    expect(rules({ 'k\udfff': 'fine', lines: [{ note: 'ok' }, { note: ['x', { deep: 'z\ud800' }] }] })).toEqual({
      '/k\udfff': 'surrogate',
      '/lines/1/note/1/deep': 'surrogate',
    });
    expect(rules({ 'k\udfff': 'bad\0' })).toEqual({ '/k\udfff': 'surrogate' });
    expect(pointers('\udfff')).toEqual(['']);
  });

  it('says which rule in the caller\'s language, naming the field', () => {
    const [en] = details({ email: 'a\udfffb@example.com' });
    expect(en).toEqual({ in: 'body', pointer: '/email', rule: 'surrogate', message: expect.stringContaining('email must not contain a lone surrogate') });
    const [ar] = details({ lines: [{ name: '\ud800' }] }, 'ar');
    expect(ar.message).toContain('lines[0].name');
    expect(ar.message).toMatch(/[\u0600-\u06ff]/);
    expect(details({ a: '\0' })[0].message).toBe('a must not contain the character U+0000');
  });
});

describe('check', () => {
  const tr = createTranslator();
  const validate = bodyAjv.compile({ type: 'object', properties: { name: { type: 'string', maxLength: 3 } }, additionalProperties: false });

  it('refuses unstorable text the schema lets through (what app code writes never passed the pipeline)', () => {
    const err = (() => {
      try {
        check(validate, { name: 'a\udfff' }, 'body', 'en', tr);
      } catch (e) {
        return e as DiwanError;
      }
    })();
    expect(err).toBeInstanceOf(DiwanError);
    expect(err!.code).toBe('VALIDATION_ERROR');
    expect(err!.details).toEqual([expect.objectContaining({ pointer: '/name', rule: 'surrogate' })]);
  });

  it('lists schema problems and unstorable text together, and returns a good value', () => {
    try {
      check(validate, { name: 'long\0', extra: 1 }, 'body', 'en', tr);
      expect.unreachable();
    } catch (e) {
      expect((e as DiwanError).details.map((d) => `${d.pointer} ${d.rule}`).sort()).toEqual(['/extra additionalProperties', '/name maxLength', '/name nul']);
    }
    expect(check(validate, { name: 'ok😀' }, 'body', 'en', tr)).toEqual({ name: 'ok😀' });
  });
});
