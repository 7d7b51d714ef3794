// Database failures that say "not now" rather than "wrong": the same request may well succeed a
// moment later. The HTTP layer answers them 503 with Retry-After instead of 500.

/** SQLite: another connection held the write lock past busy_timeout, or a snapshot went stale. */
const SQLITE = new Set(['SQLITE_BUSY', 'SQLITE_BUSY_SNAPSHOT', 'SQLITE_BUSY_RECOVERY', 'SQLITE_LOCKED']);

/** PostgreSQL SQLSTATEs: serialization failure, deadlock, lock not available, too many connections. */
const POSTGRES = new Set(['40001', '40P01', '55P03', '53300']);

export function isTransientDbError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && (SQLITE.has(code) || POSTGRES.has(code))) return true;
  // node-postgres' pool, when no connection frees up within connectionTimeoutMillis.
  return err instanceof Error && /^timeout exceeded when trying to connect$/i.test(err.message);
}
