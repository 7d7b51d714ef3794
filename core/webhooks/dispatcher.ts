// The dispatcher: outbox → one delivery per matching enabled endpoint of the event's company
// (a TopicMatcher per company, rebuilt when that company's endpoints change) → signed in
// batches on the SignerPool → POSTed, at most `maxInFlightPerEndpoint` at a time per endpoint
// → delivered, pending retry on the ladder, or dead. Time comes from the injected clock, so
// tests drive it with `tick()`; in the server `start()` runs a loop woken by the outbox and by
// a timer for the next due retry.
import os from 'node:os';
import http from 'node:http';
import https from 'node:https';
import type { Sqlite } from '../db/connection.ts';
import { dataVersionReader } from '../db/dialect.ts';
import type { Outbox } from '../events/outbox.ts';
import { TopicMatcher } from '../events/matcher.ts';
import type { HostConfig } from '../config.ts';
import type { Clock } from '../clock.ts';
import type { AuditLog } from '../audit/audit-log.ts';
import type { KnownTopics } from '../events/patterns.ts';
import { Endpoints, signingSecrets } from './endpoints.ts';
import { Deliveries, EXCERPT_BYTES, type DueRow } from './deliveries.ts';
import { SignerPool } from './signer-pool.ts';
import { SIGNATURE_HEADER, signHeader, unixSeconds } from './signature.ts';
import { sendDelivery, type SendResult } from './send.ts';
import { nextState } from './ladder.ts';

export interface DispatcherDeps {
  sqlite: Sqlite;
  outbox: Outbox;
  endpoints: Endpoints;
  deliveries: Deliveries;
  clock: Clock;
  config: HostConfig['webhooks'];
  /** Events fanned out per transaction. */
  fanOutBatch?: number;
  /** Deliveries taken per pump. */
  takeBatch?: number;
  /** Longest the loop sleeps without being woken (picks up writes of other processes). */
  pollMs?: number;
}

export const EVENT_ID_HEADER = 'x-diwan-event-id';
export const DELIVERY_ID_HEADER = 'x-diwan-delivery-id';

/** The delivered body, built from the outbox row's stored JSON (no re-serialisation of `data`). */
export function eventBody(r: Pick<DueRow, 'event_id' | 'topic' | 'event_created_at' | 'company_id' | 'data' | 'test'>): string {
  return `{"id":${JSON.stringify(r.event_id)},"type":${JSON.stringify(r.topic)},"createdAt":${JSON.stringify(r.event_created_at)},"companyId":${JSON.stringify(r.company_id)},"data":${r.data}${r.test ? ',"test":true' : ''}}`;
}

/** How long events from writes are gathered before a fan-out. */
const EMIT_GATHER_MS = 5;

export class Dispatcher {
  private indexes = new Map<string, { matcher: TopicMatcher<string>; createdAt: Map<string, string> }>();
  private seenVersion: number;
  private inFlight = new Map<string, number>();
  private running = new Set<Promise<void>>();
  private signer?: SignerPool;
  /** Keep-alive connections per origin; a new connection still goes through the pinned, guarded lookup. */
  private agents?: { http: http.Agent; https: https.Agent };
  private started = false;
  private stopping = false;
  private wakeScheduled = false;
  /** Endpoints that may have due work; null: look in the database (boot, timer, retries, tick). */
  private candidates: Set<string> | null = null;
  private readonly dataVersion: () => number;
  private timer?: NodeJS.Timeout;
  private emitTimer?: NodeJS.Timeout;
  private readonly fanOutBatch: number;
  private readonly takeBatch: number;
  private readonly pollMs: number;

  constructor(private deps: DispatcherDeps) {
    this.dataVersion = dataVersionReader(deps.sqlite);
    this.seenVersion = this.dataVersion();
    this.fanOutBatch = deps.fanOutBatch ?? 500;
    this.takeBatch = deps.takeBatch ?? 256;
    this.pollMs = deps.pollMs ?? 5000;
  }

