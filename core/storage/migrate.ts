// Brings a database to the declared schema, the same way on every database: what schema.ts
// declares and the database lacks (a table, a column, an index) is created, in one transaction.
// Changes a declaration cannot say (a backfill, a rename, an index replaced) are named steps,
// each applied once and recorded; nothing else is ever dropped. Processes starting together
// against one empty database take turns: the dialect's migration lock is held to the end of the
// transaction, and each one looks at what is missing only once it holds it.
import type { Db } from './db.ts';
import { ident } from './dialect.ts';
import { tables as coreTables, type TableDef } from './schema.ts';

export interface DataMigration {
  /** Stable and ordered, e.g. `2026-11-24-secrets-encrypted`. */
  id: string;
  up(db: Db): Promise<void>;
}

/** The core's data steps, in order; `migrate` runs them with the core tables. */
export const coreSteps: DataMigration[] = [
  {
    // Attempts got their delivery's company (tenant rows all carry one).
    id: '2026-11-23-webhook-attempts-company',
    async up(db) {
      await db.run(
        "UPDATE webhook_attempts SET company_id = COALESCE((SELECT d.company_id FROM webhook_deliveries d WHERE d.id = webhook_attempts.delivery_id), '') WHERE company_id = ''",
      );
    },
  },
  {
    // The delivery indexes by state held every row ever delivered, and each row moved in them
    // twice; the partial indexes that replaced them hold only the rows still pending or in flight.
    id: '2026-11-27-webhook-deliveries-partial-indexes',
    async up(db) {
      for (const index of ['webhook_deliveries_due', 'webhook_deliveries_endpoint_state']) await db.exec(`DROP INDEX IF EXISTS ${ident(index)}`);
    },
  },
];

const LEDGER: TableDef = {
  name: 'schema_migrations',
  columns: { id: { type: 'text', primaryKey: true }, applied_at: { type: 'text', notNull: true } },
};

export interface SchemaGap {
  tables: string[];
  columns: string[];
  indexes: string[];
  steps: string[];
}

async function names(db: Db, sql: string, params: unknown[] = []): Promise<Set<string>> {
  return new Set((await db.all<{ name: string }>(sql, params)).map((r) => r.name));
}

/** What the database lacks of the schema and of the data steps (empty lists: current). */
export async function schemaGap(db: Db, tables: TableDef[] = coreTables, steps: DataMigration[] = tables === coreTables ? coreSteps : []): Promise<SchemaGap> {
  const d = db.dialect;
  const existing = await names(db, d.tablesSql);
  const indexes = await names(db, d.indexesSql);
  const gap: SchemaGap = { tables: [], columns: [], indexes: [], steps: [] };
  const all = [LEDGER, ...tables];
  const present = all.filter((t) => existing.has(d.stored(t.name)));
  const columns = new Map<string, Set<string>>();
  if (present.length) {
    for (const r of await db.all<{ tbl: string; name: string }>(d.columnsSql, [JSON.stringify(present.map((t) => d.stored(t.name)))])) {
      let set = columns.get(r.tbl);
      if (!set) columns.set(r.tbl, (set = new Set()));
      set.add(r.name);
    }
  }
  for (const t of all) {
    if (!existing.has(d.stored(t.name))) {
      gap.tables.push(t.name);
      gap.indexes.push(...Object.keys(t.indexes ?? {}));
      continue;
    }
    const cols = columns.get(d.stored(t.name)) ?? new Set();
    for (const c of Object.keys(t.columns)) if (!cols.has(c)) gap.columns.push(`${t.name}.${c}`);
    for (const ix of Object.keys(t.indexes ?? {})) if (!indexes.has(d.stored(ix))) gap.indexes.push(ix);
  }
  const applied = steps.length && existing.has(LEDGER.name) ? await names(db, `SELECT id AS name FROM ${ident(LEDGER.name)}`) : new Set<string>();
  gap.steps = steps.map((s) => s.id).filter((id) => !applied.has(id));
  return gap;
}

export const isCurrent = (g: SchemaGap) => !g.tables.length && !g.columns.length && !g.indexes.length && !g.steps.length;

/** Creates what is missing, then runs the data steps not yet applied (the core's with the core tables); returns what it did. */
export async function migrate(db: Db, opts: { tables?: TableDef[]; steps?: DataMigration[]; now?: () => string } = {}): Promise<SchemaGap> {
  const tables = opts.tables ?? coreTables;
  const steps = opts.steps ?? (opts.tables ? [] : coreSteps);
  const now = opts.now ?? (() => new Date().toISOString());
  const d = db.dialect;
  return db.transaction(async () => {
    let gap = await schemaGap(db, tables, steps);
    if (isCurrent(gap)) return gap;
    // Something to do: wait for any other process migrating, then look again (it may have done it).
    if (d.migrationLock) {
      await db.get(d.migrationLock);
      gap = await schemaGap(db, tables, steps);
    }
    const byName = new Map([LEDGER, ...tables].map((t) => [t.name, t]));
    for (const name of gap.tables) await db.exec(d.createTable(byName.get(name)!));
    for (const qualified of gap.columns) {
      const [table, column] = qualified.split('.');
      const col = byName.get(table)!.columns[column];
      if (col.notNull && col.default === undefined) {
        throw new Error(`cannot add ${qualified}: a NOT NULL column needs a default (or a data migration)`);
      }
      await db.exec(d.addColumn(table, column, col));
    }
    for (const t of [LEDGER, ...tables]) {
      for (const [name, ix] of Object.entries(t.indexes ?? {})) if (gap.indexes.includes(name)) await db.exec(d.createIndex(t.name, name, ix));
    }
    for (const step of steps.filter((s) => gap.steps.includes(s.id))) {
      await step.up(db);
      await db.run(`INSERT INTO ${ident(LEDGER.name)} (id, applied_at) VALUES (?, ?)`, [step.id, now()]);
    }
    return gap;
  });
}
