// Installing apps into a company's workspace, and the steps after: enable, disable, upgrade
// (plan first, then apply), uninstall (data kept) and purge. Each step runs in one
// transaction, is audited and emits the `apps` family event; a refused or failed step leaves
// the company exactly as it was.
import semver from 'semver';
import { and, eq } from 'drizzle-orm';
import type { Manifest } from '../../manifests/manifest.schema.ts';
import { appMigrations, companyApps } from '../db/schema.ts';
import { DiwanError } from '../errors/diwan-error.ts';
import { isoNow } from '../ids.ts';
import type { Actor } from '../identity/principal.ts';
import type { Lang } from '../i18n/i18n.ts';
import type { AppRuntime, InstallRow, LoadedApp } from './runtime.ts';
import type { Caller } from './doc-type.ts';
import { docTypePermissions } from './manifest-check.ts';

export const HOST_VERSION = '0.1.0';

export interface UpgradePlan {
  appId: string;
  from: string;
  to: string;
  /** `changed`: a permission whose lowest role moves, which widens or narrows who holds it. */
  permissions: { added: string[]; removed: string[]; changed: { permission: string; from: string; to: string }[] };
  routes: { added: string[]; removed: string[] };
  documentTypes: { added: string[]; removed: string[] };
  topics: { added: string[]; removed: string[] };
  migrations: string[];
}

const refuse = (reason: string, details: Record<string, unknown>[]) => new DiwanError('APP_REFUSED', details, { reason });

function diff(before: string[], after: string[]) {
  const b = new Set(before);
  const a = new Set(after);
  return { added: after.filter((x) => !b.has(x)).sort(), removed: before.filter((x) => !a.has(x)).sort() };
}

/** Permission → lowest role, declared ones overriding the defaults document types bring. */
function permissionRoles(m: Manifest): Map<string, string> {
  const roles = new Map<string, string>();
  for (const p of (m.documentTypes ?? []).flatMap(docTypePermissions)) roles.set(`${p.resource}:${p.action}`, p.role);
  for (const p of m.permissions ?? []) roles.set(`${p.resource}:${p.action}`, p.role);
  return roles;
}
const topicsOf = (m: Manifest) => (m.eventFamilies ?? []).flatMap((f) => f.topics.map((t) => t.topic));

function permissionDiff(before: Map<string, string>, after: Map<string, string>) {
  const changed = [...after].filter(([p, role]) => before.has(p) && before.get(p) !== role).map(([permission, to]) => ({ permission, from: before.get(permission)!, to }));
  return { ...diff([...before.keys()], [...after.keys()]), changed };
}

/** What a company's snapshot of an app records beside its manifest. */
interface Snapshot {
  manifest: Manifest;
  routes: string[];
}

export class Lifecycle {
  constructor(private runtime: AppRuntime) {}

  private get host() {
    return this.runtime.host;
  }

  private caller(companyId: string, actor: Actor, lang: Lang = 'en', requestId: string | null = null): Caller {
    const company = this.host.companies.get(companyId);
    if (!company) throw new DiwanError('NOT_FOUND', [{ resource: 'companies', id: companyId }]);
    return { company, actor, lang, requestId };
  }

  private available(appId: string): LoadedApp {
    const app = this.runtime.get(appId);
    if (!app) throw new DiwanError('NOT_FOUND', [{ resource: 'apps', id: appId, reason: 'unknown_app' }]);
    return app;
  }

  private snapshot(app: LoadedApp): Snapshot {
    return { manifest: app.manifest, routes: this.runtime.router.routesOf(app.manifest.id).map((r) => `${r.doc.method} ${r.doc.url}`) };
  }

  private audit(caller: Caller, action: string, appId: string, before: unknown, after: unknown, topic?: string) {
    this.host.audit.record({ companyId: caller.company.id, actor: caller.actor, appId: 'core', action, resource: 'apps', resourceId: appId, before, after, requestId: caller.requestId });
    if (topic) {
      const v = (after ?? before) as { version?: string } | null;
      this.host.outbox.emit(caller.company.id, topic, { appId, version: v?.version ?? null, companyId: caller.company.id, actor: caller.actor });
    }
  }

