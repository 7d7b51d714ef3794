// buildHost: storage, identity, the app runtime and the HTTP surface wired into one Fastify
// instance. Everything a part needs is passed to it here; nothing reaches for a global.
import path from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import FindMyWay from 'find-my-way';
import { loadConfig, type HostConfig } from './config.ts';
import { systemClock, type Clock } from './clock.ts';
import { openStorage, type Storage } from './db/connection.ts';
import { dataVersionReader } from './db/dialect.ts';
import { createTranslator, type Translator } from './i18n/i18n.ts';
import { errorCodes } from './errors/codes.ts';
import { installErrorHandlers, frameworkErrorHandler } from './errors/handlers.ts';
import { compileFor } from './http/validation.ts';
import { installAuth } from './http/auth.ts';
import { coreRoutes } from './http/core-route.ts';
import { systemRoutes } from './http/system-routes.ts';
import { makeAppDispatch, notFoundOrMethod } from './http/app-dispatch.ts';
import { webRoutes } from './http/web-routes.ts';
import { Companies, type Company } from './tenancy/companies.ts';
import { ApiKeys } from './identity/api-keys.ts';
import { PermissionRegistry } from './identity/permissions.ts';
import type { Actor } from './identity/principal.ts';
import { AuditLog } from './audit/audit-log.ts';
import { auditRoutes } from './audit/audit-routes.ts';
import { apiKeyRoutes } from './identity/api-key-routes.ts';
import { Outbox } from './events/outbox.ts';
import { EventService } from './events/event-service.ts';
import { eventRoutes } from './events/event-routes.ts';
import { createWebhooks, type Webhooks } from './webhooks/dispatcher.ts';
import { webhookRoutes } from './webhooks/endpoint-routes.ts';
import { AppRuntime } from './apps/runtime.ts';
import { Lifecycle, HOST_VERSION } from './apps/lifecycle.ts';
import { appRoutes } from './apps/app-routes.ts';
import { firstPartySources, packageSources, type AppSource } from './apps/app-source.ts';
import { buildOpenApiDocument } from './openapi/build-document.ts';

export interface HostOptions {
  config?: Partial<HostConfig>;
  /** SQLite file; defaults to `<dataDir>/diwan.db`. `:memory:` for throwaway hosts. */
  dbFile?: string;
  clock?: Clock;
  logger?: boolean;
  /** Apps available on the host; defaults to the first-party apps plus uploaded packages. */
  sources?: AppSource[];
  /** Apps a new company gets unless it asks otherwise; defaults to every first-party app. */
  defaultApps?: string[];
}

export interface Host {
  app: FastifyInstance;
  config: HostConfig;
  clock: Clock;
  storage: Storage;
  tr: Translator;
  companies: Companies;
  keys: ApiKeys;
  permissions: PermissionRegistry;
  audit: AuditLog;
  outbox: Outbox;
  runtime: AppRuntime;
  lifecycle: Lifecycle;
  events: EventService;
  /** Endpoints, delivery log, dispatcher; the delivery loop starts when the server listens (or on `webhooks.start()`). */
  webhooks: Webhooks;
  defaultApps: string[];
  /** Creates a company and installs `apps` (default: the standard set; `[]` for none). */
  createCompany(input: { name: string; currency?: string; apps?: string[] }, actor?: Actor): { company: Company; installed: string[] };
  openapi(): unknown;
  close(): Promise<void>;
}

const CLI_ACTOR: Actor = { type: 'cli', id: 'operator' };

