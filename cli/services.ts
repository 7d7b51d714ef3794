// What most CLI commands need, and no more: the database and the small domain services built on
// it (companies, API keys, the audit log, the unit of work, webhook endpoints and deliveries).
// Reading a list or revoking a key needs no app manifests, no app runtime and no HTTP server,
// so this module must stay light: nothing here may import core/host.ts, fastify or the apps
// folder. Commands that need apps ask for the whole host instead (CommandContext.host()).
//
// The host satisfies this interface too: a command written against `Services` runs the same
// on either (the in-process tests hand it a host).
import path from 'node:path';
import { loadConfig, type HostConfig } from '../core/kernel/config.ts';
import { systemClock, type Clock } from '../core/kernel/clock.ts';
import { openStorage, type Storage } from '../core/storage/open.ts';
import { Outbox } from '../core/events/outbox.ts';
import { AuditLog } from '../core/audit/audit-log.ts';
import { UnitOfWork } from '../core/audit/unit-of-work.ts';
import { Companies } from '../core/tenancy/companies.ts';
import { ApiKeys } from '../core/identity/api-keys.ts';
import type { Endpoints, SecretSealer } from '../core/webhooks/endpoints.ts';
import type { Deliveries } from '../core/webhooks/deliveries.ts';

export interface Services {
  config: HostConfig;
  clock: Clock;
  storage: Storage;
  companies: Companies;
  keys: ApiKeys;
  audit: AuditLog;
  uow: UnitOfWork;
  /**
   * Endpoints here may be read, listed and removed. Creating one (its topics are checked against
   * the apps' catalogue) and rotating its secret (the host seals it) go through the host.
   */
  webhooks: { endpoints: Endpoints; deliveries: Deliveries };
}

/** What a command may ask for beyond the database and the core services. */
export interface ServiceNeeds {
  /** The webhooks domain (loaded only when asked: the address guard and topic patterns come with it). */
  webhooks?: boolean;
}

export interface LightServices extends Services {
  /** Loads what `needs` names and is not loaded yet. */
  load(needs: ServiceNeeds): Promise<void>;
  close(): Promise<void>;
}

/** Signing secrets are sealed by the host alone; the light services never write one. */
const noSealer: SecretSealer = {
  seal: () => {
    throw new Error('signing secrets are written through the host (diwan webhooks add|rotate build it)');
  },
  open: () => {
    throw new Error('signing secrets are read through the host');
  },
};

/** Opens the data folder's database with the domain services that need no app; `needs` loads more. */
export async function openServices(dataDir: string, needs: ServiceNeeds = {}): Promise<LightServices> {
  const config = { ...loadConfig(), dataDir };
  const clock = systemClock;
  // DIWAN_DATABASE_URL, as the host reads it: the CLI works on the database the servers use.
  const storage = await openStorage({ file: path.join(dataDir, 'diwan.db'), url: config.databaseUrl });
  const outbox = new Outbox(storage.db, storage.outbox, clock);
  const audit = new AuditLog(storage.audit, outbox, clock);
  // No app is loaded here, so no app owns a family: the writes made here (keys, endpoint
  // removal, delivery retries) record audit rows, whose events the audit log writes itself.
  const uow = new UnitOfWork(storage.db, audit, outbox, () => undefined);
  const companies = new Companies(storage.companies, storage.changes, clock);
  const keys = new ApiKeys(storage.apiKeys, storage.changes, uow, clock);
  let webhooks: Services['webhooks'] | undefined;
  const services: LightServices = {
    config, clock, storage, companies, keys, audit, uow,
    get webhooks() {
      if (!webhooks) throw new Error('the webhooks services were not loaded: ask for services({ webhooks: true })');
      return webhooks;
    },
    async load(n) {
      if (n.webhooks && !webhooks) {
        const [{ Endpoints }, { Deliveries }] = await Promise.all([import('../core/webhooks/endpoints.ts'), import('../core/webhooks/deliveries.ts')]);
        const endpoints = new Endpoints({
          repo: storage.endpoints, changes: storage.changes, uow, sealer: noSealer, clock, config: config.webhooks,
          known: () => {
            throw new Error('topic patterns are checked through the host');
          },
        });
        webhooks = { endpoints, deliveries: new Deliveries(storage.db, storage.deliveries, uow, clock) };
      }
    },
    close: () => storage.close(),
  };
  await services.load(needs);
  return services;
}
