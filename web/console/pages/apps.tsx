// Settings → Manage apps (Owner): the catalogue, grouped by the manifests' categories, with
// search and what each app needs; install (its dependencies first), enable, disable, upgrade
// after seeing the dry-run plan, uninstall (data kept) and purge.
import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { lang, t } from '../i18n.ts';
import type { AppInfo } from '../types.ts';
import { ConfirmDialog, Dialog, ErrorBanner, Loading, Notice, PageHeader, useAsync, useAction } from '../ui.tsx';
import { useWorkspace } from '../workspace.tsx';
import { AppMark } from '../app-mark.tsx';

/** The manifests' categories in the catalogue's order (manifests/manifest.schema.ts), then apps that name none. */
const CATEGORIES = ['sales', 'finance', 'hr', 'marketing', 'website', 'operations', 'services', 'productivity', 'industries', 'platform', 'other'];

interface Diff {
  added?: string[];
  removed?: string[];
}
interface Plan {
  appId: string;
  from: string;
  to: string;
  permissions?: Diff & { changed?: { permission: string; from: string; to: string }[] };
  routes?: Diff;
  documentTypes?: Diff;
  topics?: Diff;
  migrations?: string[];
}

type Step = 'enable' | 'disable' | 'uninstall' | 'purge';

export function Apps() {
  const ws = useWorkspace();
  const apps = useAsync(() => api<{ data: AppInfo[] }>('GET', '/api/v1/apps'), []);
  const { busy, error, run } = useAction();
  const [notice, setNotice] = useState<string>();
  const [plan, setPlan] = useState<{ app: AppInfo; plan: Plan } | null>(null);
  const [confirm, setConfirm] = useState<{ app: AppInfo; step: Step } | null>(null);
  const [filter, setFilter] = useState('');

  const act = async (fn: () => Promise<string>) => {
    setNotice(undefined);
    await run(async () => {
      setNotice(await fn());
      apps.reload();
      await ws.reload();
    });
  };
  const step = (app: AppInfo, s: Step) =>
    act(async () => {
      await api('POST', `/api/v1/apps/${app.id}/${s}`);
      setConfirm(null);
      return t(`apps.done.${s}` as 'apps.done.enable', { name: app.name });
    });
  const all = apps.data?.data ?? [];
  const nameOf = (id: string) => all.find((a) => a.id === id)?.name ?? id;
  const categoryOf = (a: AppInfo) => (a.category && CATEGORIES.includes(a.category) ? a.category : 'other');
  const list = all.filter((a) => !filter || `${a.name} ${a.id} ${a.description} ${t(`category.${categoryOf(a)}` as 'category.sales')}`.toLowerCase().includes(filter.toLowerCase()));
  const byCategory = CATEGORIES.map((c) => [c, list.filter((a) => categoryOf(a) === c)] as const).filter(([, xs]) => xs.length);

  return (
    <section>
      <PageHeader title={t('apps.title')} />
      <p class="muted">{t('apps.intro')}</p>
      {notice && <Notice kind="success">{notice}</Notice>}
      <ErrorBanner error={error ?? apps.error} />
      <label for="app-filter" class="sr-only">
        {t('apps.filter')}
      </label>
      <input id="app-filter" type="search" placeholder={t('apps.filter')} value={filter} onInput={(e) => setFilter((e.currentTarget as HTMLInputElement).value)} />
      {apps.loading && !apps.data && <Loading />}
      {apps.data && list.length === 0 && <p class="empty">{t('apps.noMatch', { q: filter })}</p>}
      {byCategory.map(([c, xs]) => (
        <section aria-labelledby={`cat-${c}`}>
          <h2 id={`cat-${c}`}>{t(`category.${c}` as 'category.sales')}</h2>
          <ul class="cards apps">
        {xs.map((a) => (
          <li class="card">
            <div class="app-card-head">
              <AppMark app={a} />
              <div>
                <h3 class="h3">{a.name}</h3>
                <p class="muted small mono" dir="ltr">
                  {a.id} · {a.installedVersion ?? a.version}
                </p>
              </div>
            </div>
            <p>{a.description}</p>
            <p class="small">
              {Object.keys(a.dependencies ?? {}).length ? t('apps.needs', { apps: Object.keys(a.dependencies!).map(nameOf).join(lang() === 'ar' ? '، ' : ', ') }) : t('apps.needsNothing')}
            </p>
            <p>
              <span class={`badge app-${a.state}`}>{t(`apps.state.${a.state}` as 'apps.state.enabled')}</span>
              {a.upgradeAvailable && <span class="badge">{t('apps.upgradeTo', { version: a.version })}</span>}
            </p>
            <div class="actions">
              {(a.state === 'not_installed' || a.state === 'uninstalled') && (
                <button type="button" class="primary" disabled={busy} onClick={() => act(async () => (await api('POST', '/api/v1/apps', { appId: a.id }), t('apps.done.install', { name: a.name })))}>
                  {t('apps.install')}
                </button>
              )}
              {a.state === 'disabled' && (
                <button type="button" disabled={busy} onClick={() => step(a, 'enable')}>
                  {t('apps.enable')}
                </button>
              )}
              {a.state === 'enabled' && (
                <button type="button" disabled={busy} onClick={() => setConfirm({ app: a, step: 'disable' })}>
                  {t('apps.disable')}
                </button>
              )}
              {a.upgradeAvailable && (
                <button type="button" disabled={busy} onClick={() => act(async () => (setPlan({ app: a, plan: (await api<{ data: Plan }>('GET', `/api/v1/apps/${a.id}/upgrade`)).data }), ''))}>
                  {t('apps.upgrade')}
                </button>
              )}
              {(a.state === 'enabled' || a.state === 'disabled') && (
                <button type="button" class="danger" disabled={busy} onClick={() => setConfirm({ app: a, step: 'uninstall' })}>
                  {t('apps.uninstall')}
                </button>
              )}
              {a.state === 'uninstalled' && (
                <button type="button" class="danger" disabled={busy} onClick={() => setConfirm({ app: a, step: 'purge' })}>
                  {t('apps.purge')}
                </button>
              )}
            </div>
          </li>
        ))}
          </ul>
        </section>
      ))}
      <ConfirmDialog
        open={confirm !== null}
        title={confirm ? t(`apps.confirm.${confirm.step}` as 'apps.confirm.disable', { name: confirm.app.name }) : ''}
        body={confirm && <p>{t(`apps.explain.${confirm.step}` as 'apps.explain.disable')}</p>}
        confirmLabel={confirm ? t(`apps.${confirm.step}` as 'apps.disable') : ''}
        danger={confirm?.step !== 'enable'}
        busy={busy}
        onConfirm={() => confirm && step(confirm.app, confirm.step)}
        onCancel={() => setConfirm(null)}
      />
      <Dialog open={plan !== null} title={plan ? t('apps.planTitle', { name: plan.app.name, from: plan.plan.from, to: plan.plan.to }) : ''} onClose={() => setPlan(null)} wide>
        {plan && <PlanView plan={plan.plan} />}
        <div class="actions">
          <button
            type="button"
            class="primary"
            disabled={busy}
            onClick={() =>
              plan &&
              act(async () => {
                await api('POST', `/api/v1/apps/${plan.app.id}/upgrade`, { confirm: true, version: plan.plan.to });
                const name = plan.app.name;
                setPlan(null);
                return t('apps.done.upgrade', { name, version: plan.plan.to });
              })
            }
          >
            {t('apps.upgradeConfirm', { version: plan?.plan.to ?? '' })}
          </button>
          <button type="button" onClick={() => setPlan(null)}>
            {t('action.cancel')}
          </button>
        </div>
      </Dialog>
    </section>
  );
}

