// The dispatcher: outbox → one delivery per matching enabled endpoint of the event's company
// (a TopicMatcher per company, rebuilt when that company's endpoints change; an operational
// event never goes to the endpoint it is about) → signed in batches on the SignerPool →
// POSTed, per endpoint at most its in-flight cap at a time (its own, or
// `maxInFlightPerEndpoint`) and at most its throttle per second, across every worker on the
// database (deliveries are taken under leases: deliveries.ts) → delivered, pending retry on the
// ladder (with jitter, or when a 429/503 asked with Retry-After: ladder.ts), or dead; the
// endpoint's health is kept as results are stored (health.ts; a 410 disables it). Each delivery
// carries both signature schemes (signature.ts), signed in one worker call, and the endpoint's
// custom headers. Time comes
// from the injected clock, so tests drive it with `tick()`; in the server `start()` runs a loop
// woken by this process's emits, other processes' (the change feed), finished attempts, and a
// timer for the next due retry, throttled endpoint or ending lease.
import os from 'node:os';
import type { Dispatcher as HttpDispatcher } from 'undici';
import type { Db } from '../storage/db.ts';
import type { Outbox } from '../events/outbox.ts';
import { TopicMatcher } from '../events/matcher.ts';
import { eventJson } from '../events/event-body.ts';
import type { WebhookEndpointsRepo } from '../storage/repos/webhook-endpoints.ts';
import type { ChangeFeed } from '../storage/changes.ts';
import { leaseMsFor, type HostConfig } from '../kernel/config.ts';
import type { Clock } from '../kernel/clock.ts';
import { signingSecrets, type SecretSealer } from './endpoints.ts';
import { Deliveries, EXCERPT_BYTES, type AttemptOutcome, type DueRow, type Fresh } from './deliveries.ts';
import type { EndpointHealth } from './health.ts';
import { SignerPool, type Signed, type SignItem } from './signer-pool.ts';
import {
  SIGNATURE_HEADER, STANDARD_ID_HEADER, STANDARD_SIGNATURE_HEADER, STANDARD_TIMESTAMP_HEADER, signHeader, standardSignatureHeader, unixSeconds,
} from './signature.ts';
import { sendDelivery, webhookAgent, type SendResult } from './send.ts';
import { MAX_DEFERRALS, nextState, parseRetryAfter, RETRY_AFTER_CAP_MS, RETRY_AFTER_STATUSES } from './ladder.ts';

export interface DispatcherDeps {
  db: Db;
  outbox: Outbox;
  endpoints: WebhookEndpointsRepo;
  deliveries: Deliveries;
  changes: ChangeFeed;
  sealer: SecretSealer;
  clock: Clock;
  config: HostConfig['webhooks'];
  /** Events fanned out per transaction. */
  fanOutBatch?: number;
  /** Deliveries taken per pump. */
  takeBatch?: number;
  /** Longest the loop sleeps without being woken (picks up writes of other processes). */
  pollMs?: number;
  /** Keeps the endpoints' failing streaks, disables the hopeless, raises `webhook.*` events. */
  health?: EndpointHealth;
  /** Uniform in [0, 1): the retry times' jitter (Math.random unless a test gives its own). */
  random?: () => number;
}

/** Runs the functions given to it one after another, each once the one before has settled. */
function serial() {
  let last: Promise<unknown> = Promise.resolve();
  return <T>(fn: () => T | Promise<T>): Promise<T> => {
    const run = last.then(fn);
    last = run.catch(() => {});
    return run;
  };
}

/** An attempt's outcome waiting to be recorded, and what to call once it is. */
interface Stored {
  item: AttemptOutcome;
  done: () => void;
}

export const EVENT_ID_HEADER = 'x-diwan-event-id';
export const DELIVERY_ID_HEADER = 'x-diwan-delivery-id';

