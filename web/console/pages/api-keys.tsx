// Settings → Developers → API keys: create with a role up to the person's own and resource
// scopes (the full key shown once, with a copy button), list with hint, creator, last use and
// expiry, revoke.
import { useMemo, useState } from 'preact/hooks';
import { api, rolesUpTo } from '../api.ts';
import { formatDateTime, localInputToIso } from '../format.ts';
import { t } from '../i18n.ts';
import type { PermissionInfo } from '../types.ts';
import { ConfirmDialog, ErrorBanner, Field, Loading, PageHeader, SecretOnce, fieldErrors, useAsync, useAction } from '../ui.tsx';
import { loadMemberNames, useWorkspace } from '../workspace.tsx';
import { DevelopersNav } from './settings-nav.tsx';

interface ApiKey {
  id: string;
  name: string;
  role: string;
  scopes: string[];
  hint: string;
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
  lastUsedAt: string | null;
  /** The person who created it; null for the operator's CLI or another key. */
  createdBy: string | null;
}

export function ApiKeys() {
  const ws = useWorkspace();
  const keys = useAsync(() => api<{ data: ApiKey[] }>('GET', '/api/v1/api-keys'), []);
  const perms = useAsync(() => api<{ data: PermissionInfo[] }>('GET', '/api/v1/permissions'), []);
  const names = useAsync(() => loadMemberNames(ws), []);
  // Nobody grants a role above their own: the picker offers no more.
  const grantable = rolesUpTo(ws.role);
  const resources = useMemo(() => [...new Set((perms.data?.data ?? []).map((p) => p.permission.split(':')[0]))].sort(), [perms.data]);
  const [creating, setCreating] = useState(false);
  const [name, setName] = useState('');
  const [role, setRole] = useState<string>('Viewer');
  const [all, setAll] = useState(true);
  const [scopes, setScopes] = useState<string[]>([]);
  const [scopeFilter, setScopeFilter] = useState('');
  const [expires, setExpires] = useState('');
  const { busy, error, run } = useAction();
  const [shown, setShown] = useState<string | null>(null);
  const [revoking, setRevoking] = useState<ApiKey | null>(null);
  const revocation = useAction();
  const manage = ws.can('api-keys:manage');
  const errors = fieldErrors(error);

  const create = async (e: Event) => {
    e.preventDefault();
    await run(async () => {
      const body = { ...(name.trim() ? { name: name.trim() } : {}), role, scopes: all ? ['*'] : scopes, ...(expires ? { expiresAt: localInputToIso(expires) } : {}) };
      const r = await api<{ data: ApiKey & { key: string } }>('POST', '/api/v1/api-keys', body);
      setShown(r.data.key);
      setCreating(false);
      setName('');
      setExpires('');
      keys.reload();
    });
  };
  const revoke = async () => {
    if (!revoking) return;
    await revocation.run(async () => {
      await api('DELETE', `/api/v1/api-keys/${encodeURIComponent(revoking.id)}`);
      setRevoking(null);
      keys.reload();
    });
  };

  return (
    <section>
      <PageHeader title={t('dev.title')}>
        {manage && !creating && (
          <button type="button" class="primary" onClick={() => setCreating(true)}>
            {t('keys.new')}
          </button>
        )}
      </PageHeader>
      <DevelopersNav />
      <h2>{t('dev.keys')}</h2>
      {creating && (
        <form class="panel" onSubmit={create} noValidate aria-labelledby="new-key-title">
          <h3 id="new-key-title">{t('keys.new')}</h3>
          <ErrorBanner error={error} />
          <div class="grid">
            <Field pointer="/name" label={t('keys.name')} error={errors['/name']}>
              {(aria) => <input {...aria} type="text" maxLength={100} value={name} onInput={(e) => setName((e.currentTarget as HTMLInputElement).value)} />}
            </Field>
            <Field pointer="/role" label={t('keys.role')} required error={errors['/role']} hint={t('keys.roleHint')}>
              {(aria) => (
                <select {...aria} value={role} onChange={(e) => setRole((e.currentTarget as HTMLSelectElement).value)}>
                  {grantable.map((r) => (
                    <option value={r}>{t(`role.${r}` as 'role.Viewer')}</option>
                  ))}
                </select>
              )}
            </Field>
            <Field pointer="/expiresAt" label={t('keys.expires')} error={errors['/expiresAt']} hint={t('keys.expiresHint')}>
              {(aria) => <input {...aria} type="datetime-local" value={expires} onInput={(e) => setExpires((e.currentTarget as HTMLInputElement).value)} />}
            </Field>
          </div>
          <fieldset class={errors['/scopes'] ? 'field-invalid' : ''}>
            <legend>{t('keys.scopes')}</legend>
            {errors['/scopes'] && <p class="field-error">{errors['/scopes']}</p>}
            <label class="check">
              <input type="checkbox" checked={all} onChange={(e) => setAll((e.currentTarget as HTMLInputElement).checked)} /> {t('keys.allResources')}
            </label>
            {!all && (
              <>
                <label for="scope-filter" class="sr-only">
                  {t('keys.filterResources')}
                </label>
                <input id="scope-filter" type="search" placeholder={t('keys.filterResources')} value={scopeFilter} onInput={(e) => setScopeFilter((e.currentTarget as HTMLInputElement).value)} />
                <div class="checks">
                  {resources
                    .filter((r) => !scopeFilter || r.includes(scopeFilter.toLowerCase()) || scopes.includes(r))
                    .map((r) => (
                      <label class="check">
                        <input
                          type="checkbox"
                          checked={scopes.includes(r)}
                          onChange={(e) => setScopes((e.currentTarget as HTMLInputElement).checked ? [...scopes, r] : scopes.filter((x) => x !== r))}
                        />{' '}
                        <span class="mono">{r}</span>
                      </label>
                    ))}
                </div>
                <p class="hint">{t('keys.chosen', { count: scopes.length })}</p>
              </>
            )}
          </fieldset>
          <div class="actions">
            <button type="submit" class="primary" disabled={busy}>
              {t('keys.create')}
            </button>
            <button type="button" onClick={() => setCreating(false)}>
              {t('action.cancel')}
            </button>
          </div>
        </form>
      )}
      <ErrorBanner error={keys.error} />
      {keys.loading && !keys.data && <Loading />}
      {keys.data && (
        <div class="table-wrap stack-early">
          <table>
            <caption class="sr-only">{t('dev.keys')}</caption>
            <thead>
              <tr>
                <th scope="col">{t('keys.name')}</th>
                <th scope="col">{t('keys.hint')}</th>
                <th scope="col">{t('keys.role')}</th>
                <th scope="col">{t('keys.scopes')}</th>
                <th scope="col">{t('keys.created')}</th>
                <th scope="col">{t('keys.createdBy')}</th>
                <th scope="col">{t('keys.lastUsed')}</th>
                <th scope="col">{t('keys.expires')}</th>
                <th scope="col">{t('keys.status')}</th>
                {manage && <th scope="col"><span class="sr-only">{t('keys.actions')}</span></th>}
              </tr>
            </thead>
            <tbody>
              {keys.data.data.map((k) => (
                <tr class={k.revokedAt ? 'revoked' : ''}>
                  <th scope="row">{k.name}</th>
                  <td class="mono nowrap" data-label={t('keys.hint')}>{k.hint}</td>
                  <td data-label={t('keys.role')}>{t(`role.${k.role}` as 'role.Viewer')}</td>
                  <td class="mono break" data-label={t('keys.scopes')}>{k.scopes.join(', ')}</td>
                  <td data-label={t('keys.created')}>{formatDateTime(k.createdAt)}</td>
                  <td class="creator" data-label={t('keys.createdBy')}>{k.createdBy ? names.data?.get(k.createdBy) ?? <span class="mono small">{k.createdBy}</span> : <span class="muted">{t('keys.byOperator')}</span>}</td>
                  <td data-label={t('keys.lastUsed')}>{k.lastUsedAt ? formatDateTime(k.lastUsedAt) : t('keys.never')}</td>
                  <td data-label={t('keys.expires')}>{k.expiresAt ? formatDateTime(k.expiresAt) : t('keys.noExpiry')}</td>
                  <td data-label={t('keys.status')}>{k.revokedAt ? <span class="badge state-void">{t('keys.revoked')}</span> : k.expiresAt && Date.parse(k.expiresAt) <= Date.now() ? <span class="badge">{t('keys.expired')}</span> : <span class="badge state-paid">{t('keys.active')}</span>}</td>
                  {manage && (
                    <td>
                      {!k.revokedAt && (
                        <button type="button" class="danger small" onClick={() => { revocation.setError(undefined); setRevoking(k); }} aria-label={t('keys.revokeNamed', { name: k.name })}>
                          {t('keys.revoke')}
                        </button>
                      )}
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <SecretOnce open={shown !== null} title={t('keys.createdTitle')} label={t('keys.full')} value={shown ?? ''} onDone={() => setShown(null)} />
      <ConfirmDialog
        open={revoking !== null}
        title={t('keys.revokeTitle')}
        body={<p>{t('keys.revokeBody', { name: revoking?.name ?? '' })}</p>}
        confirmLabel={t('keys.revoke')}
        danger
        busy={revocation.busy}
        error={revocation.error}
        onConfirm={revoke}
        onCancel={() => setRevoking(null)}
      />
    </section>
  );
}
