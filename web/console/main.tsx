// The web console: served by the host at /, bundled by it on first need (core/http/console-bundle.ts).
import './styles.css';
import { render } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { LocationProvider, Route, Router, useLocation } from 'preact-iso';
import { ApiError, configureApi, currentSession, loadSession, refreshSession, signOut, switchCompany, type Session } from './api.ts';
import { applyLang, initialLang, lang, t, type Lang } from './i18n.ts';
import { forgetTitles } from './fields.tsx';
import { Shell, settingsHref } from './shell.tsx';
import { ErrorBanner, Loading } from './ui.tsx';
import { WorkspaceContext, loadWorkspace, type Workspace } from './workspace.tsx';
import { AppPage } from './pages/app-page.tsx';
import { ApiKeys } from './pages/api-keys.tsx';
import { Apps } from './pages/apps.tsx';
import { AuditLog } from './pages/audit-log.tsx';
import { DocDetail } from './pages/doc-detail.tsx';
import { DocForm } from './pages/doc-form.tsx';
import { DocList } from './pages/doc-list.tsx';
import { Home } from './pages/home.tsx';
import { Invitation } from './pages/invitation.tsx';
import { LinkSignIn } from './pages/link-sign-in.tsx';
import { Members } from './pages/members.tsx';
import { CompanySettings } from './pages/company.tsx';
import { NoCompany } from './pages/no-company.tsx';
import { NotFound } from './pages/not-found.tsx';
import { SignIn, takeFragmentToken } from './pages/sign-in.tsx';
import { WebhookEndpoint } from './pages/webhook-endpoint.tsx';
import { Webhooks } from './pages/webhooks.tsx';

applyLang(initialLang(), false);

// A one-time token in the address (`/signin#<token>`, `/invite#<token>`) is taken at once and
// dropped from the address, so it stays in no history entry and no screenshot.
const fragmentToken = takeFragmentToken();

type P = { params: Record<string, string> };
// Keyed by what they show, so moving from one type's page to another's starts afresh.
const routes = {
  list: ({ params }: P) => <DocList key={params.resource} resource={params.resource} />,
  create: ({ params }: P) => <DocForm key={`${params.resource}/new`} resource={params.resource} />,
  detail: ({ params }: P) => <DocDetail key={`${params.resource}/${params.id}`} resource={params.resource} id={params.id} />,
  edit: ({ params }: P) => <DocForm key={`${params.resource}/${params.id}/edit`} resource={params.resource} id={params.id} />,
  app: ({ params }: P) => <AppPage key={params.app} app={params.app} />,
  endpoint: ({ params }: P) => <WebhookEndpoint key={params.id} id={params.id} />,
};

function Redirect({ to }: { to: string }) {
  const { route } = useLocation();
  useEffect(() => route(to, true), [to]);
  return null;
}

function LangSwitch({ onChange }: { onChange(l: Lang): void }) {
  const other: Lang = lang() === 'ar' ? 'en' : 'ar';
  return (
    <button type="button" class="lang" lang={other} onClick={() => onChange(other)}>
      {other === 'ar' ? 'العربية' : 'English'}
    </button>
  );
}

/** Where to go after signing in: a page of the console named by `?next=`, never another site. */
function nextOf(next: string | undefined): string {
  return next && next.startsWith('/') && !next.startsWith('//') && !/^\/(signin|sign-in|invite)\b/.test(next) ? next : '/';
}

const SIGN_IN_PATHS = new Set(['/signin', '/sign-in']);

