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
];
