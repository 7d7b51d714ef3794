// The signed-in frame: a skip link; the top bar (the launcher's link, the company switched
// among the person's companies, search, Settings, the language, the person's menu); the
// navigation, which follows where the person is (the launcher's list of apps, one app's own
// menu, or Settings); and the page. Ctrl/Cmd+K opens the palette from anywhere.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { changePassword } from './api.ts';
import { AppMark, monogram } from './app-mark.tsx';
import { appMenu, appOfPath } from './app-menu.tsx';
import { t } from './i18n.ts';
import { Palette } from './palette.tsx';
import { Dialog, ErrorBanner, Field, Notice, fieldErrors, useAction } from './ui.tsx';
import { useWorkspace, type Workspace } from './workspace.tsx';
import { NewPassword } from './pages/sign-in.tsx';

/** The first Settings page the person may open, or null when there is none. */
export function settingsHref(ws: Pick<Workspace, 'can'>): string | null {
  if (ws.can('api-keys:read')) return '/settings/developers/api-keys';
  if (ws.can('webhooks:read')) return '/settings/developers/webhooks';
  if (ws.can('audit:read')) return '/settings/developers/audit-log';
  if (ws.can('members:read')) return '/settings/members';
  if (ws.can('apps:manage')) return '/settings/apps';
  if (ws.can('company:read')) return '/settings/company';
  return null;
}

const SearchIcon = () => (
  <svg viewBox="0 0 20 20" width="18" height="18" aria-hidden="true" focusable="false">
    <circle cx="8.5" cy="8.5" r="5.5" fill="none" stroke="currentColor" stroke-width="2" />
    <path d="M13 13l5 5" stroke="currentColor" stroke-width="2" stroke-linecap="round" />
  </svg>
);
const GearIcon = () => (
  <svg viewBox="0 0 20 20" width="18" height="18" aria-hidden="true" focusable="false">
    <path
      fill="currentColor"
      d="M8.6 1h2.8l.4 2.3c.6.2 1.1.5 1.6.9l2.2-.8 1.4 2.4-1.8 1.5a6 6 0 0 1 0 1.8l1.8 1.5-1.4 2.4-2.2-.8c-.5.4-1 .7-1.6.9l-.4 2.3H8.6l-.4-2.3a6 6 0 0 1-1.6-.9l-2.2.8L3 12.6l1.8-1.5a6 6 0 0 1 0-1.8L3 7.8l1.4-2.4 2.2.8c.5-.4 1-.7 1.6-.9zM10 7a3 3 0 1 0 0 6 3 3 0 0 0 0-6z"
    />
  </svg>
);

