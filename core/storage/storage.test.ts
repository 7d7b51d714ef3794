// The storage layer on both databases, the same checks on each: the migrator makes an empty
// database match schema.ts (and concurrent starts do not race), every repository behaves the
// same, transactions nest as savepoints with afterCommit after the outermost commit, the change
// feed reaches a second connection, and document tables filter on text, number and boolean fields.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databases, type Location } from '../../test/db.ts';
import type { Storage } from './open.ts';
import { openStorage } from './open.ts';
import { migrate, schemaGap, isCurrent } from './migrate.ts';
import { tables } from './schema.ts';
import { DocumentTable, type FilterField } from './repos/documents.ts';
import { inList, sqliteDialect } from './dialect.ts';
import type { Db } from './db.ts';
import type { AttemptResult } from './repos/webhook-deliveries.ts';
import { CacheVersionsRepo } from './repos/cache-versions.ts';
import type { PostgresDb } from './postgres.ts';

const REPO = path.resolve(import.meta.dirname, '../..');
const T0 = '2026-03-01T10:00:00.000Z';
const T1 = '2026-03-01T11:00:00.000Z';
const T2 = '2026-03-02T09:00:00.000Z';

/** One pending delivery (the repository writes a fan-out's in bulk). */
const insertDelivery = (s: Storage, id: string, companyId: string, endpointId: string, eventId: string, topic: string, dueMs: number, at: string) =>
  s.deliveries.insertMany([{ id, companyId, endpointId, eventId, topic }], dueMs, at);

/** What a column of each schema type is called by each database's catalogue. */
const TYPE_NAMES: Record<string, Record<string, string>> = {
  sqlite: { text: 'TEXT', int: 'INTEGER', bigint: 'INTEGER', blob: 'BLOB', serial: 'INTEGER' },
  postgres: { text: 'text', int: 'integer', bigint: 'bigint', blob: 'bytea', serial: 'bigint' },
};

/** A document table's declaration (no database needed). */
class DocumentTableOf extends DocumentTable {
  constructor(name: string) {
    super({ dialect: sqliteDialect } as Db, name, [{ name: 'status', kind: 'text' }], ['dueDate']);
  }
}

/** Opens the storage in a separate process (test/open-storage-process.ts). */
function startProcess(loc: Location): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(REPO, 'test/open-storage-process.ts'), loc.file, loc.url ?? ''], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (code) => resolve({ code, out, err }));
  });
}

async function columnTypes(s: Storage, table: string): Promise<Record<string, string>> {
  const rows =
    s.db.dialect.name === 'sqlite'
      ? await s.db.all<{ name: string; type: string }>('SELECT name, type FROM pragma_table_info(?)', [table])
      : await s.db.all<{ name: string; type: string }>(
          'SELECT column_name AS name, data_type AS type FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ?',
          [table],
        );
  return Object.fromEntries(rows.map((r) => [r.name, r.type]));
}

/** Tables that belong to no company: the tenants themselves, the host's packages, people and their sessions and links (a person may belong to several companies), shared counters, the ledger. */
const HOST_WIDE = ['companies', 'app_packages', 'users', 'sessions', 'one_time_tokens', 'throttles', 'rate_windows', 'cache_versions'];

describe('tenancy in the schema', () => {
  it('every other core table, and every document table, carries its company (NOT NULL)', () => {
    for (const t of tables.filter((x) => !HOST_WIDE.includes(x.name))) {
      expect(t.columns.company_id, t.name).toMatchObject({ type: 'text', notNull: true });
    }
    const doc = new DocumentTableOf('doc_probe_thing');
    expect(doc.definition().columns.company_id).toMatchObject({ type: 'text', notNull: true });
    expect(Object.values(doc.definition().indexes!).every((ix) => ix.columns[0] === 'company_id' || ix.columns[0] === 'state')).toBe(true);
  });
});

describe('IN lists', () => {
  it('pad to a power of two with the last value, so that lengths share a few statement texts', () => {
    expect(inList(['a'])).toEqual({ sql: '(?)', params: ['a'] });
    expect(inList(['a', 'b', 'c'])).toEqual({ sql: '(?, ?, ?, ?)', params: ['a', 'b', 'c', 'c'] });
    expect(inList(Array.from({ length: 100 }, (_, i) => i)).params).toHaveLength(128);
    expect(() => inList([])).toThrow(/no values/);
  });
});

