// The app runtime: the apps available on this host (loaded once, whatever company uses them),
// their compiled document types, routes, permissions, strings and event families, and each
// company's install state.
import semver from 'semver';
import { and, eq } from 'drizzle-orm';
import type { Manifest, EventFamilyDecl } from '../../manifests/manifest.schema.ts';
import type { AppDefinition } from '../../sdk/define-app.ts';
import { companyApps } from '../db/schema.ts';
import { DiwanError } from '../errors/diwan-error.ts';
import type { Principal } from '../identity/principal.ts';
import type { Role } from '../identity/roles.ts';
import { AppRouter } from './app-router.ts';
import { appContext } from './app-context.ts';
import { DocType, type Caller, type GeneratedTopic } from './doc-type.ts';
import { docTypePermissions } from './manifest-check.ts';
import { loadDefinition, type AppSource } from './app-source.ts';
import { routesForApp } from './routes-for-app.ts';
import type { HostServices } from './host-services.ts';

export const CORE_PREFIXES = ['app', 'audit'];

export interface LoadedApp {
  source: AppSource;
  manifest: Manifest;
  def: AppDefinition;
  docTypes: Map<string, DocType>;
}

export type InstallState = 'enabled' | 'disabled' | 'uninstalled';

export interface InstallRow {
  companyId: string;
  appId: string;
  version: string;
  state: InstallState;
  manifest: Manifest;
  installedAt: string;
  updatedAt: string;
}

export class AppRuntime {
  readonly router = new AppRouter();
  private apps = new Map<string, LoadedApp>();
  private prefixOwner = new Map<string, string>(CORE_PREFIXES.map((p) => [p, 'core']));
  private installCache = new Map<string, Map<string, InstallRow>>();
  /** Bumped on every load/unload, so caches built from the app set (OpenAPI, catalogue) know to rebuild. */
  version = 0;

  constructor(readonly host: HostServices) {}

  get(appId: string): LoadedApp | undefined {
    return this.apps.get(appId);
  }

  list(): LoadedApp[] {
    return [...this.apps.values()].sort((a, b) => a.manifest.id.localeCompare(b.manifest.id));
  }

  /** Loads sources in dependency order; an app whose dependencies are not available is refused. */
  async loadAll(sources: AppSource[]): Promise<{ loaded: string[]; refused: { appId: string; error: DiwanError | Error }[] }> {
    const pending = new Map(sources.map((s) => [s.manifest.id, s]));
    const loaded: string[] = [];
    const refused: { appId: string; error: DiwanError | Error }[] = [];
    const visit = async (id: string, stack: string[]): Promise<void> => {
      const src = pending.get(id);
      if (!src) return;
      if (stack.includes(id)) throw new DiwanError('APP_REFUSED', [{ reason: 'dependency_cycle', cycle: [...stack, id] }], { reason: `dependency cycle ${[...stack, id].join(' → ')}` });
      for (const dep of Object.keys(src.manifest.dependencies ?? {})) await visit(dep, [...stack, id]);
      pending.delete(id);
      await this.load(src);
      loaded.push(id);
    };
    for (const id of [...pending.keys()]) {
      try {
        await visit(id, []);
      } catch (error) {
        pending.delete(id);
        refused.push({ appId: id, error: error as Error });
      }
    }
    return { loaded, refused };
  }

  /** Checks what a load would conflict with, without changing anything. */
  conflicts(m: Manifest, replacing = false): Record<string, unknown>[] {
    const problems: Record<string, unknown>[] = [];
    const existing = this.apps.get(m.id);
    if (existing && !replacing) problems.push({ reason: 'duplicate_id', appId: m.id });
    for (const f of m.eventFamilies ?? []) {
      const owner = this.prefixOwner.get(f.prefix);
      if (owner && owner !== m.id) problems.push({ reason: 'event_prefix_taken', prefix: f.prefix, owner });
    }
    for (const [dep, range] of Object.entries(m.dependencies ?? {})) {
      const d = this.apps.get(dep);
      if (!d) problems.push({ reason: 'dependency_missing', appId: dep, range });
      else if (!semver.satisfies(d.manifest.version, range)) problems.push({ reason: 'dependency_version', appId: dep, range, available: d.manifest.version });
    }
    const resources = new Map<string, string>();
    for (const a of this.apps.values()) {
      if (a.manifest.id === m.id) continue;
      for (const dt of a.manifest.documentTypes ?? []) resources.set(dt.resource, a.manifest.id);
    }
    for (const dt of m.documentTypes ?? []) {
      const owner = resources.get(dt.resource);
      if (owner) problems.push({ reason: 'resource_taken', resource: dt.resource, owner });
    }
    return problems;
  }

