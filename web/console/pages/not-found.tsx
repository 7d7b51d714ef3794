import { t } from '../i18n.ts';

export function NotFound() {
  return (
    <section>
      <h1>{t('notFound.title')}</h1>
      <p>{t('notFound.body')}</p>
      <p>
        <a href="/">{t('nav.home')}</a>
      </p>
    </section>
  );
}
