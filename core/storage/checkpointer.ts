// Checkpoints of an SQLite file's write-ahead log, on a thread of their own. SQLite otherwise
// runs one inside the COMMIT that takes the log past 1,000 pages, on the connection's (here:
// the event loop's) thread: it copies those pages into the database and syncs both files,
// stalling every request and delivery meanwhile (half the COMMIT time of a webhook burst:
// bench/webhooks-e2e.ts with SQL_TIME=1). Here the connection's own checkpoints are off;
// after a commit, once the log has grown past LOG_BYTES, a worker connection checkpoints it
// (PASSIVE: it never blocks the writer) and the next writer starts the log over.
import fs from 'node:fs';
import { Worker } from 'node:worker_threads';

const WORKER = new URL('./checkpoint-worker.mjs', import.meta.url);
/** SQLite's own threshold (1,000 pages of 4 KiB). */
const LOG_BYTES = 4096 * 1000;
/** How long after a commit the log's size is looked at: commits in between are checkpointed together. */
const DELAY_MS = 100;

export interface CheckpointerOptions {
  /** Called when the worker cannot run: the connection should checkpoint itself again. */
  onFailure: () => void;
  /** Log size from which a checkpoint runs (tests make it small). */
  logBytes?: number;
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
    let size = 0;
    try {
      size = fs.statSync(`${this.file}-wal`).size;
    } catch {
      return;
    }
    if (size < (this.options.logBytes ?? LOG_BYTES) || this.closed) return;
    this.running = true;
    const w = this.start();
    w.once('message', (r: { ok: boolean }) => {
      this.running = false;
      if (r.ok) this.count++;
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
