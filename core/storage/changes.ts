// Caches in every process (keys, companies, installs, endpoints, app packages) must notice
// writes made by another process (the CLI, another server) within a second. A write bumps its
// scope's version in its own transaction; this process's listeners hear it after the commit,
// other processes when they next check (each request and a timer; cheap when nothing changed).
// How a process learns that another may have written is the driver's: SQLite's data_version,
// PostgreSQL's LISTEN/NOTIFY (which also wakes the feed at once, without waiting for the timer).
import type { Db } from './db.ts';
import type { CacheVersionsRepo } from './repos/cache-versions.ts';

export type ChangeScope = 'companies' | 'keys' | 'installs' | 'packages' | 'endpoints' | 'people' | 'outbox';

/**
 * `outbox` has no version: it says another process may have committed events (the delivery
 * workers' wake-up), told at once on PostgreSQL and at the next check on SQLite.
 */
const OUTBOX: ChangeScope = 'outbox';

/** What the driver tells the feed about other connections' writes. */
export interface ExternalSignal {
  /** Whether another connection may have written since the last call (cheap). */
  changed(): boolean;
  /**
   * Calls `fn` as soon as another connection's commit is heard (drivers that are told, not
   * asked), with its scope when the driver knows it.
   */
  subscribe?(fn: (scope?: string) => void): () => void;
}

export class ChangeFeed {
  private listeners = new Map<string, Set<() => void>>();
  private seen = new Map<string, number>();
  private timer?: NodeJS.Timeout;
  private polling?: Promise<void>;
  private unsubscribe?: () => void;

  constructor(
    private db: Db,
    private versions: CacheVersionsRepo,
    private external: ExternalSignal,
  ) {}

  on(scope: ChangeScope, fn: () => void): () => void {
    let set = this.listeners.get(scope);
    if (!set) this.listeners.set(scope, (set = new Set()));
    set.add(fn);
    return () => set.delete(fn);
  }

  private emit(scope: string): void {
    for (const fn of this.listeners.get(scope) ?? []) fn();
  }

  /** Call inside the writing transaction. */
  async bump(scope: ChangeScope): Promise<void> {
    const version = await this.versions.bump(scope);
    this.db.afterCommit(() => {
      // Our own write is told here: a later poll need not tell it again.
      if ((this.seen.get(scope) ?? -1) < version) this.seen.set(scope, version);
      this.emit(scope);
    });
  }

  /**
   * Reads every scope's version and tells the listeners of those that moved (the first read only
   * records). Asked while a read is under way, it reads once more after it: that read may have
   * been taken before the commit the caller was told of (concurrent callers share the next read).
   */
  poll(): Promise<void> {
    if (this.polling) {
      this.again ??= this.polling.then(
        () => this.next(),
        () => this.next(),
      );
      return this.again;
    }
    return this.read();
  }

  private again?: Promise<void>;

  private next(): Promise<void> {
    this.again = undefined;
    return this.polling ?? this.read();
  }

  private read(): Promise<void> {
    this.polling = (async () => {
      try {
        for (const [scope, v] of await this.versions.all()) {
          if (this.seen.get(scope) === v) continue;
          this.seen.set(scope, v);
          if (this.primed) this.emit(scope);
        }
        this.primed = true;
      } finally {
        this.polling = undefined;
      }
    })();
    return this.polling;
  }

  private primed = false;

  /**
   * Polls only when another connection may have written; otherwise waits for a read already under
   * way (another caller was told of a commit: this one must not go on with what it drops).
   */
  check(): Promise<void> | undefined {
    if (this.external.changed()) {
      // Told drivers tell events on their own; an asked one only knows that something was written.
      if (!this.external.subscribe) this.emit(OUTBOX);
      return this.poll();
    }
    // Nothing to wait for (the common case, on every request): no promise at all.
    return this.polling ? (this.again ?? this.polling) : undefined;
  }

  /**
   * Checks every `intervalMs` (so loops with no requests, like delivery, notice too), and at once
   * when the driver is told of another process's commit.
   */
  start(intervalMs = 250): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.check()?.catch(() => {}), intervalMs);
    this.timer.unref();
    this.unsubscribe = this.external.subscribe?.((scope) => {
      // No scope: the connection was (re)made, and anything may have been missed.
      if (scope === undefined || scope === OUTBOX) this.emit(OUTBOX);
      if (scope !== OUTBOX) void this.check()?.catch(() => {});
    });
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }
}
