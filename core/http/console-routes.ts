// The web console: one HTML page answered for each of the console's client routes, and its
// content-hashed script and style from memory. The page is revalidated on every visit
// (`no-cache`); the assets it names are immutable.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { pickLanguage, direction, type Lang } from '../kernel/i18n/i18n.ts';
import { DiwanError } from '../kernel/errors/diwan-error.ts';
import { consoleBundle, ASSET_PREFIX, type ConsoleBundle } from './console-bundle.ts';
import { makeAsset, REVALIDATE, sendAsset, type StaticAsset } from './static-assets.ts';

/** Client routes of the console; the server answers the page for each (the console's router takes over). */
export const CONSOLE_ROUTES = ['/', '/signin', '/sign-in', '/invite', '/d/*', '/a/*', '/settings', '/settings/*'];

const TITLE: Record<Lang, string> = { en: 'Diwan', ar: 'ديوان' };
const NOSCRIPT: Record<Lang, string> = { en: 'The Diwan console needs JavaScript.', ar: 'تحتاج واجهة ديوان إلى تفعيل JavaScript.' };

/** Only the host's own files: scripts, styles, the API and app bundles (same origin), frames of app bundles. */
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'self'",
].join('; ');

export function consolePage(lang: Lang, bundle: Pick<ConsoleBundle, 'script' | 'style'>): string {
  return `<!doctype html>
<html lang="${lang}" dir="${direction(lang)}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light">
<title>${TITLE[lang]}</title>
<link rel="icon" href="data:,">
${bundle.style ? `<link rel="stylesheet" href="${bundle.style}">\n` : ''}<script type="module" src="${bundle.script}"></script>
</head>
<body>
<div id="app"></div>
<noscript>${NOSCRIPT[lang]}</noscript>
</body>
</html>
`;
}

export function consoleRoutes(app: FastifyInstance): void {
  const pages = new WeakMap<ConsoleBundle, Record<Lang, StaticAsset>>();
  const pageFor = (bundle: ConsoleBundle, lang: Lang) => {
    let p = pages.get(bundle);
    if (!p) {
      p = {
        en: makeAsset(consolePage('en', bundle), 'text/html; charset=utf-8', REVALIDATE, 'accept-encoding, accept-language'),
        ar: makeAsset(consolePage('ar', bundle), 'text/html; charset=utf-8', REVALIDATE, 'accept-encoding, accept-language'),
      };
      pages.set(bundle, p);
    }
    return p[lang];
  };

  const page = async (req: FastifyRequest, reply: FastifyReply) => {
    const q = (req.query as { lang?: string }).lang;
    const lang: Lang = q === 'ar' || q === 'en' ? q : pickLanguage(req.headers['accept-language']);
    const bundle = await consoleBundle();
    reply
      .header('content-language', lang)
      .header('content-security-policy', CSP)
      .header('referrer-policy', 'same-origin')
      .header('x-frame-options', 'SAMEORIGIN');
    return sendAsset(req, reply, pageFor(bundle, lang));
  };
  for (const url of CONSOLE_ROUTES) app.get(url, { config: { public: true } }, page);

  app.get(`${ASSET_PREFIX}:file`, { config: { public: true } }, async (req, reply) => {
    const bundle = await consoleBundle();
    const asset = bundle.assets.get(`${ASSET_PREFIX}${(req.params as { file: string }).file}`);
    if (!asset) throw new DiwanError('NOT_FOUND', [{ path: req.url.split('?')[0] }]);
    return sendAsset(req, reply, asset);
  });
}
