// The delivery log as the API shows it, and the steps that change it: taking due deliveries,
// recording attempts, retrying one, recovering what failed since a time.
import type { Db } from '../storage/db.ts';
import {
  DELIVERY_STATES, type AttemptRow, type DeliveryFilter, type DeliveryRow, type DueRow, type WebhookDeliveriesRepo,
} from '../storage/repos/webhook-deliveries.ts';
import type { UnitOfWork, WriteScope } from '../audit/unit-of-work.ts';
import type { Clock } from '../kernel/clock.ts';
import { DiwanError } from '../kernel/errors/diwan-error.ts';
import { newId, isoNow } from '../kernel/ids.ts';
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
  /** The delivery as it was taken (endpoint, company, event): what the endpoint's health and the operational events need. */
  row: Pick<DueRow, 'endpoint_id' | 'company_id' | 'url' | 'event_id' | 'topic'>;
}

/** How many more deliveries of an endpoint may start now, and what was taken (the dispatcher's per-endpoint limits). */
export interface Pace {
  room(endpointId: string): number | Promise<number>;
  took(endpointId: string, n: number): void;
}

export class Deliveries {
  constructor(
    private db: Db,
    private repo: WebhookDeliveriesRepo,
    private uow: UnitOfWork,
    private clock: Clock,
  ) {}

  /** One new pending delivery, due now. Call inside the fan-out transaction. */
  insert(companyId: string, endpointId: string, eventId: string, topic: string, nowMs: number): Promise<void> {
    return this.repo.insert(newId('dlv'), companyId, endpointId, eventId, topic, nowMs, isoNow(nowMs));
  }

  /**
   * Takes the due deliveries (oldest first, at most `pace.room(id)` more per endpoint: its
   * in-flight cap and throttle, of enabled endpoints) and marks them in flight, in one
   * transaction. A slow or throttled endpoint's backlog never hides another endpoint's work. A
   * candidate found with nothing more due is dropped.
   */
  take(nowMs: number, limit: number, pace: Pace, candidates?: Set<string>): Promise<DueRow[]> {
    return this.db.transaction(async () => {
      const endpoints = candidates ? [...candidates] : await this.repo.dueEndpoints(nowMs);
      const taken: DueRow[] = [];
      const at = isoNow(nowMs);
      for (const endpointId of endpoints) {
        const room = Math.min(await pace.room(endpointId), limit - taken.length);
        if (room <= 0) continue;
        const rows = await this.repo.dueOf(endpointId, nowMs, room);
        for (const r of rows) {
          await this.repo.markInFlight(r.id, at);
          taken.push(r);
        }
        if (rows.length) pace.took(endpointId, rows.length);
        if (candidates && rows.length < room) candidates.delete(endpointId);
        if (taken.length >= limit) break;
      }
      return taken;
    });
  }

  nextDue(): Promise<number | null> {
    return this.repo.nextDue();
  }

  /**
   * Several attempts' results in one transaction (the attempts that ended in one turn); `after`
   * runs in the same transaction (the endpoints' health, the operational events), in a savepoint
   * of its own so that a fault there is undone alone.
   */
  recordMany(items: AttemptOutcome[], after?: (items: AttemptOutcome[]) => Promise<void>): Promise<void> {
    return this.db.transaction(async () => {
      for (const { deliveryId, attemptNo, result, next, nowMs } of items) {
        await this.repo.record({
          deliveryId,
          attempt: attemptNo,
          at: isoNow(nowMs),
          durationMs: result.durationMs,
          status: result.status ?? null,
          failure: result.ok ? null : (result.failure ?? 'other'),
          detail: result.detail ?? null,
          responseExcerpt: result.responseExcerpt.slice(0, EXCERPT_BYTES),
          responseBytes: result.responseBytes,
          next: next.state === 'pending_retry' ? { state: 'pending', at: next.nextAttemptAt } : { state: next.state, at: null },
        });
      }
      if (after) {
        try {
          // Its own savepoint: a fault in what follows never loses the results themselves.
          await this.db.transaction(() => after(items));
        } catch {
          // The endpoints' health and the operational events are skipped for this batch.
        }
      }
    });
  }

  /** Deliveries left in flight by a process that died: due again now (same delivery and event ids). */
  resetInFlight(nowMs: number): Promise<number> {
    return this.repo.resetInFlight(nowMs, isoNow(nowMs));
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