describe.each(databases())('storage on $name', (database) => {
  let loc: Location;
  let s: Storage;

  beforeAll(async () => {
    loc = await database.location();
    s = await loc.open();
  });
  afterAll(async () => {
    await s?.close();
    await loc?.drop();
  });

  describe('the migrator', () => {
    it('made the empty database match schema.ts: every table, exactly its columns with their types, every index', async () => {
      const d = s.db.dialect;
      const existing = new Set((await s.db.all<{ name: string }>(d.tablesSql)).map((r) => r.name));
      expect([...existing].filter((t) => !t.startsWith('sqlite_')).sort()).toEqual(['schema_migrations', ...tables.map((t) => t.name)].sort());
      const indexes = new Set((await s.db.all<{ name: string }>(d.indexesSql)).map((r) => r.name));
      for (const t of tables) {
        const types = await columnTypes(s, t.name);
        expect(Object.keys(types).sort(), t.name).toEqual(Object.keys(t.columns).sort());
        for (const [name, c] of Object.entries(t.columns)) expect(types[name], `${t.name}.${name}`).toBe(TYPE_NAMES[d.name][c.type]);
        for (const ix of Object.keys(t.indexes ?? {})) expect(indexes.has(ix), ix).toBe(true);
      }
      expect(isCurrent(await schemaGap(s.db))).toBe(true);
    });

    it('does nothing on a current database, and adds a declared column and index that are missing', async () => {
      expect(isCurrent(await migrate(s.db))).toBe(true);
      const extra = { name: 'probe_extra', columns: { id: { type: 'text' as const, primaryKey: true } } };
      await migrate(s.db, { tables: [extra] });
      const grown = { ...extra, columns: { ...extra.columns, n: { type: 'int' as const, notNull: true, default: 7 }, note: { type: 'text' as const } }, indexes: { probe_extra_n: { columns: ['n'] } } };
      const gap = await migrate(s.db, { tables: [grown] });
      expect(gap).toMatchObject({ tables: [], columns: ['probe_extra.n', 'probe_extra.note'], indexes: ['probe_extra_n'] });
      await s.db.run('INSERT INTO probe_extra (id) VALUES (?)', ['a']);
      expect(await s.db.get('SELECT id, n, note FROM probe_extra')).toEqual({ id: 'a', n: 7, note: null });
      await expect(migrate(s.db, { tables: [{ ...grown, columns: { ...grown.columns, must: { type: 'text', notNull: true } } }] })).rejects.toThrow(/needs a default/);
    });

    it('runs each data step once, recorded in the ledger', async () => {
      let runs = 0;
      const step = { id: '2026-03-01-probe', up: async () => void runs++ };
      expect((await migrate(s.db, { steps: [step] })).steps).toEqual(['2026-03-01-probe']);
      expect((await migrate(s.db, { steps: [step] })).steps).toEqual([]);
      expect(runs).toBe(1);
    });

    it('gives attempts recorded before they had a company their delivery\'s (a data step, once)', async () => {
      const fresh = await database.location();
      const f = await fresh.open();
      try {
        const d = f.db.dialect;
        const attempts = tables.find((t) => t.name === 'webhook_attempts')!;
        const { company_id: _gone, ...oldColumns } = attempts.columns;
        await f.db.exec('DROP TABLE webhook_attempts');
        await f.db.exec(d.createTable({ ...attempts, columns: oldColumns }));
        await f.db.run('DELETE FROM schema_migrations');
        await f.companies.insert({ id: 'co_x', name: 'X', currency: 'SAR', createdAt: T0 });
        await insertDelivery(f, 'dl_x', 'co_x', 'we_x', 'ev_x', 'invoice.created', 0, T0);
        await f.db.run("INSERT INTO webhook_attempts (delivery_id, attempt, at, duration_ms, response_excerpt, response_bytes) VALUES ('dl_x', 1, ?, 5, '', 0)", [T0]);
        const gap = await migrate(f.db);
        expect(gap).toMatchObject({ columns: ['webhook_attempts.company_id'], steps: ['2026-11-23-webhook-attempts-company', '2026-11-27-webhook-deliveries-partial-indexes'] });
        expect(await f.db.all('SELECT delivery_id, company_id FROM webhook_attempts')).toEqual([{ delivery_id: 'dl_x', company_id: 'co_x' }]);
        expect(isCurrent(await migrate(f.db))).toBe(true);
      } finally {
        await f.close();
        await fresh.drop();
      }
    });

    it('upgrades webhook tables from before custom headers, signing keys and deferrals in place: rows kept, the new columns empty', async () => {
      const fresh = await database.location();
      const f = await fresh.open();
      try {
        const d = f.db.dialect;
        const eps = tables.find((t) => t.name === 'webhook_endpoints')!;
        const dls = tables.find((t) => t.name === 'webhook_deliveries')!;
        const { headers: _h, signing_key: _k, public_key: _p, ...oldEndpoint } = eps.columns;
        const { deferrals: _d, ...oldDelivery } = dls.columns;
        await f.db.exec('DROP TABLE webhook_endpoints');
        await f.db.exec('DROP TABLE webhook_deliveries');
        await f.db.exec(d.createTable({ ...eps, columns: oldEndpoint, indexes: {} }));
        await f.db.exec(d.createTable({ ...dls, columns: oldDelivery, indexes: {} }));
        await f.companies.insert({ id: 'co_u', name: 'U', currency: 'SAR', createdAt: T0 });
        await f.db.run(
          "INSERT INTO webhook_endpoints (id, company_id, url, topics, enabled, secret, created_at, updated_at) VALUES ('we_u', 'co_u', 'https://example.com/h', '[\"*\"]', 1, 'sealed', ?, ?)",
          [T0, T0],
        );
        await f.db.run(
          "INSERT INTO webhook_deliveries (id, company_id, endpoint_id, event_id, topic, state, attempts, next_attempt_at, created_at, updated_at) VALUES ('dl_u', 'co_u', 'we_u', 'ev_u', 'invoice.created', 'pending', 2, 5, ?, ?)",
          [T0, T0],
        );
        const gap = await migrate(f.db);
        expect(gap.columns.sort()).toEqual(['webhook_deliveries.deferrals', 'webhook_endpoints.headers', 'webhook_endpoints.public_key', 'webhook_endpoints.signing_key']);
        expect(await f.endpoints.get('co_u', 'we_u')).toMatchObject({ id: 'we_u', secret: 'sealed', headers: null, signingKey: null, publicKey: null });
        expect(await f.deliveries.leaseDue('we_u', 10, 5, 'lse_u', 1000, T1)).toEqual([{ id: 'dl_u', event_id: 'ev_u', topic: 'invoice.created', attempts: 2, deferrals: 0 }]);
        expect(isCurrent(await migrate(f.db))).toBe(true);
      } finally {
        await f.close();
        await fresh.drop();
      }
    });

    it('replaces the delivery indexes of every state with partial ones (a data step, once)', async () => {
      const fresh = await database.location();
      const f = await fresh.open();
      try {
        const indexNames = async () => new Set((await f.db.all<{ name: string }>(f.db.dialect.indexesSql)).map((r) => r.name));
        await f.db.exec('CREATE INDEX webhook_deliveries_due ON webhook_deliveries (state, next_attempt_at, endpoint_id)');
        await f.db.exec('CREATE INDEX webhook_deliveries_endpoint_state ON webhook_deliveries (endpoint_id, state, seq)');
        await f.db.run("DELETE FROM schema_migrations WHERE id = '2026-11-27-webhook-deliveries-partial-indexes'");
        expect((await migrate(f.db)).steps).toEqual(['2026-11-27-webhook-deliveries-partial-indexes']);
        const after = await indexNames();
        for (const gone of ['webhook_deliveries_due', 'webhook_deliveries_endpoint_state']) expect(after.has(gone), gone).toBe(false);
        for (const kept of ['webhook_deliveries_pending', 'webhook_deliveries_due_at', 'webhook_deliveries_leases']) expect(after.has(kept), kept).toBe(true);
        expect(isCurrent(await migrate(f.db))).toBe(true);
      } finally {
        await f.close();
        await fresh.drop();
      }
    });

    it('lets several processes start at once against one empty database', { timeout: 60_000 }, async () => {
      const fresh = await database.location();
      try {
        const starts = await Promise.all([1, 2, 3].map(() => startProcess(fresh)));
        expect(starts).toEqual([1, 2, 3].map(() => ({ code: 0, out: '{"current":true}', err: '' })));
        const s2 = await fresh.open();
        expect(isCurrent(await schemaGap(s2.db))).toBe(true);
        await s2.close();
      } finally {
        await fresh.drop();
      }
    });
  });

  describe('repositories', () => {
    beforeAll(async () => {
      await s.companies.insert({ id: 'co_b', name: 'Beta', currency: 'USD', createdAt: T1 });
      await s.companies.insert({ id: 'co_a', name: 'Alpha', currency: 'SAR', createdAt: T0 });
    });

    it('companies', async () => {
      expect(await s.companies.get('co_a')).toEqual({ id: 'co_a', name: 'Alpha', currency: 'SAR', createdAt: T0, profile: null });
      expect(await s.companies.get('co_x')).toBeUndefined();
      expect((await s.companies.list()).map((c) => c.id)).toEqual(['co_a', 'co_b']);
      await expect(s.companies.insert({ id: 'co_a', name: 'Again', currency: 'SAR', createdAt: T0 })).rejects.toThrow();
    });

    it('api keys: by id, per company, revoke once, touch', async () => {
      const key = { id: 'k1', companyId: 'co_a', name: 'Ops', role: 'Admin', scopes: ['*'], secretHash: 'h', createdAt: T0, expiresAt: null, revokedAt: null, lastUsedAt: null, createdBy: null };
      await s.apiKeys.insert(key);
      await s.apiKeys.insert({ ...key, id: 'k2', companyId: 'co_b', scopes: ['invoices:read'], createdAt: T1 });
      expect(await s.apiKeys.byId('k1')).toEqual(key);
      expect(await s.apiKeys.get('co_b', 'k1')).toBeUndefined();
      expect((await s.apiKeys.list('co_b')).map((k) => [k.id, k.scopes])).toEqual([['k2', ['invoices:read']]]);
      await s.apiKeys.revoke('co_a', 'k1', T1);
      await s.apiKeys.revoke('co_a', 'k1', T2);
      await s.apiKeys.touch('k1', T2);
      expect(await s.apiKeys.get('co_a', 'k1')).toMatchObject({ revokedAt: T1, lastUsedAt: T2 });
      await expect(s.apiKeys.insert({ ...key, id: 'k3', companyId: 'co_missing' })).rejects.toThrow();
    });

    it('audit log: newest first, filters, paging, JSON bodies', async () => {
      const base = { companyId: 'co_a', actorType: 'key', actorId: 'k1', appId: 'core', resource: 'customers', requestId: null };
      for (let i = 1; i <= 5; i++) {
        await s.audit.insert({ ...base, id: `au_${i}`, action: i % 2 ? 'create' : 'update', resourceId: `cus_${i}`, before: i > 1 ? { n: i - 1 } : null, after: { n: i, name: 'عميل' }, at: `2026-03-0${i}T00:00:00.000Z` });
      }
      await s.audit.insert({ ...base, companyId: 'co_b', id: 'au_b', action: 'create', resourceId: null, before: null, after: null, at: T0 });
      const all = await s.audit.list('co_a', { page: 1, pageSize: 2 });
      expect(all.total).toBe(5);
      expect(all.rows.map((r) => r.id)).toEqual(['au_5', 'au_4']);
      expect(all.rows[0]).toMatchObject({ before: { n: 4 }, after: { n: 5, name: 'عميل' }, requestId: null });
      expect((await s.audit.list('co_a', { page: 3, pageSize: 2 })).rows.map((r) => r.id)).toEqual(['au_1']);
      const filtered = await s.audit.list('co_a', { page: 1, pageSize: 10, action: 'create', since: '2026-03-02T00:00:00.000Z', until: '2026-03-05T00:00:01.000Z' });
      expect(filtered.rows.map((r) => r.id)).toEqual(['au_5', 'au_3']);
      expect((await s.audit.list('co_b', { page: 1, pageSize: 10 })).rows).toEqual([expect.objectContaining({ id: 'au_b', before: null, after: null, resourceId: null })]);
    });

    it('outbox: pending in order, recent per company, dispatched', async () => {
      await s.outbox.insert({ id: 'ev1', companyId: 'co_a', topic: 'invoice.created', data: '{"a":1}', test: false, createdAt: T0 });
      await s.outbox.insert({ id: 'ev2', companyId: 'co_b', topic: 'invoice.paid', data: '{}', test: true, createdAt: T1 });
      await s.outbox.insert({ id: 'ev3', companyId: 'co_a', topic: 'invoice.sent', data: '[]', test: false, createdAt: T2 });
      expect(await s.outbox.recent('co_b', 5)).toEqual([{ id: 'ev2', companyId: 'co_b', topic: 'invoice.paid', data: '{}', test: true, createdAt: T1 }]);
      expect((await s.outbox.recent('co_a', 5)).map((e) => [e.id, e.test])).toEqual([['ev3', false], ['ev1', false]]);
      const first = await s.outbox.takePending(2, T2);
      expect(first.events.map((e) => [e.id, e.topic, e.data])).toEqual([['ev1', 'invoice.created', '{"a":1}'], ['ev2', 'invoice.paid', '{}']]);
      // No endpoint written yet: version 0. The version comes from the same statement as the events.
      expect(first.endpointsVersion).toBe(0);
      expect(await s.outbox.oldestPending()).toBe(T2);
      await s.db.transaction(() => s.changes.bump('endpoints'));
      expect(await s.outbox.takePending(10, T2)).toMatchObject({ events: [{ id: 'ev3' }], endpointsVersion: 1 });
      expect(await s.outbox.takePending(10, T2)).toEqual({ events: [], endpointsVersion: null });
      expect(await s.outbox.oldestPending()).toBeNull();
    });

    it('installs and app migrations: put inserts then replaces, state, remove', async () => {
      const rec = { companyId: 'co_a', appId: 'invoicing', version: '1.0.0', state: 'enabled' as const, snapshot: { manifest: { id: 'invoicing' } }, installedAt: T0, updatedAt: T0 };
      await s.installs.put(rec);
      await s.installs.put({ ...rec, version: '1.1.0', updatedAt: T1 });
      expect(await s.installs.ofCompany('co_a')).toEqual([{ ...rec, version: '1.1.0', updatedAt: T1 }]);
      await s.installs.setState('co_a', 'invoicing', 'disabled', T2);
      expect((await s.installs.ofCompany('co_a'))[0]).toMatchObject({ state: 'disabled', updatedAt: T2 });
      await s.installs.migrationRan('co_a', 'invoicing', 'm1', T0);
      expect(await s.installs.migrationsRun('co_a', 'invoicing')).toEqual(new Set(['m1']));
      await s.installs.remove('co_a', 'invoicing');
      expect(await s.installs.ofCompany('co_a')).toEqual([]);
      expect(await s.installs.migrationsRun('co_a', 'invoicing')).toEqual(new Set());
    });

    it('app packages: bytes kept exactly, replaced by app', async () => {
      const bytes = Buffer.from([0, 1, 2, 255, 254, 0, 10, 13]);
      await s.packages.put({ appId: 'gadgets', version: '1.0.0', hash: 'h1', manifest: '{}', bytes, createdAt: T0 });
      await s.packages.put({ appId: 'gadgets', version: '1.1.0', hash: 'h2', manifest: '{"v":2}', bytes: Buffer.concat([bytes, bytes]), createdAt: T1 });
      expect(await s.packages.list()).toEqual([{ appId: 'gadgets', version: '1.1.0', hash: 'h2' }]);
      const got = await s.packages.get('gadgets');
      expect(Buffer.isBuffer(got!.bytes)).toBe(true);
      expect(got!.bytes.equals(Buffer.concat([bytes, bytes]))).toBe(true);
      await s.packages.remove('gadgets');
      expect(await s.packages.get('gadgets')).toBeUndefined();
    });

    it('idempotency replies, one per company, principal and key', async () => {
      await s.idempotency.put('co_a', 'k1', 'idem-1', { requestHash: 'rh', status: 201, body: '{"data":1}' }, T0);
      expect(await s.idempotency.get('co_a', 'k1', 'idem-1')).toEqual({ requestHash: 'rh', status: 201, body: '{"data":1}' });
      expect(await s.idempotency.get('co_b', 'k1', 'idem-1')).toBeUndefined();
      await expect(s.idempotency.put('co_a', 'k1', 'idem-1', { requestHash: 'x', status: 200, body: '' }, T1)).rejects.toThrow();
    });

    it('cache versions count up per scope', async () => {
      const versions = new CacheVersionsRepo(s.db);
      const start = (await versions.all()).get('probe') ?? 0;
      expect(await versions.bump('probe')).toBe(start + 1);
      expect(await versions.bump('probe')).toBe(start + 2);
      expect((await versions.all()).get('probe')).toBe(start + 2);
    });

    describe('webhooks', () => {
      const endpoint = {
        id: 'we_1', companyId: 'co_a', url: 'https://example.com/hook', topics: ['invoice.*'], description: null, enabled: true,
        secret: 'sealed', previousSecret: null, previousSecretUntil: null, secretRotatedAt: null, createdAt: T0, updatedAt: T0,
        disabledReason: null, disabledAt: null, disabledDetail: null, failingSince: null, maxInFlight: null, ratePerSecond: null,
        headers: { 'x-tenant': 'a' }, signingKey: null, publicKey: null,
      };
      /** One result under `token`: whether it was recorded. */
      const record = async (r: AttemptResult, token: string) => (await s.deliveries.recordMany([{ ...r, token }])).has(r.deliveryId);
      const attempt = (deliveryId: string, n: number, next: AttemptResult['next'], status: number | null = 500): AttemptResult => ({
        deliveryId, companyId: 'co_a', endpointId: deliveryId.startsWith('dl_b') ? 'we_bulk' : 'we_1', attempt: n, at: T1, durationMs: 12.6, status, failure: status === 200 ? null : 'status', detail: null, responseExcerpt: 'no', responseBytes: 2, next,
      });

      it('endpoints: insert, get, list, enabled index, update, reseal', async () => {
        await s.endpoints.insert(endpoint);
        await s.endpoints.insert({ ...endpoint, id: 'we_2', enabled: false, topics: ['*'] });
        await s.endpoints.insert({ ...endpoint, id: 'we_b', companyId: 'co_b' });
        expect(await s.endpoints.get('co_a', 'we_1')).toEqual(endpoint);
        expect(await s.endpoints.get('co_b', 'we_1')).toBeUndefined();
        const page = await s.endpoints.list('co_a', 1, 1);
        expect([page.total, page.rows.map((e) => e.id)]).toEqual([2, ['we_1']]);
        expect(await s.endpoints.enabledOf('co_a')).toEqual([{ id: 'we_1', topics: ['invoice.*'], createdAt: T0 }]);
        await s.endpoints.update({ ...endpoint, id: 'we_2', enabled: true, previousSecret: 'old', previousSecretUntil: 1_780_000_000_000, secretRotatedAt: T1 });
        expect(await s.endpoints.get('co_a', 'we_2')).toMatchObject({ enabled: true, previousSecret: 'old', previousSecretUntil: 1_780_000_000_000 });
        await s.endpoints.reseal('we_2', 'resealed', 'old2');
        expect((await s.endpoints.sealed()).find((e) => e.id === 'we_2')).toEqual({ id: 'we_2', secret: 'resealed', previousSecret: 'old2', signingKey: null });
        await s.endpoints.reseal('we_2', 'resealed', 'old2', 'sealed-key');
        expect((await s.endpoints.sealed()).find((e) => e.id === 'we_2')).toEqual({ id: 'we_2', secret: 'resealed', previousSecret: 'old2', signingKey: 'sealed-key' });
        await s.endpoints.reseal('we_2', 'resealed2', null);
        expect((await s.endpoints.sealed()).find((e) => e.id === 'we_2')).toMatchObject({ secret: 'resealed2', signingKey: 'sealed-key' });
      });

      it('deliveries: one per event and endpoint, due, leased, fenced, attempts, filters, recovery', async () => {
        const now = 1_770_000_000_000;
        await insertDelivery(s, 'dl_1', 'co_a', 'we_1', 'ev1', 'invoice.created', now - 10, T0);
        await insertDelivery(s, 'dl_dup', 'co_a', 'we_1', 'ev1', 'invoice.created', now - 10, T0);
        await insertDelivery(s, 'dl_2', 'co_a', 'we_1', 'ev3', 'invoice.sent', now + 60_000, T0);
        await insertDelivery(s, 'dl_3', 'co_a', 'we_2', 'ev3', 'invoice.sent', now - 5, T0);
        expect((await s.deliveries.list('we_1', { page: 1, pageSize: 10 })).total).toBe(2);
        expect((await s.deliveries.dueEndpoints(now)).sort()).toEqual(['we_1', 'we_2']);
        expect(await s.deliveries.nextDue()).toBe(now - 10);
        // Leased oldest first, due ones only, each endpoint on its own; what is leased is taken once.
        expect(await s.deliveries.leaseDue('we_1', now, 10, 'lse_a', now + 30_000, T1)).toEqual([{ id: 'dl_1', event_id: 'ev1', topic: 'invoice.created', attempts: 0, deferrals: 0 }]);
        expect((await s.deliveries.leaseDue('we_2', now, 10, 'lse_a', now + 30_000, T1)).map((r) => r.id)).toEqual(['dl_3']);
        expect(await s.deliveries.leaseDue('we_1', now, 10, 'lse_b', now + 30_000, T1)).toEqual([]);
        expect(await s.deliveries.get('we_1', 'dl_1')).toMatchObject({ state: 'in_flight', lease_token: 'lse_a', lease_until: now + 30_000, updated_at: T1 });
        expect(await s.deliveries.events(['ev1', 'ev_gone'])).toEqual([{ id: 'ev1', company_id: 'co_a', data: '{"a":1}', test: 0, created_at: T0 }]);
        // Three ids go as four (the last repeated): each event still comes once.
        expect(await s.deliveries.events(['ev_gone', 'ev_x', 'ev1'])).toEqual([{ id: 'ev1', company_id: 'co_a', data: '{"a":1}', test: 0, created_at: T0 }]);
        expect(await s.deliveries.inFlightOf('we_1', now)).toBe(1);
        expect(await s.deliveries.inFlightOf('we_1', now + 30_000)).toBe(0);
        expect(await s.deliveries.nextDue()).toBe(now + 30_000);
        // A result under another lease than the one held is not recorded (fencing).
        expect(await record(attempt('dl_1', 1, { state: 'delivered', at: null }, 200), 'lse_b')).toBe(false);
        expect(await s.deliveries.attempts('dl_1')).toEqual([]);
        expect(await record(attempt('dl_1', 1, { state: 'pending', at: now + 1000 }), 'lse_a')).toBe(true);
        // Released by a stopping worker: due again now; by the wrong token: nothing.
        expect(await s.deliveries.release([{ id: 'dl_3', token: 'lse_x' }], now, T2)).toBe(0);
        expect(await s.deliveries.release([{ id: 'dl_3', token: 'lse_a' }], now, T2)).toBe(1);
        expect(await s.deliveries.get('we_2', 'dl_3')).toMatchObject({ state: 'pending', next_attempt_at: now, lease_token: null });
        expect(await s.deliveries.get('we_1', 'dl_1')).toMatchObject({ state: 'pending', attempts: 1, next_attempt_at: now + 1000, last_status: 500, delivered_at: null });
        expect(await s.deliveries.attempts('dl_1')).toEqual([
          { seq: expect.any(Number), delivery_id: 'dl_1', company_id: 'co_a', attempt: 1, at: T1, duration_ms: 13, status: 500, failure: 'status', detail: null, response_excerpt: 'no', response_bytes: 2 },
        ]);
        expect((await s.deliveries.list('we_1', { page: 1, pageSize: 10, state: 'retrying' })).rows.map((r) => r.id)).toEqual(['dl_1']);
        expect((await s.deliveries.list('we_1', { page: 1, pageSize: 10, state: 'failed' })).total).toBe(1);
        // dl_1 out of the way for now: dl_2 is the oldest due then.
        await s.deliveries.reschedule('dl_1', now + 90_000, T2);
        expect((await s.deliveries.leaseDue('we_1', now + 60_000, 1, 'lse_c', now + 30_000, T1)).map((r) => r.id)).toEqual(['dl_2']);
        // A live lease is left alone; an ended one is due again now, and its old holder fenced off.
        expect(await s.deliveries.reclaimExpired(now, T2)).toBe(0);
        expect(await s.deliveries.reclaimExpired(now + 30_000, T2)).toBe(1);
        expect(await s.deliveries.get('we_1', 'dl_2')).toMatchObject({ state: 'pending', next_attempt_at: now + 30_000, lease_until: null });
        expect(await record(attempt('dl_2', 1, { state: 'delivered', at: null }, 200), 'lse_c')).toBe(false);
        expect((await s.deliveries.leaseDue('we_1', now + 30_000, 1, 'lse_d', now + 30_000, T1)).map((r) => r.id)).toEqual(['dl_2']);
        await record(attempt('dl_2', 1, { state: 'dead', at: null }), 'lse_d');
        expect(await s.deliveries.recoverable('we_1', T0)).toEqual({ dead: 1, retrying: 1 });
        await s.deliveries.recover('we_1', T0, now + 5, T2);
        expect((await s.deliveries.list('we_1', { page: 1, pageSize: 10, state: 'pending' })).rows.map((r) => [r.id, r.next_attempt_at])).toEqual([['dl_2', now + 5], ['dl_1', now + 5]]);
        expect((await s.deliveries.leaseDue('we_1', now + 5, 1, 'lse_e', now + 30_000, T1)).map((r) => r.id)).toEqual(['dl_1']);
        await record(attempt('dl_1', 2, { state: 'delivered', at: null }, 200), 'lse_e');
        expect(await s.deliveries.get('we_1', 'dl_1')).toMatchObject({ state: 'delivered', delivered_at: T1, attempts: 2 });
        await s.deliveries.reschedule('dl_1', now + 7, T2);
        expect(await s.deliveries.get('we_1', 'dl_1')).toMatchObject({ state: 'pending', next_attempt_at: now + 7 });
      });

      it('deliveries in bulk: the rows of a fan-out past one statement, duplicates ignored; results recorded together, the fenced left', async () => {
        const now = 1_780_000_000_000;
        const rows = Array.from({ length: 150 }, (_, i) => ({ id: `dl_b${i}`, companyId: 'co_a', endpointId: 'we_bulk', eventId: `evb_${i}`, topic: 'invoice.created' }));
        await s.deliveries.insertMany([...rows, { ...rows[3], id: 'dl_b3_again' }], now, T0);
        expect(await s.deliveries.get('we_bulk', 'dl_b149')).toMatchObject({ state: 'pending', next_attempt_at: now, attempts: 0 });
        expect(await s.deliveries.get('we_bulk', 'dl_b3_again')).toBeUndefined();
        const leased = await s.deliveries.leaseDue('we_bulk', now, 150, 'lse_bulk', now + 30_000, T1);
        // Oldest first: in the order the fan-out wrote them.
        expect(leased.map((r) => r.id)).toEqual(rows.map((r) => r.id));
        const results = leased.map((r, i) => ({ ...attempt(r.id, 1, i % 2 ? { state: 'delivered' as const, at: null } : { state: 'pending' as const, at: now + 60_000 }, i % 2 ? 200 : 500), token: 'lse_bulk' }));
        results[7].token = 'lse_stale';
        const recorded = await s.deliveries.recordMany(results);
        expect(recorded.size).toBe(149);
        expect(recorded.has('dl_b7')).toBe(false);
        expect(await s.deliveries.get('we_bulk', 'dl_b7')).toMatchObject({ state: 'in_flight', lease_token: 'lse_bulk' });
        expect(await s.deliveries.get('we_bulk', 'dl_b1')).toMatchObject({ state: 'delivered', delivered_at: T1, attempts: 1, last_status: 200, lease_token: null });
        expect(await s.deliveries.get('we_bulk', 'dl_b2')).toMatchObject({ state: 'pending', next_attempt_at: now + 60_000, last_status: 500, delivered_at: null });
        expect(await s.deliveries.attempts('dl_b7')).toEqual([]);
        expect(await s.deliveries.attempts('dl_b148')).toEqual([expect.objectContaining({ attempt: 1, status: 500, company_id: 'co_a', duration_ms: 13 })]);
        await s.deliveries.removeWithAttempts(rows.map((r) => r.id));
      });

      it("a take's lease and its fan-out's rows together: the new rows in flight as far as the room left after the older ones, the rest pending", async () => {
        const now = 1_785_000_000_000;
        const row = (id: string, endpointId: string, eventId: string) => ({ id, companyId: 'co_a', endpointId, eventId, topic: 'invoice.created' });
        await s.deliveries.insertMany([row('dl_f0', 'we_f', 'evf0')], now - 5, T0);
        const fresh = [row('dl_f1', 'we_f', 'evf1'), row('dl_g1', 'we_g', 'evf1'), row('dl_f2', 'we_f', 'evf0'), row('dl_f3', 'we_f', 'evf3'), row('dl_f4', 'we_f', 'evf4')];
        const { leased, written } = await s.deliveries.leaseAndWrite([{ endpointId: 'we_f', cap: 3, limit: 3 }], fresh, now, 'lse_f', now + 30_000, T1);
        expect(leased.get('we_f')).toEqual({ room: 3, rows: [{ id: 'dl_f0', event_id: 'evf0', topic: 'invoice.created', attempts: 0, deferrals: 0 }] });
        // Room for two more: dl_f1, and dl_f2, a second delivery of evf0 to we_f, which is not written.
        expect(written.get('we_f')).toEqual([{ id: 'dl_f1', event_id: 'evf1', topic: 'invoice.created', attempts: 0, deferrals: 0 }]);
        expect(written.has('we_g')).toBe(false);
        expect(await s.deliveries.get('we_f', 'dl_f1')).toMatchObject({ state: 'in_flight', lease_token: 'lse_f', lease_until: now + 30_000, next_attempt_at: now });
        expect(await s.deliveries.get('we_f', 'dl_f2')).toBeUndefined();
        for (const [endpointId, id] of [['we_f', 'dl_f3'], ['we_f', 'dl_f4'], ['we_g', 'dl_g1']]) {
          expect(await s.deliveries.get(endpointId, id)).toMatchObject({ state: 'pending', lease_token: null, next_attempt_at: now });
        }
        // In the order given, after the older ones.
        expect((await s.deliveries.list('we_f', { page: 1, pageSize: 10 })).rows.map((r) => r.id)).toEqual(['dl_f4', 'dl_f3', 'dl_f1', 'dl_f0']);
        expect(await s.deliveries.inFlightOf('we_f', now)).toBe(2);
        await s.deliveries.removeWithAttempts(['dl_f0', 'dl_f1', 'dl_f3', 'dl_f4', 'dl_g1']);
      });

      it('results end the failing streak of the endpoints given to heal, where one of theirs is recorded', async () => {
        const now = 1_790_000_000_000;
        for (const id of ['we_h1', 'we_h2', 'we_h3']) await s.endpoints.insert({ ...endpoint, id, failingSince: now - 1000 });
        const rows = ['we_h1', 'we_h2', 'we_h3'].map((endpointId, i) => ({ id: `dl_h${i + 1}`, companyId: 'co_a', endpointId, eventId: `evh${i + 1}`, topic: 'invoice.created' }));
        await s.deliveries.insertMany(rows, now, T0);
        await s.deliveries.leaseDueMany(rows.map((r) => ({ endpointId: r.endpointId, cap: 1, limit: 1 })), now, 'lse_h', now + 30_000, T1);
        const ok = (r: (typeof rows)[number], token: string) => ({ ...attempt(r.id, 1, { state: 'delivered' as const, at: null }, 200), endpointId: r.endpointId, token });
        // we_h2's result is fenced off; we_h3 is not among those to heal.
        const recorded = await s.deliveries.recordMany([ok(rows[0], 'lse_h'), ok(rows[1], 'lse_stale'), ok(rows[2], 'lse_h')], ['we_h1', 'we_h2']);
        expect([...recorded].sort()).toEqual(['dl_h1', 'dl_h3']);
        expect((await s.endpoints.get('co_a', 'we_h1'))?.failingSince).toBeNull();
        expect((await s.endpoints.get('co_a', 'we_h2'))?.failingSince).toBe(now - 1000);
        expect((await s.endpoints.get('co_a', 'we_h3'))?.failingSince).toBe(now - 1000);
        for (const id of ['we_h1', 'we_h2', 'we_h3']) await s.endpoints.remove('co_a', id);
      });

      it('removing an endpoint removes its delivery log', async () => {
        await s.endpoints.remove('co_a', 'we_1');
        expect(await s.endpoints.get('co_a', 'we_1')).toBeUndefined();
        expect((await s.deliveries.list('we_1', { page: 1, pageSize: 10 })).total).toBe(0);
        expect(await s.deliveries.attempts('dl_1')).toEqual([]);
        expect((await s.deliveries.list('we_2', { page: 1, pageSize: 10 })).total).toBe(1);
      });
    });

    it('people: users, memberships (a new role keeps its origin), sessions, one-time tokens', async () => {
      const p = s.people;
      await p.insertUser({ id: 'u1', email: 'noura@example.com', name: 'Noura', passwordHash: null, createdAt: T0, passwordChangedAt: null, disabledAt: null });
      await p.insertUser({ id: 'u2', email: 'ali@example.com', name: 'Ali', passwordHash: 'h', createdAt: T0, passwordChangedAt: null, disabledAt: null });
      await expect(p.insertUser({ id: 'u3', email: 'noura@example.com', name: 'X', passwordHash: null, createdAt: T0, passwordChangedAt: null, disabledAt: null })).rejects.toThrow();
      expect(await p.userByEmail('noura@example.com')).toMatchObject({ id: 'u1', passwordHash: null });
      await p.setPassword('u1', 'scrypt$x', T1);
      expect(await p.user('u1')).toMatchObject({ passwordHash: 'scrypt$x', passwordChangedAt: T1 });

      await p.putMembership({ userId: 'u1', companyId: 'co_a', role: 'Owner', createdAt: T0, invitedBy: null });
      await p.putMembership({ userId: 'u2', companyId: 'co_a', role: 'Viewer', createdAt: T1, invitedBy: 'u1' });
      await p.putMembership({ userId: 'u2', companyId: 'co_a', role: 'Admin', createdAt: T2, invitedBy: null });
      await p.putMembership({ userId: 'u1', companyId: 'co_b', role: 'Viewer', createdAt: T0, invitedBy: null });
      expect(await p.membership('u2', 'co_a')).toEqual({ userId: 'u2', companyId: 'co_a', role: 'Admin', createdAt: T1, invitedBy: 'u1' });
      expect((await p.membershipsOf('u1')).map((m) => [m.companyName, m.role, m.currency])).toEqual([['Alpha', 'Owner', 'SAR'], ['Beta', 'Viewer', 'USD']]);
      expect((await p.members('co_a')).map((m) => m.name)).toEqual(['Ali', 'Noura']);
      expect(await p.countRole('co_a', 'Owner')).toBe(1);
      await p.removeMembership('u2', 'co_a');
      expect(await p.membership('u2', 'co_a')).toBeUndefined();

      const session = { tokenHash: 'sh1', userId: 'u1', createdAt: T0, expiresAt: 1_770_000_000_000, lastSeenAt: T0, revokedAt: null, userAgent: 'test' };
      await p.insertSession(session);
      await p.insertSession({ ...session, tokenHash: 'sh2' });
      expect(await p.session('sh1')).toEqual(session);
      await p.touchSession('sh1', T1, 1_770_000_100_000);
      expect(await p.session('sh1')).toMatchObject({ lastSeenAt: T1, expiresAt: 1_770_000_100_000 });
      await p.revokeSessionsOf('u1', T2, 'sh1');
      expect([(await p.session('sh1'))!.revokedAt, (await p.session('sh2'))!.revokedAt]).toEqual([null, T2]);
      await p.revokeSession('sh1', T2);
      expect((await p.session('sh1'))!.revokedAt).toBe(T2);

      const token = { tokenHash: 'th1', kind: 'invite' as const, userId: null, companyId: 'co_a', email: 'sara@example.com', role: 'Viewer', createdBy: 'u1', createdAt: T0, expiresAt: 2_000, usedAt: null };
      await p.insertToken(token);
      await p.insertToken({ ...token, tokenHash: 'th2', expiresAt: 500 });
      expect(await p.token('th1')).toEqual(token);
      expect((await p.invitations('co_a', 1_000)).map((t) => t.tokenHash)).toEqual(['th1']);
      expect(await p.useToken('th1', T1)).toBe(true);
      expect(await p.useToken('th1', T2)).toBe(false);
      expect(await p.invitations('co_a', 1_000)).toEqual([]);
    });

    it('throttles: counts in a window, a new window after it, several processes counting at once', async () => {
      const t = s.throttles;
      expect(await t.hit('ip:1', 1_000, 60_000)).toBe(1);
      expect(await t.hit('ip:1', 2_000, 60_000)).toBe(2);
      expect(await t.peek('ip:1', 3_000, 60_000)).toEqual({ count: 2, resetAt: 61_000 });
      expect(await t.hit('ip:1', 61_000, 60_000)).toBe(1);
      expect(await t.peek('ip:1', 61_500, 60_000)).toEqual({ count: 1, resetAt: 121_000 });
      expect(await t.peek('ip:1', 200_000, 60_000)).toEqual({ count: 0, resetAt: 200_000 });
      const counts = await Promise.all(Array.from({ length: 20 }, () => t.hit('ip:2', 5_000, 60_000)));
      expect(counts.sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
      await t.clear('ip:2');
      expect((await t.peek('ip:2', 5_000, 60_000)).count).toBe(0);
    });
  });

  describe('transactions', () => {
    beforeAll(async () => {
      await s.db.exec('CREATE TABLE tx_probe (v TEXT NOT NULL)');
    });
    const values = async () => (await s.db.all<{ v: string }>('SELECT v FROM tx_probe ORDER BY v')).map((r) => r.v);
    const clear = () => s.db.run('DELETE FROM tx_probe');

    it('commits on resolve, rolls back on throw', async () => {
      await clear();
      expect(await s.db.transaction(async () => {
        await s.db.run('INSERT INTO tx_probe (v) VALUES (?)', ['a']);
        return 'done';
      })).toBe('done');
      await expect(s.db.transaction(async () => {
        await s.db.run('INSERT INTO tx_probe (v) VALUES (?)', ['b']);
        throw new Error('boom');
      })).rejects.toThrow('boom');
      expect(await values()).toEqual(['a']);
      expect(s.db.inTransaction()).toBe(false);
    });

    it('nests as savepoints: an inner failure the caller catches undoes only the inner work (even after a failed statement)', async () => {
      await clear();
      await s.db.transaction(async () => {
        expect(s.db.inTransaction()).toBe(true);
        await s.db.run('INSERT INTO tx_probe (v) VALUES (?)', ['outer']);
        await s.db
          .transaction(async () => {
            await s.db.run('INSERT INTO tx_probe (v) VALUES (?)', ['inner']);
            await s.db.run('INSERT INTO no_such_table (v) VALUES (?)', ['x']);
          })
          .catch(() => {});
        await s.db.transaction(async () => {
          await s.db.run('INSERT INTO tx_probe (v) VALUES (?)', ['inner2']);
        });
        await s.db.run('INSERT INTO tx_probe (v) VALUES (?)', ['after']);
      });
      expect(await values()).toEqual(['after', 'inner2', 'outer']);
    });

    it('runs afterCommit after the outermost commit, in order, and drops what was rolled back', async () => {
      await clear();
      const log: string[] = [];
      s.db.afterCommit(() => log.push('outside: at once'));
      await s.db.transaction(async () => {
        s.db.afterCommit(() => log.push('outer'));
        await s.db.transaction(async () => {
          s.db.afterCommit(() => log.push('inner'));
        });
        await s.db
          .transaction(async () => {
            s.db.afterCommit(() => log.push('rolled back inner'));
            throw new Error('inner');
          })
          .catch(() => {});
        log.push('before commit');
      });
      await s.db
        .transaction(async () => {
          s.db.afterCommit(() => log.push('rolled back outer'));
          throw new Error('outer');
        })
        .catch(() => {});
      expect(log).toEqual(['outside: at once', 'before commit', 'outer', 'inner']);
    });

    it('keeps uncommitted rows to the transaction; concurrent transactions all commit', async () => {
      await clear();
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      let inserted!: () => void;
      const insertedP = new Promise<void>((r) => (inserted = r));
      const tx = s.db.transaction(async () => {
        await s.db.run('INSERT INTO tx_probe (v) VALUES (?)', ['pending']);
        inserted();
        await gate;
      });
      await insertedP;
      // Outside the transaction: SQLite waits for it to end, PostgreSQL does not see its rows.
      const outside = s.db.all('SELECT v FROM tx_probe');
      const seen = await Promise.race([outside, new Promise((r) => setTimeout(() => r('waiting'), 100))]);
      expect(seen === 'waiting' || (Array.isArray(seen) && seen.length === 0)).toBe(true);
      release();
      await tx;
      await outside;
      await Promise.all(Array.from({ length: 8 }, (_, i) => s.db.transaction(() => s.db.run('INSERT INTO tx_probe (v) VALUES (?)', [`c${i}`]))));
      expect((await values()).length).toBe(9);
    });

    it('a lazy unit of work begins at its first write: reads and waits before it hold nothing; all its writes commit or none', async () => {
      await clear();
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      const lazy = s.db.transaction(async () => {
        expect(s.db.inTransaction()).toBe(false);
        await s.db.all('SELECT v FROM tx_probe');
        await gate;
        await s.db.run('INSERT INTO tx_probe (v) VALUES (?)', ['l1']);
        expect(s.db.inTransaction()).toBe(true);
        await s.db.transaction(() => s.db.run('INSERT INTO tx_probe (v) VALUES (?)', ['l2']));
        return 'lazy';
      }, { lazy: true });
      // While the lazy one waits (a hash, a DNS lookup), another transaction commits at once.
      await s.db.transaction(() => s.db.run('INSERT INTO tx_probe (v) VALUES (?)', ['other']));
      expect(await values()).toEqual(['other']);
      release();
      expect(await lazy).toBe('lazy');
      expect(await values()).toEqual(['l1', 'l2', 'other']);

      await clear();
      await expect(s.db.transaction(async () => {
        await s.db.transaction(() => s.db.run('INSERT INTO tx_probe (v) VALUES (?)', ['a']));
        await s.db.run('INSERT INTO tx_probe (v) VALUES (?)', ['b']);
        throw new Error('after two writes');
      }, { lazy: true })).rejects.toThrow('after two writes');
      expect(await values()).toEqual([]);
      // Its first write failing inside a nested transaction the caller catches undoes just that;
      // what it writes after commits.
      await clear();
      await s.db.transaction(async () => {
        await s.db.transaction(async () => {
          await s.db.run('INSERT INTO tx_probe (v) VALUES (?)', ['undone']);
          throw new Error('inner');
        }).catch(() => {});
        expect(s.db.inTransaction()).toBe(false);
        await s.db.transaction(() => s.db.run('INSERT INTO tx_probe (v) VALUES (?)', ['kept']));
        await s.db.run('INSERT INTO tx_probe (v) VALUES (?)', ['kept too']);
      }, { lazy: true });
      expect(await values()).toEqual(['kept', 'kept too']);
      // One that only reads never begins.
      const log: string[] = [];
      await s.db.transaction(async () => {
        await s.db.all('SELECT v FROM tx_probe');
        s.db.afterCommit(() => log.push('at once'));
      }, { lazy: true });
      expect(log).toEqual(['at once']);
      expect(s.db.inTransaction()).toBe(false);
    });
  });

  describe('the change feed', () => {
    it('tells this process after the commit and another connection on its next check, once each', async () => {
      const other = await openStorage({ file: loc.file, url: loc.url });
      try {
        const here: string[] = [];
        const there: string[] = [];
        s.changes.on('keys', () => here.push('keys'));
        other.changes.on('keys', () => there.push('keys'));
        other.changes.on('companies', () => there.push('companies'));
        await other.changes.poll();
        await s.db.transaction(async () => {
          await s.changes.bump('keys');
          expect(here).toEqual([]);
        });
        expect(here).toEqual(['keys']);
        await s.db.transaction(() => s.changes.bump('companies')).catch(() => {});
        await s.db.transaction(async () => {
          await s.changes.bump('keys');
          throw new Error('rolled back');
        }).catch(() => {});
        // The other connection notices when it checks (LISTEN/NOTIFY delivers asynchronously: wait for it).
        await expect.poll(async () => {
          await other.changes.check();
          return there.slice().sort();
        }, { timeout: 5_000, interval: 50 }).toEqual(['companies', 'keys']);
        // Nothing further happened: checking again tells nothing, and this process is not told its own write twice.
        await other.changes.check();
        await s.changes.check();
        await s.changes.poll();
        expect(there.slice().sort()).toEqual(['companies', 'keys']);
        expect(here).toEqual(['keys']);
      } finally {
        await other.close();
      }
    });

    it('wakes a started feed in another process without a request', async () => {
      const other = await openStorage({ file: loc.file, url: loc.url });
      try {
        const there: string[] = [];
        other.changes.on('installs', () => there.push('installs'));
        await other.changes.poll();
        other.changes.start(50);
        await s.db.transaction(() => s.changes.bump('installs'));
        await expect.poll(() => there, { timeout: 5_000, interval: 20 }).toEqual(['installs']);
      } finally {
        await other.close();
      }
    });
  });

  describe('document tables', () => {
    const filters: FilterField[] = [
      { name: 'status', kind: 'text' },
      { name: 'amount', kind: 'number' },
      { name: 'paid', kind: 'boolean' },
    ];
    let docs: DocumentTable;
    const row = (id: string, data: Record<string, unknown>, state: string | null = 'draft') => ({ id, state, data: JSON.stringify(data), created_at: T0, updated_at: T0, state_changed_at: T0 });

    beforeAll(async () => {
      docs = s.documents('doc_probe_invoice', filters, ['dueDate']);
      await docs.ensure();
      await docs.insert('co_a', row('inv_1', { status: 'open', amount: 100, paid: false, dueDate: '2026-03-01', customer: 'Acme' }));
      await docs.insert('co_a', row('inv_2', { status: 'open', amount: 250.5, paid: true, dueDate: '2026-03-10' }, 'sent'));
      await docs.insert('co_a', row('inv_3', { status: 'closed', amount: 9, paid: true, dueDate: '2026-02-01' }, 'sent'));
      await docs.insert('co_a', row('inv_4', { status: 'open', amount: '100', paid: 'yes' }, 'sent'));
      await docs.insert('co_b', row('inv_b', { status: 'open', amount: 100, paid: false, dueDate: '2026-01-01' }, 'sent'));
    });

    it('has its indexes, and ensure() again does nothing', async () => {
      const indexes = new Set((await s.db.all<{ name: string }>(s.db.dialect.indexesSql)).map((r) => r.name));
      for (const ix of Object.keys(docs.definition().indexes!)) expect(indexes.has(s.db.dialect.stored(ix)), ix).toBe(true);
      expect(isCurrent(await migrate(s.db, { tables: [docs.definition()] }))).toBe(true);
    });

    it('gets, updates and removes within a company', async () => {
      expect(await docs.get('co_a', 'inv_1')).toMatchObject({ id: 'inv_1', state: 'draft' });
      expect(await docs.get('co_b', 'inv_1')).toBeUndefined();
      await docs.update('co_b', { ...row('inv_1', {}), state: 'hijacked' });
      expect((await docs.get('co_a', 'inv_1'))!.state).toBe('draft');
      await docs.insert('co_a', row('inv_tmp', { status: 'x' }));
      await docs.update('co_a', { ...row('inv_tmp', { status: 'y' }), state: 'sent', updated_at: T1 });
      expect(await docs.get('co_a', 'inv_tmp')).toMatchObject({ state: 'sent', data: '{"status":"y"}', updated_at: T1 });
      await docs.remove('co_a', 'inv_tmp');
      expect(await docs.get('co_a', 'inv_tmp')).toBeUndefined();
    });

    it('filters on text, number and boolean fields, and on the state, with paging', async () => {
      const ids = async (f: [string, unknown][], page = 1, size = 10) => {
        const r = await docs.page('co_a', f, page, size);
        return [r.total, r.rows.map((x) => x.id)];
      };
      expect(await ids([])).toEqual([4, ['inv_1', 'inv_2', 'inv_3', 'inv_4']]);
      expect(await ids([['status', 'open']])).toEqual([3, ['inv_1', 'inv_2', 'inv_4']]);
      expect(await ids([['amount', 100]])).toEqual([1, ['inv_1']]);
      expect(await ids([['amount', 250.5]])).toEqual([1, ['inv_2']]);
      expect(await ids([['paid', true]])).toEqual([2, ['inv_2', 'inv_3']]);
      expect(await ids([['paid', false]])).toEqual([1, ['inv_1']]);
      expect(await ids([['paid', true], ['state', 'sent'], ['status', 'open']])).toEqual([1, ['inv_2']]);
      expect(await ids([['status', 'open']], 2, 2)).toEqual([3, ['inv_4']]);
      expect(await ids([['status', 'nope']])).toEqual([0, []]);
    });

    it('finds due documents by date, state and condition, and claims a firing once', async () => {
      await s.installs.put({ companyId: 'co_a', appId: 'probe', version: '1.0.0', state: 'enabled', snapshot: {}, installedAt: T0, updatedAt: T0 });
      await s.installs.put({ companyId: 'co_b', appId: 'probe', version: '1.0.0', state: 'disabled', snapshot: {}, installedAt: T0, updatedAt: T0 });
      const due = async (q: Partial<Parameters<DocumentTable['due']>[1]>) =>
        (await docs.due('overdue', { appId: 'probe', date: 'dueDate', cutoff: '2026-03-05', limit: 10, ...q })).map((d) => [d.id, d.occurrence, d.company_id]);
      expect(await due({})).toEqual([['inv_1', '2026-03-01', 'co_a'], ['inv_3', '2026-02-01', 'co_a']]);
      expect(await due({ states: ['sent'] })).toEqual([['inv_3', '2026-02-01', 'co_a']]);
      expect(await due({ when: { field: 'paid', equals: false } })).toEqual([['inv_1', '2026-03-01', 'co_a']]);
      expect(await due({ when: { field: 'paid', equals: true } })).toEqual([['inv_3', '2026-02-01', 'co_a']]);
      expect(await due({ when: { field: 'amount', below: 50 } })).toEqual([['inv_3', '2026-02-01', 'co_a']]);
      expect(await due({ when: { field: 'amount', above: 50 } })).toEqual([['inv_1', '2026-03-01', 'co_a']]);
      expect(await due({ when: { field: 'amount', equals: 100 } })).toEqual([['inv_1', '2026-03-01', 'co_a']]);
      expect(await due({ when: { field: 'status', in: ['closed', 'void'] } })).toEqual([['inv_3', '2026-02-01', 'co_a']]);
      expect(await due({ when: { field: 'customer', present: true } })).toEqual([['inv_1', '2026-03-01', 'co_a']]);
      expect(await due({ when: { field: 'customer', present: false } })).toEqual([['inv_3', '2026-02-01', 'co_a']]);
      expect(await due({ date: 'createdAt', cutoff: T1, limit: 1 })).toEqual([['inv_1', T0, 'co_a']]);
      expect(await docs.claim('co_a', 'inv_1', 'overdue', '2026-03-01', T1)).toBe(true);
      expect(await docs.claim('co_a', 'inv_1', 'overdue', '2026-03-01', T2)).toBe(false);
      expect(await due({})).toEqual([['inv_3', '2026-02-01', 'co_a']]);
    });

    it('purges one company', async () => {
      expect(await docs.purgeCompany('co_b')).toBe(1);
      expect((await docs.page('co_a', [], 1, 10)).total).toBe(4);
    });

    it('works with a table and index names longer than PostgreSQL keeps', async () => {
      const long = s.documents(`doc_${'a'.repeat(40)}_${'b'.repeat(40)}`, [{ name: `f${'x'.repeat(39)}`, kind: 'number' }], [`d${'y'.repeat(39)}`]);
      await long.ensure();
      expect(isCurrent(await migrate(s.db, { tables: [long.definition()] }))).toBe(true);
      await long.insert('co_a', row('l1', { [`f${'x'.repeat(39)}`]: 3 }));
      expect((await long.page('co_a', [[`f${'x'.repeat(39)}`, 3]], 1, 10)).rows.map((r) => r.id)).toEqual(['l1']);
    });
  });
});

// What only a network database can do: lose a connection.
describe.each(databases().filter((d) => d.name === 'postgres'))('lost connections ($name)', (database) => {
  let loc: Location;
  let s: Storage;
  beforeAll(async () => {
    loc = await database.location();
    s = await loc.open();
  });
  afterAll(async () => {
    await s?.close();
    await loc?.drop();
  });

  it('a transaction whose connection is cut fails alone; the next statements get a new one', async () => {
    await expect(
      s.db.transaction(async () => {
        await s.db.get('SELECT pg_terminate_backend(pg_backend_pid())');
      }),
    ).rejects.toThrow();
    expect(await s.db.get('SELECT 1 AS one')).toEqual({ one: 1 });
    expect(await s.db.transaction(() => s.db.get('SELECT 2 AS two'))).toEqual({ two: 2 });
  });

  it("hears another process's commits and not its own, which were told in-process", async () => {
    const other = await openStorage({ file: loc.file, url: loc.url });
    try {
      const heard: (string | undefined)[] = [];
      const stop = (await (s.db as PostgresDb).listen()).subscribe((scope) => heard.push(scope));
      // Notifications come in commit order: this process's own would come first.
      await s.db.transaction(() => s.changes.bump('endpoints'));
      await other.db.transaction(() => other.changes.bump('keys'));
      await expect.poll(() => heard, { timeout: 5_000, interval: 20 }).toEqual(['keys']);
      stop();
    } finally {
      await other.close();
    }
  });

  it('the listening connection comes back, and the feed hears what was written meanwhile', async () => {
    const other = await openStorage({ file: loc.file, url: loc.url });
    try {
      const there: string[] = [];
      other.changes.on('endpoints', () => there.push('endpoints'));
      await other.changes.poll();
      other.changes.start(50);
      const cut = await s.db.all("SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'");
      expect(cut.length).toBeGreaterThanOrEqual(2);
      await s.db.transaction(() => s.changes.bump('endpoints'));
      await expect.poll(() => there, { timeout: 5_000, interval: 20 }).toEqual(['endpoints']);
      // Listening again: a later write is heard too.
      await new Promise((r) => setTimeout(r, 600));
      await s.db.transaction(() => s.changes.bump('endpoints'));
      await expect.poll(() => there, { timeout: 5_000, interval: 20 }).toEqual(['endpoints', 'endpoints']);
    } finally {
      await other.close();
    }
  });
});
