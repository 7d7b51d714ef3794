// The embedded default: one better-sqlite3 connection behind the asynchronous Db interface.
// SQLite runs one writer at a time and this connection is shared by every request, so a
// transaction holds the connection: statements from outside it wait until it ends (they would
// otherwise read its uncommitted rows or be rolled back with it). Statements are prepared once
// per SQL text.
import fs from 'node:fs';
import path from 'node:path';
import { AsyncLocalStorage } from 'node:async_hooks';
import Database from 'better-sqlite3';
import type { Db, Params } from './db.ts';
import { sqliteDialect } from './dialect.ts';
import { BACKSTOP_PAGES, Checkpointer, LOG_LIMIT_BYTES } from './checkpointer.ts';

interface Tx {
  depth: number;
  /** Begun and not yet ended. */
  open: boolean;
  after: (() => void)[];
  /** A lazy unit of work not yet begun: its first write begins it. */
  lazy: boolean;
  beginning?: Promise<void>;
  /** Lets the next unit of work take the connection. */
  release?: () => void;
}

export class SqliteDb implements Db {
  readonly dialect = sqliteDialect;
  private readonly conn: Database.Database;
  private readonly statements = new Map<string, Database.Statement>();
  private readonly als = new AsyncLocalStorage<Tx>();
  /** Set while a transaction holds the connection; resolves when it ends. */
  private held: Promise<void> | null = null;
  private readonly dataVersion: Database.Statement;
  private readonly checkpointer?: Checkpointer;
  private seenVersion: number;
  /** Units of work under way (begun or lazy). */
  private scopes = 0;

  constructor(file: string) {
    if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
    this.conn = new Database(file);
    this.conn.pragma('journal_mode = WAL');
    this.conn.pragma('synchronous = NORMAL');
    this.conn.pragma('foreign_keys = ON');
    this.conn.pragma('busy_timeout = 5000');
    if (file !== ':memory:') {
      // Checkpoints run on a thread of their own (checkpointer.ts); here only as a backstop, or
      // as usual again should that thread fail.
      this.conn.pragma(`wal_autocheckpoint = ${BACKSTOP_PAGES}`);
      this.conn.pragma(`journal_size_limit = ${LOG_LIMIT_BYTES}`);
      this.checkpointer = new Checkpointer(file, { onFailure: () => this.conn.pragma('wal_autocheckpoint = 1000') });
    }
    this.dataVersion = this.conn.prepare('PRAGMA data_version').pluck();
    this.seenVersion = this.dataVersion.get() as number;
  }

  private stmt(sql: string): Database.Statement {
    let s = this.statements.get(sql);
    if (!s) {
      s = this.conn.prepare(sql);
      this.statements.set(sql, s);
    }
    return s;
  }

  private current(): Tx | undefined {
    const tx = this.als.getStore();
    return tx?.open ? tx : undefined;
  }

  // Each method waits in its own loop and then runs its statement in the same synchronous step:
  // a wait in a helper would add a microtask hop in which another flow could take the connection.

  async all<T>(sql: string, params: Params = []): Promise<T[]> {
    while (this.held && !this.current()) await this.held;
    return this.stmt(sql).all(...params) as T[];
  }

  async get<T>(sql: string, params: Params = []): Promise<T | undefined> {
    while (this.held && !this.current()) await this.held;
    return this.stmt(sql).get(...params) as T | undefined;
  }

  async run(sql: string, params: Params = []): Promise<{ changes: number }> {
    const tx = this.als.getStore();
    if (tx?.lazy) await this.begin(tx);
    while (this.held && !this.current()) await this.held;
    const { changes } = this.stmt(sql).run(...params);
    if (!this.held) this.checkpointer?.committed();
    return { changes };
  }

  async exec(sql: string): Promise<void> {
    const tx = this.als.getStore();
    if (tx?.lazy) await this.begin(tx);
    while (this.held && !this.current()) await this.held;
    this.conn.exec(sql);
    if (!this.held) this.checkpointer?.committed();
  }

  inTransaction(): boolean {
    return this.current() !== undefined;
  }

  afterCommit(fn: () => void): void {
    const tx = this.current();
    if (tx) tx.after.push(fn);
    else fn();
  }

