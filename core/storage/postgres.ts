// PostgreSQL behind the same asynchronous Db interface as the embedded default (node-postgres).
// A pool serves statements outside a transaction; a transaction holds one client from BEGIN to
// COMMIT, found through async context exactly as sqlite.ts finds its transaction, so a
// repository called inside `transaction()` joins it, nested calls become savepoints, and
// `afterCommit` runs after the outermost COMMIT. The repositories' `?` placeholders become `$n`.
// Unlike the embedded default, statements outside a transaction do not wait for one to end:
// PostgreSQL isolates them (read committed) and row locks order the writers.
import { AsyncLocalStorage } from 'node:async_hooks';
import pg from 'pg';
import type { Db, Params } from './db.ts';
import { postgresDialect, PG_CHANGE_CHANNEL } from './dialect.ts';

interface Tx {
  /** Set once begun (a lazy unit of work has none until its first write). */
  client?: pg.PoolClient;
  depth: number;
  /** Begun and not yet ended. */
  open: boolean;
  after: (() => void)[];
  /** A lazy unit of work not yet begun: its first write begins it. */
  lazy: boolean;
  beginning?: Promise<void>;
  /** Set when the connection failed: it is closed, not handed back to the pool. */
  broken?: Error;
  lost?: (e: Error) => void;
}

const INT8 = 20;
const NUMERIC = 1700;

/**
 * Counts and ids as JS numbers (int8 would arrive as strings); bytea already arrives as a Buffer.
 * Every int8 the schema holds (sequence numbers, Unix milliseconds) is far below 2^53.
 */
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8 || oid === NUMERIC) return (v: string) => Number(v);
    return pg.types.getTypeParser(oid, format as 'text');
  },
} as pg.CustomTypesConfig;

/** `?` → `$1, $2, …` (the repositories' SQL never holds a `?` inside a string literal). */
export function numberPlaceholders(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}


export interface PostgresOptions {
  /** `postgres://user:password@host:port/database` (libpq parameters such as `?sslmode=` or `?options=` pass through). */
  url: string;
  /** Most connections the pool opens (the listening connection is one more). */
  max?: number;
}

export class PostgresDb implements Db {
  readonly dialect = postgresDialect;
  readonly pool: pg.Pool;
  private readonly als = new AsyncLocalStorage<Tx>();
  private readonly rewritten = new Map<string, string>();
  private readonly transactions = new Set<Promise<unknown>>();
  private listener?: ChangeListener;
  /** The server processes of this pool's connections: the notifications they send are this process's own. */
  private readonly backends = new Set<number>();

  constructor(private readonly opts: PostgresOptions) {
    // A process frozen inside a transaction (stopped, swapped out) loses it after 30 s, with
    // its row locks: the other processes' work (lease recovery, fan-out) goes on.
    this.pool = new pg.Pool({ connectionString: opts.url, max: opts.max ?? 10, types, idleTimeoutMillis: 30_000, idle_in_transaction_session_timeout: 30_000 });
    // An idle client that loses its server must not take the process down; the next query reconnects.
    this.pool.on('error', () => {});
    const pid = (client: pg.PoolClient) => (client as unknown as { processID?: number }).processID ?? 0;
    this.pool.on('connect', (client) => void this.backends.add(pid(client)));
    this.pool.on('remove', (client) => void this.backends.delete(pid(client)));
  }

  private sql(text: string): string {
    let s = this.rewritten.get(text);
    if (s === undefined) {
      s = numberPlaceholders(text);
      if (this.rewritten.size < 5000) this.rewritten.set(text, s);
    }
    return s;
  }

  private current(): Tx | undefined {
    const tx = this.als.getStore();
    return tx?.open ? tx : undefined;
  }

  private query<T extends pg.QueryResultRow>(sql: string, params: Params): Promise<pg.QueryResult<T>> {
    const text = this.sql(sql);
    const values = params as unknown[];
    const tx = this.current();
    return tx ? tx.client!.query<T>(text, values) : this.pool.query<T>(text, values);
  }

