// The command palette (Ctrl/Cmd+K, or the header's search button): finds apps, menu entries
// and document types by name in the page's language at once, and documents by id or by the
// exact value of a number, code or name field (GET /api/v1/search) as the person stops typing.
import { useEffect, useRef, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, qs } from './api.ts';
import { AppMark } from './app-mark.tsx';
import { t } from './i18n.ts';
import type { DocHit } from './types.ts';
import { StateLabel } from './state-label.tsx';
import { useWorkspace } from './workspace.tsx';
import { menuHref } from './workspace.tsx';

interface Result {
  key: string;
  group: 'apps' | 'types' | 'docs';
  href: string;
  label: string;
  sub?: string;
  hit?: DocHit;
}

const norm = (s: string) => s.toLocaleLowerCase().normalize('NFKD').replace(/[\u064B-\u065F\u0670]/g, '');

export function Palette({ open, onClose }: { open: boolean; onClose(): void }) {
  const ws = useWorkspace();
  const { route } = useLocation();
  const box = useRef<HTMLDialogElement>(null);
  const input = useRef<HTMLInputElement>(null);
  const [q, setQ] = useState('');
  const [active, setActive] = useState(0);
  const [docs, setDocs] = useState<{ q: string; hits: DocHit[] } | null>(null);
  const [searching, setSearching] = useState(false);

  useEffect(() => {
    const d = box.current;
    if (!d) return;
    if (open && !d.open) {
      d.showModal();
      input.current?.select();
    }
    if (!open && d.open) d.close();
  }, [open]);

  // Documents: once the person pauses, the latest query wins.
  useEffect(() => {
    const term = q.trim();
    if (!open || !term) {
      setDocs(null);
      return;
    }
    let stale = false;
    setSearching(true);
    const timer = setTimeout(() => {
      api<{ data: DocHit[] }>('GET', `/api/v1/search${qs({ q: term, limit: 10 })}`)
        .then((r) => !stale && setDocs({ q: term, hits: r.data }))
        .catch(() => !stale && setDocs({ q: term, hits: [] }))
        .finally(() => !stale && setSearching(false));
    }, 250);
    return () => {
      stale = true;
      clearTimeout(timer);
    };
  }, [q, open]);

  const term = norm(q.trim());
  const appName = (id: string) => ws.apps.find((a) => a.id === id)?.name ?? id;
  const results: Result[] = [];
  if (term) {
    const enabled = ws.apps.filter((a) => a.state === 'enabled');
    for (const a of enabled) if (norm(`${a.name} ${a.id}`).includes(term)) results.push({ key: `a:${a.id}`, group: 'apps', href: `/a/${a.id}`, label: a.name, sub: a.description });
    const seen = new Set<string>();
    // An entry or a type is found by its own words or its app's ("payroll" finds Payslips too).
    for (const m of ws.menu) {
      if (!norm(`${m.label} ${appName(m.app)} ${m.app}`).includes(term)) continue;
      const href = menuHref(m);
      seen.add(href);
      results.push({ key: `m:${m.app}:${m.id}`, group: 'types', href, label: m.label, sub: appName(m.app) });
    }
    for (const d of ws.types) {
      const href = `/d/${d.resource}`;
      if (!d.permissions.read || seen.has(href) || !norm(`${d.label} ${d.labelPlural} ${d.resource} ${appName(d.app)} ${d.app}`).includes(term)) continue;
      results.push({ key: `t:${d.resource}`, group: 'types', href, label: d.labelPlural, sub: appName(d.app) });
    }
    for (const h of docs?.hits ?? []) {
      const meta = ws.byResource.get(h.resource);
      results.push({ key: `d:${h.id}`, group: 'docs', href: `/d/${h.resource}/${h.id}`, label: h.title ?? h.id, sub: meta ? `${meta.label} · ${appName(h.app)}` : appName(h.app), hit: h });
    }
  }
  const shown = results.slice(0, 40);
  const at = Math.min(active, Math.max(0, shown.length - 1));

  const close = () => {
    setQ('');
    setActive(0);
    onClose();
  };
  const go = (r: Result | undefined) => {
    if (!r) return;
    close();
    route(r.href);
  };

  const groups: [Result['group'], string][] = [
    ['apps', t('palette.apps')],
    ['types', t('palette.types')],
    ['docs', t('palette.docs')],
  ];
  return (
    <dialog
      ref={box}
      class="palette"
      aria-label={t('palette.title')}
      onCancel={(e) => {
        e.preventDefault();
        close();
      }}
      onClick={(e) => e.target === box.current && close()}
    >
      {open && (
        <div class="palette-body">
          <label for="palette-input" class="sr-only">
            {t('palette.title')}
          </label>
          <input
            id="palette-input"
            ref={input}
            type="search"
            role="combobox"
            aria-expanded={shown.length ? 'true' : 'false'}
            aria-controls="palette-list"
            aria-autocomplete="list"
            aria-activedescendant={shown.length ? `palette-${at}` : undefined}
            autoComplete="off"
            placeholder={t('palette.placeholder')}
            value={q}
            onInput={(e) => {
              setQ((e.currentTarget as HTMLInputElement).value);
              setActive(0);
            }}
            onKeyDown={(e) => {
              if (e.key === 'ArrowDown') (e.preventDefault(), setActive((at + 1) % Math.max(1, shown.length)));
              else if (e.key === 'ArrowUp') (e.preventDefault(), setActive((at - 1 + shown.length) % Math.max(1, shown.length)));
              else if (e.key === 'Enter') (e.preventDefault(), go(shown[at]));
            }}
          />
          <ul id="palette-list" role="listbox" aria-label={t('palette.title')}>
            {groups.map(([g, heading]) => {
              const inGroup = shown.map((r, i) => [r, i] as const).filter(([r]) => r.group === g);
              if (!inGroup.length) return null;
              return (
                <li role="presentation" key={g}>
                  <p class="palette-heading" aria-hidden="true">
                    {heading}
                  </p>
                  <ul role="presentation">
                    {inGroup.map(([r, i]) => (
                      <li
                        id={`palette-${i}`}
                        key={r.key}
                        role="option"
                        aria-selected={i === at ? 'true' : 'false'}
                        class={i === at ? 'active' : ''}
                        onMouseMove={() => i !== at && setActive(i)}
                        onClick={() => go(r)}
                      >
                        {r.group === 'apps' && <AppMark app={ws.apps.find((a) => `a:${a.id}` === r.key)!} size="sm" />}
                        <span class="palette-text">
                          <span class="palette-label">{r.label}</span>
                          {r.sub && <span class="palette-sub">{r.sub}</span>}
                        </span>
                        {r.hit?.state && <StateLabel resource={r.hit.resource} state={r.hit.state} />}
                      </li>
                    ))}
                  </ul>
                </li>
              );
            })}
          </ul>
          <p class="palette-status muted small" role="status">
            {!term ? t('palette.hint') : searching && !docs ? t('palette.searching') : shown.length === 0 && docs?.q === q.trim() ? t('palette.none', { q: q.trim() }) : ''}
          </p>
        </div>
      )}
    </dialog>
  );
}
