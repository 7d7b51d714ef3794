// The app runtime: the apps available on this host (loaded once, whatever company uses them),
// their document types, routes, permissions, strings and event families, and each company's
// install state. Apps load and unload while the host runs; listeners (the HTTP pipeline, the
// OpenAPI and catalogue caches) hear of it.
import semver from 'semver';
import type { Manifest, EventFamilyDecl, TopicDecl } from '../../manifests/manifest.schema.ts';
import type { AppContext, AppDefinition, JobHandler } from '../../sdk/define-app.ts';
import type { Storage } from '../storage/open.ts';
import type { InstallRecord, InstallSummary } from '../storage/repos/installs.ts';
import { migrate, schemaGap, isCurrent } from '../storage/migrate.ts';
import type { TableDef } from '../storage/schema.ts';
import { docTableName } from '../storage/repos/documents.ts';
import type { UnitOfWork } from '../audit/unit-of-work.ts';
import type { EventFamilies } from '../events/families.ts';
import type { Translator } from '../kernel/i18n/i18n.ts';
import type { Clock } from '../kernel/clock.ts';
import { DiwanError } from '../kernel/errors/diwan-error.ts';
import { payloadAjv } from './manifest-check.ts';
import type { PermissionRegistry } from '../identity/permissions.ts';
import type { Role } from '../identity/roles.ts';
import type { Companies } from '../tenancy/companies.ts';
import { appContext, sequenceKey, type ContextDeps } from './app-context.ts';
import { AppSecrets, type AppSecretsOptions } from './secrets.ts';
import { AppSettings } from './settings.ts';
import { silentLogger, type Logger } from '../kernel/logger.ts';
import { DocType, type Caller, type ResolvedTopic } from './doc-type.ts';
import { aggregatedBy } from './rules/aggregates.ts';
import { docTypePermissions } from './manifest-check.ts';
import { loadDefinition, type AppSource } from './app-source.ts';
import { routesForApp, type AppRoute } from './routes-for-app.ts';
import { AppJobs, type JobHost } from './jobs.ts';

export interface LoadedApp {
  source: AppSource;
  manifest: Manifest;
  def: AppDefinition;
  docTypes: Map<string, DocType>;
  routes: AppRoute[];
}

/**
 * What an app's writes may record in the audit trail, as `[resource, action]`: every write of its
 * document types (create, update, delete, each transition) and the actions of the permissions it
 * declares beyond those (what its own routes do, e.g. `elv-credentials:reveal`). The catalogue
 * lists one audit topic for each; app code may record no other.
 */
export function auditedActions(m: Manifest): [resource: string, action: string][] {
  const out: [string, string][] = [];
  const implied = new Set<string>();
  for (const dt of m.documentTypes ?? []) {
    for (const p of docTypePermissions(dt)) implied.add(`${p.resource}:${p.action}`);
    for (const a of ['create', 'update', 'delete', ...(dt.transitions ?? []).map((t) => t.name)]) out.push([dt.resource, a]);
  }
  for (const p of m.permissions ?? []) if (!implied.has(`${p.resource}:${p.action}`)) out.push([p.resource, p.action]);
  return out;
}

export type InstallState = InstallRecord['state'];
/** What the runtime keeps of a company's install: no snapshot (the lifecycle reads those from the repository). */
export type InstallRow = InstallSummary;

export interface RuntimeDeps {
  storage: Storage;
  uow: UnitOfWork;
  /** The event families' owners: an app claims its own at load. */
  families: EventFamilies;
  tr: Translator;
  permissions: PermissionRegistry;
  companies: Companies;
  clock: Clock;
  /** What app code logs goes here, with its app, company and request. */
  log?: Logger;
  /** The ring sealing apps' secrets (`ctx.secrets`); by default the host's, read when first used. */
  secrets?: AppSecretsOptions;
}

type Problem = Record<string, unknown> & { reason: string };

