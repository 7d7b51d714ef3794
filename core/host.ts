// buildHost: the composition root. Storage, the domains, the app runtime and the HTTP surface
// are wired here, each given what it needs; nothing reaches for a global.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import type { HostConfig } from './kernel/config.ts';
import { createTranslator, pickLanguage } from './kernel/i18n/i18n.ts';
import { DiwanError } from './kernel/errors/diwan-error.ts';
import { EventStreams } from './events/event-stream.ts';
import { Scheduler } from './apps/scheduler.ts';
import { JobRunner, jobsConfig, type JobsConfig } from './apps/jobs.ts';
import { Pipeline, requestPath } from './http/pipeline.ts';
import { mountAppRoutes } from './http/app-routes.ts';
import { makeAuthenticate, makeStillValid } from './http/auth.ts';
import { createAuthThrottle } from './http/auth-throttle.ts';
import { memoryRateLimiter, sharedRateLimiter } from './http/rate-limit.ts';
import { installJsonBodyParser } from './http/json-body.ts';
import { installHostHeaderCheck } from './http/client-errors.ts';
import { serverOptions } from './http/server-options.ts';
import { installErrorHandlers, frameworkErrorHandler } from './http/error-handlers.ts';
import { systemRoutes } from './http/routes/system.ts';
import { auditRoutes } from './http/routes/audit.ts';
import { apiKeyRoutes } from './http/routes/api-keys.ts';
import { appRoutes } from './http/routes/apps.ts';
import { appSettingsRoutes } from './http/routes/app-settings.ts';
import { companyRoutes } from './http/routes/company.ts';
import { eventRoutes } from './http/routes/events.ts';
import { eventLogRoutes } from './http/routes/event-log.ts';
import { webhookRoutes } from './http/routes/webhooks.ts';
import { jobRoutes } from './http/routes/jobs.ts';
import { peopleRoutes } from './http/routes/people.ts';
import { webRoutes } from './http/web-routes.ts';
import { opsRoutes } from './http/ops-routes.ts';
import { consoleRoutes } from './http/console-routes.ts';
import { openApiCache } from './openapi/document-cache.ts';
import { resolveConfig, buildServices, type AllServices, type ServiceOptions } from './services.ts';

export interface HostOptions extends Omit<ServiceOptions, 'logger' | 'tr'> {
  logger?: boolean;
  /** The event stream's pace (tests): how often other processes' events are looked for, and the heartbeat that rechecks the key. */
  eventStream?: { pollMs?: number; heartbeatMs?: number };
  /** The apps' jobs: ladder, jitter, time-out, lease, concurrency, poll (core/apps/jobs.ts's defaults otherwise); `random` for the jitter (tests). */
  jobs?: Partial<JobsConfig> & { random?: () => number };
}

/** Every service, and the HTTP surface serving them. */
export interface Host extends AllServices {
  app: FastifyInstance;
  /** Live readers of the company's events (the event stream). */
  streams: EventStreams;
  scheduler: Scheduler;
  /** Runs the apps' durable jobs (a worker's; tests drive it with `runDue()`). */
  jobRunner: JobRunner;
  pipeline: Pipeline;
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
  // A throwaway host without a data folder of its own gets a temporary one, removed on close.
  const ownTempDir = opts.dbFile === ':memory:' && !opts.config?.dataDir;
  const config: HostConfig = resolveConfig({ config: { ...(ownTempDir ? { dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'diwan-host-')) } : {}), ...opts.config } });
  const tr = createTranslator();
  // Fastify's logger is the host's: made first, so that what goes wrong while the apps load is told to it.
  const app = Fastify({
    logger: opts.logger ?? false, bodyLimit: config.bodyLimit, return503OnClosing: true, frameworkErrors: frameworkErrorHandler(tr, config.bodyLimit),
    ...serverOptions(tr, config),
  });
  const s = await buildServices({ ...opts, config, tr, logger: app.log }, { webhooks: true });
  const { storage, clock, companies, keys, sessions, permissions, audit, runtime, lifecycle, catalogue, webhooks, eventLog } = s;
  const streams = new EventStreams(s.outbox, eventLog, { pollMs: opts.eventStream?.pollMs });
  const scheduler = new Scheduler(runtime, companies, clock, undefined, (err, where) => app.log.error({ err, ...where }, 'scheduled firing failed'));
  const { random: jobRandom, ...jobSettings } = opts.jobs ?? {};
  const jobRunner = new JobRunner({
    db: storage.db, repo: storage.jobs, jobs: runtime.jobs, clock, config: jobsConfig(jobSettings), random: jobRandom,
    host: runtime.jobHost(),
    onError: (err, job) => app.log.warn({ err, job }, 'job attempt failed'),
  });

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
  mountAppRoutes(runtime, pipeline);
  const explicitUrl = !!(opts.config?.publicUrl || process.env.DIWAN_PUBLIC_URL?.trim());
  const openapiDocument = openApiCache({ runtime, catalogue, routes: () => pipeline.routes().map((r) => r.doc) });

  for (const r of [
    ...systemRoutes({ permissions, openapi: openapiDocument }),
    ...companyRoutes({ companies, tr }),
    ...auditRoutes(audit),
    ...apiKeyRoutes(keys),
    // Links name DIWAN_PUBLIC_URL, else the port the server bound (PORT=0 asks for any free one).
    ...peopleRoutes({ people: s.people, sessions, publicUrl: () => (explicitUrl || !app.server.listening ? config.publicUrl : `http://localhost:${(app.server.address() as AddressInfo).port}`) }),
    ...appRoutes({ runtime, lifecycle, permissions, tr }),
    ...appSettingsRoutes(runtime),
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
    ...jobRoutes(runtime.jobs),
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
  opsRoutes(app, { storage, clock, dispatcher: webhooks.dispatcher, scheduler, jobs: jobRunner, draining: () => draining, roles });
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
      jobRunner.start();
    }
  };
  app.addHook('onListen', async () => start());
  // Open event streams end first, or closing the server would wait for them.
  app.addHook('preClose', async () => streams.closeAll());

  await app.ready();
  const host: Host = Object.assign(s, {
    app, streams, scheduler, jobRunner, pipeline, start, draining,
    openapi: async () => (await openapiDocument()).json,
    async close() {
      draining = true;
      await app.close();
      await scheduler.stop();
      await jobRunner.stop();
      await webhooks.stop();
      await storage.close();
      if (ownTempDir) fs.rmSync(config.dataDir, { recursive: true, force: true });
    },
  });
  Object.defineProperty(host, 'draining', { get: () => draining });
  return host;
}
