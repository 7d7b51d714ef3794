// What every page of a signed-in person needs, loaded once per company and language: the
// person and their role here, the company, its menu, its document types and the permissions
// the person holds.
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { api, refreshSession, type Membership, type Person, type Role } from './api.ts';
import type { AppInfo, Company, DocTypeMeta, MenuItem, PermissionInfo } from './types.ts';

export interface Workspace {
  person: Person;
  /** The person's role in this company (what they may grant at most). */
  role: Role;
  /** Every company the person belongs to. */
  companies: Membership[];
  company: Company;
  menu: MenuItem[];
  types: DocTypeMeta[];
  byResource: Map<string, DocTypeMeta>;
  apps: AppInfo[];
  held: Set<string>;
  can(permission: string): boolean;
  reload(): Promise<void>;
}

export async function loadWorkspace(): Promise<Omit<Workspace, 'reload'>> {
  const [company, menu, types, permissions, apps, session] = await Promise.all([
    api<{ data: Company }>('GET', '/api/v1/company'),
    api<{ data: MenuItem[] }>('GET', '/api/v1/menu'),
    api<{ data: DocTypeMeta[] }>('GET', '/api/v1/document-types'),
    api<{ data: PermissionInfo[] }>('GET', '/api/v1/permissions'),
    api<{ data: AppInfo[] }>('GET', '/api/v1/apps?installed=true'),
    // The roles may have changed since sign-in: read them again with the rest.
    refreshSession(),
  ]);
  if (!session?.company) throw new Error('signed out');
  const held = new Set(permissions.data.filter((p) => p.held).map((p) => p.permission));
  return {
    person: session.person,
    role: session.company.role,
    companies: session.companies,
    company: company.data,
    menu: menu.data,
    types: types.data,
    byResource: new Map(types.data.map((d) => [d.resource, d])),
    apps: apps.data,
    held,
    can: (p) => held.has(p),
  };
}

export const WorkspaceContext = createContext<Workspace | null>(null);

export function useWorkspace(): Workspace {
  const w = useContext(WorkspaceContext);
  if (!w) throw new Error('useWorkspace outside a signed-in shell');
  return w;
}

/** Where a menu entry leads inside the console. */
export function menuHref(m: MenuItem): string {
  if (m.resource) return `/d/${m.resource}`;
  return `/a/${m.app}${m.path ? `?page=${encodeURIComponent(m.path)}` : ''}`;
}

/** People of the company by id, for showing who created a key or did something (empty when the person may not list members). */
export async function loadMemberNames(ws: Pick<Workspace, 'can' | 'person'>): Promise<Map<string, string>> {
  const names = new Map<string, string>([[ws.person.id, ws.person.name]]);
  if (!ws.can('members:read')) return names;
  const r = await api<{ data: { userId: string; name: string; email: string }[] }>('GET', '/api/v1/members');
  for (const m of r.data) names.set(m.userId, m.name || m.email);
  return names;
}
