// Checkpoints of an SQLite file's write-ahead log, on a thread of their own. SQLite otherwise
// runs one inside the COMMIT that takes the log past 1,000 pages, on the connection's (here:
// the event loop's) thread: it copies those pages into the database and syncs both files,
// stalling every request and delivery meanwhile (half the COMMIT time of a webhook burst:
// bench/webhooks-e2e.ts with SQL_TIME=1). Here, once the log file has grown to 1,000 pages, a
// worker connection copies the log 100 ms after commits (PASSIVE: it never blocks the writer),
// and the next writer starts the log over. The file keeps its size (up to LOG_LIMIT_BYTES), so
// commits overwrite it rather than grow it: growing it cost a small transaction ~15 µs more
// (docs/benchmarks-history.md, seventh session). The connection's own checkpoints are left as a
// backstop at BACKSTOP_PAGES (sqlite.ts), for a log that never empties under constant writes.
import fs from 'node:fs';
import { Worker } from 'node:worker_threads';

const WORKER = new URL('./checkpoint-worker.mjs', import.meta.url);
/** SQLite's own threshold. */
const PAGES = 1000;
/** Where the writer checkpoints itself after all: ten times that. */
export const BACKSTOP_PAGES = 10 * PAGES;
/** The log file is cut back to this when it starts over larger: above the backstop's ~41 MB, so a backstop cycle does not cut it. */
export const LOG_LIMIT_BYTES = 64 * 1024 * 1024;
/** How long after a commit the log is looked at: commits in between are checkpointed together. */
const DELAY_MS = 100;

/**
 * The log file's size in pages, the most it has held since it was last cut back; 0 without a
 * log. Only a stat: a descriptor of our own on the log or its index, once closed, would drop
 * every lock this process holds on them (POSIX), and another process closing the database would
 * then delete both under the live connection (SIGBUS).
 */
export function logFilePages(file: string): number {
  try {
    return Math.floor(fs.statSync(`${file}-wal`).size / 4096);
  } catch {
    return 0;
  }
}

export interface CheckpointerOptions {
  /** Called when the worker cannot run: the connection should checkpoint itself again. */
  onFailure: () => void;
  /** The log file's pages from which checkpoints run (tests make it small); below them no worker starts. */
  pages?: number;
}

export class Checkpointer {
  private worker?: Worker;
  private timer?: NodeJS.Timeout;
  private running = false;
  private failed = false;
  private closed = false;
  /** Checkpoints run so far (for tests and benches). */
  count = 0;

  constructor(
    private readonly file: string,
    private readonly options: CheckpointerOptions,
  ) {}

  /** A transaction committed: look at the log shortly. */
  committed(): void {
    if (this.timer || this.running || this.failed || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.check();
    }, DELAY_MS);
    this.timer.unref();
  }

  private check(): void {
    if (this.closed || logFilePages(this.file) < (this.options.pages ?? PAGES)) return;
    this.running = true;
    const w = this.start();
    w.once('message', (ok: boolean) => {
      this.running = false;
      if (ok) this.count++;
      // One that fails would fail again: the log must not grow without bound meanwhile.
      else this.fail();
    });
    w.postMessage('checkpoint');
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const w = new Worker(WORKER, { workerData: { file: this.file } });
    w.unref();
    w.once('error', () => this.fail());
    w.once('exit', () => this.fail());
    this.worker = w;
    return w;
  }

  /** The worker cannot open the file, died, or a checkpoint failed: the connection checkpoints itself again. */
  private fail(): void {
    if (this.failed || this.closed) return;
    this.failed = true;
    this.running = false;
    const w = this.worker;
    this.worker = undefined;
    void w?.terminate().catch(() => {});
    this.options.onFailure();
  }

  /** Ends the worker (its connection closed first, so that the caller's close is the last and tidies the log). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    const w = this.worker;
    this.worker = undefined;
    if (!w) return;
    // Held open until it has gone: an unreferenced worker would let the process end mid-close.
    w.ref();
    const exited = new Promise<void>((resolve) => w.once('exit', () => resolve()));
    w.postMessage('close');
    let t: NodeJS.Timeout | undefined;
    await Promise.race([exited, new Promise<void>((r) => (t = setTimeout(r, 2000)))]);
    clearTimeout(t);
    await w.terminate().catch(() => {});
  }
}
