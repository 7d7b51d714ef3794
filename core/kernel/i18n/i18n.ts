// i18next with one namespace per app (`core` for the host). Language comes from
// Accept-Language: Arabic or English, English when absent or unknown.
import i18next, { type i18n, type TFunction } from 'i18next';
import { coreStrings } from './core-strings.ts';

export const LANGUAGES = ['en', 'ar'] as const;
export type Lang = (typeof LANGUAGES)[number];

export const direction = (lang: Lang): 'ltr' | 'rtl' => (lang === 'ar' ? 'rtl' : 'ltr');

export interface Translator {
  t(lang: Lang, key: string, params?: Record<string, unknown>, ns?: string): string;
  addNamespace(ns: string, tables: { en: Record<string, string>; ar: Record<string, string> }): void;
  removeNamespace(ns: string): void;
  hasKey(lang: Lang, key: string, ns: string): boolean;
}

export function createTranslator(): Translator {
  const inst: i18n = i18next.createInstance();
  void inst.init({
    initImmediate: false,
    showSupportNotice: false,
    lng: 'en',
    fallbackLng: false,
    supportedLngs: [...LANGUAGES],
    ns: ['core'],
    defaultNS: 'core',
    // Keys contain dots (`rule.minimum`) and are flat.
    keySeparator: false,
    nsSeparator: false,
    interpolation: { escapeValue: false },
    returnNull: false,
    resources: { en: { core: coreStrings.en }, ar: { core: coreStrings.ar } },
  });
  const fixed = new Map<string, TFunction>();
  const fixedT = (lang: Lang, ns: string) => {
    const k = `${lang}|${ns}`;
    let f = fixed.get(k);
    if (!f) fixed.set(k, (f = inst.getFixedT(lang, ns)));
    return f;
  };
  return {
    t: (lang, key, params = {}, ns = 'core') => fixedT(lang, ns)(key, params) as string,
    addNamespace(ns, tables) {
      for (const lang of LANGUAGES) inst.addResourceBundle(lang, ns, tables[lang], true, true);
    },
    removeNamespace(ns) {
      for (const lang of LANGUAGES) inst.removeResourceBundle(lang, ns);
    },
    hasKey: (lang, key, ns) => inst.exists(key, { lng: lang, ns }),
  };
}

/** Picks `ar` or `en` from an Accept-Language header, honouring q-values. */
export function pickLanguage(header: string | string[] | undefined): Lang {
  const value = Array.isArray(header) ? header.join(',') : header;
  if (!value) return 'en';
  let best: Lang = 'en';
  let bestQ = -1;
  for (const part of value.split(',')) {
    const [tag, ...params] = part.trim().toLowerCase().split(';');
    const base = tag.split('-')[0];
    if (base !== 'ar' && base !== 'en') continue;
    const qParam = params.find((p) => p.trim().startsWith('q='));
    const q = qParam ? Number(qParam.trim().slice(2)) : 1;
    if (Number.isFinite(q) && q > bestQ) {
      best = base;
      bestQ = q;
    }
  }
  return best;
}
