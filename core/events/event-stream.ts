// Live readers of the outbox (the event stream behind `diwan listen`). Each reader has a
// company, a topic filter and a position in the outbox order, and gets the company's events
// committed after it, in order, whichever process committed them: readers are woken at once by
// this process's commits (Outbox.listen) and otherwise by a timer that looks at the outbox's
// last position (one cheap query per interval for every reader together).
//
// A read goes up to the last position seen before it, so a reader moves past events its filter
// leaves out without reading them again. SQLite commits one writer at a time, so every position
// up to the last one is committed when it is read; a database that commits concurrently needs
// its own rule here.
import type { TopicFilter, StoredEvent } from '../storage/repos/outbox.ts';
import type { Outbox } from './outbox.ts';
import type { EventLog } from './event-log.ts';

export interface StreamSink {
  /** Writes the events; resolves when the reader can take more (backpressure). */
  send(events: StoredEvent[]): Promise<void>;
  /** The streams are closing (the host stops): end the reader's side. */
  end(): void;
}

export interface StreamOptions {
  /** How often other processes' commits are looked for. */
  pollMs?: number;
  /** Events read per query. */
  batch?: number;
}

interface Reader {
  companyId: string;
  filter: TopicFilter | undefined;
  pos: number;
  sink: StreamSink;
  busy: boolean;
  again: boolean;
  closed: boolean;
}

export interface StreamHandle {
  close(): void;
  /** The reader's position (the last event it was given, or where it started). */
  readonly position: number;
}

export class EventStreams {
  private readers = new Set<Reader>();
  private timer?: NodeJS.Timeout;
  private lastSeen = 0;
  private unlisten?: () => void;
  private readonly pollMs: number;
  private readonly batch: number;

  constructor(
    private outbox: Outbox,
    private log: EventLog,
    opts: StreamOptions = {},
  ) {
    this.pollMs = opts.pollMs ?? 1000;
    this.batch = opts.batch ?? 200;
  }

  /** Readers open now. */
  get size(): number {
    return this.readers.size;
  }

  /** Readers of one company open now. */
  countOf(companyId: string): number {
    let n = 0;
    for (const r of this.readers) if (r.companyId === companyId) n++;
    return n;
  }

  /** A reader from `position` on; events go to `sink` until `close()`. */
  open(companyId: string, filter: TopicFilter | undefined, position: number, sink: StreamSink): StreamHandle {
    const r: Reader = { companyId, filter, pos: position, sink, busy: false, again: false, closed: false };
    this.readers.add(r);
    if (this.readers.size === 1) this.watch();
    void this.pump(r);
    return {
      close: () => this.drop(r),
      get position() {
        return r.pos;
      },
    };
  }

  private drop(r: Reader): void {
    r.closed = true;
    if (this.readers.delete(r) && this.readers.size === 0) this.unwatch();
  }

  private watch(): void {
    this.unlisten = this.outbox.listen(() => this.wakeAll());
    const tick = () => {
      const timer = setTimeout(async () => {
        try {
          const last = await this.log.lastPosition();
          if (last !== this.lastSeen) {
            this.lastSeen = last;
            this.wakeAll();
          }
        } catch {
          // The store is closing: the readers are closed with it.
        }
        // Only while this loop is the one watching: unwatched during the read (and perhaps
        // watched again, with a loop of its own), it ends here.
        if (this.timer === timer) tick();
      }, this.pollMs);
      timer.unref();
      this.timer = timer;
    };
    tick();
  }

  private unwatch(): void {
    this.unlisten?.();
    this.unlisten = undefined;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private waking = false;

  /** Every reader looks for new events; the commits of one turn of the event loop wake them once. */
  private wakeAll(): void {
    if (this.waking) return;
    this.waking = true;
    setImmediate(() => {
      this.waking = false;
      for (const r of this.readers) void this.pump(r);
    });
  }

  /** Reads and sends until the reader is at the last position; a wake during a run asks for another. */
  private async pump(r: Reader): Promise<void> {
    if (r.busy) {
      r.again = true;
      return;
    }
    r.busy = true;
    try {
      do {
        r.again = false;
        for (;;) {
          if (r.closed) return;
          const top = await this.log.lastPosition();
          if (top <= r.pos) break;
          const rows = await this.log.between(r.companyId, r.pos, top, r.filter, this.batch);
          if (r.closed) return;
          if (rows.length) await r.sink.send(rows);
          if (rows.length < this.batch) {
            r.pos = top;
            break;
          }
          r.pos = rows[rows.length - 1].seq;
        }
      } while (r.again && !r.closed);
    } catch {
      // A failed read (the store closing) or write (the client gone): the owner closes the reader.
    } finally {
      r.busy = false;
    }
  }

  /** Ends every reader (the host is closing): each sink is told, then dropped. */
  closeAll(): void {
    for (const r of [...this.readers]) {
      this.drop(r);
      try {
        r.sink.end();
      } catch {
        // already gone
      }
    }
  }
}