  async all<T>(sql: string, params: Params = []): Promise<T[]> {
    return (await this.query(sql, params)).rows as T[];
  }

  async get<T>(sql: string, params: Params = []): Promise<T | undefined> {
    return (await this.query(sql, params)).rows[0] as T | undefined;
  }

  async run(sql: string, params: Params = []): Promise<{ changes: number }> {
    const lazy = this.als.getStore();
    if (lazy?.lazy) await this.begin(lazy);
    return { changes: (await this.query(sql, params)).rowCount ?? 0 };
  }

  async exec(sql: string): Promise<void> {
    const lazy = this.als.getStore();
    if (lazy?.lazy) await this.begin(lazy);
    // No parameters: the simple protocol, which runs several statements at once.
    const tx = this.current();
    await (tx ? tx.client!.query(sql) : this.pool.query(sql));
  }

  inTransaction(): boolean {
    return this.current() !== undefined;
  }

  afterCommit(fn: () => void): void {
    const tx = this.current();
    if (tx) tx.after.push(fn);
    else fn();
  }

  transaction<T>(fn: () => Promise<T>, opts?: { lazy?: boolean }): Promise<T> {
    const store = this.als.getStore();
    if (store?.open) return this.savepoint(store, fn);
    if (store?.lazy) return this.firstWrite(store, fn);
    const run = this.outermost(fn, !!opts?.lazy);
    this.transactions.add(run);
    const forget = () => this.transactions.delete(run);
    run.then(forget, forget);
    return run;
  }

  private async outermost<T>(fn: () => Promise<T>, lazy: boolean): Promise<T> {
    const tx: Tx = { depth: 0, open: false, after: [], lazy };
    try {
      if (!lazy) await this.begin(tx);
      const result = await this.als.run(tx, fn);
      if (tx.open) {
        await tx.client!.query('COMMIT');
        tx.open = false;
        for (const f of tx.after) f();
      }
      return result;
    } catch (err) {
      if (tx.open) {
        tx.open = false;
        // A client that cannot even roll back is closed rather than handed to the next caller.
        await tx.client!.query('ROLLBACK').catch((e: Error) => (tx.broken = e));
      }
      throw err;
    } finally {
      tx.lazy = false;
      if (tx.client) {
        tx.client.off('error', tx.lost!);
        tx.client.release(tx.broken);
      }
    }
  }

  /**
   * The unit of work's first write: nothing before it to keep, so no savepoint; a failure rolls
   * all of it back and leaves the unit of work lazy again, as if never begun.
   */
  private async firstWrite<T>(tx: Tx, fn: () => Promise<T>): Promise<T> {
    await this.begin(tx);
    try {
      return await fn();
    } catch (err) {
      if (tx.open) await tx.client!.query('ROLLBACK').catch((e: Error) => (tx.broken = e));
      tx.client!.off('error', tx.lost!);
      tx.client!.release(tx.broken);
      Object.assign(tx, { open: false, lazy: true, beginning: undefined, client: undefined, broken: undefined });
      tx.after.length = 0;
      throw err;
    }
  }

  /** Checks out a client for `tx` and begins. */
  private begin(tx: Tx): Promise<void> {
    tx.beginning ??= (async () => {
      const client = await this.pool.connect();
      tx.client = client;
      // A checked-out client has no listener of the pool's: a connection lost between two
      // statements would otherwise be an unhandled 'error' event (the next statement fails anyway).
      const lost = (e: Error) => (tx.broken = e);
      tx.lost = lost;
      client.on('error', lost);
      await client.query('BEGIN').catch((e: Error) => {
        tx.broken = e;
        throw e;
      });
      tx.open = true;
      tx.lazy = false;
    })();
    return tx.beginning;
  }

