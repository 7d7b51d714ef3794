// The delivery log as the API shows it, and the steps that change it: taking due deliveries,
// recording attempts, retrying one, recovering what failed since a time.
import type { Db } from '../storage/db.ts';
import {
  DELIVERY_STATES, type AttemptRow, type DeliveryFilter, type DeliveryRow, type DueRow, type EndpointTarget, type EventRow, type LeasedRow, type LeaseWant, type NewDelivery, type WebhookDeliveriesRepo,
} from '../storage/repos/webhook-deliveries.ts';
import type { UnitOfWork, WriteScope } from '../audit/unit-of-work.ts';
import type { Clock } from '../kernel/clock.ts';
import { DiwanError } from '../kernel/errors/diwan-error.ts';
import { newId, newSortableId, isoNow } from '../kernel/ids.ts';
import type { SendResult } from './send.ts';
import type { DeliveryState } from './ladder.ts';

export { DELIVERY_FILTERS, type DeliveryFilter, type DueRow } from '../storage/repos/webhook-deliveries.ts';

export interface Delivery {
  id: string;
  endpointId: string;
  eventId: string;
  topic: string;
  state: (typeof DELIVERY_STATES)[number];
  attemptCount: number;
  nextAttemptAt: string | null;
  lastStatus: number | null;
  lastFailure: string | null;
  createdAt: string;
  updatedAt: string;
  deliveredAt: string | null;
}

export interface Attempt {
  attempt: number;
  at: string;
  durationMs: number;
  status: number | null;
  failure: string | null;
  detail: string | null;
  responseExcerpt: string;
  responseBytes: number;
}

const nullable = (type: string) => ({ type: [type, 'null'] });

export const deliverySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'endpointId', 'eventId', 'topic', 'state', 'attemptCount', 'nextAttemptAt', 'lastStatus', 'lastFailure', 'createdAt', 'updatedAt', 'deliveredAt'],
  properties: {
    id: { type: 'string' },
    endpointId: { type: 'string' },
    eventId: { type: 'string' },
    topic: { type: 'string' },
    state: { type: 'string', enum: [...DELIVERY_STATES] },
    attemptCount: { type: 'integer' },
    nextAttemptAt: nullable('string'),
    lastStatus: nullable('integer'),
    lastFailure: nullable('string'),
    createdAt: { type: 'string' },
    updatedAt: { type: 'string' },
    deliveredAt: nullable('string'),
  },
} as const;

export const attemptSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['attempt', 'at', 'durationMs', 'status', 'failure', 'detail', 'responseExcerpt', 'responseBytes'],
  properties: {
    attempt: { type: 'integer' },
    at: { type: 'string' },
    durationMs: { type: 'integer' },
    status: nullable('integer'),
    failure: { type: ['string', 'null'], description: 'timeout, connection_refused, connection_reset, dns, tls, refused_address, http_status, redirect, other' },
    detail: nullable('string'),
    responseExcerpt: { type: 'string' },
    responseBytes: { type: 'integer' },
  },
} as const;

export const deliveryWithAttemptsSchema = {
  ...deliverySchema,
  required: [...deliverySchema.required, 'attempts'],
  properties: { ...deliverySchema.properties, attempts: { type: 'array', items: attemptSchema } },
} as const;

/** Bytes of a response body kept in the attempt log. */
export const EXCERPT_BYTES = 2048;

const toDelivery = (r: DeliveryRow): Delivery => ({
  id: r.id,
  endpointId: r.endpoint_id,
  eventId: r.event_id,
  topic: r.topic,
  state: r.state,
  attemptCount: Number(r.attempts),
  nextAttemptAt: r.state === 'pending' && r.next_attempt_at !== null ? isoNow(Number(r.next_attempt_at)) : null,
  lastStatus: r.last_status,
  lastFailure: r.last_failure,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  deliveredAt: r.delivered_at,
});

const toAttempt = (a: AttemptRow): Attempt => ({
  attempt: a.attempt, at: a.at, durationMs: a.duration_ms, status: a.status, failure: a.failure, detail: a.detail,
  responseExcerpt: a.response_excerpt, responseBytes: a.response_bytes,
});

export interface AttemptOutcome {
  deliveryId: string;
  attemptNo: number;
  result: SendResult;
  next: DeliveryState;
  nowMs: number;
  /** The lease it was sent under. */
  token: string;
  /** The delivery's Retry-After deferrals after this attempt, when it changed them. */
  deferrals?: number;
  /** The delivery as it was taken (endpoint, company, event): what the endpoint's health and the operational events need. */
  row: Pick<DueRow, 'endpoint_id' | 'company_id' | 'url' | 'event_id' | 'topic'>;
}

