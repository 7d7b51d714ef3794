// The permission registry: every `resource:action` the host knows, the lowest role that
// holds it, and who declared it. Core permissions are fixed; apps add theirs on load.
import { DiwanError } from '../kernel/errors/diwan-error.ts';
import { roleAtLeast, ROLES, type Role } from './roles.ts';
import type { Principal } from './principal.ts';

export interface PermissionEntry {
  permission: string;
  resource: string;
  action: string;
  role: Role;
  owner: string;
  description?: { en: string; ar: string };
}

const core = (permission: string, role: Role, en: string, ar: string): PermissionEntry => {
  const [resource, action] = permission.split(':');
  return { permission, resource, action, role, owner: 'core', description: { en, ar } };
};

export const CORE_PERMISSIONS: PermissionEntry[] = [
  core('company:read', 'Viewer', 'Read the company', 'عرض بيانات الشركة'),
  core('company:manage', 'Owner', "Change the company's name and its seller's profile (legal name, VAT number, address, VAT rate)", 'تعديل اسم الشركة وبيانات البائع (الاسم النظامي والرقم الضريبي والعنوان ونسبة الضريبة)'),
  core('apps:read', 'Viewer', 'List installed apps and the menu', 'عرض التطبيقات المثبتة والقائمة'),
  core('apps:manage', 'Owner', 'Install, upgrade, enable, disable and remove apps', 'تثبيت التطبيقات وترقيتها وتفعيلها وتعطيلها وإزالتها'),
  core('audit:read', 'Admin', 'Read the audit log', 'قراءة سجل التدقيق'),
  core('members:read', 'Admin', 'List members and invitations', 'عرض الأعضاء والدعوات'),
  core('members:manage', 'Admin', 'Invite people, change and remove members', 'دعوة الأشخاص وتعديل الأعضاء وإزالتهم'),
  core('api-keys:read', 'Admin', 'List API keys', 'عرض مفاتيح الواجهة البرمجية'),
  core('api-keys:manage', 'Admin', 'Create and revoke API keys', 'إنشاء مفاتيح الواجهة البرمجية وإلغاؤها'),
  core('events:read', 'Viewer', 'Read the event catalogue', 'عرض دليل الأحداث'),
  core('events:test', 'Admin', 'Send test events', 'إرسال أحداث تجريبية'),
  core('webhooks:read', 'Admin', 'List webhook endpoints and their delivery logs', 'عرض نقاط استقبال الويب هوك وسجلات التسليم'),
  core('jobs:read', 'Admin', "List the apps' jobs and their attempts", 'عرض مهام التطبيقات ومحاولاتها'),
  core('jobs:manage', 'Admin', 'Retry a job that failed', 'إعادة تشغيل مهمة أخفقت'),
  core('webhooks:manage', 'Admin', 'Create, change, delete webhook endpoints and retry deliveries', 'إنشاء نقاط استقبال الويب هوك وتعديلها وحذفها وإعادة التسليم'),
];

export class PermissionRegistry {
  private entries = new Map<string, PermissionEntry>();

  constructor() {
    for (const e of CORE_PERMISSIONS) this.entries.set(e.permission, e);
  }

  /** Adds an app's permissions; refuses to take over another owner's permission. */
  add(entries: PermissionEntry[]): void {
    for (const e of entries) {
      const existing = this.entries.get(e.permission);
      if (existing && existing.owner !== e.owner) {
        throw new Error(`permission ${e.permission} of ${e.owner} is already declared by ${existing.owner}`);
      }
    }
    for (const e of entries) this.entries.set(e.permission, e);
  }

  removeOwner(owner: string): void {
    for (const [k, e] of this.entries) if (e.owner === owner) this.entries.delete(k);
  }

  get(permission: string): PermissionEntry | undefined {
    return this.entries.get(permission);
  }

  all(): PermissionEntry[] {
    return [...this.entries.values()].sort((a, b) => a.permission.localeCompare(b.permission));
  }

  /** Whether the principal holds the permission: its role reaches it and its scopes cover the resource. */
  allows(p: Pick<Principal, 'role' | 'scopes'>, permission: string): boolean {
    const e = this.entries.get(permission);
    return !!e && roleAtLeast(p.role, e.role) && (p.scopes.includes('*') || p.scopes.includes(e.resource));
  }

  /** Throws FORBIDDEN naming the permission, the role it needs and what the key has. */
  require(p: Principal, permission: string): void {
    if (this.allows(p, permission)) return;
    const e = this.entries.get(permission);
    throw new DiwanError('FORBIDDEN', [
      {
        permission,
        requiredRole: e?.role ?? null,
        resource: e?.resource ?? permission.split(':')[0],
        keyRole: p.role,
        keyScopes: p.scopes,
        reason: !e ? 'unknown_permission' : roleAtLeast(p.role, e.role) ? 'scope' : 'role',
      },
    ]);
  }

  /** Role × permission matrix, for the docs and `diwan permissions`. */
  matrix(): { permission: string; owner: string; roles: Record<Role, boolean> }[] {
    return this.all().map((e) => ({
      permission: e.permission,
      owner: e.owner,
      roles: Object.fromEntries(ROLES.map((r) => [r, roleAtLeast(r, e.role)])) as Record<Role, boolean>,
    }));
  }
}
