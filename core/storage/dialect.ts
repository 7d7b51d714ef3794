// What differs between the databases, in one place: column types, JSON access into a
// document's body, the statements of the schema and of introspection, locking, and how a write
// tells other processes. Repositories write portable SQL and ask the dialect for these pieces;
// none of them asks which database it runs on.
import { createHash } from 'node:crypto';
import type { ColumnDef, IndexDef, TableDef } from './schema.ts';

export interface Dialect {
  readonly name: 'sqlite' | 'postgres';
  /** A table or index name as the database stores it (PostgreSQL keeps 63 bytes: longer names are shortened, stably). */
  stored(name: string): string;
  /** CREATE TABLE (no indexes). */
  createTable(t: TableDef): string;
  createIndex(table: string, name: string, index: IndexDef): string;
  addColumn(table: string, name: string, col: ColumnDef): string;
  /**
   * A top-level field of a JSON text column, as a comparable SQL value: text compared as text
   * (byte order), numbers as numbers, booleans so that a bound 0/1 (or true/false) compares
   * right. A value of another JSON type reads as NULL where the database would otherwise fail.
   */
  jsonField(column: string, field: string, kind: JsonKind): string;
  /** True when an element of the JSON array `lines` of a JSON text column has text `field` equal to the one parameter. */
  jsonLinesHave(column: string, lines: string, field: string): string;
  /** An index hint where the planner needs one (empty where it plans well without). */
  indexHint(index: string): string;
  /** The smaller of two values. */
  least(a: string, b: string): string;
  /** Lock the selected rows, skipping those another transaction holds (empty where writes are serial). */
  skipLocked: string;
  /** Lock the selected rows to the end of the transaction, waiting for another holding them (empty where writes are serial). */
  forUpdate: string;
  /**
   * A statement with one parameter (a name) that makes this transaction hold the name's lock to
   * its end, waiting while another holds it (empty where writes are serial).
   */
  lock: string;
  /**
   * Whether rows that each get their own values are updated by one statement over a VALUES list
   * (a server: a round trip per statement) rather than one statement per row (SQLite, whose
   * UPDATE … FROM materialises the list and costs about three single-row updates per row).
   */
  bulkUpdate: boolean;
  /**
   * A statement with one parameter (a name) answering `{ locked }`: true when this transaction
   * now holds the name's lock to its end, false when another transaction holds it (empty where
   * writes are serial, so nothing else can be under way).
   */
  tryLock: string;
  /**
   * A statement, run inside a migration's transaction, that makes concurrent migrations of the
   * same schema wait for each other (empty where transactions that write are serial anyway).
   */
  migrationLock: string;
  /**
   * A statement with one parameter (the scope), run in the transaction that bumps a cache scope,
   * that tells every other process at its commit (empty where they poll instead).
   */
  notifyChange: string;
  /** Tells other processes, at the commit, that events were written (empty: they notice by asking). */
  notifyEvents: string;
  /**
   * Introspection: tables and indexes answer rows of `{ name }`; columns answers `{ tbl, name }`
   * for the tables named in the JSON array bound to its one `?`.
   */
  tablesSql: string;
  columnsSql: string;
  indexesSql: string;
}

export type JsonKind = 'text' | 'number' | 'boolean';

/** Identifiers come from code and manifests, never from requests; still, refuse anything odd. */
export function ident(name: string): string {
  if (!/^[a-z][a-z0-9_]*$/.test(name)) throw new Error(`unsafe SQL identifier: ${name}`);
  return `"${name}"`;
}

/**
 * `(?, ?, …)` for an `IN` test and its values, padded to a power of two with the last value: a
 * statement is prepared once per SQL text, so lists of any length make a few texts, not one each.
 */
export function inList(values: readonly unknown[]): { sql: string; params: unknown[] } {
  if (!values.length) throw new Error('inList: no values');
  const n = 2 ** Math.ceil(Math.log2(values.length));
  const params = values.concat(Array(n - values.length).fill(values[values.length - 1]));
  return { sql: `(${params.map(() => '?').join(', ')})`, params };
}