function Console() {
  const loc = useLocation();
  const [language, setLanguage] = useState<Lang>(lang());
  // undefined: not known yet (asking the server); null: nobody signed in.
  const [session, setSession] = useState<Session | null | undefined>(currentSession() ?? undefined);
  const [bootError, setBootError] = useState<unknown>();
  const [ws, setWs] = useState<Omit<Workspace, 'reload'> | null>(null);
  const [wsError, setWsError] = useState<unknown>();
  const companyId = session?.company?.id ?? null;
  // The link's token, until it has been used (or set aside for the ordinary sign-in).
  const [token, setToken] = useState<string | null>(fragmentToken);

  const changeLang = (l: Lang) => {
    applyLang(l);
    forgetTitles();
    setLanguage(l);
  };
  const boot = useCallback(async () => {
    setBootError(undefined);
    try {
      setSession(await loadSession());
    } catch (err) {
      setBootError(err);
    }
  }, []);
  const reload = useCallback(async () => {
    try {
      setWs(await loadWorkspace());
      setWsError(undefined);
      setSession(currentSession());
    } catch (err) {
      // Removed from this company meanwhile: read the person's companies again and act in another.
      if (err instanceof ApiError && err.status === 403 && err.details.some((d) => d.reason === 'company')) {
        const s = await refreshSession().catch(() => undefined);
        if (s && s.company?.id !== companyId) {
          setSession(s);
          return;
        }
      }
      setWsError(err);
    }
  }, [companyId]);
  useEffect(() => {
    configureApi({
      language: lang,
      onSignedOut: () => {
        forgetTitles();
        setSession(null);
      },
    });
    if (session === undefined) void boot();
    // A link pasted into a tab already on the sign-in page changes only the fragment.
    const taken = () => {
      const t = takeFragmentToken();
      if (t) setToken(t);
    };
    window.addEventListener('hashchange', taken);
    return () => window.removeEventListener('hashchange', taken);
  }, []);
  useEffect(() => {
    setWs(null);
    setWsError(undefined);
    if (companyId) void reload();
  }, [companyId, language]);

  const signedIn = (s: Session, to = '/') => {
    setToken(null);
    forgetTitles();
    setSession(s);
    loc.route(to, true);
  };
  const endSession = async () => {
    try {
      await signOut();
    } finally {
      forgetTitles();
      setSession(null);
      loc.route('/signin', true);
    }
  };

  const switcher = <LangSwitch onChange={changeLang} />;

  // Pages anyone may open, signed in or not (the invitation says who is signed in, if anyone).
  if (loc.path === '/invite' && (session !== undefined || bootError)) return <Invitation token={token} session={session ?? null} langSwitch={switcher} onJoined={(s) => signedIn(s)} />;
  if (SIGN_IN_PATHS.has(loc.path) && token) return <LinkSignIn token={token} langSwitch={switcher} onSignedIn={(s) => signedIn(s)} onPasswordInstead={() => setToken(null)} />;

  if (session === undefined) {
    return <main id="main" class="boot">{bootError ? <BootError error={bootError} onRetry={boot} /> : <Loading />}</main>;
  }
  if (session === null) {
    if (!SIGN_IN_PATHS.has(loc.path)) return <Redirect to={loc.path === '/' ? '/signin' : `/signin?next=${encodeURIComponent(loc.url)}`} />;
    return <SignIn langSwitch={switcher} onSignedIn={(s) => signedIn(s, nextOf(loc.query.next))} />;
  }
  if (SIGN_IN_PATHS.has(loc.path)) return <Redirect to={nextOf(loc.query.next)} />;
  if (!session.company) return <NoCompany person={session.person} langSwitch={switcher} onSignOut={endSession} />;
  if (!ws) {
    return (
      <main id="main" class="boot">
        {wsError ? (
          <>
            <ErrorBanner error={wsError} />
            <div class="actions">
              <button type="button" onClick={() => void reload()}>
                {t('action.retry')}
              </button>
              <button type="button" onClick={() => void endSession()}>
                {t('nav.signOut')}
              </button>
            </div>
          </>
        ) : (
          <Loading />
        )}
      </main>
    );
  }
  const workspace: Workspace = { ...ws, reload };
  return (
    <WorkspaceContext.Provider value={workspace}>
      <Shell
        langSwitch={switcher}
        onSignOut={() => void endSession()}
        onSwitchCompany={(id) => {
          forgetTitles();
          setSession(switchCompany(id));
          loc.route('/');
        }}
      >
        {/* Keyed by the company: every page starts afresh in another company. */}
        <Router key={ws.company.id}>
          <Route path="/" component={Home} />
          <Route path="/d/:resource" component={routes.list} />
          <Route path="/d/:resource/new" component={routes.create} />
          <Route path="/d/:resource/:id" component={routes.detail} />
          <Route path="/d/:resource/:id/edit" component={routes.edit} />
          <Route path="/a/:app" component={routes.app} />
          {/* Settings opens on the first of its pages the person may see (Members for a Manager, say). */}
          <Route path="/settings" component={() => <Redirect to={settingsHref(workspace) ?? '/'} />} />
          <Route path="/settings/developers" component={() => <Redirect to="/settings/developers/api-keys" />} />
          <Route path="/settings/developers/api-keys" component={ApiKeys} />
          <Route path="/settings/developers/webhooks" component={Webhooks} />
          <Route path="/settings/developers/webhooks/:id" component={routes.endpoint} />
          <Route path="/settings/developers/audit-log" component={AuditLog} />
          <Route path="/settings/members" component={Members} />
          <Route path="/settings/apps" component={Apps} />
          <Route path="/settings/company" component={CompanySettings} />
          <Route default component={NotFound} />
        </Router>
      </Shell>
    </WorkspaceContext.Provider>
  );
}

function BootError({ error, onRetry }: { error: unknown; onRetry(): void }) {
  return (
    <>
      <ErrorBanner error={error} />
      <button type="button" onClick={onRetry}>
        {t('action.retry')}
      </button>
    </>
  );
}

render(
  <LocationProvider>
    <Console />
  </LocationProvider>,
  document.getElementById('app')!,
);