/** The delivered body, built from the outbox row's stored JSON (no re-serialisation of `data`); the events API and the stream answer the same bytes. */
export function eventBody(r: Pick<DueRow, 'event_id' | 'topic' | 'event_created_at' | 'company_id' | 'data' | 'test'>): string {
  return eventJson(r.event_id, r.topic, r.event_created_at, r.company_id, r.data, r.test);
}

/**
 * Signing threads: the cores but the event loop's, at least one, at most two. On 2 cores a second
 * signing thread only took turns with the event loop (bench/webhooks-e2e.ts: 0.236–0.239 against
 * 0.223–0.224); one signs ~280,000 deliveries a second in batches of 16.
 */
export const SIGNING_THREADS = Math.max(1, Math.min(2, os.availableParallelism() - 1));

/**
 * How long events from writes are gathered before a fan-out while they keep coming. On PostgreSQL
 * a burst's deliveries keep up with its writes, and each fan-out's take (six statements) slows
 * the writes sharing the process and the server: 20 ms rather than 5 read 0.46–0.55× the floor
 * against 0.33–0.43, the same code alternated (bench/webhooks-e2e.ts --postgres), though no
 * better than 08bed9d's code at 5 ms (docs/benchmarks-history.md, eighth session). SQLite's
 * bursts, bound by the delivery log's backlog, read the same.
 */
const EMIT_GATHER_MS = 20;
/** Events after this long without any go out at once (a light load's latency). */
const EMIT_QUIET_MS = 4 * EMIT_GATHER_MS;
/** How soon to look again at an endpoint another worker was taking from. */
const BUSY_RETRY_MS = 10;
/** How soon to try again after a fan-out or a take failed. */
const RETRY_MS = 250;
/**
 * How soon the timer looks in full when deliveries are due now. The loop's own candidates carry
 * that work meanwhile; a full look (ended leases, the outbox, every due delivery's endpoint) every
 * 20 ms during a burst cost ~5 % of its main thread (bench/webhooks-e2e.ts, 2026-11-28).
 */
const DUE_NOW_LOOK_MS = 200;

/**
 * In how many ms the loop must look at the leases of attempts still running (the leases in the
 * order taken, so also of their ends), or undefined. A lease needs a look from its end until a
 * reclaim has run at or after it. Timers and the clock are not one time: a timer set for an end
 * may fire while the clock still reads a moment before it, and its reclaim finds nothing; a lease
 * counted as looked at once the clock had passed its end then got no timer until the attempt's
 * own time-out (seen in CI: 30 s without the second request of a delivery whose lease ended).
 */
export function leaseLookIn(leases: Iterable<{ until: number }>, reclaimedAt: number, now: number): number | undefined {
  for (const lease of leases) if (lease.until > reclaimedAt) return Math.max(1, lease.until - now + 1);
  return undefined;
}

export class Dispatcher {
  private indexes = new Map<string, { matcher: TopicMatcher<string>; createdAt: Map<string, string> }>();
  /**
   * The `endpoints` version every index is at least as new as: the one read with the events of
   * the fan-out that set it (fan-outs are serial, and each builds its indexes after that read).
   */
  private indexedAt?: number;
  private running = new Set<Promise<void>>();
  /** The leases of the attempts under way here: given back if a stop cuts them off. */
  private leases = new Map<string, string>();
  /** Whether the next run first makes deliveries whose lease ended due again (at start and on the timer). */
  private reclaim = true;
  /** Whether the next run fans out first (events were written; at start and on the timer): a finished attempt's wake need not. */
  private fanOutDue = true;
  private signer?: SignerPool;
  /** Keep-alive connections per origin; each new connection resolves the name through the guard (webhookAgent). */
  private agent?: HttpDispatcher;
  private started = false;
  private stopping = false;
  private wakeScheduled = false;
  /** Endpoints that may have due work; null: look in the database (boot, timer, retries, tick). */
  private candidates: Set<string> | null = null;
  /** Opened secrets by their sealed form: opening costs an AES-GCM decryption per delivery otherwise. */
  private opened = new Map<string, string>();
  /** Endpoints' custom headers by their stored JSON: parsed once, not per delivery. */
  private customHeaders = new Map<string, Record<string, string>>();
  private timer?: NodeJS.Timeout;
  private emitTimer?: NodeJS.Timeout;
  /** Wakes the loop when the earliest throttled (or busy) endpoint may start again. */
  private paceTimer?: { at: number; t: NodeJS.Timeout };
  private readonly fanOutBatch: number;
  private readonly takeBatch: number;
  private readonly pollMs: number;
  private readonly leaseMs: number;

