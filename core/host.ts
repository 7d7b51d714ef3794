// buildHost: the composition root. Storage, the domains, the app runtime and the HTTP surface
// are wired here, each given what it needs; nothing reaches for a global.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import { loadConfig, type HostConfig } from './kernel/config.ts';
import { systemClock, type Clock } from './kernel/clock.ts';
import { CLI_ACTOR, type Actor } from './kernel/actor.ts';
import { createTranslator, pickLanguage, type Translator } from './kernel/i18n/i18n.ts';
import { errorCodes } from './kernel/errors/codes.ts';
import { DiwanError } from './kernel/errors/diwan-error.ts';
import { openStorage, type Storage } from './storage/open.ts';
import { Outbox } from './events/outbox.ts';
import { EventLog } from './events/event-log.ts';
import { EventStreams } from './events/event-stream.ts';
import { AuditLog } from './audit/audit-log.ts';
import { UnitOfWork } from './audit/unit-of-work.ts';
import { Companies, type Company } from './tenancy/companies.ts';
import { ApiKeys } from './identity/api-keys.ts';
import { People } from './identity/people.ts';
import { Sessions, DEFAULT_SESSION_OPTIONS } from './identity/sessions.ts';
import { PermissionRegistry } from './identity/permissions.ts';
import { actorOf } from './identity/principal.ts';
import { createWebhooks, type Webhooks } from './webhooks/webhooks.ts';
import { resealSecrets } from './webhooks/endpoints.ts';
import { SecretBox, SecretBoxError, generateKey, isEncrypted, loadSecretBox } from './kernel/secret-box.ts';
import { AppRuntime } from './apps/runtime.ts';
import { Lifecycle, HOST_VERSION } from './apps/lifecycle.ts';
import { CatalogueService } from './apps/catalogue-service.ts';
import { Scheduler } from './apps/scheduler.ts';
import { firstPartySources, type AppSource } from './apps/app-source.ts';
import { installFromPath, syncPackages, type InstalledPackage } from './apps/packages.ts';
import type { AppRoute } from './apps/routes-for-app.ts';
import { Pipeline, requestPath } from './http/pipeline.ts';
import { makeAuthenticate, makeStillValid } from './http/auth.ts';
import { createAuthThrottle } from './http/auth-throttle.ts';
import { memoryRateLimiter, sharedRateLimiter } from './http/rate-limit.ts';
import { installJsonBodyParser } from './http/json-body.ts';
import { installHostHeaderCheck } from './http/client-errors.ts';
import { serverOptions } from './http/server-options.ts';
import type { Route } from './http/route.ts';
import { installErrorHandlers, frameworkErrorHandler } from './http/error-handlers.ts';
import { systemRoutes } from './http/routes/system.ts';
import { auditRoutes } from './http/routes/audit.ts';
import { apiKeyRoutes } from './http/routes/api-keys.ts';
import { appRoutes } from './http/routes/apps.ts';
import { eventRoutes } from './http/routes/events.ts';
import { eventLogRoutes } from './http/routes/event-log.ts';
import { webhookRoutes } from './http/routes/webhooks.ts';
import { peopleRoutes } from './http/routes/people.ts';
import { webRoutes } from './http/web-routes.ts';
import { opsRoutes } from './http/ops-routes.ts';
import { consoleRoutes } from './http/console-routes.ts';
import { buildOpenApiDocument } from './openapi/build-document.ts';
import { webhooksFromCatalogue } from './openapi/webhooks.ts';
import { openApiText, type OpenApiText } from './openapi/openapi-text.ts';

export interface HostOptions {
  config?: Partial<HostConfig>;
  /** SQLite file; defaults to `<dataDir>/diwan.db`. `:memory:` for throwaway hosts (with a temporary data folder). */
  dbFile?: string;
  /** `postgres://…`: PostgreSQL instead of SQLite. Defaults to `DIWAN_DATABASE_URL` unless `dbFile` is given. */
  databaseUrl?: string;
  clock?: Clock;
  logger?: boolean;
  /** First-party apps available on the host; defaults to those in `manifests/`. Packages stored in the database load as well. */
  sources?: AppSource[];
  /** Apps a new company gets unless it asks otherwise; defaults to every first-party app. */
  defaultApps?: string[];
  /** The key ring sealing webhook secrets; defaults to DIWAN_SECRET_KEY or the key file (a throwaway ring for `:memory:` hosts). */
  secretBox?: SecretBox;
  /** The event stream's pace (tests): how often other processes' events are looked for, and the heartbeat that rechecks the key. */
  eventStream?: { pollMs?: number; heartbeatMs?: number };
}

