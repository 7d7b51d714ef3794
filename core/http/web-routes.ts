// `GET /`: a small shell page that lists the company's apps and menu in English or Arabic
// (dir="rtl"), using the API with a key the person pastes in. `GET /apps/<id>/…`: each app's
// web bundle.
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { pickLanguage, direction, type Lang } from '../i18n/i18n.ts';
import { DiwanError } from '../errors/diwan-error.ts';
import type { AppRuntime } from '../apps/runtime.ts';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8', '.json': 'application/json; charset=utf-8', '.svg': 'image/svg+xml', '.png': 'image/png',
};

const TEXT = {
  en: { title: 'Diwan', key: 'API key', company: 'Company id', load: 'Show my workspace', apps: 'Installed apps', menu: 'Menu', other: 'العربية' },
  ar: { title: 'ديوان', key: 'مفتاح الواجهة البرمجية', company: 'معرّف الشركة', load: 'اعرض مساحة العمل', apps: 'التطبيقات المثبتة', menu: 'القائمة', other: 'English' },
};

export function shellPage(lang: Lang): string {
  const t = TEXT[lang];
  const other = lang === 'ar' ? 'en' : 'ar';
  return `<!doctype html>
<html lang="${lang}" dir="${direction(lang)}">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${t.title}</title>
<style>body{font-family:system-ui,sans-serif;margin:2rem;max-width:60rem}label{display:block;margin:.5rem 0}input{width:100%;padding:.4rem}
ul{padding-inline-start:1.2rem}.muted{color:#666}</style></head>
<body>
<header><h1>${t.title}</h1><a href="/?lang=${other}">${TEXT[other].other === 'English' ? 'English' : 'العربية'}</a></header>
<form id="f"><label>${t.key}<input id="key" autocomplete="off"></label><label>${t.company}<input id="company"></label><button>${t.load}</button></form>
<h2>${t.apps}</h2><ul id="apps"></ul><h2>${t.menu}</h2><ul id="menu"></ul>
<script type="module">
const $ = (id) => document.getElementById(id);
$('key').value = sessionStorage.getItem('diwan.key') ?? '';
$('company').value = sessionStorage.getItem('diwan.company') ?? '';
async function call(path) {
  const r = await fetch(path, { headers: { authorization: 'Bearer ' + $('key').value, 'x-company-id': $('company').value, 'accept-language': '${lang}' } });
  const body = await r.json();
  if (!r.ok) throw new Error(body.error.message);
  return body.data;
}
function fill(list, items) { list.replaceChildren(...items.map((text) => Object.assign(document.createElement('li'), { textContent: text }))); }
$('f').addEventListener('submit', async (e) => {
  e.preventDefault();
  sessionStorage.setItem('diwan.key', $('key').value);
  sessionStorage.setItem('diwan.company', $('company').value);
  try {
    fill($('apps'), (await call('/api/v1/apps?installed=true')).map((a) => a.name + ' ' + a.installedVersion + (a.state === 'disabled' ? ' (—)' : '')));
    fill($('menu'), (await call('/api/v1/menu')).map((m) => m.label + ' — ' + m.path));
  } catch (err) { fill($('apps'), [err.message]); }
});
</script>
</body></html>`;
}

export function webRoutes(app: FastifyInstance, runtime: AppRuntime): void {
  app.get('/', { config: { public: true } }, async (req, reply) => {
    const q = (req.query as { lang?: string }).lang;
    const lang: Lang = q === 'ar' || q === 'en' ? q : pickLanguage(req.headers['accept-language']);
    return reply.type('text/html; charset=utf-8').header('content-language', lang).send(shellPage(lang));
  });

  app.get('/apps/:app/*', { config: { public: true } }, async (req, reply) => {
    const { app: id, '*': rest } = req.params as { app: string; '*': string };
    const a = runtime.get(id);
    if (!a?.manifest.web) throw new DiwanError('NOT_FOUND', [{ app: id }]);
    const root = path.resolve(a.source.dir, a.manifest.web);
    const file = path.resolve(root, rest || 'index.html');
    if (!file.startsWith(root + path.sep) || !fs.existsSync(file) || !fs.statSync(file).isFile()) throw new DiwanError('NOT_FOUND', [{ path: req.url }]);
    return reply.type(TYPES[path.extname(file)] ?? 'application/octet-stream').send(fs.createReadStream(file));
  });
}