  private publicRow(r: InstallRow | undefined) {
    return r ? { appId: r.appId, version: r.version, state: r.state, installedAt: r.installedAt, updatedAt: r.updatedAt } : null;
  }

  /** The apps `appId` needs that the company lacks, deepest first; refuses cycles and bad ranges. */
  private plan(companyId: string, appId: string): string[] {
    const order: string[] = [];
    const problems: Record<string, unknown>[] = [];
    const walk = (id: string, stack: string[], range?: string) => {
      if (stack.includes(id)) {
        problems.push({ reason: 'dependency_cycle', cycle: [...stack, id] });
        return;
      }
      const app = this.runtime.get(id);
      if (!app) {
        problems.push({ reason: 'dependency_missing', appId: id, range, neededBy: stack.at(-1) });
        return;
      }
      if (range && !semver.satisfies(app.manifest.version, range)) {
        problems.push({ reason: 'dependency_version', appId: id, range, available: app.manifest.version, neededBy: stack.at(-1) });
        return;
      }
      if (!semver.satisfies(HOST_VERSION, app.manifest.host)) {
        problems.push({ reason: 'host_version', appId: id, range: app.manifest.host, host: HOST_VERSION });
        return;
      }
      const installed = this.runtime.install(companyId, id);
      if (id !== appId && installed && installed.state !== 'uninstalled') {
        if (range && !semver.satisfies(installed.version, range)) problems.push({ reason: 'dependency_version', appId: id, range, installed: installed.version });
        return;
      }
      for (const [dep, r] of Object.entries(app.manifest.dependencies ?? {})) walk(dep, [...stack, id], r);
      if (!order.includes(id)) order.push(id);
    };
    walk(appId, []);
    if (problems.length) throw refuse(String(problems[0].reason), problems);
    return order;
  }

  install(companyId: string, appId: string, actor: Actor, opts: { withDependencies?: boolean; lang?: Lang; requestId?: string | null } = {}) {
    const caller = this.caller(companyId, actor, opts.lang, opts.requestId);
    this.available(appId);
    const existing = this.runtime.install(companyId, appId);
    if (existing && existing.state !== 'uninstalled') {
      throw refuse('already_installed', [{ reason: 'already_installed', appId, version: existing.version, state: existing.state }]);
    }
    const order = this.plan(companyId, appId);
    const missing = order.filter((id) => id !== appId);
    if (missing.length && opts.withDependencies === false) {
      throw refuse('dependency_missing', missing.map((id) => ({ reason: 'dependency_missing', appId: id })));
    }
    try {
      this.host.storage.sqlite.transaction(() => {
        for (const id of order) this.installOne(caller, this.available(id));
      }).immediate();
    } finally {
      this.runtime.invalidate(companyId);
    }
    return { installed: order, app: this.publicRow(this.runtime.install(companyId, appId)) };
  }

  private installOne(caller: Caller, app: LoadedApp): void {
    const now = isoNow(this.host.clock.now());
    const m = app.manifest;
    const companyId = caller.company.id;
    const previous = this.runtime.install(companyId, m.id);
    const row = { companyId, appId: m.id, version: m.version, state: 'enabled' as const, manifest: this.snapshot(app), installedAt: now, updatedAt: now };
    if (previous) {
      this.host.storage.orm.update(companyApps).set(row).where(and(eq(companyApps.companyId, companyId), eq(companyApps.appId, m.id))).run();
    } else {
      this.host.storage.orm.insert(companyApps).values(row).run();
    }
    this.runtime.invalidate(companyId);
    this.runMigrations(caller, app);
    this.audit(caller, 'install', m.id, this.publicRow(previous), { appId: m.id, version: m.version, state: 'enabled' }, 'app.installed');
  }