export async function buildHost(opts: HostOptions = {}): Promise<Host> {
  const base = loadConfig();
  const config: HostConfig = { ...base, ...opts.config, webhooks: { ...base.webhooks, ...opts.config?.webhooks } };
  const clock = opts.clock ?? systemClock;
  const now = () => clock.now();
  const storage = openStorage(opts.dbFile ?? path.join(config.dataDir, 'diwan.db'));
  const tr = createTranslator();
  const companies = new Companies(storage.orm, now);
  const keys = new ApiKeys(storage.orm, now);
  const permissions = new PermissionRegistry();
  const outbox = new Outbox(storage.sqlite, now);
  const audit = new AuditLog(storage.sqlite, outbox, now);
  const services = { storage, audit, outbox, tr, permissions, companies, clock };
  const runtime = new AppRuntime(services);
  const lifecycle = new Lifecycle(runtime);
  const events = new EventService(runtime, outbox);
  const webhooks = createWebhooks({ sqlite: storage.sqlite, outbox, audit, clock, config: config.webhooks, known: () => events.known() });

  const sources = opts.sources ?? [...firstPartySources(), ...packageSources(config.dataDir)];
  const { refused } = await runtime.loadAll(sources);
  const app = Fastify({ logger: opts.logger ?? false, bodyLimit: config.bodyLimit, return503OnClosing: true, frameworkErrors: frameworkErrorHandler(tr, config.bodyLimit) });
  for (const r of refused) app.log.error({ appId: r.appId, err: r.error }, 'app refused at boot');
  const firstParty = sources.filter((s) => s.origin === 'first-party').map((s) => s.manifest.id);
  const defaultApps = (opts.defaultApps ?? firstParty).filter((id) => runtime.get(id));

  // Host routes, remembered so an unknown method on a known path answers 405.
  const coreRouter = FindMyWay();
  app.addHook('onRoute', (r) => {
    if (r.url.includes('*')) return;
    for (const m of [r.method].flat()) if (m !== 'HEAD') coreRouter.on(m as 'GET', r.url, () => {});
  });
  const coreAllowed = (p: string) => ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].filter((m) => coreRouter.find(m as 'GET', p));
  const dispatchDeps = { runtime, coreAllowed };

  app.removeContentTypeParser('text/plain');
  app.setValidatorCompiler(({ schema, httpPart }) => compileFor(httpPart === 'body' ? 'body' : httpPart === 'params' ? 'params' : 'query', schema));
  installErrorHandlers(app, tr, config.bodyLimit, (req) => notFoundOrMethod(req.url.split('?')[0], req.method, dispatchDeps));

  const dataVersion = dataVersionReader(storage.sqlite);
  let seenVersion = dataVersion();
  installAuth(app, {
    keys,
    permissions,
    clock,
    rateLimitPerMinute: config.rateLimitPerMinute,
    beforeEach() {
      const v = dataVersion();
      if (v !== seenVersion) {
        seenVersion = v;
        keys.invalidate();
        companies.invalidate();
        runtime.invalidate();
        webhooks.dispatcher.invalidate();
      }
    },
  });

  const routes = coreRoutes(app);
  let openapiCache: { version: number; doc: unknown } | undefined;
  const openapi = () => {
    if (openapiCache?.version !== runtime.version) {
      openapiCache = {
        version: runtime.version,
        doc: buildOpenApiDocument({
          title: 'Diwan API',
          version: HOST_VERSION,
          description: 'One REST API for every app of a multi-tenant business platform. Every route needs `Authorization: Bearer <key>` and `X-Company-Id`; failures answer `{ error: { code, message, details } }`.',
          serverUrl: '/',
          routes: [...routes.docs, ...runtime.router.list().map((r) => r.doc)],
          errorCodes: Object.entries(errorCodes).map(([code, e]) => ({ code, status: e.status, description: e.description })),
          tags: [{ name: 'core', description: 'The host: company, keys, apps, audit log, events, webhooks' }, ...runtime.list().map((a) => ({ name: a.manifest.id, description: a.manifest.description.en }))],
        }),
      };
    }
    return openapiCache.doc;
  };

  systemRoutes(routes, { companies, permissions, openapi });
  auditRoutes(routes, audit);
  apiKeyRoutes(routes, { keys, audit, sqlite: storage.sqlite });
  appRoutes(routes, { runtime, lifecycle });
  eventRoutes(routes, events);
  webhookRoutes(routes, { webhooks, events });
  app.addHook('onListen', async () => webhooks.start());
  webRoutes(app, runtime);
  app.route({ method: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'], url: '/api/v1/*', handler: makeAppDispatch(dispatchDeps) });

  const createCompany: Host['createCompany'] = (input, actor = CLI_ACTOR) => {
    const apps = input.apps ?? defaultApps;
    return storage.sqlite.transaction(() => {
      const company = companies.create(input);
      audit.record({ companyId: company.id, actor, appId: 'core', action: 'create', resource: 'companies', resourceId: company.id, after: company });
      const installed: string[] = [];
      for (const id of apps) {
        if (runtime.install(company.id, id)) continue;
        installed.push(...lifecycle.install(company.id, id, actor).installed);
      }
      return { company, installed };
    }).immediate();
  };

  await app.ready();
  return {
    app, config, clock, storage, tr, companies, keys, permissions, audit, outbox, runtime, lifecycle, events, webhooks, defaultApps, createCompany, openapi,
    async close() {
      await app.close();
      await webhooks.stop();
      storage.close();
    },
  };
}