  async load(src: AppSource, opts: { replacing?: boolean } = {}): Promise<LoadedApp> {
    const m = src.manifest;
    const problems = this.conflicts(m, opts.replacing);
    if (problems.length) throw new DiwanError('APP_REFUSED', problems, { reason: String(problems[0].reason) });
    const def = await loadDefinition(src);
    if (opts.replacing) this.unload(m.id);

    const app: LoadedApp = { source: src, manifest: m, def, docTypes: new Map() };
    const ownedPrefixes = new Set((m.eventFamilies ?? []).map((f) => f.prefix));
    const ctxDeps = { host: this.host, appId: m.id, ownedPrefixes, docType: (ref: string) => this.resolveDocType(app, ref) };
    for (const decl of m.documentTypes ?? []) {
      const dt = new DocType(m.id, decl, m.eventFamilies?.[0]?.prefix ?? m.id, this.host, ctxDeps.docType, def.hooks?.[decl.name] ?? {}, (caller: Caller) => appContext(ctxDeps, caller));
      app.docTypes.set(decl.name, dt);
    }
    const routes = routesForApp(m.id, [...app.docTypes.values()], def);
    const declared = (m.permissions ?? []).map((p) => ({ ...p, permission: `${p.resource}:${p.action}`, owner: m.id }));
    const implied = (m.documentTypes ?? [])
      .flatMap(docTypePermissions)
      .filter((p) => !declared.some((d) => d.permission === `${p.resource}:${p.action}`))
      .map((p) => ({ ...p, role: p.role as Role, permission: `${p.resource}:${p.action}`, owner: m.id }));
    for (const r of routes) {
      if (!r.doc.permission || ![...declared, ...implied].some((p) => p.permission === r.doc.permission) && !this.host.permissions.get(r.doc.permission)) {
        throw new DiwanError('MANIFEST_INVALID', [{ pointer: '/server', rule: 'undeclaredPermission', message: `route ${r.doc.method} ${r.doc.url} needs ${r.doc.permission}, which is not declared` }], { count: 1 });
      }
    }

    // Commit point: nothing above changed shared state.
    try {
      for (const r of routes) this.router.mount(r);
      this.host.permissions.add([...declared, ...implied]);
    } catch (e) {
      this.router.unmountApp(m.id);
      this.host.permissions.removeOwner(m.id);
      throw new DiwanError('APP_REFUSED', [{ reason: 'route_conflict', message: (e as Error).message }], { reason: (e as Error).message });
    }
    for (const dt of app.docTypes.values()) dt.ensureStorage();
    this.host.tr.addNamespace(`app.${m.id}`, m.strings);
    for (const p of ownedPrefixes) this.prefixOwner.set(p, m.id);
    this.apps.set(m.id, app);
    this.version++;
    return app;
  }

  unload(appId: string): void {
    this.router.unmountApp(appId);
    this.host.permissions.removeOwner(appId);
    this.host.tr.removeNamespace(`app.${appId}`);
    for (const [p, owner] of this.prefixOwner) if (owner === appId) this.prefixOwner.delete(p);
    this.apps.delete(appId);
    this.version++;
  }

  private resolveDocType(app: LoadedApp, ref: string): DocType {
    const [appId, name] = ref.includes('/') ? ref.split('/') : [app.manifest.id, ref];
    if (appId !== app.manifest.id && !app.manifest.dependencies?.[appId]) {
      throw new Error(`app ${app.manifest.id} may not reach ${ref}: ${appId} is not a dependency`);
    }
    const dt = (appId === app.manifest.id ? app : this.apps.get(appId))?.docTypes.get(name);
    if (!dt) throw new Error(`no document type ${ref}`);
    return dt;
  }

  /** The event families of every available app, with the topics their document types generate. */
  eventSources(): { appId: string; families: EventFamilyDecl[] }[] {
    return this.list().map((a) => {
      const generated = new Map<string, GeneratedTopic[]>();
      for (const dt of a.docTypes.values()) {
        const prefix = dt.topicBase.split('.')[0];
        generated.set(prefix, [...(generated.get(prefix) ?? []), ...dt.topics()]);
      }
      const families = (a.manifest.eventFamilies ?? []).map((f) => {
        const declared = new Set(f.topics.map((t) => t.topic));
        const extra = (generated.get(f.prefix) ?? []).filter((t) => !declared.has(t.topic));
        return { ...f, topics: [...f.topics, ...extra] };
      });
      return { appId: a.manifest.id, families };
    });
  }

  prefixOwnerOf(prefix: string): string | undefined {
    return this.prefixOwner.get(prefix);
  }

  // ---- per-company install state ------------------------------------------------------

  invalidate(companyId?: string): void {
    if (companyId) this.installCache.delete(companyId);
    else this.installCache.clear();
  }

  installs(companyId: string): Map<string, InstallRow> {
    let m = this.installCache.get(companyId);
    if (!m) {
      const rows = this.host.storage.orm.select().from(companyApps).where(eq(companyApps.companyId, companyId)).all();
      m = new Map(rows.map((r) => [r.appId, r as InstallRow]));
      this.installCache.set(companyId, m);
    }
    return m;
  }

  install(companyId: string, appId: string): InstallRow | undefined {
    return this.installs(companyId).get(appId);
  }

  isEnabled(companyId: string, appId: string): boolean {
    return this.install(companyId, appId)?.state === 'enabled';
  }

  deleteInstall(companyId: string, appId: string): void {
    this.host.storage.orm.delete(companyApps).where(and(eq(companyApps.companyId, companyId), eq(companyApps.appId, appId))).run();
    this.invalidate(companyId);
  }

  /** Services bound to an app and a caller; what hooks, routes and migrations receive. */
  contextFor(appId: string, caller: Caller, principal?: Principal) {
    const app = this.apps.get(appId);
    if (!app) throw new DiwanError('NOT_FOUND', [{ resource: 'apps', id: appId }]);
    const ownedPrefixes = new Set((app.manifest.eventFamilies ?? []).map((f) => f.prefix));
    return appContext({ host: this.host, appId, ownedPrefixes, docType: (ref) => this.resolveDocType(app, ref) }, caller, principal);
  }
}