  constructor(private deps: DispatcherDeps) {
    // Any process's endpoint change (here, the CLI, another server) drops the indexes.
    deps.changes.on('endpoints', () => this.invalidate());
    // Events another process committed (an API process, when this one is a worker), or this
    // one (PostgreSQL tells a process its own commits too).
    deps.changes.on('outbox', () => this.eventsWritten());
    this.leaseMs = deps.config.leaseMs ?? leaseMsFor(deps.config.timeoutMs);
    this.fanOutBatch = deps.fanOutBatch ?? 500;
    this.takeBatch = deps.takeBatch ?? 256;
    this.pollMs = deps.pollMs ?? 5000;
  }

  /** Forget a company's index (all when no id): the next fan-out rebuilds it from its endpoints. */
  invalidate(companyId?: string): void {
    if (companyId === undefined) this.indexes.clear();
    else this.indexes.delete(companyId);
    if (this.started) this.wake(true, true);
  }

  private async index(companyId: string) {
    let m = this.indexes.get(companyId);
    if (!m) {
      m = { matcher: new TopicMatcher<string>(), createdAt: new Map() };
      for (const ep of await this.deps.endpoints.enabledOf(companyId)) {
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

  /**
   * One at a time in a process. Two fan-outs side by side would each take a batch (SKIP LOCKED),
   * and the later events' deliveries could commit first and go out before the earlier ones; two
   * takes side by side (PostgreSQL) would find each other's endpoints locked and come back later.
   */
  private fanOuts = serial();
  private takes = serial();

  /** Fans the pending outbox events out into deliveries; returns how many events it took. */
  fanOut(): Promise<number> {
    return this.fanOuts(() => this.fanOutPending());
  }

  private async fanOutPending(): Promise<number> {
    let total = 0;
    for (;;) {
      await this.endpointsHeard();
      const n = await this.deps.db.transaction(async () => {
        const now = this.deps.clock.now();
        const made = await this.fanOutIn();
        await this.deps.deliveries.insertMany(made.rows, now);
        // Candidates once committed: a take running meanwhile (another connection) would find no
        // row yet and drop them.
        const endpoints = new Set(made.rows.map((r) => r.endpointId));
        this.deps.db.afterCommit(() => endpoints.forEach((id) => this.addCandidate(id)));
        return made.events;
      });
      total += n;
      if (n < this.fanOutBatch) return total;
    }
  }

  /**
   * Before a fan-out, the endpoint changes other processes committed are heard (the indexes they
   * make stale drop at once; on SQLite another process's commit is found here rather than at the
   * next timer). Not enough on its own: on PostgreSQL a notice may still be on its way when a
   * timer wakes the fan-out, which is why fanOutIn() also checks the version read with the events.
   * Outside the fan-out's transaction: the read may need the connection.
   */
  private async endpointsHeard(): Promise<void> {
    await this.deps.changes.check();
  }

  /**
   * One batch of pending events, marked dispatched in the transaction under way; answers how many
   * events it took and their deliveries, in order, for the caller to write (a take writes those
   * it sends at once in flight).
   */
  private async fanOutIn(): Promise<{ events: number; rows: Fresh[] }> {
    const { events, endpointsVersion } = await this.deps.outbox.takePending(this.fanOutBatch);
    // An endpoint committed before these events is in their snapshot's version even when its
    // notice has not arrived: indexes older than that version are dropped here and rebuilt in
    // this transaction, whose later reads see at least what the events' read saw. No rollback,
    // no extra statement.
    if (endpointsVersion !== null && endpointsVersion !== this.indexedAt) {
      this.indexes.clear();
      this.indexedAt = endpointsVersion;
    }
    const rows: Fresh[] = [];
    for (const ev of events) {
      const ix = await this.index(ev.companyId);
      for (const endpointId of ix.matcher.match(ev.topic)) {
        // An endpoint receives the events emitted since it was registered, not older ones,
        // and never an operational event about itself.
        if (ev.createdAt < ix.createdAt.get(endpointId)! || endpointId === ev.subjectId) continue;
        rows.push({ companyId: ev.companyId, endpointId, eventId: ev.id, topic: ev.topic });
      }
    }
    const sent = new Set(rows.map((r) => r.eventId));
    this.deps.deliveries.remember(
      events.filter((e) => sent.has(e.id)).map((e) => ({ id: e.id, company_id: e.companyId, data: e.data, test: e.test, created_at: e.createdAt })),
    );
    return { events: events.length, rows };
  }

  /** Endpoints made candidates while each take under way ran (a take that found nothing drops them). */
  private duringTakes = new Set<Set<string>>();

  private addCandidate(id: string): void {
    this.candidates?.add(id);
    for (const seen of this.duringTakes) seen.add(id);
  }

  private pool(): SignerPool {
    this.signer ??= new SignerPool({ threads: SIGNING_THREADS });
    return this.signer;
  }

  private wakeAt(at: number): void {
    if (!this.started || this.stopping || (this.paceTimer && this.paceTimer.at <= at)) return;
    if (this.paceTimer) clearTimeout(this.paceTimer.t);
    const t = setTimeout(() => {
      this.paceTimer = undefined;
      this.wake();
    }, Math.max(1, at - this.deps.clock.now()));
    t.unref();
    this.paceTimer = { at, t };
  }

  /**
   * Records the results that came in since the last pump, takes what is due now (one
   * transaction), signs it as one batch and starts the attempts; resolves when they end.
   */
  async pump(rescan = false, fanOut = false): Promise<number> {
    if (this.stopping) return 0;
    let results: Stored[] = [];
    const full = rescan || this.candidates === null;
    // Fan-outs under way add to the set while the take runs; a wake asking for a full look meanwhile sets it to null.
    const candidates = full ? new Set<string>() : this.candidates!;
    this.candidates = candidates;
    const during = new Set<string>();
    this.duringTakes.add(during);
    this.taking++;
    let now = 0;
    let taken;
    let fannedOut = 0;
    const take = () =>
      this.takes(async () => {
        if (fanOut) await this.endpointsHeard();
        // What came in until this take's turn (those waiting meanwhile are recorded together).
        results = this.stopping ? [] : this.results.splice(0);
        // An earlier take may have left nothing to do.
        if (!fanOut && !full && candidates.size === 0 && results.length === 0) return null;
        now = this.deps.clock.now();
        return this.deps.deliveries.take(
          now, this.takeBatch, { maxInFlightPerEndpoint: this.deps.config.maxInFlightPerEndpoint, leaseMs: this.leaseMs }, full ? undefined : candidates,
          results.length ? { items: results.map((r) => r.item), observer: this.deps.health } : undefined,
          fanOut
            ? async () => {
                const made = await this.fanOutIn();
                fannedOut = made.events;
                return made.rows;
              }
            : undefined,
        );
      });
    try {
      // With a fan-out: after any fan-out under way (the order of events), and in the take's transaction.
      taken = await (fanOut ? this.fanOuts(take) : take());
    } finally {
      this.taking--;
      this.duringTakes.delete(during);
      // Recorded, or (the take failed) left in flight until their lease ends, then sent again.
      for (const r of results) r.done();
    }
    if (!taken) return this.idle();
    // A full batch of events: more may be waiting.
    if (fannedOut === this.fanOutBatch) this.wake(false, true);
    this.countFenced(taken.fenced);
    // The endpoints that may have more are candidates, and so are those a fan-out committed
    // meanwhile: the take may have looked before that commit and dropped them.
    for (const id of [...taken.more, ...during]) candidates.add(id);
    if (taken.busy) this.wakeAt(now + BUSY_RETRY_MS);
    if (taken.throttledUntil !== null) this.wakeAt(taken.throttledUntil);
    const rows = taken.rows;
    if (rows.length === 0) return this.idle();

    const t = unixSeconds(now);
    const bodies = new Map<string, Buffer>();
    const items = rows.map((r): SignItem & { body: Buffer } => {
      let body = bodies.get(r.event_id);
      if (!body) bodies.set(r.event_id, (body = Buffer.from(eventBody(r), 'utf8')));
      const secrets = signingSecrets(
        { secret: this.open(r.secret, r.endpoint_id), previousSecret: r.previous_secret && this.open(r.previous_secret, r.endpoint_id), previousSecretUntil: r.previous_secret_until === null ? null : Number(r.previous_secret_until) },
        now,
      );
      return { secrets, t, body, id: r.event_id, signingKey: r.signing_key === null ? null : this.open(r.signing_key, r.endpoint_id) };
    });
    let signed: Signed[];
    try {
      // Both schemes in the same worker call.
      signed = await this.pool().signAll(items);
    } catch {
      // The pool is closed or a worker failed: sign on this thread rather than not at all.
      signed = items.map((it) => ({ signature: signHeader(it.secrets, it.t, it.body), standard: standardSignatureHeader(it.secrets, it.id!, it.t, it.body, it.signingKey) }));
    }
    const ts = String(t);
    // Should these attempts outlive their lease, the loop looks again when it ends.
    this.leaseEnds.set(taken.token, { until: now + this.leaseMs, running: rows.length });
    this.lookAtLeaseEnd(now);
    const attempts = rows.map((r, i) => this.attempt(r, taken.token, items[i].body, ts, signed[i]));
    await Promise.all(attempts);
    return rows.length;
  }

  /** Takes under way (the pumps' first part, until their attempts start). */
  private taking = 0;

  /** A take ended with nothing to attempt: with nothing else under way, the loop sets its timer. */
  private idle(): 0 {
    if (this.running.size === 0 && this.taking === 0 && this.started && !this.stopping) void this.schedule();
    // The timer that woke this take fired while attempts run: the next look is at their leases' end.
    else if (!this.timer) this.lookAtLeaseEnd(this.deps.clock.now());
    return 0;
  }

  /**
   * The leases of the takes whose attempts run, in the order taken (so also of their ends): when
   * each ends and how many of its attempts still run.
   */
  private leaseEnds = new Map<string, { until: number; running: number }>();

  /** When the last reclaim ran (clock ms): every lease that ended by then has been looked at. */
  private reclaimedAt = -Infinity;

  /** Sets the timer for the first lease not yet looked at since its end (a take after it may have set it later). */
  private lookAtLeaseEnd(now: number): void {
    const delay = leaseLookIn(this.leaseEnds.values(), this.reclaimedAt, now);
    if (delay !== undefined) this.setTimer(delay);
  }

  private open(sealed: string, endpointId: string): string {
    let plain = this.opened.get(sealed);
    if (plain === undefined) {
      plain = this.deps.sealer.open(sealed, endpointId);
      if (this.opened.size > 10_000) this.opened.clear();
      this.opened.set(sealed, plain);
    }
    return plain;
  }

  /** Results waiting for the loop's next pump, which records them in its take's transaction. */
  private results: Stored[] = [];
  /** Results recorded on their own (no loop running: tick(), a stop under way). */
  private toStore: Stored[] = [];

  private store(item: AttemptOutcome): Promise<void> {
    return new Promise<void>((done) => {
      if (this.started && !this.stopping) {
        this.results.push({ item, done });
        // Its endpoint is not made a candidate: one held back by its cap is one already (a take
        // keeps those with more), and looking again at one it drained cost three statements (on
        // PostgreSQL, three round trips before the result's commit).
        this.wake();
        return;
      }
      this.toStore.push({ item, done });
      if (this.toStore.length === 1) setImmediate(() => this.flush());
    });
  }

  /** Records the waiting results on their own, those that end in the same turn in one transaction. */
  private flush(): void {
    const batch = this.toStore;
    this.toStore = [];
    if (!batch.length) return;
    this.deps.deliveries
      .recordMany(
        batch.map((b) => b.item),
        this.deps.health,
      )
      .then(({ fenced }) => this.countFenced(fenced))
      // The store is closed (stop timed out): the rows stay in flight until their lease ends, then are sent again.
      .catch(() => {})
      .finally(() => batch.forEach((b) => b.done()));
  }

  private countFenced(n: number): void {
    if (n) this.attemptsByResult.set('fenced', (this.attemptsByResult.get('fenced') ?? 0) + n);
  }

  private agentFor(): HttpDispatcher {
    const { allowLoopback, allowPrivate } = this.deps.config;
    return (this.agent ??= webhookAgent({ allowLoopback, allowPrivate }));
  }

  /** The headers of one delivery: the endpoint's own, then the host's (which a custom header never replaces: endpoints.ts refuses them). */
  private headersOf(r: DueRow, t: string, signed: Signed): Record<string, string> {
    if (r.headers === null) {
      return {
        [SIGNATURE_HEADER]: signed.signature, [STANDARD_ID_HEADER]: r.event_id, [STANDARD_TIMESTAMP_HEADER]: t, [STANDARD_SIGNATURE_HEADER]: signed.standard,
        [EVENT_ID_HEADER]: r.event_id, [DELIVERY_ID_HEADER]: r.id, 'content-type': 'application/json',
      };
    }
    let custom = this.customHeaders.get(r.headers);
    if (custom === undefined) {
      custom = JSON.parse(r.headers) as Record<string, string>;
      if (this.customHeaders.size > 10_000) this.customHeaders.clear();
      this.customHeaders.set(r.headers, custom);
    }
    const headers: Record<string, string> = {};
    for (const name in custom) headers[name] = custom[name];
    headers[SIGNATURE_HEADER] = signed.signature;
    headers[STANDARD_ID_HEADER] = r.event_id;
    headers[STANDARD_TIMESTAMP_HEADER] = t;
    headers[STANDARD_SIGNATURE_HEADER] = signed.standard;
    headers[EVENT_ID_HEADER] = r.event_id;
    headers[DELIVERY_ID_HEADER] = r.id;
    headers['content-type'] = 'application/json';
    return headers;
  }

  /** `t`: the signing time (Unix seconds) as sent in webhook-timestamp. */
  private attempt(r: DueRow, token: string, body: Buffer, t: string, signed: Signed): Promise<void> {
    const { config, clock } = this.deps;
    this.leases.set(r.id, token);
    const p = (async () => {
      let result: SendResult;
      try {
        result = await sendDelivery({
          url: r.url,
          body,
          headers: this.headersOf(r, t, signed),
          timeoutMs: config.timeoutMs,
          allowLoopback: config.allowLoopback,
          allowPrivate: config.allowPrivate,
          maxResponseBytes: EXCERPT_BYTES,
          agent: this.agentFor(),
        });
      } catch (err) {
        result = { ok: false, failure: 'other', detail: String(err), durationMs: 0, responseExcerpt: '', responseBytes: 0 };
      }
      const now = clock.now();
      const attemptNo = r.attempts + 1;
      const outcome = result.ok ? 'delivered' : (result.failure ?? 'other');
      this.attemptsByResult.set(outcome, (this.attemptsByResult.get(outcome) ?? 0) + 1);
      // A 429/503's Retry-After defers the next attempt without walking the ladder (ladder.ts).
      const retryAfterMs = !result.ok && result.status !== undefined && RETRY_AFTER_STATUSES.has(result.status) ? parseRetryAfter(result.retryAfter, now) : null;
      const next = nextState(attemptNo - r.deferrals, result.ok, config.ladder, now, {
        jitter: config.jitter ?? 0, random: this.deps.random, retryAfterMs, deferrals: r.deferrals,
      });
      const deferred = next.state === 'pending_retry' && next.deferred === true;
      if (retryAfterMs !== null && result.detail === undefined) {
        result.detail = deferred
          ? `Retry-After: ${result.retryAfter} honoured${retryAfterMs > RETRY_AFTER_CAP_MS ? ` (capped at ${RETRY_AFTER_CAP_MS / 1000} s)` : ''}; this attempt does not use a retry step`
          : `Retry-After: ${result.retryAfter} not honoured: ${MAX_DEFERRALS} already were for this delivery`;
      }
      await this.store({ deliveryId: r.id, attemptNo, result, next, nowMs: now, token, row: r, ...(deferred ? { deferrals: r.deferrals + 1 } : {}) });
    })().finally(() => {
      this.leases.delete(r.id);
      const lease = this.leaseEnds.get(token);
      if (lease && --lease.running === 0) this.leaseEnds.delete(token);
      this.running.delete(p);
      // The last attempt to end sets the loop's timer (the next retry); see schedule().
      if (this.running.size === 0 && this.started && !this.stopping) void this.schedule();
    });
    this.running.add(p);
    return p;
  }

  /** One step for tests and tools: fan out, attempt everything due, wait for the results. */
  async tick(): Promise<{ events: number; attempts: number }> {
    const events = await this.fanOut();
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

  /** Deliveries whose lease ended (a worker died or stopped mid-attempt) are due again now. */
  reclaimExpired(): Promise<number> {
    const now = this.deps.clock.now();
    return this.deps.deliveries.reclaimExpired(now).then((n) => {
      this.reclaimedAt = Math.max(this.reclaimedAt, now);
      return n;
    });
  }

  /** Signing round trips and items so far (the batching ratio). */
  get signerStats(): { roundTrips: number; items: number } {
    return this.signer?.stats ?? { roundTrips: 0, items: 0 };
  }

  /** Deliveries waiting to be signed (the pool's queue). */
  get signingQueueDepth(): number {
    return this.signer?.queueDepth ?? 0;
  }

  /**
   * Attempts made by this process so far, by result (`delivered`, or the failure: `timeout`,
   * `http_status`, …); `fenced`: results not recorded because the lease had ended.
   */
  readonly attemptsByResult = new Map<string, number>();

  get isRunning(): boolean {
    return this.started && !this.stopping;
  }

  /** The server loop: runs on emits (here or, heard through the change feed, elsewhere), completions and a timer. */
  start(): void {
    if (this.started) return;
    this.started = true;
    this.stopping = false;
    this.candidates = null;
    this.unlisten = this.deps.outbox.listen(() => this.eventsWritten());
    this.reclaim = true;
    this.wake(false, true);
  }

  private lastEmit = 0;
  /** Stops hearing this process's emits (set while started). */
  private unlisten?: () => void;

  /**
   * Events were written, here or (heard through the change feed) by another process. They are
   * gathered for a few milliseconds so that a busy host fans out many in one transaction instead
   * of one extra write transaction per request; after a quiet spell they go out at once.
   */
  private eventsWritten(): void {
    if (!this.started || this.stopping) return;
    const now = performance.now();
    const quiet = now - this.lastEmit > EMIT_QUIET_MS;
    this.lastEmit = now;
    if (this.emitTimer) return;
    if (quiet) return this.wake(false, true);
    this.emitTimer = setTimeout(() => {
      this.emitTimer = undefined;
      this.wake(false, true);
    }, EMIT_GATHER_MS);
  }

  /** Wakes the loop (coalesced into one run per turn of the event loop); `fanOut`: events may be waiting. */
  wake(rescan = false, fanOut = false): void {
    if (rescan) this.candidates = null;
    if (fanOut) this.fanOutDue = true;
    if (!this.started || this.stopping || this.wakeScheduled) return;
    this.wakeScheduled = true;
    setImmediate(async () => {
      this.wakeScheduled = false;
      if (this.stopping) return;
      try {
        if (this.reclaim) {
          await this.reclaimExpired();
          this.reclaim = false;
        }
        // The fan-out runs in the take's transaction: one transaction from events to their attempts.
        const fanOut = this.fanOutDue;
        this.fanOutDue = false;
        // A failed step (SQLITE_BUSY from another process, a lost connection) is tried again shortly, not at the next poll.
        void this.pump(false, fanOut).catch(() => {
          if (fanOut) this.fanOutDue = true;
          this.wakeAt(this.deps.clock.now() + RETRY_MS);
        });
      } catch {
        this.wakeAt(this.deps.clock.now() + RETRY_MS);
      }
      // A take under way schedules when it ends (idle(), or its last attempt): looking for the
      // next due time here as well was two statements per wake (round trips on PostgreSQL).
      if (this.taking === 0) await this.schedule();
    });
  }

  private async schedule(): Promise<void> {
    // While attempts run, the last one to finish wakes the loop and schedules then (the timer
    // already comes no later than their leases' end: see pump).
    if (this.stopping || (this.running.size > 0 && this.timer)) return;
    let delay = this.pollMs;
    try {
      const next = await this.deps.deliveries.nextDue();
      if (next != null) {
        const wait = next - this.deps.clock.now();
        delay = Math.min(delay, wait <= 0 ? DUE_NOW_LOOK_MS : Math.max(20, wait));
      }
    } catch {
      // store closed
    }
    this.setTimer(delay);
  }

  /** The loop's timer: a full look (ended leases, events, every endpoint) in `delay` ms. */
  private setTimer(delay: number): void {
    if (this.stopping) return;
    const at = this.deps.clock.now() + delay;
    // An earlier look is kept: schedule() may answer from a read made before a take set the timer for its leases' end.
    if (this.timer && this.timerAt <= at) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => {
      // Gone once fired: with attempts under way, schedule() then sets the next one (a lease's end).
      this.timer = undefined;
      this.reclaim = true;
      this.wake(true, true);
    }, delay);
    this.timer.unref();
  }

  private timerAt = 0;

  /**
   * Stops taking work and waits up to `waitMs` for attempts in flight; what is still under way
   * then is given back (due again now, for any worker; its late result is fenced off). Closes
   * the signing pool.
   */
  async stop(waitMs = Math.min(this.deps.config.timeoutMs + 1000, 15_000)): Promise<void> {
    this.stopping = true;
    // No pump runs now: the results waiting for one are recorded on their own.
    this.toStore.push(...this.results.splice(0));
    if (this.toStore.length) this.flush();
    if (this.timer) clearTimeout(this.timer);
    if (this.paceTimer) clearTimeout(this.paceTimer.t);
    this.paceTimer = undefined;
    if (this.emitTimer) clearTimeout(this.emitTimer);
    this.emitTimer = undefined;
    this.unlisten?.();
    this.unlisten = undefined;
    this.started = false;
    if (this.running.size) {
      let t: NodeJS.Timeout | undefined;
      await Promise.race([Promise.allSettled([...this.running]), new Promise((r) => (t = setTimeout(r, waitMs)))]);
      clearTimeout(t);
    }
    if (this.leases.size) {
      const cut = [...this.leases].map(([id, token]) => ({ id, token }));
      await this.deps.deliveries.release(cut, this.deps.clock.now()).catch(() => {});
    }
    const agent = this.agent;
    this.agent = undefined;
    await agent?.destroy().catch(() => {});
    const signer = this.signer;
    this.signer = undefined;
    await signer?.close();
  }
}

