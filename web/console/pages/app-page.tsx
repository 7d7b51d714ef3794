// An app's own page: its mark, description and menu (grouped as its manifest says), and its
// web bundle mounted in a frame (given the language and the company) when it has one. The bundle is on the
// console's origin, so its requests carry the person's session cookie; for its writes it asks
// the shell for the session's CSRF token (a `diwan:session?` message), and the shell answers
// its own frame only, on its own origin.
import { useEffect, useRef } from 'preact/hooks';
import { lang, t } from '../i18n.ts';
import { csrfToken, qs } from '../api.ts';
import { PageHeader } from '../ui.tsx';
import { useWorkspace } from '../workspace.tsx';
import { AppMark } from '../app-mark.tsx';
import { appMenu } from '../app-menu.tsx';
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
  const groups = appMenu(ws, app);
  // A page of the bundle, relative to /apps/<id>/ (an older `/<id>` path means its start page).
  const page = query.page && query.page !== `/${app}` && !query.page.startsWith(`/${app}/`) ? query.page.replace(/^\/+/, '') : '';
  const src = `/apps/${app}/${page}${qs({ lang: lang(), company: ws.company.id })}`;
  return (
    <section class="app-page">
      <div class="app-head">
        <AppMark app={info} size="lg" />
        <div>
          <PageHeader title={info.name} />
          <p class="muted">{info.description}</p>
        </div>
      </div>
      {/* The app's own start page shows its bundle; its menu is in the navigation beside it. */}
      {!query.page &&
        groups.map((g) => (
          <>
            {g.heading && <h2 class="h3">{g.heading}</h2>}
            <ul class="cards app-entries">
              {g.entries.map((m) => (
                <li class="card">
                  <a href={m.href} class="card-link">
                    {m.label}
                  </a>
                  {m.type?.permissions.create && (
                    <a href={`/d/${m.type.resource}/new`} class="small block">
                      {t('doc.new', { type: m.type.label })}
                    </a>
                  )}
                </li>
              ))}
            </ul>
          </>
        ))}
      {info.web ? <iframe ref={frame} class="app-frame" title={t('app.frameTitle', { name: info.name })} src={src} /> : groups.length === 0 && <p>{t('app.noPages')}</p>}
    </section>
  );
}

export { NotFound };
