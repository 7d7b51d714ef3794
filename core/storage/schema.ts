// The core tables, declared once. The migrator (migrate.ts) makes a database match this: it
// creates what is missing, table, column or index, in the database's own dialect, and a test
// checks that a migrated database holds exactly these columns. Every row that belongs to a company
// carries `company_id` (a test holds the list of the host-wide tables that do not). Timestamps are ISO 8601 text
// (they sort as text), times the scheduler compares are Unix milliseconds; JSON is stored as
// text. Document types get their own tables from the app runtime (repos/documents.ts).

export type ColumnType = 'text' | 'int' | 'bigint' | 'blob' | 'serial';

export interface ColumnDef {
  type: ColumnType;
  notNull?: boolean;
  primaryKey?: boolean;
  unique?: boolean;
  default?: string | number;
  references?: { table: string; column: string };
}

export interface IndexDef {
  /** Column names, or SQL expressions. */
  columns: string[];
  unique?: boolean;
  where?: string;
}

export interface TableDef {
  name: string;
  columns: Record<string, ColumnDef>;
  primaryKey?: string[];
  unique?: string[][];
  indexes?: Record<string, IndexDef>;
  /**
   * Counters that may be lost in a crash (PostgreSQL: an UNLOGGED table, emptied after a crash and
   * not replicated; its writes skip the write-ahead log, so a commit does not wait for a flush).
   * Declared at creation only: the migrator does not change an existing table.
   */
  unlogged?: boolean;
}

const text: ColumnDef = { type: 'text', notNull: true };
const textNull: ColumnDef = { type: 'text' };
const int: ColumnDef = { type: 'int', notNull: true };
const intNull: ColumnDef = { type: 'int' };
const bigintNull: ColumnDef = { type: 'bigint' };
const seq: ColumnDef = { type: 'serial' };
const id: ColumnDef = { type: 'text', primaryKey: true };
const companyRef: ColumnDef = { type: 'text', notNull: true, references: { table: 'companies', column: 'id' } };

