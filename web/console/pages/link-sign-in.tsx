// A one-time sign-in link (`/signin#<token>`, printed by `diwan users create`): the person
// chooses their password, and is signed in. The link works once.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { ApiError, signInWithLink, type Session } from '../api.ts';
import { t } from '../i18n.ts';
import { ErrorBanner, useAction } from '../ui.tsx';
import { NewPassword, PublicPage, passwordErrors } from './sign-in.tsx';

export function LinkSignIn(props: { token: string; langSwitch: ComponentChildren; onSignedIn(s: Session): void; onPasswordInstead(): void }) {
  const [password, setPassword] = useState('');
  const [repeat, setRepeat] = useState('');
  const [tried, setTried] = useState(false);
  const { busy, error, setError, run } = useAction();
  const mismatch = tried && password !== repeat;
  const errors = passwordErrors(error, mismatch);
  // An unknown, used or expired link: nothing more to do with it here.
  const dead = error instanceof ApiError && error.status === 401;
  return (
    <PublicPage langSwitch={props.langSwitch}>
      <form
        class="panel"
        noValidate
        onSubmit={async (e) => {
          e.preventDefault();
          setTried(true);
          setError(undefined);
          if (password !== repeat) return;
          await run(async () => props.onSignedIn(await signInWithLink(props.token, password)));
        }}
      >
        <h1>{t('link.title')}</h1>
        <p class="muted">{t('link.intro')}</p>
        <ErrorBanner error={error} />
        {!dead && (
          <>
            <NewPassword value={password} repeat={repeat} errors={errors} onValue={setPassword} onRepeat={setRepeat} />
            <div class="actions">
              <button type="submit" class="primary" disabled={busy || !password}>
                {t('link.submit')}
              </button>
            </div>
          </>
        )}
        <p class="small">
          <a
            href="/signin"
            onClick={(e) => {
              e.preventDefault();
              props.onPasswordInstead();
            }}
          >
            {t('link.passwordInstead')}
          </a>
        </p>
      </form>
    </PublicPage>
  );
}
