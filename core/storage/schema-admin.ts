// The schema as an operator sees it (`diwan migrate`): what the database lacks, and bringing it
// up to date, without opening the rest of the storage (the change feed, the repositories).
// Checking writes nothing: a SQLite file that does not exist yet is not created, it is reported
// as an empty database.
import fs from 'node:fs';
import type { Db } from './db.ts';
import { isCurrent, migrate, schemaGap, type SchemaGap } from './migrate.ts';
import { DatabaseUnavailable, connectDb, redactUrl, type StorageOptions } from './open.ts';

export interface SchemaReport {
  dialect: 'sqlite' | 'postgres';
  /** The SQLite file, or the URL without its password. */
  database: string;
  /** `check`: what is missing; `apply`: what was created or run (empty lists: nothing). */
  gap: SchemaGap;
  current: boolean;
}

async function withDb<T>(opts: StorageOptions, fn: (db: Db) => Promise<T>): Promise<T> {
  const db = await connectDb({ ...opts, max: 2 });
  try {
    // A server that does not answer is named as such, as the host's start names it.
    if (opts.url !== undefined) await db.get('SELECT 1 AS ok').catch((err) => Promise.reject(new DatabaseUnavailable(opts.url!, err)));
    return await fn(db);
  } finally {
    await db.close().catch(() => {});
  }
}

const where = (opts: StorageOptions) => (opts.url === undefined ? { dialect: 'sqlite' as const, database: opts.file } : { dialect: 'postgres' as const, database: redactUrl(opts.url) });

/** What the database lacks; writes nothing. */
export async function checkSchema(opts: StorageOptions): Promise<SchemaReport> {
  const file = opts.url === undefined && opts.file !== ':memory:' && !fs.existsSync(opts.file) ? ':memory:' : opts.file;
  const gap = await withDb({ ...opts, file }, (db) => schemaGap(db));
  return { ...where(opts), gap, current: isCurrent(gap) };
}

/** Applies what is missing (tables, columns, indexes, data steps); reports what it applied. */
export async function applySchema(opts: StorageOptions): Promise<SchemaReport> {
  return withDb(opts, async (db) => {
    const gap = await migrate(db);
    return { ...where(opts), gap, current: isCurrent(await schemaGap(db)) };
  });
}
