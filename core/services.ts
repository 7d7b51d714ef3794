// The composition root of every process: the server (core/host.ts adds the HTTP surface), the
// worker role and each CLI command build their services here, each taking only what it needs,
// so that a command and the server cannot disagree on how the outbox, the audit log or the
// unit of work is wired. Three stages, each built on the one before:
//   core      the database and the domain services that need no app (companies, people, keys,
//             the outbox, the audit log, the unit of work);
//   apps      the app runtime with every app loaded, the lifecycle, the catalogue, packages;
//   webhooks  endpoints, the delivery log, the dispatcher, the event log.
// The later stages load their modules on demand: a CLI list stays light.
import path from 'node:path';
import { loadConfig, type HostConfig } from './kernel/config.ts';
import { systemClock, type Clock } from './kernel/clock.ts';
import { CLI_ACTOR, type Actor } from './kernel/actor.ts';
import type { SecretBox } from './kernel/secret-box.ts';
import type { Translator } from './kernel/i18n/i18n.ts';
import { silentLogger, type Logger } from './kernel/logger.ts';
import { openStorage, type Storage } from './storage/open.ts';
import { Outbox } from './events/outbox.ts';
import { EventFamilies } from './events/families.ts';
import type { EventLog } from './events/event-log.ts';
import { AuditLog } from './audit/audit-log.ts';
import { UnitOfWork } from './audit/unit-of-work.ts';
import { Companies, type Company } from './tenancy/companies.ts';
import { ApiKeys } from './identity/api-keys.ts';
import { People } from './identity/people.ts';
import { Sessions, DEFAULT_SESSION_OPTIONS } from './identity/sessions.ts';
import type { PermissionRegistry } from './identity/permissions.ts';
import type { Webhooks } from './webhooks/webhooks.ts';
import type { AppRuntime } from './apps/runtime.ts';
import type { Lifecycle } from './apps/lifecycle.ts';
import type { CatalogueService } from './apps/catalogue-service.ts';
import type { AppSource } from './apps/app-source.ts';
import type { InstalledPackage } from './apps/packages.ts';

export interface ServiceOptions {
  config?: Partial<HostConfig>;
  /** SQLite file; defaults to `<dataDir>/diwan.db`. */
  dbFile?: string;
  /** `postgres://…`: PostgreSQL instead of SQLite. Defaults to `DIWAN_DATABASE_URL` unless `dbFile` is given. */
  databaseUrl?: string;
  clock?: Clock;
  /** First-party apps available on the host; defaults to those in `manifests/`. Packages stored in the database load as well. */
  sources?: AppSource[];
  /** Apps a new company gets unless it asks otherwise; defaults to DIWAN_DEFAULT_APPS, else every first-party app. */
  defaultApps?: string[];
  /** The key ring sealing webhook and app secrets; defaults to DIWAN_SECRET_KEY or the key file (a throwaway ring for `:memory:` hosts). */
  secretBox?: SecretBox;
  /** The server's translator, when it has made one already. */
  tr?: Translator;
  /** Where app code logs, and what went wrong in the background (an app or package refused at boot) is told. */
  logger?: Logger;
}

/** What needs no app. */
export interface CoreServices {
  config: HostConfig;
  clock: Clock;
  storage: Storage;
  families: EventFamilies;
  outbox: Outbox;
  audit: AuditLog;
  uow: UnitOfWork;
  companies: Companies;
  keys: ApiKeys;
  people: People;
  sessions: Sessions;
  close(): Promise<void>;
}

export interface AppServices extends CoreServices {
  tr: Translator;
  permissions: PermissionRegistry;
  runtime: AppRuntime;
  lifecycle: Lifecycle;
  catalogue: CatalogueService;
  defaultApps: string[];
  /** Creates a company and installs `apps` (default: the standard set; `[]` for none), in one unit of work. */
  createCompany(input: { name: string; currency?: string; apps?: string[] }, actor?: Actor): Promise<{ company: Company; installed: string[] }>;
  /** Adds an app package (file or source folder) to the host; every process serving it loads it. */
  installPackage(file: string): Promise<InstalledPackage & { packedFrom?: string }>;
}

export interface WebhookServices extends CoreServices {
  webhooks: Webhooks;
  /** The company's events read back (the events API). */
  eventLog: EventLog;
}

export interface AllServices extends AppServices, WebhookServices {}

export interface ServiceNeeds {
  apps?: boolean;
  /** Implies apps: an endpoint's topics are checked against the apps' catalogue. */
  webhooks?: boolean;
}

/** The settings: the environment's, then the caller's. */
export function resolveConfig(opts: ServiceOptions): HostConfig {
  const base = loadConfig();
  return { ...base, ...opts.config, webhooks: { ...base.webhooks, ...opts.config?.webhooks } };
}

