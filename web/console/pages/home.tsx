// The workspace's start page: the company, its apps' entries and the document types.
import { t } from '../i18n.ts';
import { PageHeader } from '../ui.tsx';
import { menuHref, useWorkspace } from '../workspace.tsx';

export function Home() {
  const ws = useWorkspace();
  const readable = ws.types.filter((d) => d.permissions.read);
  const withTypes = new Set(readable.map((d) => d.app));
  const others = ws.menu.filter((m) => !m.resource && !withTypes.has(m.app));
  return (
    <section>
      <PageHeader title={ws.company.name} />
      <p class="muted">{t('home.intro', { currency: ws.company.currency })}</p>
      {readable.length > 0 && (
        <>
          <h2>{t('home.documents')}</h2>
          <ul class="cards">
            {readable.map((d) => (
              <li class="card">
                <a href={`/d/${d.resource}`} class="card-link">
                  {d.labelPlural}
                </a>
                <p class="muted small">{ws.apps.find((a) => a.id === d.app)?.name ?? d.app}</p>
                {d.permissions.create && (
                  <a href={`/d/${d.resource}/new`} class="small">
                    {t('doc.new', { type: d.label })}
                  </a>
                )}
              </li>
            ))}
          </ul>
        </>
      )}
      {others.length > 0 && (
        <>
          <h2>{t('home.apps')}</h2>
          <ul class="chips">
            {others.map((m) => (
              <li>
                <a href={menuHref(m)}>{m.label}</a>
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}