  private runMigrations(caller: Caller, app: LoadedApp): string[] {
    const companyId = caller.company.id;
    const done = new Set(
      this.host.storage.orm.select().from(appMigrations).where(and(eq(appMigrations.companyId, companyId), eq(appMigrations.appId, app.manifest.id))).all().map((r) => r.migrationId),
    );
    const ran: string[] = [];
    for (const mig of app.def.migrations ?? []) {
      if (done.has(mig.id)) continue;
      try {
        mig.up(this.runtime.contextFor(app.manifest.id, caller));
      } catch (e) {
        if (e instanceof DiwanError) throw e;
        throw refuse('migration_failed', [{ reason: 'migration_failed', appId: app.manifest.id, migration: mig.id, message: (e as Error).message }]);
      }
      this.host.storage.orm.insert(appMigrations).values({ companyId, appId: app.manifest.id, migrationId: mig.id, appliedAt: isoNow(this.host.clock.now()) }).run();
      ran.push(mig.id);
    }
    return ran;
  }

  private setState(companyId: string, appId: string, actor: Actor, state: 'enabled' | 'disabled', opts: { lang?: Lang; requestId?: string | null } = {}) {
    const caller = this.caller(companyId, actor, opts.lang, opts.requestId);
    const row = this.runtime.install(companyId, appId);
    if (!row || row.state === 'uninstalled') throw new DiwanError('NOT_FOUND', [{ resource: 'apps', id: appId, reason: 'not_installed' }]);
    if (row.state === state) return this.publicRow(row);
    if (state === 'disabled') this.refuseIfDependents(companyId, appId, 'disable');
    this.host.storage.sqlite.transaction(() => {
      this.host.storage.orm.update(companyApps).set({ state, updatedAt: isoNow(this.host.clock.now()) }).where(and(eq(companyApps.companyId, companyId), eq(companyApps.appId, appId))).run();
      this.audit(caller, state === 'enabled' ? 'enable' : 'disable', appId, this.publicRow(row), { ...this.publicRow(row), state }, state === 'enabled' ? 'app.enabled' : 'app.disabled');
    }).immediate();
    this.runtime.invalidate(companyId);
    return this.publicRow(this.runtime.install(companyId, appId));
  }

  enable(companyId: string, appId: string, actor: Actor, opts?: { lang?: Lang; requestId?: string | null }) {
    return this.setState(companyId, appId, actor, 'enabled', opts);
  }

  disable(companyId: string, appId: string, actor: Actor, opts?: { lang?: Lang; requestId?: string | null }) {
    return this.setState(companyId, appId, actor, 'disabled', opts);
  }

  private refuseIfDependents(companyId: string, appId: string, step: string): void {
    const dependents = [...this.runtime.installs(companyId).values()]
      .filter((r) => r.state !== 'uninstalled' && r.appId !== appId && (r.manifest as unknown as Snapshot).manifest.dependencies?.[appId])
      .map((r) => r.appId);
    if (dependents.length) throw refuse('app_in_use', [{ reason: 'app_in_use', appId, step, dependents }]);
  }

  uninstall(companyId: string, appId: string, actor: Actor, opts: { lang?: Lang; requestId?: string | null } = {}) {
    const caller = this.caller(companyId, actor, opts.lang, opts.requestId);
    const row = this.runtime.install(companyId, appId);
    if (!row || row.state === 'uninstalled') throw new DiwanError('NOT_FOUND', [{ resource: 'apps', id: appId, reason: 'not_installed' }]);
    this.refuseIfDependents(companyId, appId, 'uninstall');
    this.host.storage.sqlite.transaction(() => {
      this.host.storage.orm.update(companyApps).set({ state: 'uninstalled', updatedAt: isoNow(this.host.clock.now()) }).where(and(eq(companyApps.companyId, companyId), eq(companyApps.appId, appId))).run();
      this.audit(caller, 'uninstall', appId, this.publicRow(row), { ...this.publicRow(row), state: 'uninstalled' }, 'app.uninstalled');
    }).immediate();
    this.runtime.invalidate(companyId);
    return { ...this.publicRow(this.runtime.install(companyId, appId)), dataKept: true };
  }