export function safeField(field: string): string {
  if (!/^[a-zA-Z][a-zA-Z0-9_]*$/.test(field)) throw new Error(`unsafe field name: ${field}`);
  return field;
}

interface Types {
  text: string;
  int: string;
  bigint: string;
  blob: string;
  /** The whole column definition of an auto-numbered primary key. */
  serial: string;
}

/** The SQL of a dialect's schema statements, from its column types and its name rule. */
function ddl(types: Types, stored: (name: string) => string, unlogged = '') {
  const name = (n: string) => ident(stored(n));
  const column = (col: string, c: ColumnDef): string => {
    const parts = [ident(col), types[c.type]];
    if (c.type !== 'serial') {
      if (c.primaryKey) parts.push('PRIMARY KEY');
      if (c.notNull && !c.primaryKey) parts.push('NOT NULL');
      if (c.unique) parts.push('UNIQUE');
      if (c.default !== undefined) parts.push(`DEFAULT ${typeof c.default === 'number' ? c.default : `'${c.default.replace(/'/g, "''")}'`}`);
      if (c.references) parts.push(`REFERENCES ${name(c.references.table)}(${ident(c.references.column)})`);
    }
    return parts.join(' ');
  };
  return {
    createTable(t: TableDef): string {
      const cols = Object.entries(t.columns).map(([n, c]) => column(n, c));
      if (t.primaryKey) cols.push(`PRIMARY KEY (${t.primaryKey.map(ident).join(', ')})`);
      for (const u of t.unique ?? []) cols.push(`UNIQUE (${u.map(ident).join(', ')})`);
      return `CREATE ${t.unlogged ? unlogged : ''}TABLE IF NOT EXISTS ${name(t.name)} (\n  ${cols.join(',\n  ')}\n)`;
    },
    createIndex(table: string, index: string, ix: IndexDef): string {
      const cols = ix.columns.map((c) => (/^[a-z_]+$/.test(c) ? ident(c) : c)).join(', ');
      return `CREATE ${ix.unique ? 'UNIQUE ' : ''}INDEX IF NOT EXISTS ${name(index)} ON ${name(table)} (${cols})${ix.where ? ` WHERE ${ix.where}` : ''}`;
    },
    addColumn: (table: string, col: string, c: ColumnDef) => `ALTER TABLE ${name(table)} ADD COLUMN ${column(col, c)}`,
  };
}

const sqliteDdl = ddl({ text: 'TEXT', int: 'INTEGER', bigint: 'INTEGER', blob: 'BLOB', serial: 'INTEGER PRIMARY KEY' }, (n) => n);

export const sqliteDialect: Dialect = {
  name: 'sqlite',
  stored: (n) => n,
  ...sqliteDdl,
  jsonField: (column, field) => `json_extract(${ident(column)}, '$.${safeField(field)}')`,
  jsonLinesHave: (column, lines, field) =>
    `EXISTS (SELECT 1 FROM json_each(${ident(column)}, '$.${safeField(lines)}') WHERE json_extract(value, '$.${safeField(field)}') = ?)`,
  indexHint: (index) => `INDEXED BY ${ident(index)}`,
  least: (a, b) => `min(${a}, ${b})`,
  skipLocked: '',
  forUpdate: '',
  lock: '',
  bulkUpdate: false,
  tryLock: '',
  // BEGIN IMMEDIATE already makes writers wait for each other.
  migrationLock: '',
  // Other connections notice through PRAGMA data_version (see sqlite.ts).
  notifyChange: '',
  notifyEvents: '',
  tablesSql: "SELECT name FROM sqlite_master WHERE type = 'table'",
  columnsSql: "SELECT m.name AS tbl, p.name AS name FROM sqlite_master m, pragma_table_info(m.name) p WHERE m.type = 'table' AND m.name IN (SELECT value FROM json_each(?))",
  indexesSql: "SELECT name FROM sqlite_master WHERE type = 'index'",
};

