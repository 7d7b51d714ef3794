// Installing apps into a company's workspace, and the steps after: enable, disable, upgrade
// (plan first, then apply), uninstall (data kept) and purge. Each step is one unit of work,
// audited, with its `apps` family event; a refused or failed step leaves the company as it was.
import semver from 'semver';
import type { Manifest } from '../../manifests/manifest.schema.ts';
import type { UnitOfWork, Work } from '../audit/unit-of-work.ts';
import type { Db } from '../storage/db.ts';
import type { InstallsRepo } from '../storage/repos/installs.ts';
import type { ChangeFeed } from '../storage/changes.ts';
import type { Actor } from '../kernel/actor.ts';
import type { Clock } from '../kernel/clock.ts';
import type { Lang } from '../kernel/i18n/i18n.ts';
import { DiwanError, fromAppError } from '../kernel/errors/diwan-error.ts';
import { isoNow } from '../kernel/ids.ts';
import { isTransientDbError } from '../storage/transient.ts';
import type { Companies, Company } from '../tenancy/companies.ts';
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
  /** `type.field`; `changed` when the field's declaration differs (type, required, bounds…). */
  fields: { added: string[]; removed: string[]; changed: string[] };
  topics: { added: string[]; removed: string[] };
  migrations: string[];
}

export interface StepOptions {
  lang?: Lang;
  requestId?: string | null;
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
const fieldsOf = (m: Manifest) => new Map((m.documentTypes ?? []).flatMap((dt) => dt.fields.map((f) => [`${dt.name}.${f.name}`, JSON.stringify({ ...f, label: undefined })] as const)));

function permissionDiff(before: Map<string, string>, after: Map<string, string>) {
  const changed = [...after].filter(([p, role]) => before.has(p) && before.get(p) !== role).map(([permission, to]) => ({ permission, from: before.get(permission)!, to }));
  return { ...diff([...before.keys()], [...after.keys()]), changed };
}

function fieldDiff(before: Manifest, after: Manifest) {
  const b = fieldsOf(before);
  const a = fieldsOf(after);
  return { ...diff([...b.keys()], [...a.keys()]), changed: [...a].filter(([k, v]) => b.has(k) && b.get(k) !== v).map(([k]) => k).sort() };
}

/** What a company's install records beside the version: the manifest and the routes it served, for upgrade plans. */
interface Snapshot {
  manifest: Manifest;
  routes: string[];
}

export interface LifecycleDeps {
  db: Db;
  runtime: AppRuntime;
  uow: UnitOfWork;
  installs: InstallsRepo;
  changes: ChangeFeed;
  companies: Companies;
  clock: Clock;
}

export class Lifecycle {
  constructor(private deps: LifecycleDeps) {}

  private get runtime() {
    return this.deps.runtime;
  }

  private async caller(companyId: string, actor: Actor, opts: StepOptions = {}): Promise<Caller> {
    return { company: await this.deps.companies.require(companyId), actor, lang: opts.lang ?? 'en', requestId: opts.requestId ?? null };
  }

  private scope(c: Caller) {
    return { companyId: c.company.id, actor: c.actor, appId: 'core', requestId: c.requestId };
  }

  private available(appId: string): LoadedApp {
    const app = this.runtime.get(appId);
    if (!app) throw new DiwanError('NOT_FOUND', [{ resource: 'apps', id: appId, reason: 'unknown_app' }]);
    return app;
  }

  private snapshot(app: LoadedApp): Snapshot {
    return { manifest: app.manifest, routes: app.routes.map((r) => `${r.doc.method} ${r.doc.url}`) };
  }

  /** The audit row and, for the four lifecycle topics, the `apps` family event. */
  private async record(w: Work, c: Caller, action: string, appId: string, before: unknown, after: unknown, topic?: string) {
    await w.audit({ action, resource: 'apps', resourceId: appId, before, after });
    if (topic) {
      const v = (after ?? before) as { version?: string } | null;
      await w.emit(topic, { appId, version: v?.version ?? null, companyId: c.company.id, actor: c.actor });
    }
    await this.deps.changes.bump('installs');
  }

  private publicRow(r: InstallRow | undefined) {
    return r ? { appId: r.appId, version: r.version, state: r.state, installedAt: r.installedAt, updatedAt: r.updatedAt } : null;
  }

