// The launcher: the company's enabled apps (mark, name, one line of description), what waits
// for the person (documents in a state they can move on, GET /api/v1/home) and the latest
// documents, and where more apps come from.
import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { AppMark } from '../app-mark.tsx';
import { formatDateTime, formatNumber } from '../format.ts';
import { t } from '../i18n.ts';
import { StateLabel } from '../state-label.tsx';
import type { DocHit } from '../types.ts';
import { ErrorBanner, PageHeader, useAsync } from '../ui.tsx';
import { useWorkspace } from '../workspace.tsx';

interface HomeData {
  waiting: { app: string; resource: string; state: string; count: number }[];
  recent: DocHit[];
}

export function Home() {
  const ws = useWorkspace();
  const [filter, setFilter] = useState('');
  const home = useAsync(() => api<{ data: HomeData }>('GET', '/api/v1/home'), []);
  const enabled = ws.apps.filter((a) => a.state === 'enabled');
  const apps = enabled.filter((a) => !filter || `${a.name} ${a.id} ${a.description}`.toLowerCase().includes(filter.toLowerCase()));
  const waiting = home.data?.data.waiting ?? [];
  const recent = home.data?.data.recent ?? [];
  const label = (resource: string) => ws.byResource.get(resource);
  return (
    <section class="launcher">
      <PageHeader title={ws.company.name} />
      <p class="muted">{t('home.intro', { currency: ws.company.currency })}</p>
      <ErrorBanner error={home.error} />
      {waiting.length > 0 && (
        <section class="panel waiting" aria-labelledby="waiting-title">
          <h2 id="waiting-title">{t('home.waiting')}</h2>
          <p class="muted small">{t('home.waitingHint')}</p>
          <ul class="waiting-list">
            {waiting.map((w) => {
              const meta = label(w.resource);
              return (
                <li>
                  <a href={`/d/${w.resource}?state=${encodeURIComponent(w.state)}`}>
                    <span class="count">{formatNumber(w.count)}</span>
                    <span class="what">{meta?.labelPlural ?? w.resource}</span>
                    <StateLabel resource={w.resource} state={w.state} />
                  </a>
                </li>
              );
            })}
          </ul>
        </section>
      )}
      <div class="launcher-head">
        <h2 id="apps-title">{t('home.apps')}</h2>
        {enabled.length > 8 && (
          <span class="launcher-filter">
            <label for="app-find" class="sr-only">
              {t('home.filter')}
            </label>
            <input id="app-find" type="search" placeholder={t('home.filter')} value={filter} onInput={(e) => setFilter((e.currentTarget as HTMLInputElement).value)} />
          </span>
        )}
      </div>
      {enabled.length === 0 ? (
        <p class="empty">{t('nav.noApps')}</p>
      ) : (
        <ul class="launcher-grid" aria-labelledby="apps-title">
          {apps.map((a) => (
            <li>
              <a class="app-tile" href={`/a/${a.id}`}>
                <AppMark app={a} size="lg" />
                <span class="app-tile-text">
                  <span class="app-tile-name">{a.name}</span>
                  <span class="app-tile-desc">{a.description}</span>
                </span>
              </a>
            </li>
          ))}
        </ul>
      )}
      <p class="muted small">
        {ws.can('apps:manage') ? <a href="/settings/apps">{t('home.addApps')}</a> : t('home.askOwner')}
      </p>
      <section aria-labelledby="recent-title">
        <h2 id="recent-title">{t('home.recent')}</h2>
        {home.data && recent.length === 0 && <p class="muted">{t('home.recentNone')}</p>}
        {recent.length > 0 && (
          <ul class="recent-list">
            {recent.map((d) => {
              const meta = label(d.resource);
              return (
                <li>
                  <a href={`/d/${d.resource}/${d.id}`}>{d.title ?? <span class="mono">{d.id}</span>}</a>
                  <span class="muted small">{meta?.label ?? d.resource}</span>
                  {d.state && <StateLabel resource={d.resource} state={d.state} />}
                  <span class="muted small nowrap">{formatDateTime(d.createdAt)}</span>
                </li>
              );
            })}
          </ul>
        )}
      </section>
    </section>
  );
}