  private async savepoint<T>(tx: Tx, fn: () => Promise<T>): Promise<T> {
    const name = `sp${++tx.depth}`;
    const after = tx.after.length;
    await tx.client!.query(`SAVEPOINT ${name}`);
    try {
      const result = await fn();
      await tx.client!.query(`RELEASE SAVEPOINT ${name}`);
      return result;
    } catch (err) {
      await tx.client!.query(`ROLLBACK TO SAVEPOINT ${name}; RELEASE SAVEPOINT ${name}`);
      tx.after.length = after;
      throw err;
    } finally {
      tx.depth--;
    }
  }

  /**
   * What another process committed, heard through LISTEN on one dedicated connection: the
   * change feed's signal. Started once; closed with the database.
   */
  async listen(): Promise<ChangeListener> {
    if (!this.listener) {
      this.listener = new ChangeListener(this.opts.url, 10_000, (pid) => this.backends.has(pid));
      await this.listener.start();
    }
    return this.listener;
  }

  private closing?: Promise<void>;

  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.listener?.close();
      // Transactions under way finish (commit or roll back) before their connections go.
      await Promise.allSettled([...this.transactions]);
      await this.pool.end();
    })();
    return this.closing;
  }
}

/**
 * One listening connection per process. `changed()` is true when a notification for this schema
 * arrived since the last call; while the connection is down (and once it is back, for what it
 * missed) it is always true, so the change feed falls back to polling; and at least every
 * `safetyMs` anyway.
 */
export class ChangeListener {
  private client?: pg.Client;
  private schema = 'public';
  private heard = true;
  private connected = false;
  private closed = false;
  private retryMs = 250;
  private retry?: NodeJS.Timeout;
  private lastTrue = 0;
  private readonly subscribers = new Set<(scope?: string) => void>();

  constructor(
    private readonly url: string,
    private readonly safetyMs = 10_000,
    /** Whether a server process is one of this process's connections: its commits were told in-process. */
    private readonly own: (pid: number) => boolean = () => false,
  ) {}

  async start(): Promise<void> {
    await this.connect();
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url, types });
    client.on('notification', (msg) => {
      if (msg.channel !== PG_CHANGE_CHANNEL || !msg.payload?.startsWith(`${this.schema}:`)) return;
      // This process's own commits were told at once, in-process (ChangeFeed.bump, Outbox.listen):
      // told again, a light load's next event looked like part of a burst and waited its gathering.
      if (this.own(msg.processId)) return;
      const scope = msg.payload.slice(this.schema.length + 1);
      // Events move no cache version: only the delivery workers need to hear them.
      if (scope !== 'outbox') this.heard = true;
      for (const fn of this.subscribers) fn(scope);
    });
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    this.client = client;
    await client.connect();
    this.schema = (await client.query<{ s: string }>('SELECT current_schema() AS s')).rows[0].s;
    await client.query(`LISTEN ${PG_CHANGE_CHANNEL}`);
    this.connected = true;
    this.retryMs = 250;
    // Whatever was written while nobody listened.
    this.heard = true;
    for (const fn of this.subscribers) fn();
  }

  private lost(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.connected = false;
    this.heard = true;
    client.end().catch(() => {});
    if (this.closed || this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      if (this.closed) return;
      this.connect().catch(() => {
        const c = this.client;
        this.retryMs = Math.min(this.retryMs * 2, 10_000);
        if (c) this.lost(c);
      });
    }, this.retryMs);
    this.retry.unref();
  }

  /** Whether another process may have written since the last call (cheap: no query). */
  changed(): boolean {
    const now = Date.now();
    if (this.heard || !this.connected || now - this.lastTrue >= this.safetyMs) {
      this.heard = false;
      this.lastTrue = now;
      return true;
    }
    return false;
  }

  /** Whether the connection listens now (false: the feed polls on every check). */
  get listening(): boolean {
    return this.connected;
  }

  /** Calls `fn` whenever a notification for this schema arrives. */
  subscribe(fn: (scope?: string) => void): () => void {
    this.subscribers.add(fn);
    return () => this.subscribers.delete(fn);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    const c = this.client;
    this.client = undefined;
    this.connected = false;
    await c?.end().catch(() => {});
  }
}
