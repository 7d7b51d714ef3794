// Signing in with email and password (the server sets an HttpOnly session cookie), and the
// frame the pages before signing in share: the name, the language switch, one panel.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { signIn, type Session } from '../api.ts';
import { t } from '../i18n.ts';
import { ErrorBanner, Field, fieldErrors, useAction } from '../ui.tsx';

/**
 * The token of a one-time link (`/signin#<token>`, `/invite#<token>`), taken from the address
 * and removed from it (the page's history entry no longer holds it). Null when there is none.
 */
export function takeFragmentToken(): string | null {
  if (!/^\/(signin|sign-in|invite)\/?$/.test(location.pathname)) return null;
  const token = location.hash.replace(/^#/, '').trim();
  if (!token) return null;
  history.replaceState(history.state, '', `${location.pathname}${location.search}`);
  return token;
}

/** The frame of the pages a person sees before signing in. */
export function PublicPage(props: { langSwitch: ComponentChildren; children: ComponentChildren }) {
  return (
    <main id="main" class="sign-in">
      <div class="sign-in-top">
        <span class="brand">{t('app.title')}</span>
        {props.langSwitch}
      </div>
      {props.children}
    </main>
  );
}

/** A new password and the same again; the mismatch is caught here, the length by the server. */
export function NewPassword(props: { value: string; repeat: string; errors: Record<string, string>; onValue(v: string): void; onRepeat(v: string): void; label?: string }) {
  return (
    <>
      <Field pointer="/password" label={props.label ?? t('password.new')} required hint={t('password.rule')} error={props.errors['/password'] ?? props.errors['/newPassword']}>
        {(aria) => <input {...aria} name="new-password" type="password" autoComplete="new-password" value={props.value} onInput={(e) => props.onValue((e.currentTarget as HTMLInputElement).value)} />}
      </Field>
      <Field pointer="/repeat" label={t('password.repeat')} required error={props.errors['/repeat']}>
        {(aria) => <input {...aria} name="repeat-password" type="password" autoComplete="new-password" value={props.repeat} onInput={(e) => props.onRepeat((e.currentTarget as HTMLInputElement).value)} />}
      </Field>
    </>
  );
}

/** The field errors of a new password's form: the server's, and a repeat that differs. */
export function passwordErrors(error: unknown, mismatch: boolean): Record<string, string> {
  const errors = fieldErrors(error);
  if (mismatch) errors['/repeat'] = t('password.mismatch');
  return errors;
}

export function SignIn({ onSignedIn, langSwitch }: { onSignedIn(s: Session): void; langSwitch: ComponentChildren }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const { busy, error, run } = useAction();
  return (
    <PublicPage langSwitch={langSwitch}>
      <form
        class="panel"
        noValidate
        onSubmit={async (e) => {
          e.preventDefault();
          await run(async () => onSignedIn(await signIn({ email, password })));
        }}
      >
        <h1>{t('signIn.title')}</h1>
        <ErrorBanner error={error} />
        <Field pointer="/email" label={t('signIn.email')} required>
          {(aria) => <input {...aria} name="email" type="email" dir="ltr" autoComplete="username" spellcheck={false} value={email} onInput={(e) => setEmail((e.currentTarget as HTMLInputElement).value)} />}
        </Field>
        <Field pointer="/password" label={t('signIn.password')} required>
          {(aria) => <input {...aria} name="password" type="password" autoComplete="current-password" value={password} onInput={(e) => setPassword((e.currentTarget as HTMLInputElement).value)} />}
        </Field>
        <div class="actions">
          <button type="submit" class="primary" disabled={busy || !email.trim() || !password}>
            {t('signIn.submit')}
          </button>
        </div>
        <p class="muted small">{t('signIn.help')}</p>
      </form>
    </PublicPage>
  );
}
