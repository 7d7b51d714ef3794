// What a load balancer and a monitoring system ask, outside the key check and fast:
// `/healthz` (the process is up), `/readyz` (the database answers, its schema is current, the
// process is not draining), `/metrics` (Prometheus text, docs/operations.md lists each metric).
import client from 'prom-client';
import type { FastifyInstance } from 'fastify';
import type { Storage } from '../storage/open.ts';
import type { Clock } from '../kernel/clock.ts';
import type { Dispatcher } from '../webhooks/dispatcher.ts';
import type { Scheduler } from '../apps/scheduler.ts';
import type { JobRunner } from '../apps/jobs.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The pipeline's route (its operationId), for the request metrics. */
    operationId?: string;
  }
}

export interface OpsDeps {
  storage: Storage;
  clock: Clock;
  dispatcher: Dispatcher;
  scheduler: Scheduler;
  /** The apps' jobs this process runs (absent: none). */
  jobs?: JobRunner;
  /** True once a shutdown began: new work goes elsewhere. */
  draining(): boolean;
  /** The roles this process runs. */
  roles: { api: boolean; worker: boolean };
}

const seconds = (iso: string | null, now: number) => (iso ? Math.max(0, (now - Date.parse(iso)) / 1000) : 0);

export function opsRoutes(app: FastifyInstance, deps: OpsDeps): void {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry, prefix: 'diwan_' });
  const requests = new client.Histogram({
    name: 'diwan_http_request_duration_seconds',
    help: 'HTTP requests by route (the operation id, or the path pattern), method and status, with their duration',
    labelNames: ['route', 'method', 'status'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [registry],
  });
  new client.Gauge({
    name: 'diwan_outbox_lag_seconds',
    help: 'Age of the oldest event written but not yet fanned out to webhook endpoints (0 when none waits)',
    registers: [registry],
    async collect() {
      this.set(seconds(await deps.storage.outbox.oldestPending(), deps.clock.now()));
    },
  });
  new client.Gauge({
    name: 'diwan_webhook_deliveries',
    help: 'Webhook deliveries by state (pending, in_flight, delivered, dead), across the database',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      const counts = await deps.storage.deliveries.countByState();
      for (const state of ['pending', 'in_flight', 'delivered', 'dead']) this.set({ state }, counts[state] ?? 0);
    },
  });
  new client.Counter({
    name: 'diwan_webhook_attempts_total',
    help: 'Delivery attempts made by this process, by result (delivered, or the failure: timeout, http_status, connection_refused, …)',
    labelNames: ['result'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [result, n] of deps.dispatcher.attemptsByResult) this.inc({ result }, n);
    },
  });
  new client.Counter({
    name: 'diwan_job_attempts_total',
    help: "Attempts of apps' jobs made by this process, by how they ended (done, error, timeout, fenced)",
    labelNames: ['outcome'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [outcome, n] of deps.jobs?.outcomes ?? []) this.inc({ outcome }, n);
    },
  });
  new client.Gauge({
    name: 'diwan_signing_queue_depth',
    help: 'Deliveries waiting for a signature on the worker pool in this process',
    registers: [registry],
    collect() {
      this.set(deps.dispatcher.signingQueueDepth);
    },
  });
  new client.Gauge({
    name: 'diwan_scheduler_lag_seconds',
    help: "Seconds since this process's scheduler last looked for due schedules (0 where the process runs no scheduler)",
    registers: [registry],
    collect() {
      const last = deps.scheduler.lastTickAt;
      this.set(deps.roles.worker && last !== null ? (deps.clock.now() - last) / 1000 : 0);
    },
  });

  new client.Counter({
    name: 'diwan_scheduler_failures_total',
    help: "Scheduled firings this process's scheduler could not make (each is tried again at the next tick)",
    registers: [registry],
    collect() {
      this.reset();
      this.inc(deps.scheduler.failuresTotal);
    },
  });

  app.addHook('onResponse', (request, reply, done) => {
    const route = request.operationId ?? request.routeOptions.url ?? 'unmatched';
    requests.observe({ route, method: request.method, status: String(reply.statusCode) }, reply.elapsedTime / 1000);
    done();
  });

  const plain = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' };
  app.get('/healthz', async (_req, reply) => reply.headers(plain).send({ status: 'ok' }));
  app.get('/readyz', async (_req, reply) => {
    const checks: Record<string, string> = {};
    try {
      checks.database = (await deps.storage.ping()) ? 'ok' : 'no answer';
      checks.migrations = (await deps.storage.schemaCurrent()) ? 'ok' : 'behind';
    } catch (err) {
      checks.database = `unreachable: ${(err as Error).message}`;
    }
    checks.draining = deps.draining() ? 'yes' : 'no';
    const ready = checks.database === 'ok' && checks.migrations === 'ok' && checks.draining === 'no';
    return reply.code(ready ? 200 : 503).headers(plain).send({ status: ready ? 'ready' : 'not ready', checks });
  });
  app.get('/metrics', async (_req, reply) => reply.header('content-type', registry.contentType).header('cache-control', 'no-store').send(await registry.metrics()));
}