/** Deliveries taken under one lease (the token fences what is recorded for them). */
export interface Taken {
  rows: DueRow[];
  token: string;
  /** Whether another worker was taking from one of them at that moment: look again shortly. */
  busy: boolean;
  /** Endpoints that may have more due now (all taken that was allowed, or held back by a limit or a busy lock). */
  more: string[];
  /** When the earliest throttled endpoint has a token again (ms), or null. */
  throttledUntil: number | null;
  /** Results given to the take that were not recorded: their lease had ended. */
  fenced: number;
}

/** What runs with attempts' results, in the transaction that records them: the endpoints' health (health.ts). */
export interface ResultsObserver {
  /**
   * Endpoints whose failing streak ends once any of their results here is recorded: the statement
   * that records the results does it, and `observe` is not given their results.
   */
  healedBy(items: AttemptOutcome[]): string[];
  /** Runs on the other results recorded; puts what may fail in `savepoint`. */
  observe(items: AttemptOutcome[], savepoint: <T>(fn: () => Promise<T>) => Promise<T>): Promise<void>;
}

/** Attempts that ended, recorded with the next take, and what observes them (see recordMany). */
export interface Results {
  items: AttemptOutcome[];
  observer?: ResultsObserver;
}

/** A delivery a fan-out makes (its id is given when it is written). */
export type Fresh = Omit<NewDelivery, 'id' | 'lease'>;

/** How deliveries are taken: the in-flight cap of endpoints that set none, and the lease. */
export interface TakeLimits {
  maxInFlightPerEndpoint: number;
  leaseMs: number;
}

/** Events a fan-out made deliveries of, kept for the takes that send them (most are taken within a second). */
const RECENT_EVENTS = 4096;

export class Deliveries {
  /** Events by id, as the outbox stores them (immutable): a take reads only those not here. */
  private recent = new Map<string, EventRow>();

  constructor(
    private db: Db,
    private repo: WebhookDeliveriesRepo,
    private uow: UnitOfWork,
    private clock: Clock,
  ) {}

  /**
   * Events whose deliveries a fan-out made: their takes (in this process) need not read them
   * again, one statement per take (a round trip on PostgreSQL). Events are never changed, so a
   * fan-out that is then rolled back leaves nothing wrong here.
   */
  remember(events: EventRow[]): void {
    for (const e of events) {
      if (this.recent.size >= RECENT_EVENTS) this.recent.delete(this.recent.keys().next().value!);
      this.recent.set(e.id, e);
    }
  }

  /** New pending deliveries, due now. Call inside the fan-out transaction. */
  async insertMany(rows: Fresh[], nowMs: number): Promise<void> {
    await this.repo.insertMany(rows.map((r) => ({ id: newSortableId('dlv', nowMs), ...r })), nowMs, isoNow(nowMs));
  }