export async function coreServices(opts: ServiceOptions = {}): Promise<CoreServices> {
  const config = resolveConfig(opts);
  const clock = opts.clock ?? systemClock;
  const storage = await openStorage({ file: opts.dbFile ?? path.join(config.dataDir, 'diwan.db'), url: opts.databaseUrl ?? (opts.dbFile ? undefined : config.databaseUrl) });
  const families = new EventFamilies();
  const outbox = new Outbox(storage.db, storage.outbox, clock);
  const audit = new AuditLog(storage.audit, outbox, clock);
  const uow = new UnitOfWork(storage.db, audit, outbox, families);
  const companies = new Companies(storage.companies, storage.changes, uow, clock);
  const keys = new ApiKeys(storage.apiKeys, storage.changes, uow, clock);
  const people = new People(storage.people, storage.changes, uow, clock);
  const sessions = new Sessions(storage.people, storage.throttles, people, storage.changes, clock, { ...DEFAULT_SESSION_OPTIONS, idleMs: config.sessionIdleSeconds * 1000 });
  return { config, clock, storage, families, outbox, audit, uow, companies, keys, people, sessions, close: () => storage.close() };
}

export async function withApps(core: CoreServices, opts: ServiceOptions = {}): Promise<AppServices> {
  const [{ createTranslator }, { PermissionRegistry }, { AppRuntime }, { Lifecycle }, { CatalogueService }, { firstPartySources }, packages] = await Promise.all([
    import('./kernel/i18n/i18n.ts'),
    import('./identity/permissions.ts'),
    import('./apps/runtime.ts'),
    import('./apps/lifecycle.ts'),
    import('./apps/catalogue-service.ts'),
    import('./apps/app-source.ts'),
    import('./apps/packages.ts'),
  ]);
  const { storage, uow, companies, clock, config, families } = core;
  const logger = opts.logger ?? silentLogger;
  const log = (err: unknown, message: string, where: object) => logger.error({ err, ...where }, message);
  const tr = opts.tr ?? createTranslator();
  const permissions = new PermissionRegistry();
  const runtime = new AppRuntime({ storage, uow, families, tr, permissions, companies, clock, log: logger, secrets: { box: opts.secretBox, throwaway: opts.dbFile === ':memory:' } });
  const lifecycle = new Lifecycle({ db: storage.db, runtime, uow, installs: storage.installs, changes: storage.changes, companies, clock });
  const catalogue = new CatalogueService(runtime, uow);
  const sources = opts.sources ?? firstPartySources();
  await runtime.secrets.resealStale((fn) => storage.db.transaction(fn));
  const { refused } = await runtime.loadAll(sources);
  for (const r of refused) log(r.error, 'app refused at boot', { appId: r.appId });
  const packageDeps = { runtime, storage, clock, dataDir: config.dataDir };
  for (const f of (await packages.syncPackages(packageDeps)).failed) log(f.error, 'package refused at boot', { appId: f.appId });
  // Packages another process (the CLI) adds are loaded here too, within the change feed's interval.
  storage.changes.on('packages', () => {
    void packages.syncPackages(packageDeps).then(({ failed }) => failed.forEach((f) => log(f.error, 'package refused', { appId: f.appId })));
  });
  const defaultApps = (opts.defaultApps ?? config.defaultApps ?? sources.filter((s) => s.origin === 'first-party').map((s) => s.manifest.id)).filter((id) => runtime.get(id));
  return {
    ...core, tr, permissions, runtime, lifecycle, catalogue, defaultApps,
    createCompany: (input, actor = CLI_ACTOR) => lifecycle.createCompany(input, actor, input.apps ?? defaultApps),
    installPackage: (file) => packages.installFromPath(packageDeps, file),
  };
}

/**
 * The webhooks domain on `stage`. Topics are checked against the loaded apps' catalogue: `apps`
 * is the stage that has them, or how to load them the first time a topic must be checked (a CLI
 * that only reads endpoints or the delivery log never loads an app).
 */
export async function withWebhooks<S extends CoreServices>(stage: S, opts: ServiceOptions, apps: AppServices | (() => Promise<AppServices>)): Promise<S & WebhookServices> {
  const [{ createWebhooks }, { openSealer }, { EventLog }] = await Promise.all([
    import('./webhooks/webhooks.ts'),
    import('./webhooks/sealer.ts'),
    import('./events/event-log.ts'),
  ]);
  const { storage, uow, outbox, clock, config } = stage;
  const known = typeof apps === 'function' ? async () => (await apps()).catalogue.known() : () => apps.catalogue.known();
  const sealer = await openSealer(storage, { box: opts.secretBox, throwaway: opts.dbFile === ':memory:' });
  const webhooks = createWebhooks({
    storage, uow, outbox, sealer, clock, config: config.webhooks, known,
    disableAfterSeconds: config.webhookDisableAfterSeconds, retentionDays: config.eventRetentionDays,
  });
  const eventLog = new EventLog({ outbox: storage.outbox, clock, retentionDays: config.eventRetentionDays, known });
  return { ...stage, webhooks, eventLog };
}

/** The services `needs` names, each stage built once on the one before. */
export async function buildServices(opts: ServiceOptions, needs: { webhooks: true }): Promise<AllServices>;
export async function buildServices(opts: ServiceOptions, needs: { apps: true }): Promise<AppServices>;
export async function buildServices(opts?: ServiceOptions, needs?: ServiceNeeds): Promise<CoreServices>;
export async function buildServices(opts: ServiceOptions = {}, needs: ServiceNeeds = {}): Promise<CoreServices> {
  const core = await coreServices(opts);
  try {
    if (!needs.apps && !needs.webhooks) return core;
    const apps = await withApps(core, opts);
    return needs.webhooks ? await withWebhooks(apps, opts, apps) : apps;
  } catch (err) {
    await core.close();
    throw err;
  }
}
