// drizzle's view of the core tables (created by migrations.ts; a test checks they agree).
import { sqliteTable, text, integer, primaryKey } from 'drizzle-orm/sqlite-core';

export const companies = sqliteTable('companies', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  currency: text('currency').notNull(),
  createdAt: text('created_at').notNull(),
});

export const apiKeys = sqliteTable('api_keys', {
  id: text('id').primaryKey(),
  companyId: text('company_id').notNull(),
  name: text('name').notNull(),
  role: text('role').notNull(),
  scopes: text('scopes', { mode: 'json' }).$type<string[]>().notNull(),
  secretHash: text('secret_hash').notNull(),
  createdAt: text('created_at').notNull(),
  expiresAt: text('expires_at'),
  revokedAt: text('revoked_at'),
  lastUsedAt: text('last_used_at'),
});

export const auditLog = sqliteTable('audit_log', {
  seq: integer('seq').primaryKey(),
  id: text('id').notNull(),
  companyId: text('company_id').notNull(),
  actorType: text('actor_type').notNull(),
  actorId: text('actor_id').notNull(),
  appId: text('app_id').notNull(),
  action: text('action').notNull(),
  resource: text('resource').notNull(),
  resourceId: text('resource_id'),
  before: text('before_json', { mode: 'json' }),
  after: text('after_json', { mode: 'json' }),
  requestId: text('request_id'),
  at: text('at').notNull(),
});

export const idempotencyKeys = sqliteTable(
  'idempotency_keys',
  {
    companyId: text('company_id').notNull(),
    keyId: text('key_id').notNull(),
    idemKey: text('idem_key').notNull(),
    requestHash: text('request_hash').notNull(),
    status: integer('status').notNull(),
    body: text('body').notNull(),
    createdAt: text('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.companyId, t.keyId, t.idemKey] })],
);

export const companyApps = sqliteTable(
  'company_apps',
  {
    companyId: text('company_id').notNull(),
    appId: text('app_id').notNull(),
    version: text('version').notNull(),
    state: text('state').$type<'enabled' | 'disabled' | 'uninstalled'>().notNull(),
    manifest: text('manifest', { mode: 'json' }).notNull(),
    installedAt: text('installed_at').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.companyId, t.appId] })],
);

export const appMigrations = sqliteTable(
  'app_migrations',
  {
    companyId: text('company_id').notNull(),
    appId: text('app_id').notNull(),
    migrationId: text('migration_id').notNull(),
    appliedAt: text('applied_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.companyId, t.appId, t.migrationId] })],
);

export const outbox = sqliteTable('outbox', {
  seq: integer('seq').primaryKey(),
  id: text('id').notNull(),
  companyId: text('company_id').notNull(),
  topic: text('topic').notNull(),
  data: text('data').notNull(),
  test: integer('test').notNull(),
  createdAt: text('created_at').notNull(),
  dispatchedAt: text('dispatched_at'),
});

export const schema = { companies, apiKeys, auditLog, idempotencyKeys, companyApps, appMigrations, outbox };
