// Settings → Developers → Audit log, filterable by actor, resource and time.
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, qs } from '../api.ts';
import { formatDateTime, isoToLocalInput, localInputToIso } from '../format.ts';
import { t } from '../i18n.ts';
import type { Page } from '../types.ts';
import { ErrorBanner, Field, FilterActions, Loading, PageHeader, Pager, useAsync } from '../ui.tsx';
import { loadMemberNames, useWorkspace } from '../workspace.tsx';
import { DevelopersNav } from './settings-nav.tsx';

interface AuditRow {
  id: string;
  actor: { type: 'user' | 'key' | 'cli' | 'system'; id: string };
  appId: string;
  action: string;
  resource: string;
  resourceId: string | null;
  before: unknown;
  after: unknown;
  requestId: string | null;
  at: string;
}

const FILTERS = ['actorType', 'actorId', 'resource', 'action', 'resourceId', 'since', 'until'] as const;

export function AuditLog() {
  const ws = useWorkspace();
  const loc = useLocation();
  const names = useAsync(() => loadMemberNames(ws), []);
  const q = loc.query;
  const page = Math.max(1, Number(q.page) || 1);
  const active = Object.fromEntries(FILTERS.filter((k) => q[k]).map((k) => [k, q[k]])) as Record<string, string>;
  const [draft, setDraft] = useState<Record<string, string>>({
    ...active,
    since: active.since ? isoToLocalInput(active.since) : '',
    until: active.until ? isoToLocalInput(active.until) : '',
  });
  const rows = useAsync(() => api<Page<AuditRow>>('GET', `/api/v1/audit-log${qs({ page, pageSize: 25, ...active })}`), [loc.url]);
  const [open, setOpen] = useState<string | null>(null);
  const input = (k: string) => (e: Event) => setDraft({ ...draft, [k]: (e.currentTarget as HTMLInputElement).value });

  return (
    <section>
      <PageHeader title={t('dev.title')} />
      <DevelopersNav />
      <h2>{t('dev.audit')}</h2>
      <form
        class="panel"
        onSubmit={(e) => {
          e.preventDefault();
          loc.route(`/settings/developers/audit-log${qs({ ...draft, since: localInputToIso(draft.since ?? ''), until: localInputToIso(draft.until ?? '') })}`);
        }}
      >
        <div class="grid">
          <Field pointer="/actorType" label={t('audit.actorType')}>
            {(aria) => (
              <select {...aria} value={draft.actorType ?? ''} onChange={input('actorType')}>
                <option value="">{t('filter.any')}</option>
                <option value="user">{t('actor.user')}</option>
                <option value="key">{t('actor.key')}</option>
                <option value="cli">{t('actor.cli')}</option>
                <option value="system">{t('actor.system')}</option>
              </select>
            )}
          </Field>
          {draft.actorType === 'user' && names.data && names.data.size > 0 ? (
            <Field pointer="/actorId" label={t('audit.person')}>
              {(aria) => (
                <select {...aria} value={draft.actorId ?? ''} onChange={input('actorId')}>
                  <option value="">{t('filter.any')}</option>
                  {[...names.data!].map(([id, name]) => (
                    <option value={id}>{name}</option>
                  ))}
                </select>
              )}
            </Field>
          ) : (
            <Field pointer="/actorId" label={t('audit.actorId')} hint={t('audit.actorIdHint')}>
              {(aria) => <input {...aria} type="text" class="mono" dir="ltr" value={draft.actorId ?? ''} onInput={input('actorId')} />}
            </Field>
          )}
          <Field pointer="/resource" label={t('audit.resource')} hint={t('audit.resourceHint')}>
            {(aria) => <input {...aria} type="text" class="mono" dir="ltr" value={draft.resource ?? ''} onInput={input('resource')} />}
          </Field>
          <Field pointer="/action" label={t('audit.action')}>
            {(aria) => <input {...aria} type="text" class="mono" dir="ltr" value={draft.action ?? ''} onInput={input('action')} />}
          </Field>
          <Field pointer="/since" label={t('audit.since')}>
            {(aria) => <input {...aria} type="datetime-local" value={draft.since ?? ''} onInput={input('since')} />}
          </Field>
          <Field pointer="/until" label={t('audit.until')}>
            {(aria) => <input {...aria} type="datetime-local" value={draft.until ?? ''} onInput={input('until')} />}
          </Field>
        </div>
        <FilterActions
          onClear={() => {
            setDraft({});
            loc.route('/settings/developers/audit-log');
          }}
        />
      </form>
      <ErrorBanner error={rows.error} />
      {rows.loading && !rows.data && <Loading />}
      {rows.data &&
        (rows.data.data.length === 0 ? (
          <p class="empty">{t('audit.none')}</p>
        ) : (
          <>
            <div class="table-wrap">
              <table>
                <caption class="sr-only">{t('dev.audit')}</caption>
                <thead>
                  <tr>
                    <th scope="col">{t('audit.at')}</th>
                    <th scope="col">{t('audit.actor')}</th>
                    <th scope="col">{t('audit.action')}</th>
                    <th scope="col">{t('audit.resource')}</th>
                    <th scope="col">{t('audit.record')}</th>
                    <th scope="col"><span class="sr-only">{t('keys.actions')}</span></th>
                  </tr>
                </thead>
                <tbody>
                  {rows.data.data.map((r) => (
                    <>
                      <tr>
                        <td class="nowrap">{formatDateTime(r.at)}</td>
                        <td>
                          {r.actor.type === 'user' && names.data?.has(r.actor.id) ? (
                            <>
                              {names.data.get(r.actor.id)} <span class="mono small">{r.actor.id}</span>
                            </>
                          ) : (
                            <>
                              {t(`actor.${r.actor.type}` as 'actor.key')} <span class="mono small">{r.actor.id}</span>
                            </>
                          )}
                        </td>
                        <td class="mono">{r.action}</td>
                        <td class="mono">
                          {r.appId !== 'core' && <span class="muted">{r.appId} · </span>}
                          {r.resource}
                        </td>
                        <td class="mono small">{r.resourceId ?? '—'}</td>
                        <td>
                          <button type="button" class="small" aria-expanded={open === r.id ? 'true' : 'false'} onClick={() => setOpen(open === r.id ? null : r.id)}>
                            {t('audit.changes')}
                          </button>
                        </td>
                      </tr>
                      {open === r.id && (
                        <tr>
                          <td colSpan={6}>
                            <div class="diff">
                              <div>
                                <h3 class="small">{t('audit.before')}</h3>
                                <pre dir="ltr">{r.before === null ? '—' : JSON.stringify(r.before, null, 2)}</pre>
                              </div>
                              <div>
                                <h3 class="small">{t('audit.after')}</h3>
                                <pre dir="ltr">{r.after === null ? '—' : JSON.stringify(r.after, null, 2)}</pre>
                              </div>
                            </div>
                          </td>
                        </tr>
                      )}
                    </>
                  ))}
                </tbody>
              </table>
            </div>
            <Pager page={rows.data.page} pageSize={rows.data.pageSize} total={rows.data.total} onPage={(p) => loc.route(`/settings/developers/audit-log${qs({ ...active, page: p > 1 ? p : undefined })}`)} />
          </>
        ))}
    </section>
  );
}