  /** Removes an uninstalled app's data from the company for good. */
  purge(companyId: string, appId: string, actor: Actor, opts: { lang?: Lang; requestId?: string | null } = {}) {
    const caller = this.caller(companyId, actor, opts.lang, opts.requestId);
    const row = this.runtime.install(companyId, appId);
    if (!row) throw new DiwanError('NOT_FOUND', [{ resource: 'apps', id: appId, reason: 'not_installed' }]);
    if (row.state !== 'uninstalled') throw new DiwanError('CONFLICT', [{ reason: 'not_uninstalled', appId, state: row.state }], { reason: 'uninstall the app before purging it' });
    const app = this.runtime.get(appId);
    let removed = 0;
    this.host.storage.sqlite.transaction(() => {
      for (const dt of app?.docTypes.values() ?? []) removed += dt.purge(companyId);
      this.host.storage.orm.delete(appMigrations).where(and(eq(appMigrations.companyId, companyId), eq(appMigrations.appId, appId))).run();
      this.runtime.deleteInstall(companyId, appId);
      this.audit(caller, 'purge', appId, this.publicRow(row), null);
    }).immediate();
    this.runtime.invalidate(companyId);
    return { appId, purged: true, documentsRemoved: removed };
  }

  upgradePlan(companyId: string, appId: string): UpgradePlan {
    const row = this.runtime.install(companyId, appId);
    if (!row || row.state === 'uninstalled') throw new DiwanError('NOT_FOUND', [{ resource: 'apps', id: appId, reason: 'not_installed' }]);
    const app = this.available(appId);
    const before = row.manifest as unknown as Snapshot;
    const after = this.snapshot(app);
    if (semver.lt(app.manifest.version, row.version)) {
      throw refuse('downgrade', [{ reason: 'downgrade', appId, installed: row.version, available: app.manifest.version }]);
    }
    if (!semver.satisfies(HOST_VERSION, app.manifest.host)) throw refuse('host_version', [{ reason: 'host_version', appId, range: app.manifest.host, host: HOST_VERSION }]);
    const done = new Set(
      this.host.storage.orm.select().from(appMigrations).where(and(eq(appMigrations.companyId, companyId), eq(appMigrations.appId, appId))).all().map((r) => r.migrationId),
    );
    return {
      appId,
      from: row.version,
      to: app.manifest.version,
      permissions: permissionDiff(permissionRoles(before.manifest), permissionRoles(after.manifest)),
      routes: diff(before.routes, after.routes),
      documentTypes: diff((before.manifest.documentTypes ?? []).map((d) => d.name), (after.manifest.documentTypes ?? []).map((d) => d.name)),
      topics: diff(topicsOf(before.manifest), topicsOf(after.manifest)),
      migrations: (app.def.migrations ?? []).map((m) => m.id).filter((id) => !done.has(id)),
    };
  }

  /** Applies the plan; `expectTo` guards against applying a plan other than the one shown. */
  upgrade(companyId: string, appId: string, actor: Actor, opts: { expectTo?: string; lang?: Lang; requestId?: string | null } = {}) {
    const plan = this.upgradePlan(companyId, appId);
    if (opts.expectTo && opts.expectTo !== plan.to) {
      throw new DiwanError('CONFLICT', [{ reason: 'plan_changed', expected: opts.expectTo, available: plan.to }], { reason: 'the available version changed since the plan was shown' });
    }
    const caller = this.caller(companyId, actor, opts.lang, opts.requestId);
    const app = this.available(appId);
    const row = this.runtime.install(companyId, appId)!;
    try {
      this.host.storage.sqlite.transaction(() => {
        this.host.storage.orm.update(companyApps).set({ version: app.manifest.version, manifest: this.snapshot(app), updatedAt: isoNow(this.host.clock.now()) }).where(and(eq(companyApps.companyId, companyId), eq(companyApps.appId, appId))).run();
        this.runtime.invalidate(companyId);
        this.runMigrations(caller, app);
        this.audit(caller, 'upgrade', appId, this.publicRow(row), { appId, version: app.manifest.version, state: row.state });
      }).immediate();
    } finally {
      this.runtime.invalidate(companyId);
    }
    return { plan, app: this.publicRow(this.runtime.install(companyId, appId)) };
  }
}