export class AppRuntime {
  private apps = new Map<string, LoadedApp>();
  private installCache = new Map<string, Promise<Map<string, InstallRow>>>();
  /** `METHOD url` → the app serving it. */
  private served = new Map<string, string>();
  private listeners = new Set<(appId: string) => void>();
  private payloadChecks = new Map<string, ReturnType<typeof payloadAjv.compile>>();
  /** Bumped on every load and unload, so caches built from the app set (OpenAPI, catalogue) rebuild. */
  version = 0;

  /** Each company's settings of each app. */
  readonly settings: AppSettings;
  /** The apps' durable jobs (enqueueing; the workers' JobRunner runs them). */
  readonly jobs: AppJobs;
  /** Apps' sealed secrets. */
  readonly secrets: AppSecrets;

  constructor(readonly deps: RuntimeDeps) {
    deps.storage.changes.on('installs', () => this.installCache.clear());
    this.settings = new AppSettings({ installs: deps.storage.installs, uow: deps.uow, clock: deps.clock, tr: deps.tr });
    this.jobs = new AppJobs({ db: deps.storage.db, repo: deps.storage.jobs, clock: deps.clock, uow: deps.uow });
    this.secrets = new AppSecrets(deps.storage.appSecrets, deps.clock, deps.secrets);
  }