function PlanView({ plan }: { plan: Plan }) {
  const sections: [string, string[] | undefined, string[] | undefined][] = [
    [t('apps.plan.permissions'), plan.permissions?.added, plan.permissions?.removed],
    [t('apps.plan.routes'), plan.routes?.added, plan.routes?.removed],
    [t('apps.plan.documentTypes'), plan.documentTypes?.added, plan.documentTypes?.removed],
    [t('apps.plan.topics'), plan.topics?.added, plan.topics?.removed],
  ];
  const changed = plan.permissions?.changed ?? [];
  const nothing = sections.every(([, a, r]) => !a?.length && !r?.length) && !changed.length && !plan.migrations?.length;
  return (
    <div class="plan">
      {nothing && <p>{t('apps.plan.nothing')}</p>}
      {sections.map(([title, added, removed]) =>
        added?.length || removed?.length ? (
          <div>
            <h3 class="h4">{title}</h3>
            <ul class="mono small" dir="ltr">
              {(added ?? []).map((x) => (
                <li class="added">+ {x}</li>
              ))}
              {(removed ?? []).map((x) => (
                <li class="removed">− {x}</li>
              ))}
            </ul>
          </div>
        ) : null,
      )}
      {changed.length > 0 && (
        <div>
          <h3 class="h4">{t('apps.plan.roles')}</h3>
          <ul class="mono small" dir="ltr">
            {changed.map((c) => (
              <li>
                {c.permission}: {c.from} → {c.to}
              </li>
            ))}
          </ul>
        </div>
      )}
      {plan.migrations?.length ? (
        <div>
          <h3 class="h4">{t('apps.plan.migrations')}</h3>
          <ul class="mono small" dir="ltr">
            {plan.migrations.map((m) => (
              <li>{m}</li>
            ))}
          </ul>
        </div>
      ) : null}
    </div>
  );
}
