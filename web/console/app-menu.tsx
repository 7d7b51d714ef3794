// An app's own menu: the entries its manifest declares, grouped under the manifest's headings
// (entries without one first), then any document type the person may read that no entry opens.
import type { DocTypeMeta, MenuItem } from './types.ts';
import type { Workspace } from './workspace.tsx';
import { menuHref } from './workspace.tsx';

export interface MenuEntry {
  href: string;
  label: string;
  /** The document type it opens, when it opens one. */
  type?: DocTypeMeta;
}

export interface MenuGroup {
  /** Null for the entries the manifest puts under no heading. */
  heading: string | null;
  entries: MenuEntry[];
}

export function appMenu(ws: Pick<Workspace, 'menu' | 'types' | 'byResource'>, app: string): MenuGroup[] {
  const items = ws.menu.filter((m) => m.app === app);
  const opened = new Set(items.map((m) => m.resource).filter(Boolean));
  const entry = (m: MenuItem): MenuEntry => ({ href: menuHref(m), label: m.label, type: m.resource ? ws.byResource.get(m.resource) : undefined });
  const groups: MenuGroup[] = [{ heading: null, entries: [] }];
  for (const m of items) {
    const heading = m.group ?? null;
    let g = groups.find((x) => x.heading === heading);
    if (!g) groups.push((g = { heading, entries: [] }));
    g.entries.push(entry(m));
  }
  const rest = ws.types.filter((d) => d.app === app && d.permissions.read && !opened.has(d.resource));
  groups[0].entries.push(...rest.map((d) => ({ href: `/d/${d.resource}`, label: d.labelPlural, type: d })));
  return groups.filter((g) => g.entries.length);
}

/** The app a console path belongs to: `/a/<app>…`, or the app of the document type in `/d/<resource>…`. */
export function appOfPath(ws: Pick<Workspace, 'byResource'>, path: string): string | null {
  const a = /^\/a\/([^/?#]+)/.exec(path);
  if (a) return decodeURIComponent(a[1]);
  const d = /^\/d\/([^/?#]+)/.exec(path);
  return d ? (ws.byResource.get(decodeURIComponent(d[1]))?.app ?? null) : null;
}
