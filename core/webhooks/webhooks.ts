// Endpoints, the delivery log, the dispatcher, the endpoints' health and the retention loop,
// wired to one another.
import type { Storage } from '../storage/open.ts';
import type { UnitOfWork } from '../audit/unit-of-work.ts';
import type { Outbox } from '../events/outbox.ts';
import type { HostConfig } from '../kernel/config.ts';
import type { Clock } from '../kernel/clock.ts';
import type { KnownTopics } from '../events/patterns.ts';
import { Endpoints, type SecretSealer } from './endpoints.ts';
import { Deliveries } from './deliveries.ts';
import { Dispatcher } from './dispatcher.ts';
import { EndpointHealth } from './health.ts';
import { Retention } from './retention.ts';

export interface Webhooks {
  endpoints: Endpoints;
  deliveries: Deliveries;
  dispatcher: Dispatcher;
  health: EndpointHealth;
  retention: Retention;
  /** Starts the delivery and retention loops (the server does this when it listens). */
  start(): void;
  stop(waitMs?: number): Promise<void>;
  /** Fan out and attempt what is due now, once; for tests and tools. */
  tick(): Promise<{ events: number; attempts: number }>;
  runDue(maxRounds?: number): Promise<number>;
}

export interface WebhooksDeps {
  storage: Storage;
  uow: UnitOfWork;
  outbox: Outbox;
  sealer: SecretSealer;
  clock: Clock;
  config: HostConfig['webhooks'];
  known: () => KnownTopics | Promise<KnownTopics>;
  /** DIWAN_WEBHOOK_DISABLE_AFTER: failing this long without a success disables an endpoint; 0 never. */
  disableAfterSeconds?: number;
  /** DIWAN_EVENT_RETENTION_DAYS: events, deliveries and attempts older than this are pruned; 0 never. */
  retentionDays?: number;
  /** Retention loop tuning (tests). */
  retention?: { batch?: number; pauseMs?: number; intervalMs?: number; firstDelayMs?: number };
}

export function createWebhooks(deps: WebhooksDeps): Webhooks {
  const { storage, uow, clock, config } = deps;
  const endpoints = new Endpoints({ repo: storage.endpoints, changes: storage.changes, uow, sealer: deps.sealer, clock, config, known: deps.known });
  const deliveries = new Deliveries(storage.db, storage.deliveries, uow, clock);
  const health = new EndpointHealth({ repo: storage.endpoints, endpoints, uow, disableAfterMs: (deps.disableAfterSeconds ?? 5 * 86_400) * 1000 });
  const dispatcher = new Dispatcher({
    db: storage.db, outbox: deps.outbox, endpoints: storage.endpoints, deliveries, changes: storage.changes, sealer: deps.sealer, clock, config, health,
  });
  const retention = new Retention({
    db: storage.db, outbox: storage.outbox, deliveries: storage.deliveries, endpoints: storage.endpoints, clock, retentionDays: deps.retentionDays ?? 30, ...deps.retention,
  });
  return {
    endpoints,
    deliveries,
    dispatcher,
    health,
    retention,
    start: () => {
      dispatcher.start();
      retention.start();
    },
    stop: async (waitMs) => {
      await retention.stop();
      await dispatcher.stop(waitMs);
    },
    tick: () => dispatcher.tick(),
    runDue: (n) => dispatcher.runDue(n),
  };
}
