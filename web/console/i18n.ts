// The console's strings (i18next, one `console` namespace) and the person's language: kept in
// localStorage, sent to the API as Accept-Language, and applied to <html lang dir>.
import i18next from 'i18next';
import { strings, type StringKey } from './strings.ts';

export type Lang = 'en' | 'ar';
const STORE = 'diwan.lang';

export const isLang = (v: unknown): v is Lang => v === 'en' || v === 'ar';

/** The remembered language; otherwise the page's (the server chose it from Accept-Language or ?lang=). */
export function initialLang(): Lang {
  const asked = new URLSearchParams(location.search).get('lang');
  if (isLang(asked)) return asked;
  try {
    const kept = localStorage.getItem(STORE);
    if (isLang(kept)) return kept;
  } catch {
    /* storage refused: use the page's language */
  }
  return isLang(document.documentElement.lang) ? document.documentElement.lang : 'en';
}

const i18n = i18next.createInstance();
void i18n.init({
  initAsync: false,
  showSupportNotice: false,
  lng: 'en',
  fallbackLng: false,
  supportedLngs: ['en', 'ar'],
  ns: ['console'],
  defaultNS: 'console',
  keySeparator: false,
  nsSeparator: false,
  interpolation: { escapeValue: false },
  returnNull: false,
  resources: { en: { console: strings.en }, ar: { console: strings.ar } },
});

let current: Lang = 'en';

export const lang = (): Lang => current;
export const t = (key: StringKey, params?: Record<string, unknown>): string => i18n.t(key, params ?? {}) as string;

/** Switches the language: strings, <html lang dir>, and the remembered choice. */
export function applyLang(next: Lang, remember = true): void {
  current = next;
  void i18n.changeLanguage(next);
  document.documentElement.lang = next;
  document.documentElement.dir = next === 'ar' ? 'rtl' : 'ltr';
  document.title = t('app.title');
  if (remember) {
    try {
      localStorage.setItem(STORE, next);
    } catch {
      /* not remembered: the choice still holds for this page */
    }
  }
}
