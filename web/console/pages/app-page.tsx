// An app's own page: its web bundle mounted in a frame (given the language and the company),
// or, for an app without one, its description and its document types. The bundle is on the
// console's origin, so its requests carry the person's session cookie; for its writes it asks
// the shell for the session's CSRF token (a `diwan:session?` message), and the shell answers
// its own frame only, on its own origin.
import { useEffect, useRef } from 'preact/hooks';
import { lang, t } from '../i18n.ts';
import { csrfToken, qs } from '../api.ts';
import { PageHeader } from '../ui.tsx';
import { useWorkspace } from '../workspace.tsx';
import { useLocation } from 'preact-iso';
import { NotFound } from './not-found.tsx';

export function AppPage({ app }: { app: string }) {
  const ws = useWorkspace();
  const { query } = useLocation();
  const info = ws.apps.find((a) => a.id === app);
  const frame = useRef<HTMLIFrameElement>(null);
  useEffect(() => {
    const answer = (e: MessageEvent) => {
      const win = frame.current?.contentWindow;
      if (!win || e.source !== win || e.origin !== location.origin || (e.data as { type?: unknown } | null)?.type !== 'diwan:session?') return;
      win.postMessage({ type: 'diwan:session', csrfToken: csrfToken(), companyId: ws.company.id, lang: lang() }, location.origin);
    };
    window.addEventListener('message', answer);
    return () => window.removeEventListener('message', answer);
  }, [ws.company.id]);
  if (!info || info.state !== 'enabled') return <NotFound />;
  const types = ws.types.filter((d) => d.app === app && d.permissions.read);
  // A page of the bundle, relative to /apps/<id>/ (an older `/<id>` path means its start page).
  const page = query.page && query.page !== `/${app}` && !query.page.startsWith(`/${app}/`) ? query.page.replace(/^\/+/, '') : '';
  const src = `/apps/${app}/${page}${qs({ lang: lang(), company: ws.company.id })}`;
  return (
    <section class="app-page">
      <PageHeader title={info.name} />
      <p class="muted">{info.description}</p>
      {types.length > 0 && (
        <ul class="chips">
          {types.map((d) => (
            <li>
              <a href={`/d/${d.resource}`}>{d.labelPlural}</a>
            </li>
          ))}
        </ul>
      )}
      {info.web ? <iframe ref={frame} class="app-frame" title={t('app.frameTitle', { name: info.name })} src={src} /> : types.length === 0 && <p>{t('app.noPages')}</p>}
    </section>
  );
}

export { NotFound };
