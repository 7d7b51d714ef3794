// One SQLite database per host (better-sqlite3, through drizzle for the core tables).
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { drizzle, type BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { schema } from './schema.ts';
import { coreMigrations } from './migrations.ts';
import { applyPragmas } from './dialect.ts';

export type Sqlite = Database.Database;
export type Drizzle = BetterSQLite3Database<typeof schema>;

export interface Storage {
  sqlite: Sqlite;
  orm: Drizzle;
  close(): void;
}

/** Opens (creating and migrating on first use) the database at `file`, or in memory for ':memory:'. */
export function openStorage(file: string): Storage {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  const sqlite = new Database(file);
  applyPragmas(sqlite);
  migrate(sqlite, coreMigrations);
  return { sqlite, orm: drizzle(sqlite, { schema }), close: () => sqlite.close() };
}

function migrate(sqlite: Sqlite, steps: string[]): void {
  const current = sqlite.pragma('user_version', { simple: true }) as number;
  if (current > steps.length) {
    throw new Error(`database schema version ${current} is newer than this host knows (${steps.length})`);
  }
  sqlite.transaction(() => {
    for (let v = current; v < steps.length; v++) sqlite.exec(steps[v]);
    sqlite.pragma(`user_version = ${steps.length}`);
  }).immediate();
}
