// An invitation link (`/invite#<token>`, shown once to the Owner or Admin who invited): a
// person new to Diwan gives their name and chooses a password; a person who already has an
// account gives its password. Either way they join the company with the invited role and are
// signed in, acting in it.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { ApiError, acceptInvitation, type Session } from '../api.ts';
import { t } from '../i18n.ts';
import { ErrorBanner, Field, Notice, useAction } from '../ui.tsx';
import { NewPassword, PublicPage, passwordErrors } from './sign-in.tsx';

export function Invitation(props: { token: string | null; session: Session | null; langSwitch: ComponentChildren; onJoined(s: Session): void }) {
  const [account, setAccount] = useState<'new' | 'existing'>(props.session ? 'existing' : 'new');
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [repeat, setRepeat] = useState('');
  const [tried, setTried] = useState(false);
  const { busy, error, setError, run } = useAction();
  const mismatch = account === 'new' && tried && password !== repeat;
  const errors = passwordErrors(error, mismatch);
  const dead = !props.token || (error instanceof ApiError && error.status === 401 && error.details.some((d) => d.reason === 'link'));

  if (!props.token) {
    return (
      <PublicPage langSwitch={props.langSwitch}>
        <div class="panel">
          <h1>{t('invite.title')}</h1>
          <p>{t('invite.noToken')}</p>
          <p>
            <a href="/signin">{t('invite.signIn')}</a>
          </p>
        </div>
      </PublicPage>
    );
  }
  return (
    <PublicPage langSwitch={props.langSwitch}>
      <form
        class="panel"
        noValidate
        onSubmit={async (e) => {
          e.preventDefault();
          setTried(true);
          setError(undefined);
          if (account === 'new' && password !== repeat) return;
          await run(async () => props.onJoined(await acceptInvitation(props.token!, account === 'new' ? { name, password } : { password })));
        }}
      >
        <h1>{t('invite.title')}</h1>
        <p class="muted">{t('invite.intro')}</p>
        {props.session && <Notice>{t('invite.signedInAs', { name: props.session.person.name, email: props.session.person.email })}</Notice>}
        <ErrorBanner error={error} />
        {!dead && (
          <>
            <fieldset class="choices">
              <legend>{t('invite.account')}</legend>
              <label class="check">
                <input type="radio" name="account" value="new" checked={account === 'new'} onChange={() => setAccount('new')} /> {t('invite.new')}
              </label>
              <label class="check">
                <input type="radio" name="account" value="existing" checked={account === 'existing'} onChange={() => setAccount('existing')} /> {t('invite.existing')}
              </label>
            </fieldset>
            {account === 'new' ? (
              <>
                <Field pointer="/name" label={t('invite.name')} required error={errors['/name']}>
                  {(aria) => <input {...aria} name="name" type="text" autoComplete="name" maxLength={200} value={name} onInput={(e) => setName((e.currentTarget as HTMLInputElement).value)} />}
                </Field>
                <NewPassword value={password} repeat={repeat} errors={errors} onValue={setPassword} onRepeat={setRepeat} />
              </>
            ) : (
              <Field pointer="/password" label={t('invite.existingPassword')} required hint={t('invite.existingHint')} error={errors['/password']}>
                {(aria) => <input {...aria} name="password" type="password" autoComplete="current-password" value={password} onInput={(e) => setPassword((e.currentTarget as HTMLInputElement).value)} />}
              </Field>
            )}
            <div class="actions">
              <button type="submit" class="primary" disabled={busy || !password || (account === 'new' && !name.trim())}>
                {t('invite.submit')}
              </button>
            </div>
          </>
        )}
      </form>
    </PublicPage>
  );
}