  /** Hears every load and unload (the app's id). */
  onChange(fn: (appId: string) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  private changed(appId: string): void {
    this.version++;
    for (const fn of this.listeners) fn(appId);
  }

  get(appId: string): LoadedApp | undefined {
    return this.apps.get(appId);
  }

  list(): LoadedApp[] {
    return [...this.apps.values()].sort((a, b) => (a.manifest.id < b.manifest.id ? -1 : 1));
  }

  routes(): AppRoute[] {
    return this.list().flatMap((a) => a.routes);
  }

  /** The tables of a manifest's document types. */
  private tablesOf(m: Manifest): TableDef[] {
    return (m.documentTypes ?? []).map((decl) => {
      const { filters, dates } = DocType.indexedFields(decl);
      return this.deps.storage.documents(docTableName(m.id, decl.name), filters, dates).definition();
    });
  }

  /** Loads sources in dependency order; an app whose dependencies are not available is refused. */
  async loadAll(sources: AppSource[]): Promise<{ loaded: string[]; refused: { appId: string; error: Error }[] }> {
    // One look at the schema for every app's tables: when nothing is missing (every boot but the
    // first, or one after an upgrade) the loads skip their own migration, which would each read
    // the whole catalogue of tables and indexes again.
    const migrated = isCurrent(await schemaGap(this.deps.storage.db, sources.flatMap((s) => this.tablesOf(s.manifest))));
    const pending = new Map(sources.map((s) => [s.manifest.id, s]));
    const loaded: string[] = [];
    const refused: { appId: string; error: Error }[] = [];
    const visit = async (id: string, stack: string[]): Promise<void> => {
      const src = pending.get(id);
      if (!src) return;
      if (stack.includes(id)) throw new DiwanError('APP_REFUSED', [{ reason: 'dependency_cycle', cycle: [...stack, id] }], { reason: `dependency cycle ${[...stack, id].join(' → ')}` });
      for (const dep of Object.keys(src.manifest.dependencies ?? {})) await visit(dep, [...stack, id]);
      pending.delete(id);
      await this.load(src, { migrated });
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

  /** What a load would conflict with, without changing anything. */
  conflicts(m: Manifest, replacing = false): Problem[] {
    const problems: Problem[] = [];
    if (this.apps.has(m.id) && !replacing) problems.push({ reason: 'duplicate_id', appId: m.id });
    for (const f of m.eventFamilies ?? []) {
      const owner = this.deps.families.ownerOf(f.prefix);
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

  /** `migrated`: the caller has checked that the app's tables exist as declared. */
  async load(src: AppSource, opts: { replacing?: boolean; migrated?: boolean } = {}): Promise<LoadedApp> {
    const m = src.manifest;
    const problems = this.conflicts(m, opts.replacing);
    if (problems.length) throw new DiwanError('APP_REFUSED', problems, { reason: problems[0].reason });
    const def = await loadDefinition(src);
    const { storage, uow, tr, clock } = this.deps;

    const app: LoadedApp = { source: src, manifest: m, def, docTypes: new Map(), routes: [] };
    const topics = (m.eventFamilies ?? []).flatMap((f) => f.topics);
    const context = (caller: Caller) => this.context(app, caller);
    for (const decl of m.documentTypes ?? []) {
      const { filters, dates } = DocType.indexedFields(decl);
      const dt = new DocType(m.id, decl, {
        table: storage.documents(docTableName(m.id, decl.name), filters, dates),
        uow, tr, clock,
        resolve: (ref) => this.resolveDocType(app, ref),
        hooks: def.hooks?.[decl.name] ?? {},
        context,
        topics: topics.filter((t) => t.source.on !== 'operation' && t.source.type === decl.name),
        sequence: (companyId, key) => storage.sequences.next(companyId, sequenceKey(m.id, key)),
        lock: (name) => storage.locks.hold(name),
        aggregatedBy: aggregatedBy(m.documentTypes ?? [], decl),
        referencedBy: () => this.referencesTo(m.id, decl.name),
      });
      app.docTypes.set(decl.name, dt);
    }
    app.routes = routesForApp(m.id, [...app.docTypes.values()], def, context);
    const declared = (m.permissions ?? []).map((p) => ({ ...p, permission: `${p.resource}:${p.action}`, owner: m.id }));
    const implied = (m.documentTypes ?? [])
      .flatMap(docTypePermissions)
      .filter((p) => !declared.some((d) => d.permission === `${p.resource}:${p.action}`))
      .map((p) => ({ ...p, role: p.role as Role, permission: `${p.resource}:${p.action}`, owner: m.id }));
    const known = new Set([...declared, ...implied].map((p) => p.permission));
    const undeclared = app.routes.filter((r) => !r.doc.permission || (!known.has(r.doc.permission) && !this.deps.permissions.get(r.doc.permission)));
    if (undeclared.length) {
      const details = undeclared.map((r) => ({ pointer: '/server', rule: 'undeclaredPermission', message: `route ${r.doc.method} ${r.doc.url} needs ${r.doc.permission ?? 'a permission'}, which is not declared` }));
      throw new DiwanError('MANIFEST_INVALID', details, { count: details.length });
    }
    // Rules reading another app's documents are typed against its fields, now that it is loaded.
    const typed = (m.documentTypes ?? []).flatMap((decl, i) => {
      const dt = app.docTypes.get(decl.name)!;
      return [...dt.checkRules(`/documentTypes/${i}`), ...dt.checkEffects(`/documentTypes/${i}`)];
    });
    if (typed.length) throw new DiwanError('MANIFEST_INVALID', typed as never, { count: typed.length });
    const clash = this.routeClashes(app);
    if (clash.length) throw new DiwanError('APP_REFUSED', clash, { reason: clash[0].reason });

    // The tables exist before anything can reach them (idempotent: created once per host).
    if (!opts.migrated) await migrate(storage.db, { tables: [...app.docTypes.values()].map((dt) => dt.table.definition()) });

    // Commit point: nothing above changed shared state.
    if (opts.replacing) this.unload(m.id);
    this.deps.permissions.add([...declared, ...implied]);
    tr.addNamespace(`app.${m.id}`, m.strings);
    this.deps.families.claim(m.id, (m.eventFamilies ?? []).map((f) => f.prefix));
    this.apps.set(m.id, app);
    this.serve(app, true);
    this.changed(m.id);
    return app;
  }

  /** Another app already serving one of this app's routes. */
  private routeClashes(app: LoadedApp): Problem[] {
    const problems: Problem[] = [];
    for (const r of app.routes) {
      const owner = this.served.get(`${r.doc.method} ${r.doc.url}`);
      if (owner && owner !== app.manifest.id) problems.push({ reason: 'route_conflict', route: `${r.doc.method} ${r.doc.url}`, owner });
    }
    return problems;
  }

  private serve(app: LoadedApp, on: boolean): void {
    for (const r of app.routes) {
      const key = `${r.doc.method} ${r.doc.url}`;
      if (on) this.served.set(key, app.manifest.id);
      else if (this.served.get(key) === app.manifest.id) this.served.delete(key);
    }
  }

  unload(appId: string): void {
    const app = this.apps.get(appId);
    if (!app) return;
    this.serve(app, false);
    this.deps.permissions.removeOwner(appId);
    this.deps.tr.removeNamespace(`app.${appId}`);
    this.deps.families.release(appId);
    for (const key of this.payloadChecks.keys()) if (key.startsWith(`${appId}:`)) this.payloadChecks.delete(key);
    this.apps.delete(appId);
    this.changed(appId);
  }

  /** Every reference field of the loaded apps' types, or of their lines, that names `appId`'s type `name` (asked at a delete: not kept, as apps come and go). */
  private referencesTo(appId: string, name: string): { dt: DocType; field: string; lines?: string }[] {
    const out: { dt: DocType; field: string; lines?: string }[] = [];
    for (const app of this.apps.values()) {
      const names = (to: string | undefined) => to === `${appId}/${name}` || (app.manifest.id === appId && to === name);
      for (const dt of app.docTypes.values()) {
        for (const f of dt.decl.fields) {
          if (f.type === 'reference' && names(f.to)) out.push({ dt, field: f.name });
          for (const lf of f.type === 'lines' ? (f.fields ?? []) : []) if (lf.type === 'reference' && names(lf.to)) out.push({ dt, field: lf.name, lines: f.name });
        }
      }
    }
    return out;
  }

  private resolveDocType(app: LoadedApp, ref: string): DocType {
    const [appId, name] = ref.includes('/') ? ref.split('/') : [app.manifest.id, ref];
    const fault = (reason: string) => new DiwanError('APP_ERROR', [{ app: app.manifest.id, rule: 'docType', ref }], { app: app.manifest.id, reason });
    if (appId !== app.manifest.id && !app.manifest.dependencies?.[appId]) throw fault(`${ref} belongs to ${appId}, which is not a dependency`);
    const dt = (appId === app.manifest.id ? app : this.apps.get(appId))?.docTypes.get(name);
    if (!dt) throw fault(`there is no document type ${ref}`);
    return dt;
  }

  /** Refuses what an app may not emit itself: undeclared topics, document-sourced ones, data breaking the payload. */
  private checkEmit(app: LoadedApp, topic: string, data: unknown): void {
    const id = app.manifest.id;
    const decl = (app.manifest.eventFamilies ?? []).flatMap((f) => f.topics).find((t) => t.topic === topic);
    const fault = (rule: string, reason: string, extra: Record<string, unknown> = {}) =>
      new DiwanError('APP_ERROR', [{ app: id, rule, topic, ...extra }], { app: id, reason });
    if (!decl) throw fault('undeclared_topic', `${topic} is not a topic the app declares`);
    if (decl.source.on !== 'operation') throw fault('document_source', `${topic} is emitted by the host when its document source fires`);
    const key = `${id}:${topic}`;
    let validate = this.payloadChecks.get(key);
    if (!validate) this.payloadChecks.set(key, (validate = payloadAjv.compile(decl.payload!)));
    if (!validate(data)) throw fault('payload', `the data of ${topic} does not match its payload schema`, { errors: validate.errors });
  }

  /** Refuses an audit row whose topic the catalogue does not list (see `auditedActions`). */
  private checkAudit(app: LoadedApp, resource: string, action: string): void {
    if (auditedActions(app.manifest).some(([r, a]) => r === resource && a === action)) return;
    const id = app.manifest.id;
    throw new DiwanError('APP_ERROR', [{ app: id, rule: 'undeclared_audit_action', resource, action }], {
      app: id,
      reason: `${resource}:${action} is neither a write of the app's document types nor a permission it declares`,
    });
  }

  /** What an app's contexts are built from, made once per loaded app. */
  private contextDeps = new WeakMap<LoadedApp, ContextDeps>();

  private context(app: LoadedApp, caller: Caller): AppContext {
    let deps = this.contextDeps.get(app);
    if (!deps) {
      const { storage, uow, tr, permissions, clock } = this.deps;
      deps = {
        appId: app.manifest.id, db: storage.db, uow, tr, permissions, clock, log: this.deps.log ?? silentLogger,
        settings: (companyId) => this.settings.get(app.manifest, companyId),
        docType: (ref) => this.resolveDocType(app, ref),
        checkEmit: (topic, data) => this.checkEmit(app, topic, data),
        checkAudit: (resource, action) => this.checkAudit(app, resource, action),
        enqueue: async (caller, name, payload, opts) => {
          if (typeof app.def.jobs?.[name] !== 'function') {
            throw new DiwanError('APP_ERROR', [{ app: app.manifest.id, rule: 'undeclared_job', job: name }], { app: app.manifest.id, reason: `the app declares no job ${name} (defineApp({ jobs }))` });
          }
          return this.jobs.enqueue(app.manifest.id, caller, name, payload, opts);
        },
        retryJob: (caller, key) => this.jobs.retryKey(app.manifest.id, caller, key),
        nextNumber: (companyId, key) => storage.sequences.next(companyId, key),
        secrets: this.secrets,
      };
      this.contextDeps.set(app, deps);
    }
    return appContext(deps, caller);
  }

  /** What a JobRunner needs of the apps: their handlers, installs, contexts and companies. */
  jobHost(): JobHost {
    return {
      handler: (appId, name) => this.jobHandler(appId, name),
      isEnabled: (companyId, appId) => this.isEnabled(companyId, appId),
      contextFor: (appId, caller) => this.contextFor(appId, caller),
      company: (id) => this.deps.companies.get(id),
    };
  }

  /** An app's job handler, if the app is loaded and declares it. */
  jobHandler(appId: string, name: string): JobHandler | undefined {
    const h = this.apps.get(appId)?.def.jobs?.[name];
    return typeof h === 'function' ? h : undefined;
  }

  /** Services bound to an app and a caller: what hooks, routes and migrations receive. */
  contextFor(appId: string, caller: Caller): AppContext {
    const app = this.apps.get(appId);
    if (!app) throw new DiwanError('NOT_FOUND', [{ resource: 'apps', id: appId }]);
    return this.context(app, caller);
  }

  /** Every app's event families, each topic with its payload schema and example resolved. */
  eventSources(): { appId: string; families: (EventFamilyDecl & { topics: ResolvedTopic[] })[] }[] {
    return this.list().map((a) => {
      const fromDocs = new Map<string, ResolvedTopic>();
      for (const dt of a.docTypes.values()) for (const t of dt.topics()) fromDocs.set(t.topic, t);
      const families = (a.manifest.eventFamilies ?? []).map((f) => ({
        ...f,
        topics: f.topics.map((t: TopicDecl) => fromDocs.get(t.topic) ?? (t as ResolvedTopic)),
      }));
      return { appId: a.manifest.id, families };
    });
  }

  // ---- per-company install state ------------------------------------------------------

  installs(companyId: string): Promise<Map<string, InstallRow>> {
    const read = () => this.deps.storage.installs.summaries(companyId).then((rows) => new Map(rows.map((r) => [r.appId, r])));
    // Inside a unit of work, read through it: what it wrote counts, and it never waits on a read
    // another request began (which, on SQLite, waits for this unit of work's connection).
    if (this.deps.storage.db.inTransaction()) return read();
    let m = this.installCache.get(companyId);
    if (!m) {
      m = read();
      m.catch(() => this.installCache.delete(companyId));
      this.installCache.set(companyId, m);
    }
    return m;
  }

  async install(companyId: string, appId: string): Promise<InstallRow | undefined> {
    return (await this.installs(companyId)).get(appId);
  }

  async isEnabled(companyId: string, appId: string): Promise<boolean> {
    return (await this.install(companyId, appId))?.state === 'enabled';
  }

  /** Forget a company's cached installs (this process; other processes hear the `installs` change). */
  invalidate(companyId?: string): void {
    if (companyId) this.installCache.delete(companyId);
    else this.installCache.clear();
  }
}
