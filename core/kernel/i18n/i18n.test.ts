import { describe, expect, it } from 'vitest';
import { createTranslator, pickLanguage, direction } from './i18n.ts';

describe('pickLanguage', () => {
  it.each([
    [undefined, 'en'], ['', 'en'], ['ar', 'ar'], ['ar-SA,ar;q=0.9', 'ar'], ['fr-FR, en;q=0.5', 'en'],
    ['en;q=0.4, ar;q=0.8', 'ar'], ['de', 'en'], ['AR', 'ar'], ['en-GB;q=0.9, ar;q=0.1', 'en'],
  ] as const)('%j → %s', (header, lang) => {
    expect(pickLanguage(header)).toBe(lang);
  });

  it('gives Arabic right to left', () => {
    expect(direction('ar')).toBe('rtl');
    expect(direction('en')).toBe('ltr');
  });
});

describe('translator', () => {
  const tr = createTranslator();

  it('uses every Arabic plural form (zero, one, two, few, many, other)', () => {
    const forms = [0, 1, 2, 3, 11, 100].map((count) => tr.t('ar', 'rule.minItems', { field: 'البنود', count }));
    expect(forms[0]).toContain('صفر');
    expect(forms[1]).toContain('عنصر واحد');
    expect(forms[2]).toContain('عنصرين');
    expect(forms[3]).toBe('يجب أن يحتوي البنود على 3 عناصر على الأقل');
    expect(forms[4]).toBe('يجب أن يحتوي البنود على 11 عنصرًا على الأقل');
    expect(forms[5]).toBe('يجب أن يحتوي البنود على 100 عنصر على الأقل');
    expect(new Set(forms).size).toBe(6);
  });

  it('uses English singular and plural', () => {
    expect(tr.t('en', 'rule.minItems', { field: 'lines', count: 1 })).toBe('lines must have at least 1 item');
    expect(tr.t('en', 'rule.minItems', { field: 'lines', count: 2 })).toBe('lines must have at least 2 items');
  });

  it('keeps one namespace per app, and forgets it when the app goes', () => {
    tr.addNamespace('app.demo', { en: { hello: 'Hello {{name}}' }, ar: { hello: 'مرحبًا {{name}}' } });
    expect(tr.t('ar', 'hello', { name: 'هدى' }, 'app.demo')).toBe('مرحبًا هدى');
    expect(tr.hasKey('en', 'hello', 'core')).toBe(false);
    tr.removeNamespace('app.demo');
    expect(tr.hasKey('en', 'hello', 'app.demo')).toBe(false);
  });
});