  /** Forget a company's index (all when no id): the next fan-out rebuilds it from its endpoints. */
  invalidate(companyId?: string): void {
    if (companyId === undefined) this.indexes.clear();
    else this.indexes.delete(companyId);
    if (this.started) this.wake(true);
  }

  private index(companyId: string) {
    let m = this.indexes.get(companyId);
    if (!m) {
      m = { matcher: new TopicMatcher<string>(), createdAt: new Map() };
      for (const ep of this.deps.endpoints.enabledOf(companyId)) {
        m.createdAt.set(ep.id, ep.createdAt);
        try {
          m.matcher.add(ep.id, ep.topics);
        } catch {
          // A stored pattern the grammar no longer accepts matches nothing.
        }
      }
      this.indexes.set(companyId, m);
    }
    return m;
  }

  /** Fans the pending outbox events out into deliveries; returns how many events it took. */
  fanOut(): number {
    const v = this.dataVersion();
    if (v !== this.seenVersion) {
      // Another connection (the CLI) committed: its endpoint changes are not in our indexes.
      this.seenVersion = v;
      this.indexes.clear();
    }
    let total = 0;
    for (;;) {
      const n = this.deps.sqlite
        .transaction(() => {
          const events = this.deps.outbox.pending(this.fanOutBatch);
          const now = this.deps.clock.now();
          for (const ev of events) {
            const ix = this.index(ev.companyId);
            for (const endpointId of ix.matcher.match(ev.topic)) {
              // An endpoint receives the events emitted since it was registered, not older ones.
              if (ev.createdAt < ix.createdAt.get(endpointId)!) continue;
              this.deps.deliveries.insert(ev.companyId, endpointId, ev.id, ev.topic, now);
              this.candidates?.add(endpointId);
            }
          }
          if (events.length) this.deps.outbox.markDispatched(events.map((e) => e.id));
          return events.length;
        })
        .immediate();
      total += n;
      if (n < this.fanOutBatch) return total;
    }
  }

  private pool(): SignerPool {
    this.signer ??= new SignerPool({ threads: Math.min(2, os.availableParallelism()) });
    return this.signer;
  }

  /** Takes what is due now, signs it as one batch and starts the attempts; resolves when they end. */
  async pump(rescan = false): Promise<number> {
    if (this.stopping) return 0;
    const cap = Math.max(1, this.deps.config.maxInFlightPerEndpoint);
    const now = this.deps.clock.now();
    if (rescan) this.candidates = null;
    const full = this.candidates === null;
    if (full) this.candidates = new Set();
    const rows = this.deps.deliveries.take(now, cap, this.takeBatch, (id) => this.inFlight.get(id) ?? 0, full ? undefined : this.candidates!);
    if (full) {
      // After a full look, the endpoints that got work (and may have more) are the candidates.
      for (const r of rows) this.candidates!.add(r.endpoint_id);
    }
    if (rows.length === 0) return 0;
    for (const r of rows) this.inFlight.set(r.endpoint_id, (this.inFlight.get(r.endpoint_id) ?? 0) + 1);

    const t = unixSeconds(now);
    const bodies = new Map<string, Buffer>();
    const items = rows.map((r) => {
      let body = bodies.get(r.event_id);
      if (!body) bodies.set(r.event_id, (body = Buffer.from(eventBody(r), 'utf8')));
      return { secrets: signingSecrets(r, now), t, body };
    });
    let headers: string[];
    try {
      headers = await this.pool().sign(items);
    } catch {
      // The pool is closed or a worker failed: sign on this thread rather than not at all.
      headers = items.map((it) => signHeader(it.secrets, it.t, it.body));
    }
    const attempts = rows.map((r, i) => this.attempt(r, items[i].body, headers[i]));
    await Promise.all(attempts);
    return rows.length;
  }

