// Every piece of SQLite-specific SQL lives here, so that a PostgreSQL backend can follow by
// giving these functions a second implementation.
import type Database from 'better-sqlite3';

export function applyPragmas(sqlite: Database.Database): void {
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
}

/** Increments when another connection (the CLI, say) commits: caches re-read on change. Checked per request, so prepared once. */
export function dataVersionReader(sqlite: Database.Database): () => number {
  const stmt = sqlite.prepare('PRAGMA data_version').pluck();
  return () => stmt.get() as number;
}

const ident = (name: string) => {
  if (!/^[a-z][a-z0-9_]*$/.test(name)) throw new Error(`unsafe SQL identifier: ${name}`);
  return `"${name}"`;
};

/** Table of one document type: JSON body plus the columns every document has. */
export function docTableName(appId: string, typeName: string): string {
  return `doc_${appId.replace(/-/g, '_')}_${typeName.toLowerCase()}`;
}

export function createDocTableSql(table: string, filterFields: string[]): string {
  const t = ident(table);
  const parts = [
    `CREATE TABLE IF NOT EXISTS ${t} (
       seq INTEGER PRIMARY KEY,
       id TEXT NOT NULL UNIQUE,
       company_id TEXT NOT NULL,
       state TEXT,
       data TEXT NOT NULL,
       created_at TEXT NOT NULL,
       updated_at TEXT NOT NULL
     )`,
    `CREATE INDEX IF NOT EXISTS ${ident(`${table}_company`)} ON ${t}(company_id, seq)`,
    `CREATE INDEX IF NOT EXISTS ${ident(`${table}_state`)} ON ${t}(company_id, state, seq)`,
  ];
  for (const f of filterFields) {
    parts.push(
      `CREATE INDEX IF NOT EXISTS ${ident(`${table}_f_${f.toLowerCase()}`)} ON ${t}(company_id, ${jsonField(f)}, seq)`,
    );
  }
  return parts.join(';\n');
}

/** The SQL expression reading a top-level field of a document's JSON body. */
export function jsonField(field: string): string {
  if (!/^[a-zA-Z][a-zA-Z0-9_]*$/.test(field)) throw new Error(`unsafe field name: ${field}`);
  return `json_extract(data, '$.${field}')`;
}

export interface DocStatements {
  insert: Database.Statement;
  get: Database.Statement;
  update: Database.Statement;
  remove: Database.Statement;
  purgeCompany: Database.Statement;
  /** Page of a company's documents, with filters over JSON fields and state. */
  list(filters: string[]): { rows: Database.Statement; count: Database.Statement };
}

export function docStatements(sqlite: Database.Database, table: string): DocStatements {
  const t = ident(table);
  const listCache = new Map<string, { rows: Database.Statement; count: Database.Statement }>();
  return {
    insert: sqlite.prepare(
      `INSERT INTO ${t} (id, company_id, state, data, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`,
    ),
    get: sqlite.prepare(`SELECT id, state, data, created_at, updated_at FROM ${t} WHERE company_id = ? AND id = ?`),
    update: sqlite.prepare(`UPDATE ${t} SET state = ?, data = ?, updated_at = ? WHERE company_id = ? AND id = ?`),
    remove: sqlite.prepare(`DELETE FROM ${t} WHERE company_id = ? AND id = ?`),
    purgeCompany: sqlite.prepare(`DELETE FROM ${t} WHERE company_id = ?`),
    list(filters) {
      const key = filters.join(',');
      let s = listCache.get(key);
      if (!s) {
        const where = ['company_id = ?', ...filters.map((f) => (f === 'state' ? 'state = ?' : `${jsonField(f)} = ?`))];
        const w = where.join(' AND ');
        s = {
          rows: sqlite.prepare(
            `SELECT id, state, data, created_at, updated_at FROM ${t} WHERE ${w} ORDER BY seq LIMIT ? OFFSET ?`,
          ),
          count: sqlite.prepare(`SELECT count(*) AS n FROM ${t} WHERE ${w}`).pluck(),
        };
        listCache.set(key, s);
      }
      return s;
    },
  };
}

/** An index hint where the planner needs one (SQLite's `INDEXED BY`; other engines plan without it). */
export function indexHint(index: string): string {
  return `INDEXED BY ${ident(index)}`;
}