export const tables: TableDef[] = [
  {
    name: 'companies',
    // `profile`: the seller's details a tax invoice names (JSON; core/tenancy/company-profile.ts).
    columns: { id, name: text, currency: text, created_at: text, profile: textNull },
  },
  {
    name: 'api_keys',
    columns: {
      id, company_id: companyRef, name: text, role: text, scopes: text, secret_hash: text, created_at: text,
      expires_at: textNull, revoked_at: textNull, last_used_at: textNull, created_by: textNull,
    },
    indexes: { api_keys_company: { columns: ['company_id'] } },
  },
  {
    name: 'audit_log',
    columns: {
      seq, id: { ...text, unique: true }, company_id: text, actor_type: text, actor_id: text, app_id: text, action: text,
      resource: text, resource_id: textNull, before_json: textNull, after_json: textNull, request_id: textNull, at: text,
    },
    indexes: { audit_log_company: { columns: ['company_id', 'seq'] } },
  },
  {
    name: 'idempotency_keys',
    columns: { company_id: text, key_id: text, idem_key: text, request_hash: text, status: int, body: text, created_at: text },
    primaryKey: ['company_id', 'key_id', 'idem_key'],
  },
  {
    name: 'company_apps',
    columns: { company_id: companyRef, app_id: text, version: text, state: text, manifest: text, installed_at: text, updated_at: text },
    primaryKey: ['company_id', 'app_id'],
  },
  {
    // What a company set of an app's declared settings (the manifest's defaults fill the rest).
    name: 'app_settings',
    columns: { company_id: companyRef, app_id: text, data: text, updated_at: text },
    primaryKey: ['company_id', 'app_id'],
  },
  {
    // Apps' secrets (core/apps/secrets.ts): each value sealed with the host's secret box (as the
    // webhook secrets are), bound to its company, app and name; never in clear, never answered.
    name: 'app_secrets',
    columns: { company_id: companyRef, app_id: text, name: text, value: text, updated_at: text },
    primaryKey: ['company_id', 'app_id', 'name'],
  },
  {
    name: 'app_migrations',
    columns: { company_id: text, app_id: text, migration_id: text, applied_at: text },
    primaryKey: ['company_id', 'app_id', 'migration_id'],
  },
  {
    // Packages the operator added to the host: every process loads them from here.
    name: 'app_packages',
    columns: { app_id: id, version: text, hash: text, manifest: text, bytes: { type: 'blob', notNull: true }, created_at: text },
  },
  {
    name: 'outbox',
    columns: {
      seq, id: { ...text, unique: true }, company_id: text, topic: text, data: text, test: { ...int, default: 0 },
      created_at: text, dispatched_at: textNull,
      // The webhook endpoint an operational event (`webhook.*`) is about: never delivered to it.
      subject_id: textNull,
    },
    indexes: {
      outbox_pending: { columns: ['seq'], where: 'dispatched_at IS NULL' },
      // A company's events in order: the events API, its cursors and the stream.
      outbox_company: { columns: ['company_id', 'seq'] },
    },
  },
  {
    name: 'webhook_endpoints',
    columns: {
      seq, id: { ...text, unique: true }, company_id: companyRef, url: text, topics: text, description: textNull,
      enabled: { ...int, default: 1 }, secret: text, previous_secret: textNull, previous_secret_until: bigintNull,
      secret_rotated_at: textNull, created_at: text, updated_at: text,
      // Why and when it was disabled (`failing`: by the host; `manual`: by a caller), null while enabled.
      disabled_reason: textNull, disabled_at: textNull, disabled_detail: textNull,
      // Unix ms of the first failed attempt since the last success; null while healthy.
      failing_since: bigintNull,
      // The throttle's bucket, shared by every worker: thousandths of a token, and when (unix ms) last filled.
      throttle_milli: bigintNull, throttle_at: bigintNull,
      // Per-endpoint limits; null: the host default (DIWAN_WEBHOOK_MAX_IN_FLIGHT), no throttle.
      max_in_flight: intNull, rate_per_second: intNull,
      // Headers sent with every delivery (a JSON object of name → value), or null.
      headers: textNull,
      // Asymmetric signing (Standard Webhooks v1a): the ed25519 signing key `whsk_…` sealed like the
      // secrets, and its public key `whpk_…` shown on the endpoint; null when the endpoint does not sign so.
      signing_key: textNull, public_key: textNull,
    },
    indexes: { webhook_endpoints_company: { columns: ['company_id', 'seq'] } },
  },
  {
    name: 'webhook_deliveries',
    columns: {
      seq, id: { ...text, unique: true }, company_id: text, endpoint_id: text, event_id: text, topic: text, state: text,
      attempts: { ...int, default: 0 }, next_attempt_at: bigintNull, last_status: intNull, last_failure: textNull,
      created_at: text, updated_at: text, delivered_at: textNull,
      // While in flight: until when (unix ms) the worker that took it holds it, and the token of
      // that take (fencing: a worker whose lease ran out and was taken again records nothing).
      lease_until: bigintNull, lease_token: textNull,
      // Attempts a Retry-After (429, 503) deferred: they do not walk the ladder (step = attempts − deferrals).
      deferrals: { ...int, default: 0 },
      // The attempt that delivered it (a delivery has at most one: delivered is its last state),
      // kept in its row rather than in webhook_attempts: the one row written per delivery that
      // succeeds at once was ~half of the log's SQL per delivery (docs/benchmarks-history.md,
      // 2026-11-28). Its number, time and status are `attempts`, `delivered_at`, `last_status`.
      // A retry of a delivered delivery moves it to webhook_attempts first.
      delivered_duration_ms: intNull, delivered_detail: textNull, delivered_excerpt: textNull, delivered_bytes: intNull,
    },
    unique: [['endpoint_id', 'event_id']],
    indexes: {
      webhook_deliveries_endpoint: { columns: ['endpoint_id', 'seq'] },
      webhook_deliveries_pending: { columns: ['endpoint_id', 'seq'], where: "state = 'pending'" },
      webhook_deliveries_due_at: { columns: ['next_attempt_at', 'endpoint_id'], where: "state = 'pending'" },
      webhook_deliveries_leases: { columns: ['endpoint_id', 'lease_until'], where: "state = 'in_flight'" },
    },
  },
  {
    name: 'webhook_attempts',
    columns: {
      // The company's too, as every tenant row (a database filled before it had one: see migrate.ts's steps).
      seq, delivery_id: text, company_id: { ...text, default: '' }, attempt: int, at: text, duration_ms: int, status: intNull, failure: textNull, detail: textNull,
      response_excerpt: text, response_bytes: int,
    },
    indexes: { webhook_attempts_delivery: { columns: ['delivery_id', 'seq'] } },
  },
  {
    // People: one account each (email unique, case-folded), a scrypt password hash.
    name: 'users',
    columns: {
      id, email: { ...text, unique: true }, name: text, password_hash: textNull, created_at: text, password_changed_at: textNull, disabled_at: textNull,
    },
  },
  {
    // A person's role in a company; a person may belong to several.
    name: 'memberships',
    columns: { user_id: text, company_id: companyRef, role: text, created_at: text, invited_by: textNull },
    primaryKey: ['user_id', 'company_id'],
    indexes: { memberships_company: { columns: ['company_id', 'user_id'] } },
  },
  {
    // Server-side sessions: the cookie holds a random token; only its hash is stored.
    name: 'sessions',
    columns: {
      token_hash: id, user_id: text, created_at: text, expires_at: bigintNull, last_seen_at: text, revoked_at: textNull, user_agent: textNull,
    },
    indexes: { sessions_user: { columns: ['user_id'] } },
  },
  {
    // One-time links (sign-in links printed by the CLI, invitations): shown once, stored hashed, used once.
    name: 'one_time_tokens',
    columns: {
      token_hash: id, kind: text, user_id: textNull, company_id: textNull, email: textNull, role: textNull,
      created_by: textNull, created_at: text, expires_at: bigintNull, used_at: textNull,
    },
    indexes: { one_time_tokens_company: { columns: ['company_id', 'kind'] } },
  },
  {
    // Counters in fixed windows shared by every process: failed sign-ins per address and account.
    name: 'throttles',
    columns: { key: id, window_start: { type: 'bigint', notNull: true }, count: int },
  },
  {
    // Requests per principal in fixed, clock-aligned windows, counted by every API process alike
    // when several share the database (core/http/rate-limit.ts); windows that ended are pruned.
    // Unlogged: a write per request must not wait for a disk flush, and a crash only resets counts.
    name: 'rate_windows',
    unlogged: true,
    columns: { key: text, window_start: { type: 'bigint', notNull: true }, count: int },
    primaryKey: ['key', 'window_start'],
    indexes: { rate_windows_start: { columns: ['window_start'] } },
  },
  {
    // One row per cache scope, bumped in the writing transaction: every process watches it to
    // drop what it cached (a revoked key, a disabled app, a new endpoint, a new package).
    name: 'cache_versions',
    columns: { scope: id, version: int },
  },
  {
    // Gap-free counters (an invoice's number, a naming series): one row per company and key,
    // advanced in the writing transaction, so a rollback gives the number back and concurrent
    // writers take turns on the row (repos/sequences.ts).
    name: 'sequences',
    columns: { company_id: companyRef, key: text, value: { type: 'bigint', notNull: true } },
    primaryKey: ['company_id', 'key'],
  },
  {
    // A schedule fires once per document, schedule and date value: the claim is this row,
    // inserted in the transaction that emits the event.
    name: 'schedule_firings',
    columns: { doc_table: text, doc_id: text, schedule: text, occurrence: text, company_id: text, fired_at: text },
    primaryKey: ['doc_table', 'doc_id', 'schedule', 'occurrence'],
  },
  {
    // Apps' durable jobs (core/apps/jobs.ts): enqueued in a request's unit of work, run by the
    // workers under a lease (as webhook deliveries are), retried on the ladder, then `failed`.
    // States: `pending` (due at next_run_at), `running` (leased until lease_until), `done`, `failed`.
    name: 'app_jobs',
    columns: {
      seq, id: { ...text, unique: true }, company_id: text, app_id: text, name: text, payload: text,
      // The app's idempotency key: enqueueing the same key again answers the job already there.
      job_key: textNull,
      state: text, attempts: { ...int, default: 0 }, next_run_at: bigintNull,
      // While running: until when (unix ms) the worker that took it holds it, and the token of that take (fencing).
      lease_until: bigintNull, lease_token: textNull,
      last_error: textNull,
      // Who enqueued it, and in which language: the handler's context.
      actor_type: text, actor_id: text, lang: text, request_id: textNull,
      created_at: text, updated_at: text, finished_at: textNull,
    },
    unique: [['company_id', 'app_id', 'job_key']],
    indexes: {
      app_jobs_due: { columns: ['next_run_at', 'seq'], where: "state = 'pending'" },
      app_jobs_leases: { columns: ['lease_until'], where: "state = 'running'" },
      app_jobs_company: { columns: ['company_id', 'app_id', 'seq'] },
    },
  },
  {
    // One row per attempt of a job: how it ended (`done`, `error`, `timeout`, `lease_expired`, `interrupted`).
    name: 'app_job_attempts',
    columns: {
      seq, job_id: text, company_id: text, attempt: int, started_at: text, ended_at: text, duration_ms: int, outcome: text, error: textNull,
    },
    indexes: { app_job_attempts_job: { columns: ['job_id', 'seq'] } },
  },
];

export const tableByName = new Map(tables.map((t) => [t.name, t]));