export function Shell(props: { children: ComponentChildren; langSwitch: ComponentChildren; onSignOut(): void; onSwitchCompany(id: string): void }) {
  const ws = useWorkspace();
  const { path, url } = useLocation();
  const [navOpen, setNavOpen] = useState(false);
  const [paletteOpen, setPaletteOpen] = useState(false);
  const [filter, setFilter] = useState('');
  const main = useRef<HTMLElement>(null);
  const first = useRef(true);

  // A new page: close the small-screen menu and move focus to the page, as a full load would.
  useEffect(() => {
    setNavOpen(false);
    if (first.current) {
      first.current = false;
      return;
    }
    main.current?.focus({ preventScroll: false });
  }, [path]);

  useEffect(() => {
    const key = (e: KeyboardEvent) => {
      if ((e.ctrlKey || e.metaKey) && !e.altKey && e.key.toLowerCase() === 'k') {
        e.preventDefault();
        setPaletteOpen(true);
      }
    };
    document.addEventListener('keydown', key);
    return () => document.removeEventListener('keydown', key);
  }, []);

  const here = (href: string) => (href === '/' ? path === '/' : url === href || path === href.split('?')[0] || path.startsWith(`${href.split('?')[0]}/`));
  const settings = settingsHref(ws);
  const inSettings = path.startsWith('/settings');
  const appId = inSettings ? null : appOfPath(ws, path);
  const app = appId ? ws.apps.find((a) => a.id === appId && a.state === 'enabled') : undefined;
  const enabled = ws.apps.filter((a) => a.state === 'enabled');
  const shownApps = enabled.filter((a) => !filter || `${a.name} ${a.id}`.toLowerCase().includes(filter.toLowerCase()));

  return (
    <div class="shell">
      <a class="skip" href="#main">
        {t('nav.skip')}
      </a>
      <header class="topbar">
        <button type="button" class="menu-toggle" aria-expanded={navOpen ? 'true' : 'false'} aria-controls="nav" onClick={() => setNavOpen(!navOpen)}>
          <span aria-hidden="true">☰</span>
          <span class="menu-label">{t('nav.menu')}</span>
        </button>
        <a href="/" class="brand">
          {t('app.title')}
        </a>
        {ws.companies.length > 1 ? (
          <span class="company">
            <label for="company-switch" class="sr-only">
              {t('nav.company')}
            </label>
            <select id="company-switch" value={ws.company.id} onChange={(e) => props.onSwitchCompany((e.currentTarget as HTMLSelectElement).value)}>
              {ws.companies.map((c) => (
                <option value={c.id}>{c.name}</option>
              ))}
            </select>
          </span>
        ) : (
          <span class="company company-name" title={ws.company.id}>
            {ws.company.name}
          </span>
        )}
        <span class="spacer" />
        <button type="button" class="search" aria-keyshortcuts="Control+K Meta+K" onClick={() => setPaletteOpen(true)}>
          <SearchIcon />
          <span class="search-label">{t('nav.search')}</span>
          <kbd class="search-keys" dir="ltr">
            {t('nav.searchKeys')}
          </kbd>
        </button>
        {settings && (
          <a href={settings} class="settings-link" aria-current={inSettings ? 'page' : undefined}>
            <GearIcon />
            <span class="settings-label">{t('nav.settings')}</span>
          </a>
        )}
        {props.langSwitch}
        <PersonMenu onSignOut={props.onSignOut} />
      </header>
      <div class="frame">
        <nav id="nav" class={navOpen ? 'open' : ''} aria-label={app ? t('nav.appMenu', { name: app.name }) : inSettings ? t('nav.settings') : t('nav.label')}>
          <ul>
            <li>
              <a href="/" aria-current={here('/') ? 'page' : undefined}>
                {app || inSettings ? t('nav.allApps') : t('nav.home')}
              </a>
            </li>
          </ul>
          {app ? (
            <>
              <h2 class="nav-heading nav-app">
                <AppMark app={app} size="sm" />
                <a href={`/a/${app.id}`} aria-current={path === `/a/${app.id}` ? 'page' : undefined}>
                  {app.name}
                </a>
              </h2>
              {appMenu(ws, app.id).map((g) => (
                <>
                  {g.heading && <h3 class="nav-heading">{g.heading}</h3>}
                  <ul>
                    {g.entries.map((m) => (
                      <li>
                        <a href={m.href} aria-current={here(m.href) ? 'page' : undefined}>
                          {m.label}
                        </a>
                      </li>
                    ))}
                  </ul>
                </>
              ))}
            </>
          ) : inSettings ? (
            <SettingsNav path={path} />
          ) : (
            <>
              <h2 class="nav-heading">{t('nav.apps')}</h2>
              {enabled.length > 12 && (
                <>
                  <label for="menu-filter" class="sr-only">
                    {t('home.filter')}
                  </label>
                  <input id="menu-filter" type="search" placeholder={t('home.filter')} value={filter} onInput={(e) => setFilter((e.currentTarget as HTMLInputElement).value)} />
                </>
              )}
              {enabled.length === 0 ? (
                <p class="muted small">{t('nav.noApps')}</p>
              ) : (
                <ul class="nav-apps">
                  {shownApps.map((a) => (
                    <li>
                      <a href={`/a/${a.id}`}>
                        <AppMark app={a} size="sm" />
                        <span>{a.name}</span>
                      </a>
                    </li>
                  ))}
                </ul>
              )}
            </>
          )}
        </nav>
        <main id="main" ref={main} tabIndex={-1}>
          {props.children}
        </main>
      </div>
      <Palette open={paletteOpen} onClose={() => setPaletteOpen(false)} />
    </div>
  );
}

/** Settings' own menu: Developers, Members, Manage apps and Company, each when the person may open it. */
function SettingsNav({ path }: { path: string }) {
  const ws = useWorkspace();
  const developers = ws.can('api-keys:read') ? '/settings/developers/api-keys' : ws.can('webhooks:read') ? '/settings/developers/webhooks' : ws.can('audit:read') ? '/settings/developers/audit-log' : null;
  return (
    <>
      <h2 class="nav-heading">{t('nav.settings')}</h2>
      <ul>
        {developers && (
          <li>
            <a href={developers} aria-current={path.startsWith('/settings/developers') ? 'page' : undefined}>
              {t('nav.developers')}
            </a>
          </li>
        )}
        {ws.can('members:read') && (
          <li>
            <a href="/settings/members" aria-current={path === '/settings/members' ? 'page' : undefined}>
              {t('nav.members')}
            </a>
          </li>
        )}
        {ws.can('apps:manage') && (
          <li>
            <a href="/settings/apps" aria-current={path === '/settings/apps' ? 'page' : undefined}>
              {t('nav.manageApps')}
            </a>
          </li>
        )}
        {ws.can('company:read') && (
          <li>
            <a href="/settings/company" aria-current={path === '/settings/company' ? 'page' : undefined}>
              {t('nav.company')}
            </a>
          </li>
        )}
      </ul>
    </>
  );
}

