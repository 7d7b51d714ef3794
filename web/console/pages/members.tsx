// Settings → Members: the company's people and their roles; an Owner or Admin changes a role
// (within their own), removes a member, and invites a person with a role up to their own (the
// invitation link shown once, with a copy button: no e-mail is sent). Open invitations are
// listed until they are accepted or expire.
import { useState } from 'preact/hooks';
import { api, rolesUpTo, ROLES, type Role } from '../api.ts';
import { formatDateTime } from '../format.ts';
import { t } from '../i18n.ts';
import { ConfirmDialog, ErrorBanner, Field, Loading, Notice, PageHeader, SecretOnce, fieldErrors, useAsync, useAction } from '../ui.tsx';
import { useWorkspace } from '../workspace.tsx';

interface Member {
  userId: string;
  email: string;
  name: string;
  role: Role;
  since: string;
}

interface Invitation {
  id: string;
  email: string;
  role: Role;
  createdBy: string | null;
  createdAt: string;
  expiresAt: string;
}

const rank = (r: string) => ROLES.indexOf(r as Role);

export function Members() {
  const ws = useWorkspace();
  const members = useAsync(() => api<{ data: Member[] }>('GET', '/api/v1/members'), []);
  const invitations = useAsync(() => api<{ data: Invitation[] }>('GET', '/api/v1/invitations'), []);
  const manage = ws.can('members:manage');
  const grantable = rolesUpTo(ws.role);
  const [inviting, setInviting] = useState(false);
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('Member');
  const { busy, error, setError, run } = useAction();
  const [link, setLink] = useState<{ link: string; email: string; expiresAt: string } | null>(null);
  const [done, setDone] = useState<string>();
  const [rowError, setRowError] = useState<unknown>();
  const [removing, setRemoving] = useState<Member | null>(null);
  const removal = useAction();
  const errors = fieldErrors(error);
  const names = new Map((members.data?.data ?? []).map((m) => [m.userId, m.name || m.email]));
  // One may act on a member whose role is not above one's own, and not on oneself here.
  const mayChange = (m: Member) => manage && m.userId !== ws.person.id && rank(m.role) <= rank(ws.role);

  const invite = async (e: Event) => {
    e.preventDefault();
    await run(async () => {
      const r = await api<{ data: Invitation & { link: string } }>('POST', '/api/v1/invitations', { email: email.trim(), role });
      setLink({ link: r.data.link, email: r.data.email, expiresAt: r.data.expiresAt });
      setInviting(false);
      setEmail('');
      invitations.reload();
    });
  };
  const changeRole = async (m: Member, next: string) => {
    setRowError(undefined);
    setDone(undefined);
    try {
      await api('PATCH', `/api/v1/members/${encodeURIComponent(m.userId)}`, { role: next });
      setDone(t('members.roleChanged', { name: m.name || m.email, role: t(`role.${next}` as 'role.Viewer') }));
    } catch (err) {
      setRowError(err);
    }
    members.reload();
  };
  const remove = async () => {
    if (!removing) return;
    await removal.run(async () => {
      await api('DELETE', `/api/v1/members/${encodeURIComponent(removing.userId)}`);
      setDone(t('members.removed', { name: removing.name || removing.email }));
      setRemoving(null);
      members.reload();
    });
  };

  return (
    <section>
      <PageHeader title={t('members.title')}>
        {manage && !inviting && (
          <button type="button" class="primary" onClick={() => { setError(undefined); setRole(grantable.includes('Member') ? 'Member' : grantable[0]); setInviting(true); }}>
            {t('members.invite')}
          </button>
        )}
      </PageHeader>
      <p class="muted">{t('members.intro')}</p>
      {inviting && (
        <form class="panel" onSubmit={invite} noValidate aria-labelledby="invite-title">
          <h2 id="invite-title" class="h3">{t('members.invite')}</h2>
          <ErrorBanner error={error} />
          <div class="grid">
            <Field pointer="/email" label={t('members.email')} required error={errors['/email']}>
              {(aria) => <input {...aria} name="email" type="email" dir="ltr" autoComplete="off" spellcheck={false} maxLength={320} value={email} onInput={(e) => setEmail((e.currentTarget as HTMLInputElement).value)} />}
            </Field>
            <Field pointer="/role" label={t('members.role')} required error={errors['/role']} hint={t('keys.roleHint')}>
              {(aria) => (
                <select {...aria} name="role" value={role} onChange={(e) => setRole((e.currentTarget as HTMLSelectElement).value as Role)}>
                  {grantable.map((r) => (
                    <option value={r}>{t(`role.${r}` as 'role.Viewer')}</option>
                  ))}
                </select>
              )}
            </Field>
          </div>
          <div class="actions">
            <button type="submit" class="primary" disabled={busy || !email.trim()}>
              {t('members.sendInvite')}
            </button>
            <button type="button" onClick={() => setInviting(false)}>
              {t('action.cancel')}
            </button>
          </div>
        </form>
      )}
      {done && <Notice kind="success">{done}</Notice>}
      <ErrorBanner error={rowError ?? members.error} />
      {members.loading && !members.data && <Loading />}
      {members.data && (
        <div class="table-wrap">
          <table class="members">
            <caption class="sr-only">{t('members.title')}</caption>
            <thead>
              <tr>
                <th scope="col">{t('members.name')}</th>
                <th scope="col">{t('members.email')}</th>
                <th scope="col">{t('members.role')}</th>
                <th scope="col">{t('members.since')}</th>
                {manage && <th scope="col"><span class="sr-only">{t('keys.actions')}</span></th>}
              </tr>
            </thead>
            <tbody>
              {members.data.data.map((m) => (
                <tr data-user={m.userId}>
                  <th scope="row">
                    {m.name}
                    {m.userId === ws.person.id && <span class="muted you"> {t('members.you')}</span>}
                  </th>
                  <td dir="ltr" class="break">{m.email}</td>
                  <td>
                    {mayChange(m) ? (
                      <select aria-label={t('members.roleOf', { name: m.name || m.email })} value={m.role} onChange={(e) => void changeRole(m, (e.currentTarget as HTMLSelectElement).value)}>
                        {grantable.map((r) => (
                          <option value={r}>{t(`role.${r}` as 'role.Viewer')}</option>
                        ))}
                      </select>
                    ) : (
                      t(`role.${m.role}` as 'role.Viewer')
                    )}
                  </td>
                  <td class="nowrap">{formatDateTime(m.since)}</td>
                  {manage && (
                    <td>
                      {mayChange(m) && (
                        <button type="button" class="danger small" aria-label={t('members.removeNamed', { name: m.name || m.email })} onClick={() => { removal.setError(undefined); setRemoving(m); }}>
                          {t('members.remove')}
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

      <h2>{t('members.invitations')}</h2>
      <ErrorBanner error={invitations.error} />
      {invitations.loading && !invitations.data && <Loading />}
      {invitations.data &&
        (invitations.data.data.length === 0 ? (
          <p class="empty">{t('members.noInvitations')}</p>
        ) : (
          <div class="table-wrap">
            <table class="invitations">
              <caption class="sr-only">{t('members.invitations')}</caption>
              <thead>
                <tr>
                  <th scope="col">{t('members.email')}</th>
                  <th scope="col">{t('members.role')}</th>
                  <th scope="col">{t('members.invitedBy')}</th>
                  <th scope="col">{t('members.invitedAt')}</th>
                  <th scope="col">{t('members.expires')}</th>
                </tr>
              </thead>
              <tbody>
                {invitations.data.data.map((i) => (
                  <tr>
                    <th scope="row" dir="ltr" class="break">{i.email}</th>
                    <td>{t(`role.${i.role}` as 'role.Viewer')}</td>
                    <td>{i.createdBy ? names.get(i.createdBy) ?? (i.createdBy === 'operator' ? t('actor.cli') : <span class="mono small">{i.createdBy}</span>) : '—'}</td>
                    <td class="nowrap">{formatDateTime(i.createdAt)}</td>
                    <td class="nowrap">{formatDateTime(i.expiresAt)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ))}

      <SecretOnce
        open={link !== null}
        title={t('members.linkTitle')}
        label={t('members.link')}
        value={link?.link ?? ''}
        note={link && <p>{t('members.linkNote', { email: link.email, expires: formatDateTime(link.expiresAt) })}</p>}
        onDone={() => setLink(null)}
      />
      <ConfirmDialog
        open={removing !== null}
        title={t('members.removeTitle')}
        body={<p>{t('members.removeBody', { name: removing?.name || removing?.email || '', company: ws.company.name })}</p>}
        confirmLabel={t('members.remove')}
        danger
        busy={removal.busy}
        error={removal.error}
        onConfirm={remove}
        onCancel={() => setRemoving(null)}
      />
    </section>
  );
}