  private toStore: { item: Parameters<Deliveries['recordMany']>[0][number]; done: () => void }[] = [];

  /** Stores a result with the others that end in the same turn, in one transaction. */
  private store(item: Parameters<Deliveries['recordMany']>[0][number]): Promise<void> {
    return new Promise<void>((done) => {
      this.toStore.push({ item, done });
      if (this.toStore.length > 1) return;
      setImmediate(() => {
        const batch = this.toStore;
        this.toStore = [];
        try {
          this.deps.deliveries.recordMany(batch.map((b) => b.item));
        } catch {
          // The store is closed (stop timed out): the rows stay in flight and are re-sent at next boot.
        }
        for (const b of batch) b.done();
      });
    });
  }

  private agentFor(url: string): http.Agent {
    const cap = Math.max(1, this.deps.config.maxInFlightPerEndpoint);
    this.agents ??= {
      http: new http.Agent({ keepAlive: true, maxSockets: cap, maxFreeSockets: cap, timeout: 30_000 }),
      https: new https.Agent({ keepAlive: true, maxSockets: cap, maxFreeSockets: cap, timeout: 30_000 }),
    };
    return url.startsWith('https:') ? this.agents.https : this.agents.http;
  }

  private attempt(r: DueRow, body: Buffer, signature: string): Promise<void> {
    const { config, clock } = this.deps;
    const p = (async () => {
      let result: SendResult;
      try {
        result = await sendDelivery({
          url: r.url,
          body,
          headers: { [SIGNATURE_HEADER]: signature, [EVENT_ID_HEADER]: r.event_id, [DELIVERY_ID_HEADER]: r.id, 'content-type': 'application/json' },
          timeoutMs: config.timeoutMs,
          allowLoopback: config.allowLoopback,
          allowPrivate: config.allowPrivate,
          maxResponseBytes: EXCERPT_BYTES,
          agent: this.agentFor(r.url),
        });
      } catch (err) {
        result = { ok: false, failure: 'other', detail: String(err), durationMs: 0, responseExcerpt: '', responseBytes: 0 };
      }
      const now = clock.now();
      const attemptNo = r.attempts + 1;
      await this.store({ deliveryId: r.id, attemptNo, result, next: nextState(attemptNo, result.ok, config.ladder, now), nowMs: now });
    })().finally(() => {
      const n = (this.inFlight.get(r.endpoint_id) ?? 1) - 1;
      if (n <= 0) this.inFlight.delete(r.endpoint_id);
      else this.inFlight.set(r.endpoint_id, n);
      this.running.delete(p);
      if (this.started && !this.stopping) this.wake();
    });
    this.running.add(p);
    return p;
  }

  /** One step for tests and tools: fan out, attempt everything due, wait for the results. */
  async tick(): Promise<{ events: number; attempts: number }> {
    const events = this.fanOut();
    const attempts = await this.pump(true);
    return { events, attempts };
  }

  /** Runs `tick()` until nothing more is due now (a bounded number of rounds). */
  async runDue(maxRounds = 20): Promise<number> {
    let total = 0;
    for (let i = 0; i < maxRounds; i++) {
      const { events, attempts } = await this.tick();
      total += attempts;
      if (events === 0 && attempts === 0) break;
    }
    return total;
  }

  /** Deliveries found in flight at boot (the process died mid-attempt) are due again now. */
  recoverInFlight(): number {
    return this.deps.deliveries.resetInFlight(this.deps.clock.now());
  }

  /** Signing round trips and items so far (the batching ratio). */
  get signerStats(): { roundTrips: number; items: number } {
    return this.signer?.stats ?? { roundTrips: 0, items: 0 };
  }

  get isRunning(): boolean {
    return this.started && !this.stopping;
  }

