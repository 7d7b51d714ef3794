// Signs webhook deliveries on a piscina pool, both schemes in one worker call (signature.ts), in batches: every sign() call made in the same
// microtask window (or until maxBatch items are queued) goes to the workers as one round trip.
// The main thread never hashes nor UTF-8-encodes: string bodies travel as strings (a clone is a
// copy), byte bodies are packed into one buffer that is transferred, not copied again.
import os from 'node:os';
import { Piscina } from 'piscina';

export interface SignItem {
  /** Active secrets, newest first; one v1 per secret. */
  secrets: readonly string[];
  /** Unix seconds. */
  t: number;
  /**
   * The raw body exactly as it will be sent. Pass the bytes when you already hold them for the
   * POST: they cost the main thread a memcpy, a string costs a UTF-16 copy plus the clone.
   */
  body: string | Uint8Array;
  /** The event id: with it, the Standard Webhooks signature is made too (`webhook-id` is this id). */
  id?: string;
  /** An ed25519 signing key (`whsk_…`): adds `v1a,…` to the Standard Webhooks signature. */
  signingKey?: string | null;
}

/** One item's signatures: the `x-service-signature` header and the `webhook-signature` value ('' for an item without an id). */
export interface Signed {
  signature: string;
  standard: string;
}

export interface SignerPoolOptions {
  /** Worker threads; defaults to the machine's available parallelism. */
  threads?: number;
  /** Most items in one worker round trip; also the queue size that flushes without waiting. */
  maxBatch?: number;
  /** Fewest items worth splitting across threads. */
  minChunk?: number;
}

interface Owner {
  results: Signed[];
  remaining: number;
  settled: boolean;
  resolve(headers: Signed[]): void;
  reject(err: unknown): void;
}

const WORKER = new URL('./sign-worker.mjs', import.meta.url).href;

export class SignerPool {
  readonly #pool: Piscina;
  readonly #threads: number;
  readonly #maxBatch: number;
  readonly #minChunk: number;
  #items: SignItem[] = [];
  #owners: Owner[] = [];
  #slots: number[] = [];
  #scheduled = false;
  #closed = false;
  #inFlight = new Set<Promise<void>>();
  #roundTrips = 0;
  #signed = 0;