  async transaction<T>(fn: () => Promise<T>, opts?: { lazy?: boolean }): Promise<T> {
    const store = this.als.getStore();
    if (store?.open) return this.savepoint(store, fn);
    if (store?.lazy) {
      await this.begin(store);
      // The unit of work's first write: nothing before it to keep, so no savepoint; a failure
      // rolls all of it back and leaves the unit of work lazy again, as if never begun.
      try {
        return await fn();
      } catch (err) {
        this.unbegin(store);
        throw err;
      }
    }
    const tx: Tx = { depth: 0, open: false, after: [], lazy: !!opts?.lazy };
    this.scopes++;
    try {
      if (!tx.lazy) await this.begin(tx);
      const result = await this.als.run(tx, fn);
      if (tx.open) {
        this.conn.exec('COMMIT');
        this.checkpointer?.committed();
        tx.open = false;
        for (const f of tx.after) f();
      }
      return result;
    } catch (err) {
      if (tx.open) {
        tx.open = false;
        if (this.conn.inTransaction) this.conn.exec('ROLLBACK');
      }
      throw err;
    } finally {
      tx.lazy = false;
      if (tx.release) {
        this.held = null;
        tx.release();
      }
      if (--this.scopes === 0) this.disableSoon();
    }
  }

  private idle?: NodeJS.Timeout;

  /**
   * The context is needed only while a unit of work runs: enabled, it hooks every promise of the
   * process (each read request, each webhook attempt). It goes off once no unit of work has run
   * for a second rather than after each one: under a stream of writes, switching the hooks off
   * and on (run() enables them again) for every request costs more than keeping them.
   */
  private disableSoon(): void {
    this.idle ??= setTimeout(() => {
      this.idle = undefined;
      if (this.scopes === 0) this.als.disable();
    }, 1000).unref();
  }

  private unbegin(tx: Tx): void {
    if (tx.open && this.conn.inTransaction) this.conn.exec('ROLLBACK');
    Object.assign(tx, { open: false, lazy: true, beginning: undefined });
    tx.after.length = 0;
    this.held = null;
    tx.release?.();
    tx.release = undefined;
  }

  /**
   * Takes the connection for `tx` and begins: at once when the connection is free (the common
   * case, no promise made), else once the unit of work that holds it ends.
   */
  private begin(tx: Tx): Promise<void> | undefined {
    if (tx.beginning) return tx.beginning;
    if (!this.held) return this.take(tx);
    tx.beginning = (async () => {
      while (this.held) await this.held;
      this.take(tx);
    })();
    return tx.beginning;
  }

  private take(tx: Tx): undefined {
    this.held = new Promise((r) => (tx.release = r));
    // IMMEDIATE takes the write lock now: a concurrent writer (the CLI) waits on busy_timeout
    // instead of failing the transaction at its first write.
    this.conn.exec('BEGIN IMMEDIATE');
    tx.open = true;
    tx.lazy = false;
    return undefined;
  }

  private async savepoint<T>(tx: Tx, fn: () => Promise<T>): Promise<T> {
    const name = `sp${++tx.depth}`;
    const after = tx.after.length;
    this.conn.exec(`SAVEPOINT ${name}`);
    try {
      const result = await fn();
      this.conn.exec(`RELEASE ${name}`);
      return result;
    } catch (err) {
      this.conn.exec(`ROLLBACK TO ${name}; RELEASE ${name}`);
      tx.after.length = after;
      throw err;
    } finally {
      tx.depth--;
    }
  }

  /** Set once this event-loop turn has asked; cleared when the turn ends. */
  private askedThisTurn = false;

  /**
   * Whether another connection (the CLI, another process) committed since the last call. Asked
   * on every request, it reads `data_version` once per event-loop turn (the pragma is a read
   * transaction: 7–8 µs a request under load): requests of one turn see what was committed
   * before the turn began, as if they had arrived a moment earlier.
   */
  externalChange(): boolean {
    if (this.askedThisTurn) return false;
    this.askedThisTurn = true;
    setImmediate(() => (this.askedThisTurn = false));
    const v = this.dataVersion.get() as number;
    if (v === this.seenVersion) return false;
    this.seenVersion = v;
    return true;
  }

  async close(): Promise<void> {
    if (this.held) await this.held;
    clearTimeout(this.idle);
    await this.checkpointer?.close();
    this.conn.close();
  }
}