  /**
   * Takes the due deliveries, oldest first, under a lease, in one transaction; `results` (the
   * attempts that ended since the last take) are recorded first in the same transaction, so
   * that the endpoints they free are taken from at once. Per endpoint (its row locked
   * meanwhile, so any number of workers hold its limits together): at most its in-flight cap
   * minus the deliveries in flight under live leases, and at most the tokens of its throttle
   * bucket. A slow or throttled endpoint's backlog never hides another endpoint's work. A
   * candidate found with nothing more due is dropped. `fanOut` (the pending events made into
   * deliveries; answers them, not yet written) runs first in the same transaction: those its
   * endpoints have room for after their older due deliveries are written in flight under this
   * take's lease, the others pending (the repository's leaseAndWrite).
   */
  take(nowMs: number, limit: number, limits: TakeLimits, candidates?: Set<string>, results?: Results, fanOut?: () => Promise<Fresh[]>): Promise<Taken> {
    return this.db.transaction(async () => {
      const fenced = results?.items.length ? await this.recordIn(results.items, results.observer) : 0;
      // A fan-out in the same transaction: its endpoints are taken from before it commits (one
      // transaction, not two, from an event to its first attempt).
      const fresh = fanOut ? await fanOut() : [];
      const freshTo = new Set(fresh.map((r) => r.endpointId));
      for (const id of freshTo) candidates?.add(id);
      const endpoints = candidates ? [...candidates] : await this.repo.dueEndpoints(nowMs);
      if (!candidates) for (const id of freshTo) if (!endpoints.includes(id)) endpoints.push(id);
      endpoints.sort();
      const taken: Taken = { rows: [], token: newId('lse'), busy: false, more: [], throttledUntil: null, fenced };
      const untilMs = nowMs + limits.leaseMs;
      if (!endpoints.length) return taken;
      // Statements for all the endpoints at once (on PostgreSQL, two round trips): their locks,
      // then their deliveries in flight and the lease.
      const { locked, busy } = await this.repo.lockEndpoints(endpoints);
      if (busy.length) {
        taken.busy = true;
        taken.more.push(...busy);
      }
      const held = new Set(busy);
      const wants: (LeaseWant & { target: EndpointTarget & { id: string }; milli: number | null })[] = [];
      let count = 0;
      for (const endpointId of endpoints) {
        const pace = locked.get(endpointId);
        if (!pace) {
          if (!held.has(endpointId)) candidates?.delete(endpointId);
          continue;
        }
        const cap = Math.max(1, pace.max_in_flight ?? limits.maxInFlightPerEndpoint);
        // The deliveries in flight are not known yet: the take's limit is shared as if none were.
        let room = Math.min(cap, limit - count);
        if (room <= 0) {
          taken.more.push(endpointId);
          continue;
        }
        const rate = pace.rate_per_second;
        // The bucket holds a second's worth at most, in thousandths of a token.
        let milli: number | null = null;
        if (rate !== null) {
          const since = pace.throttle_at === null ? Infinity : Math.max(0, nowMs - pace.throttle_at);
          milli = Math.min(rate * 1000, (pace.throttle_milli ?? 0) + since * rate);
          if (milli < 1000) {
            const ready = nowMs + Math.ceil((1000 - milli) / rate);
            taken.throttledUntil = Math.min(taken.throttledUntil ?? ready, ready);
            taken.more.push(endpointId);
            continue;
          }
          room = Math.min(room, Math.floor(milli / 1000));
        }
        wants.push({ endpointId, cap, limit: room, target: { id: endpointId, ...pace }, milli });
        count += room;
      }
      // The fan-out's deliveries go after the older due ones: in flight as far as room is left.
      const made = fresh.map((r) => ({ id: newSortableId('dlv', nowMs), ...r }));
      const { leased: byEndpoint, written: direct } = await this.repo.leaseAndWrite(wants, made, nowMs, taken.token, untilMs, isoNow(nowMs));
      const leased: { target: EndpointTarget & { id: string }; rows: LeasedRow[] }[] = [];
      for (const w of wants) {
        const { room, rows: older } = byEndpoint.get(w.endpointId) ?? { room: 0, rows: [] };
        const now = direct.get(w.endpointId);
        const rows = now ? [...older, ...now] : older;
        leased.push({ target: w.target, rows });
        if (w.milli !== null) await this.repo.saveThrottle(w.endpointId, w.milli - rows.length * 1000, nowMs);
        // Held back by its cap (or the take's limit): more may be due. (Dropping one whose room
        // only the fan-out's rows filled, all in flight, was tried: a PostgreSQL burst read
        // slower, docs/benchmarks-history.md.)
        if (room > 0 && rows.length < room) candidates?.delete(w.endpointId);
        else taken.more.push(w.endpointId);
      }
      // Each event read once, whichever endpoints it goes to. The rows are written out field by
      // field: on Node 20, each property after a spread (`{ ...r, url }`) costs ~0.5 µs, which was
      // ~5 µs a delivery here.
      const events = new Map<string, EventRow>();
      const unknown = new Set<string>();
      for (const l of leased) {
        for (const r of l.rows) {
          const e = this.recent.get(r.event_id);
          if (e) events.set(e.id, e);
          else unknown.add(r.event_id);
        }
      }
      if (unknown.size) for (const e of await this.repo.events([...unknown])) events.set(e.id, e);
      for (const { target, rows } of leased) {
        for (const r of rows) {
          const ev = events.get(r.event_id);
          // Never so: retention prunes an event with its deliveries, none of them in flight.
          if (!ev) continue;
          taken.rows.push({
            id: r.id, event_id: r.event_id, topic: r.topic, attempts: r.attempts, deferrals: r.deferrals,
            endpoint_id: target.id, url: target.url, secret: target.secret, previous_secret: target.previous_secret, previous_secret_until: target.previous_secret_until,
            headers: target.headers, signing_key: target.signing_key,
            company_id: ev.company_id, data: ev.data, test: Number(ev.test), event_created_at: ev.created_at,
          });
        }
      }
      return taken;
    });
  }

  nextDue(): Promise<number | null> {
    return this.repo.nextDue();
  }

  /**
   * Several attempts' results in one transaction (the attempts that ended in one turn); `observer`
   * runs in the same transaction (the endpoints' health, the operational events), what may fail
   * of it in a savepoint of its own so that a fault there is undone alone.
   */
  recordMany(items: AttemptOutcome[], observer?: ResultsObserver): Promise<{ fenced: number }> {
    return this.db.transaction(async () => ({ fenced: await this.recordIn(items, observer) }));
  }