  constructor(options: SignerPoolOptions = {}) {
    this.#threads = Math.max(1, options.threads ?? os.availableParallelism());
    this.#maxBatch = Math.max(1, options.maxBatch ?? 512);
    this.#minChunk = Math.max(1, options.minChunk ?? 32);
    this.#pool = new Piscina({
      filename: WORKER,
      minThreads: this.#threads,
      maxThreads: this.#threads,
      idleTimeout: 60_000,
      // The worker is plain JS: a parent's loader flags (tsx's --import under development and
      // tests) would load in each thread too, ~0.3 s before its first batch on 2 cores.
      execArgv: [],
      // A second task waits in each worker's port, so a worker does not idle while the main thread is busy.
      concurrentTasksPerWorker: 2,
    });
  }

  /** `x-service-signature` headers for the items, in order. Rejects only on a bad item, a worker failure or after close(). */
  sign(items: readonly SignItem[]): Promise<string[]> {
    return this.signAll(items).then((signed) => signed.map((s) => s.signature));
  }

  /** Both schemes' signatures for the items, in order (see Signed). Rejects as sign() does. */
  signAll(items: readonly SignItem[]): Promise<Signed[]> {
    if (this.#closed) return Promise.reject(new Error('SignerPool is closed'));
    // Checked here so one bad item fails its own caller, not everyone sharing its batch.
    for (const item of items) {
      if (!Number.isInteger(item.t) || item.t < 0 || item.t > 0xffffffff) {
        return Promise.reject(new RangeError(`signature timestamp must be whole Unix seconds, got ${item.t}`));
      }
      if (typeof item.body !== 'string' && !(item.body instanceof Uint8Array)) {
        return Promise.reject(new TypeError('signature body must be a string or a Uint8Array'));
      }
      if (!Array.isArray(item.secrets) || item.secrets.some((s) => typeof s !== 'string')) {
        return Promise.reject(new TypeError('signature secrets must be an array of strings'));
      }
      if ((item.id !== undefined && (typeof item.id !== 'string' || item.id.includes('\n'))) || (item.signingKey != null && typeof item.signingKey !== 'string')) {
        return Promise.reject(new TypeError('signature id and signing key must be strings (an id without a line break)'));
      }
    }
    if (items.length === 0) return Promise.resolve([]);
    return new Promise<Signed[]>((resolve, reject) => {
      const owner: Owner = { results: new Array(items.length), remaining: items.length, settled: false, resolve, reject };
      for (let i = 0; i < items.length; i++) {
        this.#items.push(items[i]);
        this.#owners.push(owner);
        this.#slots.push(i);
        // A full batch leaves at once so the workers start while the caller keeps producing.
        if (this.#items.length >= this.#maxBatch) this.#flush();
      }
      if (this.#items.length > 0 && !this.#scheduled) {
        this.#scheduled = true;
        queueMicrotask(() => {
          this.#scheduled = false;
          this.#flush();
        });
      }
    });
  }

  /** Items waiting to be signed: queued here and in the pool's own queue. */
  get queueDepth(): number {
    return this.#items.length + this.#pool.queueSize;
  }

  /** Worker round trips made and items sent so far (the batching ratio, for metrics and tests). */
  get stats(): { roundTrips: number; items: number } {
    return { roundTrips: this.#roundTrips, items: this.#signed };
  }

  /** Signs what is queued, waits for it, then stops the workers. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#flush();
    await Promise.allSettled([...this.#inFlight]);
    await this.#pool.close();
  }

  #flush(): void {
    const total = this.#items.length;
    if (total === 0) return;
    const items = this.#items;
    const owners = this.#owners;
    const slots = this.#slots;
    this.#items = [];
    this.#owners = [];
    this.#slots = [];
    // Split a window's worth across the threads, but not into chunks too small to pay for a round trip.
    const size = Math.min(this.#maxBatch, Math.max(this.#minChunk, Math.ceil(total / this.#threads)));
    for (let from = 0; from < total; from += size) {
      const to = Math.min(total, from + size);
      this.#run(items.slice(from, to), owners.slice(from, to), slots.slice(from, to));
    }
  }

  #run(items: SignItem[], owners: Owner[], slots: number[]): void {
    let task;
    try {
      task = encodeBatch(items);
    } catch (err) {
      for (const o of owners) fail(o, err);
      return;
    }
    this.#roundTrips++;
    this.#signed += items.length;
    const done = this.#pool
      .run(task, { transferList: [task.meta.buffer, task.bytes.buffer] })
      .then((joined: string) => {
        const lines = joined.split('\n');
        for (let i = 0; i < owners.length; i++) {
          const o = owners[i];
          if (o.settled) continue;
          o.results[slots[i]] = { signature: lines[2 * i], standard: lines[2 * i + 1] };
          if (--o.remaining === 0) {
            o.settled = true;
            o.resolve(o.results);
          }
        }
      })
      .catch((err: unknown) => {
        for (const o of owners) fail(o, err);
      })
      .finally(() => this.#inFlight.delete(done));
    this.#inFlight.add(done);
  }
}

function fail(o: Owner, err: unknown): void {
  if (o.settled) return;
  o.settled = true;
  o.reject(err);
}

/** Marks an item whose body is a string in `bodies` rather than a range of `bytes`. */
export const STRING_BODY = 0xffffffff;

export interface SignTask {
  /** String bodies at their item's index; null where the body is in `bytes`. */
  bodies: (string | null)[];
  /** Event ids at their item's index; null: no Standard Webhooks signature. */
  ids: (string | null)[];
  /** Byte bodies, back to back; its buffer is transferred. */
  bytes: Uint8Array<ArrayBuffer>;
  /** Per item: t, bodyStart (or STRING_BODY), bodyLength, signingKeyIndex (or NO_KEY), secretCount, secretIndex × secretCount. */
  meta: Uint32Array<ArrayBuffer>;
  /** The batch's distinct secrets. */
  secrets: string[];
  /** The batch's distinct ed25519 signing keys. */
  keys: string[];
}

/** Marks an item without an ed25519 signing key. */
export const NO_KEY = 0xffffffff;

/** The message for one round trip. */
export function encodeBatch(items: readonly SignItem[]): SignTask {
  let metaLength = 0;
  let byteLength = 0;
  for (const item of items) {
    metaLength += 5 + item.secrets.length;
    if (typeof item.body !== 'string') byteLength += item.body.byteLength;
  }
  const bodies = new Array<string | null>(items.length);
  const ids = new Array<string | null>(items.length);
  const keys: string[] = [];
  // allocUnsafeSlow: an ArrayBuffer of its own (a pooled Buffer's would detach the shared pool).
  const bytes = Buffer.allocUnsafeSlow(byteLength);
  const meta = new Uint32Array(metaLength);
  const secretIndex = new Map<string, number>();
  const secrets: string[] = [];
  let offset = 0;
  let m = 0;
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    meta[m++] = item.t;
    if (typeof item.body === 'string') {
      bodies[i] = item.body;
      meta[m++] = STRING_BODY;
      meta[m++] = 0;
    } else {
      bodies[i] = null;
      bytes.set(item.body, offset);
      meta[m++] = offset;
      meta[m++] = item.body.byteLength;
      offset += item.body.byteLength;
    }
    ids[i] = item.id ?? null;
    if (item.signingKey && item.id !== undefined) {
      let k = keys.indexOf(item.signingKey);
      if (k < 0) k = keys.push(item.signingKey) - 1;
      meta[m++] = k;
    } else {
      meta[m++] = NO_KEY;
    }
    meta[m++] = item.secrets.length;
    for (const s of item.secrets) {
      let k = secretIndex.get(s);
      if (k === undefined) {
        k = secrets.length;
        secrets.push(s);
        secretIndex.set(s, k);
      }
      meta[m++] = k;
    }
  }
  return { bodies, ids, bytes, meta, secrets, keys };
}
