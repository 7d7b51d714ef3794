import { useLocation } from 'preact-iso';
import { t } from '../i18n.ts';
import { useWorkspace } from '../workspace.tsx';

/** The tabs of Settings → Developers, each shown when the person may read it. */
export function DevelopersNav() {
  const ws = useWorkspace();
  const { path } = useLocation();
  const tabs = [
    { href: '/settings/developers/api-keys', label: t('dev.keys'), show: ws.can('api-keys:read') },
    { href: '/settings/developers/webhooks', label: t('dev.webhooks'), show: ws.can('webhooks:read') },
    { href: '/settings/developers/audit-log', label: t('dev.audit'), show: ws.can('audit:read') },
  ].filter((x) => x.show);
  return (
    <nav class="tabs" aria-label={t('nav.developers')}>
      {tabs.map((x) => (
        <a href={x.href} aria-current={path.startsWith(x.href) ? 'page' : undefined}>
          {x.label}
        </a>
      ))}
    </nav>
  );
}