/** PostgreSQL keeps the first 63 bytes of a name; a longer one becomes its first 52 characters and a hash. */
const PG_NAME_MAX = 63;
const pgStored = (n: string): string =>
  Buffer.byteLength(n) <= PG_NAME_MAX ? n : `${n.slice(0, 52)}_${createHash('sha256').update(n).digest('hex').slice(0, 10)}`;

/**
 * Text columns compare and sort byte by byte (COLLATE "C"), as SQLite does: ids, ISO times and
 * dates order the same on both databases whatever locale the cluster was created with.
 */
const pgDdl = ddl({ text: 'TEXT COLLATE "C"', int: 'INTEGER', bigint: 'BIGINT', blob: 'BYTEA', serial: 'BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY' }, pgStored, 'UNLOGGED ');

/** The current schema's oid (the first of search_path that exists). */
const PG_SCHEMA = '(SELECT n.oid FROM pg_catalog.pg_namespace n WHERE n.nspname = current_schema())';

/** The channel every process listens on; the payload is `<schema>:<scope>`. */
export const PG_CHANGE_CHANNEL = 'diwan_changes';

export const postgresDialect: Dialect = {
  name: 'postgres',
  stored: pgStored,
  ...pgDdl,
  jsonField(column, field, kind) {
    const doc = `(${ident(column)}::jsonb)`;
    const f = `'${safeField(field)}'`;
    if (kind === 'number') return `(CASE jsonb_typeof(${doc} -> ${f}) WHEN 'number' THEN (${doc} ->> ${f})::numeric END)`;
    // A boolean expression: PostgreSQL reads a bound '1'/'0' and 'true'/'false' as booleans alike.
    if (kind === 'boolean') return `(CASE jsonb_typeof(${doc} -> ${f}) WHEN 'boolean' THEN (${doc} ->> ${f})::boolean END)`;
    return `((${doc} ->> ${f}) COLLATE "C")`;
  },
  jsonLinesHave(column, lines, field) {
    const arr = `((${ident(column)}::jsonb) -> '${safeField(lines)}')`;
    return `EXISTS (SELECT 1 FROM jsonb_array_elements(CASE jsonb_typeof(${arr}) WHEN 'array' THEN ${arr} ELSE '[]'::jsonb END) e WHERE (e ->> '${safeField(field)}') = ?)`;
  },
  indexHint: () => '',
  least: (a, b) => `LEAST(${a}, ${b})`,
  skipLocked: 'FOR UPDATE SKIP LOCKED',
  forUpdate: 'FOR UPDATE',
  lock: "SELECT pg_advisory_xact_lock(hashtext('diwan.' || ?)) AS locked",
  bulkUpdate: true,
  // A transaction-level advisory lock on the name's hash (a collision only makes one wait its turn).
  tryLock: "SELECT pg_try_advisory_xact_lock(hashtext('diwan.' || ?)) AS locked",
  // Held to the end of the migrating transaction; one key per schema.
  migrationLock: "SELECT pg_advisory_xact_lock(hashtext('diwan.migrate:' || current_schema())) AS locked",
  notifyChange: `SELECT pg_notify('${PG_CHANGE_CHANNEL}', current_schema() || ':' || ?) AS notified`,
  // The same channel; listeners route it by scope without reading any version.
  notifyEvents: `SELECT pg_notify('${PG_CHANGE_CHANNEL}', current_schema() || ':outbox') AS notified`,
  // The catalogue itself rather than information_schema: a start reads it once per app, and it answers in a fraction of the time.
  tablesSql: `SELECT c.relname AS name FROM pg_catalog.pg_class c WHERE c.relnamespace = ${PG_SCHEMA} AND c.relkind IN ('r', 'p')`,
  columnsSql: `SELECT c.relname AS tbl, a.attname AS name FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
    WHERE c.relnamespace = ${PG_SCHEMA} AND c.relname IN (SELECT json_array_elements_text(?::json)) AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped`,
  indexesSql: `SELECT c.relname AS name FROM pg_catalog.pg_class c WHERE c.relnamespace = ${PG_SCHEMA} AND c.relkind IN ('i', 'I')`,
};
