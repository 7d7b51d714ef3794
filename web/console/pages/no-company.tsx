// A signed-in person who belongs to no company (never invited yet, or removed from all).
import type { ComponentChildren } from 'preact';
import type { Person } from '../api.ts';
import { t } from '../i18n.ts';
import { PublicPage } from './sign-in.tsx';

export function NoCompany(props: { person: Person; langSwitch: ComponentChildren; onSignOut(): void }) {
  return (
    <PublicPage langSwitch={props.langSwitch}>
      <div class="panel">
        <h1>{t('noCompany.title')}</h1>
        <p>{t('noCompany.body', { email: props.person.email })}</p>
        <div class="actions">
          <button type="button" onClick={props.onSignOut}>
            {t('nav.signOut')}
          </button>
        </div>
      </div>
    </PublicPage>
  );
}