  /** The apps `appId` needs that the company lacks, deepest first; refuses cycles and bad ranges. */
  private async plan(companyId: string, appId: string): Promise<string[]> {
    const order: string[] = [];
    const problems: Record<string, unknown>[] = [];
    const installs = await this.runtime.installs(companyId);
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
      const installed = installs.get(id);
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

  /** Creates a company with `apps` (and what they depend on) installed, in one unit of work. */
  createCompany(input: { name: string; currency?: string }, actor: Actor, apps: string[]): Promise<{ company: Company; installed: string[] }> {
    return this.deps.db.transaction(async () => {
      const company = await this.deps.companies.create(input, actor);
      const installed: string[] = [];
      for (const id of apps) {
        if (await this.runtime.install(company.id, id)) continue;
        installed.push(...(await this.install(company.id, id, actor)).installed);
      }
      return { company, installed };
    });
  }

  async install(companyId: string, appId: string, actor: Actor, opts: StepOptions & { withDependencies?: boolean } = {}) {
    const c = await this.caller(companyId, actor, opts);
    this.available(appId);
    const existing = await this.runtime.install(companyId, appId);
    if (existing && existing.state !== 'uninstalled') {
      throw refuse('already_installed', [{ reason: 'already_installed', appId, version: existing.version, state: existing.state }]);
    }
    const order = await this.plan(companyId, appId);
    const missing = order.filter((id) => id !== appId);
    if (missing.length && opts.withDependencies === false) {
      throw refuse('dependency_missing', missing.map((id) => ({ reason: 'dependency_missing', appId: id })));
    }
    try {
      await this.deps.uow.run(this.scope(c), async (w) => {
        for (const id of order) await this.installOne(w, c, this.available(id));
      });
    } finally {
      this.runtime.invalidate(companyId);
    }
    return { installed: order, app: this.publicRow(await this.runtime.install(companyId, appId)) };
  }

  private async installOne(w: Work, c: Caller, app: LoadedApp): Promise<void> {
    const now = isoNow(this.deps.clock.now());
    const m = app.manifest;
    const previous = await this.runtime.install(c.company.id, m.id);
    await this.deps.installs.put({ companyId: c.company.id, appId: m.id, version: m.version, state: 'enabled', snapshot: this.snapshot(app), installedAt: now, updatedAt: now });
    this.runtime.invalidate(c.company.id);
    await this.runMigrations(c, app);
    await this.record(w, c, 'install', m.id, this.publicRow(previous), { appId: m.id, version: m.version, state: 'enabled' }, 'app.installed');
  }

  private async runMigrations(c: Caller, app: LoadedApp): Promise<string[]> {
    const id = app.manifest.id;
    const done = await this.deps.installs.migrationsRun(c.company.id, id);
    const ran: string[] = [];
    for (const mig of app.def.migrations ?? []) {
      if (done.has(mig.id)) continue;
      try {
        await mig.up(this.runtime.contextFor(id, c));
      } catch (e) {
        // The database's "not now" stays a 503 to retry, as from a hook or a custom route (app-fault.ts).
        if (e instanceof DiwanError || isTransientDbError(e)) throw e;
        const mapped = fromAppError(e, id);
        if (mapped) throw mapped;
        throw refuse('migration_failed', [{ reason: 'migration_failed', appId: id, migration: mig.id, message: (e as Error).message }]);
      }
      await this.deps.installs.migrationRan(c.company.id, id, mig.id, isoNow(this.deps.clock.now()));
      ran.push(mig.id);
    }
    return ran;
  }

  private async installed(companyId: string, appId: string): Promise<InstallRow> {
    const row = await this.runtime.install(companyId, appId);
    if (!row || row.state === 'uninstalled') throw new DiwanError('NOT_FOUND', [{ resource: 'apps', id: appId, reason: 'not_installed' }]);
    return row;
  }

  private async setState(companyId: string, appId: string, actor: Actor, state: 'enabled' | 'disabled', opts: StepOptions = {}) {
    const c = await this.caller(companyId, actor, opts);
    const row = await this.installed(companyId, appId);
    if (row.state === state) return this.publicRow(row);
    if (state === 'disabled') await this.refuseIfDependents(companyId, appId, 'disable');
    await this.deps.uow.run(this.scope(c), async (w) => {
      await this.deps.installs.setState(companyId, appId, state, isoNow(this.deps.clock.now()));
      await this.record(w, c, state === 'enabled' ? 'enable' : 'disable', appId, this.publicRow(row), { ...this.publicRow(row), state }, state === 'enabled' ? 'app.enabled' : 'app.disabled');
    });
    this.runtime.invalidate(companyId);
    return this.publicRow(await this.runtime.install(companyId, appId));
  }

  enable(companyId: string, appId: string, actor: Actor, opts?: StepOptions) {
    return this.setState(companyId, appId, actor, 'enabled', opts);
  }

  disable(companyId: string, appId: string, actor: Actor, opts?: StepOptions) {
    return this.setState(companyId, appId, actor, 'disabled', opts);
  }

  private async refuseIfDependents(companyId: string, appId: string, step: string): Promise<void> {
    const snapshots = await this.deps.installs.snapshots(companyId);
    const dependents = [...(await this.runtime.installs(companyId)).values()]
      .filter((r) => r.state !== 'uninstalled' && r.appId !== appId && (snapshots.get(r.appId) as Snapshot | undefined)?.manifest.dependencies?.[appId])
      .map((r) => r.appId);
    if (dependents.length) throw refuse('app_in_use', [{ reason: 'app_in_use', appId, step, dependents }]);
  }

  async uninstall(companyId: string, appId: string, actor: Actor, opts: StepOptions = {}) {
    const c = await this.caller(companyId, actor, opts);
    const row = await this.installed(companyId, appId);
    await this.refuseIfDependents(companyId, appId, 'uninstall');
    await this.deps.uow.run(this.scope(c), async (w) => {
      await this.deps.installs.setState(companyId, appId, 'uninstalled', isoNow(this.deps.clock.now()));
      await this.record(w, c, 'uninstall', appId, this.publicRow(row), { ...this.publicRow(row), state: 'uninstalled' }, 'app.uninstalled');
    });
    this.runtime.invalidate(companyId);
    return { ...this.publicRow(await this.runtime.install(companyId, appId)), dataKept: true };
  }

  /** Removes an uninstalled app's data from the company for good. */
  async purge(companyId: string, appId: string, actor: Actor, opts: StepOptions = {}) {
    const c = await this.caller(companyId, actor, opts);
    const row = await this.runtime.install(companyId, appId);
    if (!row) throw new DiwanError('NOT_FOUND', [{ resource: 'apps', id: appId, reason: 'not_installed' }]);
    if (row.state !== 'uninstalled') throw new DiwanError('CONFLICT', [{ reason: 'not_uninstalled', appId, state: row.state }], { reason: 'uninstall the app before purging it' });
    const app = this.runtime.get(appId);
    let removed = 0;
    await this.deps.uow.run(this.scope(c), async (w) => {
      for (const dt of app?.docTypes.values() ?? []) removed += await dt.purge(companyId);
      await this.deps.installs.remove(companyId, appId);
      await this.record(w, c, 'purge', appId, this.publicRow(row), null);
    });
    this.runtime.invalidate(companyId);
    return { appId, purged: true, documentsRemoved: removed };
  }

  async upgradePlan(companyId: string, appId: string): Promise<UpgradePlan> {
    const row = await this.installed(companyId, appId);
    const app = this.available(appId);
    const before = (await this.deps.installs.snapshots(companyId, appId)).get(appId) as Snapshot;
    const after = this.snapshot(app);
    if (semver.lt(app.manifest.version, row.version)) {
      throw refuse('downgrade', [{ reason: 'downgrade', appId, installed: row.version, available: app.manifest.version }]);
    }
    if (!semver.satisfies(HOST_VERSION, app.manifest.host)) throw refuse('host_version', [{ reason: 'host_version', appId, range: app.manifest.host, host: HOST_VERSION }]);
    const done = await this.deps.installs.migrationsRun(companyId, appId);
    return {
      appId,
      from: row.version,
      to: app.manifest.version,
      permissions: permissionDiff(permissionRoles(before.manifest), permissionRoles(after.manifest)),
      routes: diff(before.routes, after.routes),
      documentTypes: diff((before.manifest.documentTypes ?? []).map((d) => d.name), (after.manifest.documentTypes ?? []).map((d) => d.name)),
      fields: fieldDiff(before.manifest, after.manifest),
      topics: diff(topicsOf(before.manifest), topicsOf(after.manifest)),
      migrations: (app.def.migrations ?? []).map((m) => m.id).filter((id) => !done.has(id)),
    };
  }

  /** Applies the plan; `expectTo` guards against applying a plan other than the one shown. */
  async upgrade(companyId: string, appId: string, actor: Actor, opts: StepOptions & { expectTo?: string } = {}) {
    const plan = await this.upgradePlan(companyId, appId);
    if (opts.expectTo && opts.expectTo !== plan.to) {
      throw new DiwanError('CONFLICT', [{ reason: 'plan_changed', expected: opts.expectTo, available: plan.to }], { reason: 'the available version changed since the plan was shown' });
    }
    const c = await this.caller(companyId, actor, opts);
    const app = this.available(appId);
    const row = (await this.runtime.install(companyId, appId))!;
    try {
      await this.deps.uow.run(this.scope(c), async (w) => {
        await this.deps.installs.put({ ...row, version: app.manifest.version, snapshot: this.snapshot(app), updatedAt: isoNow(this.deps.clock.now()) });
        this.runtime.invalidate(companyId);
        await this.runMigrations(c, app);
        await this.record(w, c, 'upgrade', appId, this.publicRow(row), { appId, version: app.manifest.version, state: row.state });
      });
    } finally {
      this.runtime.invalidate(companyId);
    }
    return { plan, app: this.publicRow(await this.runtime.install(companyId, appId)) };
  }
}
