// Opens the host's database: the embedded SQLite file by default, PostgreSQL when a
// `postgres://` URL is given. Migrated on open. Only this folder knows which driver runs
// underneath.
import type { Db } from './db.ts';
import { SqliteDb } from './sqlite.ts';
import type { PostgresDb } from './postgres.ts';
import { isCurrent, migrate, schemaGap } from './migrate.ts';
import { ChangeFeed, type ExternalSignal } from './changes.ts';
import { CompaniesRepo } from './repos/companies.ts';
import { ApiKeysRepo } from './repos/api-keys.ts';
import { AuditRepo } from './repos/audit-log.ts';
import { OutboxRepo } from './repos/outbox.ts';
import { InstallsRepo } from './repos/installs.ts';
import { AppPackagesRepo } from './repos/app-packages.ts';
import { IdempotencyRepo } from './repos/idempotency.ts';
import { CacheVersionsRepo } from './repos/cache-versions.ts';
import { WebhookEndpointsRepo } from './repos/webhook-endpoints.ts';
import { WebhookDeliveriesRepo } from './repos/webhook-deliveries.ts';
import { DocumentTable, type FilterField } from './repos/documents.ts';
import { PeopleRepo, ThrottlesRepo } from './repos/people.ts';
import { RateWindowsRepo } from './repos/rate-windows.ts';
import { AppJobsRepo } from './repos/app-jobs.ts';
import { SequencesRepo } from './repos/sequences.ts';
import { LocksRepo } from './repos/locks.ts';
import { AppSecretsRepo } from './repos/app-secrets.ts';

export interface Storage {
  db: Db;
  companies: CompaniesRepo;
  apiKeys: ApiKeysRepo;
  audit: AuditRepo;
  outbox: OutboxRepo;
  installs: InstallsRepo;
  packages: AppPackagesRepo;
  idempotency: IdempotencyRepo;
  endpoints: WebhookEndpointsRepo;
  deliveries: WebhookDeliveriesRepo;
  people: PeopleRepo;
  throttles: ThrottlesRepo;
  rateWindows: RateWindowsRepo;
  /** Apps' durable jobs. */
  jobs: AppJobsRepo;
  /** Gap-free counters per company and key, advanced in the writing transaction. */
  sequences: SequencesRepo;
  /** Named locks held to the end of the writing transaction. */
  locks: LocksRepo;
  /** Apps' sealed secrets per company (values arrive and leave sealed). */
  appSecrets: AppSecretsRepo;
  /**
   * Whether several servers are expected to run on this database at once (PostgreSQL): counters
   * a process keeps in memory (the rate limit) would then count only its own share. An SQLite
   * file is normally one server's (the CLI beside it serves no requests).
   */
  sharedByServers: boolean;
  changes: ChangeFeed;
  /** The table of one document type (created by `ensure()`). */
  documents(table: string, filters: FilterField[], dates?: string[]): DocumentTable;
  /** Whether the database answers a query (readiness); throws what the driver throws when it cannot. */
  ping(): Promise<boolean>;
  /** Whether the core schema has every table, column, index and data step this code expects (readiness). */
  schemaCurrent(): Promise<boolean>;
  close(): Promise<void>;
}

export interface StorageOptions {
  /** SQLite file, or `:memory:`; used when no `url` is given. */
  file: string;
  /** `postgres://…` (or `postgresql://…`): PostgreSQL instead of the SQLite file. */
  url?: string;
}

/** The URL without its password, for messages. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'postgres://…';
  }
}

/** A database URL this host can open. */
export function isDatabaseUrl(url: string): boolean {
  return /^postgres(ql)?:\/\/./.test(url);
}

/** The database could not be opened: the message names where, never the password. */
export class DatabaseUnavailable extends Error {
  constructor(url: string, cause: unknown) {
    const e = cause as { code?: string; message?: string };
    super(`the database at ${redactUrl(url)} cannot be used: ${e?.message || e?.code || String(cause)}`, { cause });
    this.name = 'DatabaseUnavailable';
  }
}

/** The database alone: no migration, no change feed (what `diwan migrate` needs). `max`: PostgreSQL's pool size. */
export async function connectDb(opts: StorageOptions & { max?: number }): Promise<Db> {
  if (opts.url === undefined) return new SqliteDb(opts.file);
  if (!isDatabaseUrl(opts.url)) throw new Error(`unsupported database URL ${JSON.stringify(redactUrl(opts.url))}: expected postgres://…`);
  // Loaded only when asked for: a SQLite host (and every CLI read) never loads the pg driver.
  const { PostgresDb } = await import('./postgres.ts');
  return new PostgresDb({ url: opts.url, max: opts.max });
}

async function openDb(opts: StorageOptions): Promise<{ db: Db; signal: ExternalSignal }> {
  if (opts.url === undefined) {
    const sqlite = (await connectDb(opts)) as SqliteDb;
    return { db: sqlite, signal: { changed: () => sqlite.externalChange() } };
  }
  const pg = (await connectDb(opts)) as PostgresDb;
  try {
    const listener = await pg.listen();
    return { db: pg, signal: { changed: () => listener.changed(), subscribe: (fn) => listener.subscribe(fn) } };
  } catch (err) {
    await pg.close().catch(() => {});
    throw new DatabaseUnavailable(opts.url, err);
  }
}

export async function openStorage(opts: StorageOptions): Promise<Storage> {
  const { db, signal } = await openDb(opts);
  try {
    await migrate(db);
  } catch (err) {
    await db.close().catch(() => {});
    throw err;
  }
  const changes = new ChangeFeed(db, new CacheVersionsRepo(db), signal);
  await changes.poll();
  return {
    db,
    companies: new CompaniesRepo(db),
    apiKeys: new ApiKeysRepo(db),
    audit: new AuditRepo(db),
    outbox: new OutboxRepo(db),
    installs: new InstallsRepo(db),
    packages: new AppPackagesRepo(db),
    idempotency: new IdempotencyRepo(db),
    endpoints: new WebhookEndpointsRepo(db),
    deliveries: new WebhookDeliveriesRepo(db),
    people: new PeopleRepo(db),
    throttles: new ThrottlesRepo(db),
    rateWindows: new RateWindowsRepo(db),
    jobs: new AppJobsRepo(db),
    sequences: new SequencesRepo(db),
    locks: new LocksRepo(db),
    appSecrets: new AppSecretsRepo(db),
    sharedByServers: db.dialect.name === 'postgres',
    changes,
    documents: (table, filters, dates) => new DocumentTable(db, table, filters, dates),
    ping: async () => (await db.get('SELECT 1 AS ok')) !== undefined,
    schemaCurrent: async () => isCurrent(await schemaGap(db)),
    async close() {
      changes.stop();
      await db.close();
    },
  };
}