export interface Host {
  app: FastifyInstance;
  config: HostConfig;
  clock: Clock;
  storage: Storage;
  tr: Translator;
  companies: Companies;
  keys: ApiKeys;
  people: People;
  sessions: Sessions;
  permissions: PermissionRegistry;
  audit: AuditLog;
  outbox: Outbox;
  uow: UnitOfWork;
  runtime: AppRuntime;
  lifecycle: Lifecycle;
  catalogue: CatalogueService;
  webhooks: Webhooks;
  /** The company's events read back (the events API) and live readers of them (the event stream). */
  eventLog: EventLog;
  streams: EventStreams;
  scheduler: Scheduler;
  pipeline: Pipeline;
  defaultApps: string[];
  /** Creates a company and installs `apps` (default: the standard set; `[]` for none), in one unit of work. */
  createCompany(input: { name: string; currency?: string; apps?: string[] }, actor?: Actor): Promise<{ company: Company; installed: string[] }>;
  /** Adds an app package (file or source folder) to the host; every process serving it loads it. */
  installPackage(file: string): Promise<InstalledPackage & { packedFrom?: string }>;
  /** The OpenAPI document, as JSON text. */
  openapi(): Promise<string>;
  /** Starts what this process's roles run: the change feed, and for a worker delivery and the scheduler (done when the server listens). */
  start(): void;
  /** True once `close()` began: `/readyz` answers 503 so load balancers send work elsewhere. */
  draining: boolean;
  /** Drains: stops taking requests and work, waits for what is in flight (a delivery cut off is retried later), closes. */
  close(): Promise<void>;
}


