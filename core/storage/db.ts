// The one interface every repository talks to. Everything is asynchronous, so the same code runs
// on the embedded SQLite default and on a network database. SQL uses `?` placeholders; a driver
// that numbers them (`$1`) rewrites them. The current transaction is found through async
// context, so a repository called inside `transaction()` joins it without being handed it.
import type { Dialect } from './dialect.ts';

export type Params = readonly unknown[];

export interface Db {
  readonly dialect: Dialect;
  all<T = Record<string, unknown>>(sql: string, params?: Params): Promise<T[]>;
  get<T = Record<string, unknown>>(sql: string, params?: Params): Promise<T | undefined>;
  run(sql: string, params?: Params): Promise<{ changes: number }>;
  /** Several statements without parameters (DDL). */
  exec(sql: string): Promise<void>;
  /**
   * Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. A call
   * inside another transaction joins it as a savepoint, so an inner failure that the caller
   * catches undoes only the inner work.
   *
   * `lazy` (a request's unit of work): the transaction begins at the first write or nested
   * transaction inside `fn`, so slow work before it (a password hash, a DNS lookup) holds no
   * connection, and `fn` that only reads never begins one. Reads before the first write run
   * as reads outside a transaction do.
   */
  transaction<T>(fn: () => Promise<T>, opts?: { lazy?: boolean }): Promise<T>;
  /** Whether the caller runs inside a transaction. */
  inTransaction(): boolean;
  /** Runs `fn` once the outermost transaction commits (at once outside one); dropped on rollback. */
  afterCommit(fn: () => void): void;
  close(): Promise<void>;
}