/** The person's menu: who is signed in, with which role here; change the password; sign out. */
function PersonMenu({ onSignOut }: { onSignOut(): void }) {
  const ws = useWorkspace();
  const [open, setOpen] = useState(false);
  const [changing, setChanging] = useState(false);
  const [changed, setChanged] = useState(false);
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!changed) return;
    const timer = setTimeout(() => setChanged(false), 8000);
    return () => clearTimeout(timer);
  }, [changed]);
  useEffect(() => {
    if (!open) return;
    const away = (e: Event) => {
      if (box.current && !box.current.contains(e.target as Node)) setOpen(false);
    };
    const escape = (e: KeyboardEvent) => {
      if (e.key === 'Escape') {
        setOpen(false);
        box.current?.querySelector<HTMLButtonElement>('button.person')?.focus();
      }
    };
    document.addEventListener('click', away);
    document.addEventListener('keydown', escape);
    return () => {
      document.removeEventListener('click', away);
      document.removeEventListener('keydown', escape);
    };
  }, [open]);
  return (
    <div class="person-menu" ref={box}>
      <button type="button" class="person" aria-expanded={open ? 'true' : 'false'} aria-controls="person-menu" onClick={() => setOpen(!open)}>
        <span class="person-initials" aria-hidden="true">
          {monogram(ws.person.name)}
        </span>
        <span class="person-name">{ws.person.name}</span>
        <span aria-hidden="true"> ▾</span>
      </button>
      {open && (
        <div id="person-menu" class="person-panel">
          <p>
            <strong>{ws.person.name}</strong>
            <span class="block muted small" dir="ltr">
              {ws.person.email}
            </span>
            <span class="block small">{t('person.role', { role: t(`role.${ws.role}` as 'role.Viewer'), company: ws.company.name })}</span>
          </p>
          <ul>
            <li>
              <button
                type="button"
                class="link"
                onClick={() => {
                  setOpen(false);
                  setChanged(false);
                  setChanging(true);
                }}
              >
                {t('password.change')}
              </button>
            </li>
            <li>
              <button type="button" class="link" onClick={onSignOut}>
                {t('nav.signOut')}
              </button>
            </li>
          </ul>
        </div>
      )}
      <ChangePassword
        open={changing}
        onClose={() => setChanging(false)}
        onChanged={() => {
          setChanging(false);
          setChanged(true);
        }}
      />
      {changed && (
        <div class="toast">
          <Notice kind="success">{t('password.changed')}</Notice>
        </div>
      )}
    </div>
  );
}

function ChangePassword(props: { open: boolean; onClose(): void; onChanged(): void }) {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [repeat, setRepeat] = useState('');
  const [tried, setTried] = useState(false);
  const { busy, error, setError, run } = useAction();
  const errors = fieldErrors(error);
  if (tried && next !== repeat) errors['/repeat'] = t('password.mismatch');
  const close = () => {
    setCurrent('');
    setNext('');
    setRepeat('');
    setTried(false);
    setError(undefined);
    props.onClose();
  };
  return (
    <Dialog open={props.open} title={t('password.change')} onClose={close}>
      <form
        noValidate
        onSubmit={async (e) => {
          e.preventDefault();
          setTried(true);
          setError(undefined);
          if (next !== repeat) return;
          await run(async () => {
            await changePassword(current, next);
            setCurrent('');
            setNext('');
            setRepeat('');
            setTried(false);
            props.onChanged();
          });
        }}
      >
        <p class="muted small">{t('password.changeIntro')}</p>
        <ErrorBanner error={error} />
        <Field pointer="/currentPassword" label={t('password.current')} required error={errors['/currentPassword']}>
          {(aria) => <input {...aria} name="current-password" type="password" autoComplete="current-password" value={current} onInput={(e) => setCurrent((e.currentTarget as HTMLInputElement).value)} />}
        </Field>
        <NewPassword value={next} repeat={repeat} errors={errors} onValue={setNext} onRepeat={setRepeat} />
        <div class="actions">
          <button type="submit" class="primary" disabled={busy || !current || !next}>
            {t('password.save')}
          </button>
          <button type="button" onClick={close}>
            {t('action.cancel')}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