export async function buildHost(opts: HostOptions = {}): Promise<Host> {
  const base = loadConfig();
  // A throwaway host without a data folder of its own gets a temporary one, removed on close.
  const ownTempDir = opts.dbFile === ':memory:' && !opts.config?.dataDir;
  const config: HostConfig = {
    ...base,
    ...(ownTempDir ? { dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'diwan-host-')) } : {}),
    ...opts.config,
    webhooks: { ...base.webhooks, ...opts.config?.webhooks },
  };
  const clock = opts.clock ?? systemClock;
  const storage = await openStorage({ file: opts.dbFile ?? path.join(config.dataDir, 'diwan.db'), url: opts.databaseUrl ?? (opts.dbFile ? undefined : config.databaseUrl) });
  const tr = createTranslator();
  const permissions = new PermissionRegistry();
  const outbox = new Outbox(storage.db, storage.outbox, clock);
  const audit = new AuditLog(storage.audit, outbox, clock);
  // The owner of an event family; the runtime is created just below and knows the apps'.
  let runtime!: AppRuntime;
  const uow = new UnitOfWork(storage.db, audit, outbox, (prefix) => runtime.prefixOwnerOf(prefix));
  const companies = new Companies(storage.companies, storage.changes, clock);
  const keys = new ApiKeys(storage.apiKeys, storage.changes, uow, clock);
  const people = new People(storage.people, storage.changes, uow, clock);
  const sessions = new Sessions(storage.people, storage.throttles, people, storage.changes, clock, { ...DEFAULT_SESSION_OPTIONS, idleMs: config.sessionIdleSeconds * 1000 });
  runtime = new AppRuntime({ storage, uow, tr, permissions, companies, clock });
  const lifecycle = new Lifecycle({ runtime, uow, installs: storage.installs, changes: storage.changes, companies, clock });
  const catalogue = new CatalogueService(runtime, uow);
  // Signing secrets are sealed at rest with keys kept outside the data folder; legacy clear ones are sealed now.
  let box = opts.secretBox ?? (opts.dbFile === ':memory:' && !process.env.DIWAN_SECRET_KEY ? new SecretBox([generateKey()]) : loadSecretBox().box);
  await storage.db.transaction(() => resealSecrets(storage.endpoints, box, isEncrypted));
  const sealer = {
    seal: (s: string, id: string) => box.encrypt(s, id),
    open: (s: string, id: string) => {
      try {
        return box.decrypt(s, id);
      } catch (err) {
        // `diwan secrets rotate-key` re-sealed with a key this process has not read yet: read the ring again once.
        if (!(err instanceof SecretBoxError) || err.reason !== 'unknown_key' || opts.secretBox) throw err;
        box = loadSecretBox(process.env, { create: false }).box;
        return box.decrypt(s, id);
      }
    },
  };
  const webhooks = createWebhooks({
    storage, uow, outbox, sealer, clock, config: config.webhooks, known: () => catalogue.known(),
    disableAfterSeconds: config.webhookDisableAfterSeconds, retentionDays: config.eventRetentionDays,
  });
  const eventLog = new EventLog({ outbox: storage.outbox, clock, retentionDays: config.eventRetentionDays, known: () => catalogue.known() });
  const streams = new EventStreams(outbox, eventLog, { pollMs: opts.eventStream?.pollMs });
  // The server's logger exists only below: failures are told to it then.
  let logSchedulerError = (_err: unknown, _where: object) => {};
  const scheduler = new Scheduler(runtime, companies, clock, undefined, (err, where) => logSchedulerError(err, where));

  const app = Fastify({
    logger: opts.logger ?? false, bodyLimit: config.bodyLimit, return503OnClosing: true, frameworkErrors: frameworkErrorHandler(tr, config.bodyLimit),
    ...serverOptions(tr, config),
  });
  logSchedulerError = (err, where) => app.log.error({ err, ...where }, 'scheduled firing failed');
  const authenticate = makeAuthenticate({
    keys, sessions,
    rateLimit: config.rateLimitPerMinute <= 0 ? undefined
      : storage.sharedByServers ? sharedRateLimiter(storage.rateWindows, config.rateLimitPerMinute, () => clock.now())
      : memoryRateLimiter(config.rateLimitPerMinute, () => clock.now()),
    throttle: createAuthThrottle({ limit: config.authFailLimit, windowMs: config.authFailWindowSeconds * 1000, maxTracked: config.authFailMaxTracked, now: () => clock.now(),
      shared: storage.sharedByServers ? storage.throttles : undefined }),
  });
  const stillValid = makeStillValid({ keys, sessions, permissions });
  const pipeline = new Pipeline({
    db: storage.db, tr, clock, companies, permissions, idempotency: storage.idempotency,
    authenticate,
    appEnabled: async (companyId, appId) => {
      const row = await runtime.install(companyId, appId);
      return { enabled: row?.state === 'enabled', state: row?.state ?? 'not_installed' };
    },
    beforeEach: () => storage.changes.check(),
    onRoute: (request, route) => (request.operationId = route.doc.operationId),
    log: (err, message) => app.log.error({ err }, message),
  });

  // App routes follow the runtime: an app that loads, upgrades or leaves changes the pipeline at once.
  const mounted = new Map<string, Route[]>();
  const toRoute = (r: AppRoute): Route => ({
    doc: r.doc,
    appId: r.appId,
    idempotent: r.idempotent,
    handler: (req) =>
      r.handle({ params: req.params, query: req.query, body: req.body, headers: req.headers, caller: { company: req.company, actor: actorOf(req.principal), lang: req.lang, requestId: req.id, principal: req.principal } }),
  });
  runtime.onChange((appId) => {
    for (const r of mounted.get(appId) ?? []) pipeline.remove(r);
    const routes = (runtime.get(appId)?.routes ?? []).map(toRoute);
    for (const r of routes) pipeline.add(r);
    mounted.set(appId, routes);
  });

  const packageDeps = { runtime, storage, clock, dataDir: config.dataDir };
  const sources = opts.sources ?? firstPartySources();
  const { refused } = await runtime.loadAll(sources);
  for (const r of refused) app.log.error({ appId: r.appId, err: r.error }, 'app refused at boot');
  for (const f of (await syncPackages(packageDeps)).failed) app.log.error({ appId: f.appId, err: f.error }, 'package refused at boot');
  // Packages another process (the CLI) adds are loaded here too, within the change feed's interval.
  storage.changes.on('packages', () => {
    void syncPackages(packageDeps).then(({ failed }) => failed.forEach((f) => app.log.error({ appId: f.appId, err: f.error }, 'package refused')));
  });
  const defaultApps = (opts.defaultApps ?? sources.filter((s) => s.origin === 'first-party').map((s) => s.manifest.id)).filter((id) => runtime.get(id));

  // Built once per set of apps; concurrent first requests share one build.
  let openapiCache: { version: number; doc: Promise<OpenApiText> } | undefined;
  const openapiDocument = () => {
    if (openapiCache?.version !== runtime.version) {
      const version = runtime.version;
      const doc = (async () => {
        const webhooks = webhooksFromCatalogue(await catalogue.catalogue(undefined, { lang: 'en' }));
        return openApiText(
          buildOpenApiDocument({
            webhooks,
            title: 'Diwan API',
            version: HOST_VERSION,
            description: 'One REST API for every app of a multi-tenant business platform. Every route needs `Authorization: Bearer <key>` and `X-Company-Id`; failures answer `{ error: { code, message, details } }`.',
            serverUrl: '/',
            routes: pipeline.routes().map((r) => r.doc),
            errorCodes: Object.entries(errorCodes).map(([code, e]) => ({ code, status: e.status, description: e.description })),
            tags: [{ name: 'core', description: 'The host: company, keys, apps, audit log, events, webhooks' }, ...runtime.list().map((a) => ({ name: a.manifest.id, description: a.manifest.description.en }))],
          }),
        );
      })();
      openapiCache = { version, doc };
      doc.catch(() => {
        if (openapiCache?.doc === doc) openapiCache = undefined;
      });
    }
    return openapiCache.doc;
  };
  const openapi = async () => (await openapiDocument()).json;

  for (const r of [
    ...systemRoutes({ permissions, openapi: openapiDocument }),
    ...auditRoutes(audit),
    ...apiKeyRoutes(keys),
    ...peopleRoutes({ people, sessions, publicUrl: config.publicUrl }),
    ...appRoutes({ runtime, lifecycle, permissions, tr }),
    ...eventRoutes(catalogue),
    ...eventLogRoutes({
      log: eventLog, streams, known: () => catalogue.known(), heartbeatMs: opts.eventStream?.heartbeatMs,
      // A long-lived stream checks its credentials again now and then: a revoked key's stream ends.
      stillValid: async (req) => {
        await storage.changes.check();
        return stillValid(req.raw, req.principal, 'webhooks:read');
      },
    }),
    ...webhookRoutes({ webhooks, catalogue }),
  ]) {
    pipeline.add(r);
  }

  app.removeContentTypeParser('text/plain');
  installJsonBodyParser(app, tr, config.jsonMaxDepth);
  installHostHeaderCheck(app, tr);
  const notFound = (req: FastifyRequest) => {
    const p = requestPath(req.raw.url ?? req.url);
    return p.startsWith('/api/v1/') ? pipeline.notFound(p, req.method) : new DiwanError('NOT_FOUND', [{ path: p }]);
  };
  installErrorHandlers(app, tr, config.bodyLimit, notFound);
  // A request no route serves (an unknown method, say) is answered before its body is read.
  app.addHook('onRequest', (request, _reply, done) => done(request.is404 ? notFound(request) : undefined));
  let draining = false;
  const roles = config.roles;
  opsRoutes(app, { storage, clock, dispatcher: webhooks.dispatcher, scheduler, draining: () => draining, roles });
  // A worker-only process serves its health and metrics, not the API.
  if (roles.api) {
    app.route({
      method: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
      url: '/api/v1/*',
      // Route, identity and permission are settled before the body is read.
      onRequest: (request) => pipeline.admit(request),
      handler: async (request, reply) => {
        const lang = pickLanguage(request.headers['accept-language']);
        reply.header('content-language', lang);
        await pipeline.handle(request, reply, lang);
      },
    });
  }
  if (roles.api) {
    webRoutes(app, runtime);
    consoleRoutes(app);
  }

  let started = false;
  const start = () => {
    if (started) return;
    started = true;
    storage.changes.start();
    if (roles.worker) {
      webhooks.start();
      scheduler.start();
    }
  };
  app.addHook('onListen', async () => start());
  // Open event streams end first, or closing the server would wait for them.
  app.addHook('preClose', async () => streams.closeAll());

  const createCompany: Host['createCompany'] = (input, actor = CLI_ACTOR) =>
    storage.db.transaction(async () => {
      const company = await companies.create(input);
      await uow.run({ companyId: company.id, actor, appId: 'core' }, (w) => w.audit({ action: 'create', resource: 'companies', resourceId: company.id, after: company }));
      const installed: string[] = [];
      for (const id of input.apps ?? defaultApps) {
        if (await runtime.install(company.id, id)) continue;
        installed.push(...(await lifecycle.install(company.id, id, actor)).installed);
      }
      return { company, installed };
    });

  await app.ready();
  return {
    app, config, clock, storage, tr, companies, keys, people, sessions, permissions, audit, outbox, uow, runtime, lifecycle, catalogue, webhooks, eventLog, streams, scheduler, pipeline, defaultApps,
    createCompany,
    installPackage: (file) => installFromPath(packageDeps, file),
    openapi,
    start,
    get draining() {
      return draining;
    },
    async close() {
      draining = true;
      await app.close();
      await scheduler.stop();
      await webhooks.stop();
      await storage.close();
      if (ownTempDir) fs.rmSync(config.dataDir, { recursive: true, force: true });
    },
  };
}
