// The core tables, as ordered SQL steps tracked by `PRAGMA user_version`. App document
// types get their own tables from the app runtime (see dialect.ts), not from here.
export const coreMigrations: string[] = [
  `CREATE TABLE companies (
     id TEXT PRIMARY KEY,
     name TEXT NOT NULL,
     currency TEXT NOT NULL,
     created_at TEXT NOT NULL
   );
   CREATE TABLE api_keys (
     id TEXT PRIMARY KEY,
     company_id TEXT NOT NULL REFERENCES companies(id),
     name TEXT NOT NULL,
     role TEXT NOT NULL,
     scopes TEXT NOT NULL,
     secret_hash TEXT NOT NULL,
     created_at TEXT NOT NULL,
     expires_at TEXT,
     revoked_at TEXT,
     last_used_at TEXT
   );
   CREATE INDEX api_keys_company ON api_keys(company_id);
   CREATE TABLE audit_log (
     seq INTEGER PRIMARY KEY,
     id TEXT NOT NULL UNIQUE,
     company_id TEXT NOT NULL,
     actor_type TEXT NOT NULL,
     actor_id TEXT NOT NULL,
     app_id TEXT NOT NULL,
     action TEXT NOT NULL,
     resource TEXT NOT NULL,
     resource_id TEXT,
     before_json TEXT,
     after_json TEXT,
     request_id TEXT,
     at TEXT NOT NULL
   );
   CREATE INDEX audit_log_company ON audit_log(company_id, seq);
   CREATE TABLE idempotency_keys (
     company_id TEXT NOT NULL,
     key_id TEXT NOT NULL,
     idem_key TEXT NOT NULL,
     request_hash TEXT NOT NULL,
     status INTEGER NOT NULL,
     body TEXT NOT NULL,
     created_at TEXT NOT NULL,
     PRIMARY KEY (company_id, key_id, idem_key)
   );
   CREATE TABLE company_apps (
     company_id TEXT NOT NULL REFERENCES companies(id),
     app_id TEXT NOT NULL,
     version TEXT NOT NULL,
     state TEXT NOT NULL,
     manifest TEXT NOT NULL,
     installed_at TEXT NOT NULL,
     updated_at TEXT NOT NULL,
     PRIMARY KEY (company_id, app_id)
   );
   CREATE TABLE app_migrations (
     company_id TEXT NOT NULL,
     app_id TEXT NOT NULL,
     migration_id TEXT NOT NULL,
     applied_at TEXT NOT NULL,
     PRIMARY KEY (company_id, app_id, migration_id)
   );
   CREATE TABLE outbox (
     seq INTEGER PRIMARY KEY,
     id TEXT NOT NULL UNIQUE,
     company_id TEXT NOT NULL,
     topic TEXT NOT NULL,
     data TEXT NOT NULL,
     test INTEGER NOT NULL DEFAULT 0,
     created_at TEXT NOT NULL,
     dispatched_at TEXT
   );
   CREATE INDEX outbox_pending ON outbox(seq) WHERE dispatched_at IS NULL;`,
  // 1: webhook endpoints, their deliveries (one per event × endpoint) and every attempt.
  `CREATE TABLE webhook_endpoints (
     seq INTEGER PRIMARY KEY,
     id TEXT NOT NULL UNIQUE,
     company_id TEXT NOT NULL REFERENCES companies(id),
     url TEXT NOT NULL,
     topics TEXT NOT NULL,
     description TEXT,
     enabled INTEGER NOT NULL DEFAULT 1,
     secret TEXT NOT NULL,
     previous_secret TEXT,
     previous_secret_until INTEGER,
     secret_rotated_at TEXT,
     created_at TEXT NOT NULL,
     updated_at TEXT NOT NULL
   );
   CREATE INDEX webhook_endpoints_company ON webhook_endpoints(company_id, seq);
   CREATE TABLE webhook_deliveries (
     seq INTEGER PRIMARY KEY,
     id TEXT NOT NULL UNIQUE,
     company_id TEXT NOT NULL,
     endpoint_id TEXT NOT NULL,
     event_id TEXT NOT NULL,
     topic TEXT NOT NULL,
     state TEXT NOT NULL,
     attempts INTEGER NOT NULL DEFAULT 0,
     next_attempt_at INTEGER,
     last_status INTEGER,
     last_failure TEXT,
     created_at TEXT NOT NULL,
     updated_at TEXT NOT NULL,
     delivered_at TEXT,
     UNIQUE (endpoint_id, event_id)
   );
   CREATE INDEX webhook_deliveries_due ON webhook_deliveries(state, next_attempt_at, endpoint_id);
   CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries(endpoint_id, seq);
   CREATE INDEX webhook_deliveries_endpoint_state ON webhook_deliveries(endpoint_id, state, seq);
   CREATE TABLE webhook_attempts (
     seq INTEGER PRIMARY KEY,
     delivery_id TEXT NOT NULL,
     attempt INTEGER NOT NULL,
     at TEXT NOT NULL,
     duration_ms INTEGER NOT NULL,
     status INTEGER,
     failure TEXT,
     detail TEXT,
     response_excerpt TEXT NOT NULL,
     response_bytes INTEGER NOT NULL
   );
   CREATE INDEX webhook_attempts_delivery ON webhook_attempts(delivery_id, seq);`,
];
