// The signed-in frame: a skip link, the top bar (the company, switched among the person's
// companies; the language; the person's menu with password change and sign-out), the
// navigation (the menu of the company's enabled apps, Settings) and the page.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { changePassword } from './api.ts';
import { t } from './i18n.ts';
import { Dialog, ErrorBanner, Field, Notice, fieldErrors, useAction } from './ui.tsx';
import { menuHref, useWorkspace } from './workspace.tsx';
import { NewPassword } from './pages/sign-in.tsx';

export function Shell(props: { children: ComponentChildren; langSwitch: ComponentChildren; onSignOut(): void; onSwitchCompany(id: string): void }) {
  const ws = useWorkspace();
  const { path, url } = useLocation();
  const [navOpen, setNavOpen] = useState(false);
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

  const here = (href: string) => (href === '/' ? path === '/' : url === href || path === href.split('?')[0] || path.startsWith(`${href.split('?')[0]}/`));
  const menu = ws.menu.filter((m) => !filter || m.label.toLowerCase().includes(filter.toLowerCase()));
  const developers = ws.can('api-keys:read') ? '/settings/developers/api-keys' : ws.can('webhooks:read') ? '/settings/developers/webhooks' : ws.can('audit:read') ? '/settings/developers/audit-log' : null;

  return (
    <div class="shell">
      <a class="skip" href="#main">
        {t('nav.skip')}
      </a>
      <header class="topbar">
        <button type="button" class="menu-toggle" aria-expanded={navOpen ? 'true' : 'false'} aria-controls="nav" onClick={() => setNavOpen(!navOpen)}>
          {t('nav.menu')}
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
          <span class="company" title={ws.company.id}>
            {ws.company.name}
          </span>
        )}
        <span class="spacer" />
        {props.langSwitch}
        <PersonMenu onSignOut={props.onSignOut} />
      </header>
      <div class="frame">
        <nav id="nav" class={navOpen ? 'open' : ''} aria-label={t('nav.label')}>
          <ul>
            <li>
              <a href="/" aria-current={here('/') ? 'page' : undefined}>
                {t('nav.home')}
              </a>
            </li>
          </ul>
          <h2 class="nav-heading">{t('nav.apps')}</h2>
          {ws.menu.length > 12 && (
            <>
              <label for="menu-filter" class="sr-only">
                {t('nav.filter')}
              </label>
              <input id="menu-filter" type="search" placeholder={t('nav.filter')} value={filter} onInput={(e) => setFilter((e.currentTarget as HTMLInputElement).value)} />
            </>
          )}
          {ws.menu.length === 0 ? (
            <p class="muted small">{t('nav.noApps')}</p>
          ) : (
            <ul>
              {menu.map((m) => {
                const href = menuHref(m);
                return (
                  <li>
                    <a href={href} aria-current={here(href) ? 'page' : undefined}>
                      {m.label}
                    </a>
                  </li>
                );
              })}
            </ul>
          )}
          {(developers || ws.can('members:read') || ws.can('apps:manage')) && (
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
                    <a href="/settings/members" aria-current={here('/settings/members') ? 'page' : undefined}>
                      {t('nav.members')}
                    </a>
                  </li>
                )}
                {ws.can('apps:manage') && (
                  <li>
                    <a href="/settings/apps" aria-current={here('/settings/apps') ? 'page' : undefined}>
                      {t('nav.manageApps')}
                    </a>
                  </li>
                )}
              </ul>
            </>
          )}
        </nav>
        <main id="main" ref={main} tabIndex={-1}>
          {props.children}
        </main>
      </div>
    </div>
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
        {ws.person.name}
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