  /** Records results in the transaction under way; answers how many were fenced off. */
  private async recordIn(items: AttemptOutcome[], observer?: ResultsObserver): Promise<number> {
    const healed = observer?.healedBy(items) ?? [];
    const stored = await this.repo.recordMany(
      items.map(({ deliveryId, attemptNo, result, next, nowMs, token, row, deferrals }) => ({
        deliveryId,
        token,
        companyId: row.company_id,
        endpointId: row.endpoint_id,
        attempt: attemptNo,
        at: isoNow(nowMs),
        durationMs: result.durationMs,
        status: result.status ?? null,
        failure: result.ok ? null : (result.failure ?? 'other'),
        detail: result.detail ?? null,
        responseExcerpt: result.responseExcerpt.slice(0, EXCERPT_BYTES),
        responseBytes: result.responseBytes,
        next: next.state === 'pending_retry' ? { state: 'pending', at: next.nextAttemptAt } : { state: next.state, at: null },
        deferrals,
      })),
      healed,
    );
    const recorded = items.filter((item) => stored.has(item.deliveryId));
    const rest = healed.length ? recorded.filter((item) => !healed.includes(item.row.endpoint_id)) : recorded;
    if (observer && rest.length) {
      try {
        // What may fail runs in a savepoint of its own: a fault there never loses the results
        // themselves. Not all of it: ending streaks is one guarded UPDATE, and the savepoint
        // around it was two statements more per take (a round trip each on PostgreSQL).
        await observer.observe(rest, (fn) => this.db.transaction(fn));
      } catch {
        // The endpoints' health and the operational events are skipped for this batch.
      }
    }
    return items.length - recorded.length;
  }

  /** Deliveries whose lease ended (their worker died, or stopped mid-attempt): due again now, same delivery and event ids. */
  reclaimExpired(nowMs: number): Promise<number> {
    return this.repo.reclaimExpired(nowMs, isoNow(nowMs));
  }

  /** Gives back deliveries a stopping worker took and did not finish: due again now. */
  release(leases: { id: string; token: string }[], nowMs: number): Promise<number> {
    return this.repo.release(leases, nowMs, isoNow(nowMs));
  }

  async list(endpointId: string, q: { page: number; pageSize: number; state?: DeliveryFilter }): Promise<{ data: Delivery[]; total: number }> {
    const { total, rows } = await this.repo.list(endpointId, q);
    return { total, data: rows.map(toDelivery) };
  }

  private async row(endpointId: string, id: string): Promise<DeliveryRow> {
    const r = await this.repo.get(endpointId, id);
    if (!r) throw new DiwanError('NOT_FOUND', [{ resource: 'webhook-deliveries', id }]);
    return r;
  }

  async get(endpointId: string, id: string): Promise<Delivery & { attempts: Attempt[] }> {
    const r = await this.row(endpointId, id);
    return { ...toDelivery(r), attempts: (await this.repo.attempts(id)).map(toAttempt) };
  }

  /** Schedules a new attempt now, dead deliveries included; audited. */
  retry(scope: WriteScope, endpointId: string, id: string): Promise<Delivery> {
    const nowMs = this.clock.now();
    return this.uow.run(scope, async (w) => {
      const before = await this.row(endpointId, id);
      if (before.state === 'in_flight') throw new DiwanError('CONFLICT', [{ reason: 'in_flight', id }], { reason: 'the delivery is being attempted now' });
      await this.repo.reschedule(id, nowMs, isoNow(nowMs));
      const after = toDelivery(await this.row(endpointId, id));
      await w.audit({ action: 'retry', resource: 'webhook-endpoints', resourceId: endpointId, before: toDelivery(before), after });
      return after;
    });
  }

  /** Failed (retrying or dead) deliveries of an endpoint created at or after `since`. */
  async recoverable(endpointId: string, since: string): Promise<{ count: number; dead: number; retrying: number }> {
    const { dead, retrying } = await this.repo.recoverable(endpointId, since);
    return { count: dead + retrying, dead, retrying };
  }

  /** Reschedules them all now; audited as one `retry` of the endpoint. */
  recover(scope: WriteScope, endpointId: string, since: string): Promise<{ count: number; dead: number; retrying: number }> {
    const nowMs = this.clock.now();
    return this.uow.run(scope, async (w) => {
      const counts = await this.recoverable(endpointId, since);
      await this.repo.recover(endpointId, since, nowMs, isoNow(nowMs));
      await w.audit({ action: 'retry', resource: 'webhook-endpoints', resourceId: endpointId, after: { recover: { since, ...counts } } });
      return counts;
    });
  }
}