  /** The server loop: recovers in-flight rows, then runs on emits, completions and a timer. */
  start(): void {
    if (this.started) return;
    this.started = true;
    this.stopping = false;
    this.recoverInFlight();
    this.candidates = null;
    // Events from writes are gathered for a few milliseconds so that a busy host fans out many
    // in one transaction instead of one extra write transaction per request.
    this.deps.outbox.onEmit = () => {
      if (this.emitTimer) return;
      this.emitTimer = setTimeout(() => {
        this.emitTimer = undefined;
        this.wake();
      }, EMIT_GATHER_MS);
    };
    this.wake();
  }

  /** Wakes the loop (coalesced into one run per turn of the event loop). */
  wake(rescan = false): void {
    if (rescan) this.candidates = null;
    if (!this.started || this.stopping || this.wakeScheduled) return;
    this.wakeScheduled = true;
    setImmediate(() => {
      this.wakeScheduled = false;
      if (this.stopping) return;
      try {
        this.fanOut();
        void this.pump().catch(() => {});
      } catch {
        // e.g. SQLITE_BUSY from another process: the timer tries again.
      }
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.stopping) return;
    if (this.timer) clearTimeout(this.timer);
    let delay = this.pollMs;
    try {
      const next = this.deps.deliveries.nextDue();
      if (next != null) delay = Math.min(delay, Math.max(20, next - this.deps.clock.now()));
    } catch {
      // store closed
    }
    this.timer = setTimeout(() => this.wake(true), delay);
    this.timer.unref();
  }

  /**
   * Stops taking work and waits up to `waitMs` for attempts in flight; what is not sent stays
   * pending (or in flight, re-sent at the next boot). Closes the signing pool.
   */
  async stop(waitMs = Math.min(this.deps.config.timeoutMs + 1000, 15_000)): Promise<void> {
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.emitTimer) clearTimeout(this.emitTimer);
    this.emitTimer = undefined;
    if (this.started) this.deps.outbox.onEmit = () => {};
    this.started = false;
    if (this.running.size) {
      let t: NodeJS.Timeout | undefined;
      await Promise.race([Promise.allSettled([...this.running]), new Promise((r) => (t = setTimeout(r, waitMs)))]);
      clearTimeout(t);
    }
    this.agents?.http.destroy();
    this.agents?.https.destroy();
    this.agents = undefined;
    const signer = this.signer;
    this.signer = undefined;
    await signer?.close();
  }
}

/** What the host exposes as `host.webhooks`. */
export interface Webhooks {
  endpoints: Endpoints;
  deliveries: Deliveries;
  dispatcher: Dispatcher;
  /** Starts the delivery loop (the server does this when it listens). */
  start(): void;
  stop(waitMs?: number): Promise<void>;
  /** Fan out and attempt what is due now, once; for tests and tools. */
  tick(): Promise<{ events: number; attempts: number }>;
  runDue(maxRounds?: number): Promise<number>;
}

export interface WebhooksDeps {
  sqlite: Sqlite;
  outbox: Outbox;
  audit: AuditLog;
  clock: Clock;
  config: HostConfig['webhooks'];
  known: () => KnownTopics;
}

/** Endpoints, the delivery log and the dispatcher, wired to one another. */
export function createWebhooks(deps: WebhooksDeps): Webhooks {
  let dispatcher: Dispatcher | undefined;
  const endpoints = new Endpoints({ sqlite: deps.sqlite, audit: deps.audit, clock: deps.clock, config: deps.config, known: deps.known, onChange: (id) => dispatcher?.invalidate(id) });
  const deliveries = new Deliveries(deps.sqlite, deps.audit, deps.clock);
  dispatcher = new Dispatcher({ sqlite: deps.sqlite, outbox: deps.outbox, endpoints, deliveries, clock: deps.clock, config: deps.config });
  const d = dispatcher;
  return {
    endpoints,
    deliveries,
    dispatcher: d,
    start: () => d.start(),
    stop: (waitMs) => d.stop(waitMs),
    tick: () => d.tick(),
    runDue: (n) => d.runDue(n),
  };
}
