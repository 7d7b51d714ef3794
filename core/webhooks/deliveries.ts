// The delivery log: one row per event × matching endpoint (its id stays the same across
// retries) and one attempt row per POST. States: `pending` (first attempt or pending retry,
// due at next_attempt_at), `in_flight` (sent, result not stored yet), `delivered`, `dead`.
import { indexHint } from '../db/dialect.ts';
import type { Sqlite } from '../db/connection.ts';
import type { AuditLog } from '../audit/audit-log.ts';
import type { Actor } from '../identity/principal.ts';
import type { Clock } from '../clock.ts';
import { DiwanError } from '../errors/diwan-error.ts';
import { newId, isoNow } from '../ids.ts';
import type { SendResult } from './send.ts';
import type { DeliveryState } from './ladder.ts';

export const DELIVERY_STATES = ['pending', 'in_flight', 'delivered', 'dead'] as const;
/** Filters of the delivery log: the states, plus `retrying` (pending after a failed attempt) and `failed` (retrying or dead). */
export const DELIVERY_FILTERS = [...DELIVERY_STATES, 'retrying', 'failed'] as const;
export type DeliveryFilter = (typeof DELIVERY_FILTERS)[number];

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
  required: ['attempt', 'at', 'durationMs', 'status', 'failure', 'responseExcerpt', 'responseBytes'],
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

interface DeliveryRow {
  id: string;
  endpoint_id: string;
  event_id: string;
  topic: string;
  state: Delivery['state'];
  attempts: number;
  next_attempt_at: number | null;
  last_status: number | null;
  last_failure: string | null;
  created_at: string;
  updated_at: string;
  delivered_at: string | null;
}

/** A due delivery with what sending it needs. */
export interface DueRow {
  id: string;
  endpoint_id: string;
  event_id: string;
  topic: string;
  attempts: number;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_until: number | null;
  company_id: string;
  data: string;
  test: number;
  event_created_at: string;
}

const toDelivery = (r: DeliveryRow): Delivery => ({
  id: r.id,
  endpointId: r.endpoint_id,
  eventId: r.event_id,
  topic: r.topic,
  state: r.state,
  attemptCount: r.attempts,
  nextAttemptAt: r.state === 'pending' && r.next_attempt_at !== null ? isoNow(r.next_attempt_at) : null,
  lastStatus: r.last_status,
  lastFailure: r.last_failure,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  deliveredAt: r.delivered_at,
});

const FILTER_SQL: Record<DeliveryFilter, string> = {
  pending: "state = 'pending'",
  in_flight: "state = 'in_flight'",
  delivered: "state = 'delivered'",
  dead: "state = 'dead'",
  retrying: "state = 'pending' AND attempts > 0",
  failed: "(state = 'dead' OR (state IN ('pending', 'in_flight') AND attempts > 0))",
};

/** Bytes of a response body kept in the attempt log. */
export const EXCERPT_BYTES = 2048;

export class Deliveries {
  private insertStmt;
  private markStmt;
  private attemptStmt;
  private resultStmt;
  private dueEndpoints;
  private dueOf;

  constructor(
    private sqlite: Sqlite,
    private audit: AuditLog,
    private clock: Clock,
  ) {
    this.insertStmt = sqlite.prepare(
      `INSERT OR IGNORE INTO webhook_deliveries (id, company_id, endpoint_id, event_id, topic, state, attempts, next_attempt_at, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?)`,
    );
    this.markStmt = sqlite.prepare("UPDATE webhook_deliveries SET state = 'in_flight', updated_at = ? WHERE id = ? AND state = 'pending'");
    this.attemptStmt = sqlite.prepare(
      `INSERT INTO webhook_attempts (delivery_id, attempt, at, duration_ms, status, failure, detail, response_excerpt, response_bytes)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.dueEndpoints = sqlite
      .prepare("SELECT DISTINCT endpoint_id FROM webhook_deliveries WHERE state = 'pending' AND next_attempt_at <= ?")
      .pluck();
    this.dueOf = sqlite.prepare(
      `SELECT d.id, d.endpoint_id, d.event_id, d.topic, d.attempts, e.url, e.secret, e.previous_secret, e.previous_secret_until,
              o.company_id, o.data, o.test, o.created_at AS event_created_at
       FROM webhook_deliveries d ${indexHint('webhook_deliveries_endpoint_state')}
       JOIN webhook_endpoints e ON e.id = d.endpoint_id AND e.enabled = 1
       JOIN outbox o ON o.id = d.event_id
       WHERE d.endpoint_id = ? AND d.state = 'pending' AND d.next_attempt_at <= ? ORDER BY d.seq LIMIT ?`,
    );
    this.resultStmt = sqlite.prepare(
      `UPDATE webhook_deliveries SET state = ?, attempts = ?, next_attempt_at = ?, last_status = ?, last_failure = ?, updated_at = ?,
         delivered_at = COALESCE(?, delivered_at) WHERE id = ?`,
    );
  }

  /** One new pending delivery, due now. Call inside the fan-out transaction. */
  insert(companyId: string, endpointId: string, eventId: string, topic: string, nowMs: number): void {
    const at = isoNow(nowMs);
    this.insertStmt.run(newId('dlv'), companyId, endpointId, eventId, topic, nowMs, at, at);
  }

  /**
   * Takes the due deliveries (oldest first, at most `perEndpoint(id)` more per endpoint, of
   * enabled endpoints) and marks them in flight, in one transaction.
   */
  take(nowMs: number, cap: number, limit: number, inFlight: (endpointId: string) => number, candidates?: Set<string>): DueRow[] {
    return this.sqlite.transaction(() => {
      // Endpoints with due work (the caller's candidates, or a range of the due index), then the
      // oldest due rows of each one that has room: a slow endpoint's backlog never hides
      // another endpoint's work. A candidate found with nothing more due is dropped from the set.
      const endpoints = candidates ? [...candidates] : (this.dueEndpoints.all(nowMs) as string[]);
      const taken: DueRow[] = [];
      const at = isoNow(nowMs);
      for (const endpointId of endpoints) {
        const room = Math.min(cap - inFlight(endpointId), limit - taken.length);
        if (room <= 0) continue;
        const rows = this.dueOf.all(endpointId, nowMs, room) as DueRow[];
        for (const r of rows) {
          this.markStmt.run(at, r.id);
          taken.push(r);
        }
        if (candidates && rows.length < room) candidates.delete(endpointId);
        if (taken.length >= limit) break;
      }
      return taken;
    }).immediate();
  }

  private nextDueStmt?: { get(): unknown };

  /** When the next pending delivery of an enabled endpoint falls due (ms), or null. */
  nextDue(): number | null {
    // better-sqlite3 answers `undefined` for no row: normalise, or the loop's timer gets a NaN delay and spins.
    this.nextDueStmt ??= this.sqlite
      .prepare(
        "SELECT d.next_attempt_at FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id AND e.enabled = 1 WHERE d.state = 'pending' ORDER BY d.next_attempt_at LIMIT 1",
      )
      .pluck();
    return (this.nextDueStmt.get() as number | undefined) ?? null;
  }

  /** Stores an attempt and the delivery's next state, in one transaction. */
  record(deliveryId: string, attemptNo: number, result: SendResult, next: DeliveryState, nowMs: number): void {
    this.recordMany([{ deliveryId, attemptNo, result, next, nowMs }]);
  }

  /** Several attempts' results in one transaction (the attempts that ended in one turn). */
  recordMany(items: { deliveryId: string; attemptNo: number; result: SendResult; next: DeliveryState; nowMs: number }[]): void {
    this.sqlite.transaction(() => {
      for (const { deliveryId, attemptNo, result, next, nowMs } of items) {
        const at = isoNow(nowMs);
        const failure = result.ok ? null : (result.failure ?? 'other');
        this.attemptStmt.run(
          deliveryId, attemptNo, at, Math.round(result.durationMs), result.status ?? null, failure, result.detail ?? null,
          result.responseExcerpt.slice(0, EXCERPT_BYTES), result.responseBytes,
        );
        const state = next.state === 'pending_retry' ? 'pending' : next.state;
        const nextAt = next.state === 'pending_retry' ? next.nextAttemptAt : null;
        this.resultStmt.run(state, attemptNo, nextAt, result.status ?? null, failure, at, next.state === 'delivered' ? at : null, deliveryId);
      }
    }).immediate();
  }

  /** Deliveries left in flight by a process that died: due again now (same delivery and event ids). */
  resetInFlight(nowMs: number): number {
    return this.sqlite
      .prepare("UPDATE webhook_deliveries SET state = 'pending', next_attempt_at = min(coalesce(next_attempt_at, ?), ?), updated_at = ? WHERE state = 'in_flight'")
      .run(nowMs, nowMs, isoNow(nowMs)).changes;
  }

  /** Puts deliveries the caller took but did not send back to pending, unchanged. */
  release(ids: string[]): void {
    const stmt = this.sqlite.prepare("UPDATE webhook_deliveries SET state = 'pending' WHERE id = ? AND state = 'in_flight'");
    this.sqlite.transaction(() => ids.forEach((id) => stmt.run(id))).immediate();
  }

  /** The endpoint of a company's delivery, or 404. */
  endpointOf(companyId: string, deliveryId: string): string {
    const id = this.sqlite.prepare('SELECT endpoint_id FROM webhook_deliveries WHERE company_id = ? AND id = ?').pluck().get(companyId, deliveryId) as string | undefined;
    if (!id) throw new DiwanError('NOT_FOUND', [{ resource: 'webhook-deliveries', id: deliveryId }]);
    return id;
  }

  list(endpointId: string, q: { page: number; pageSize: number; state?: DeliveryFilter }): { data: Delivery[]; total: number } {
    const where = `endpoint_id = ?${q.state ? ` AND ${FILTER_SQL[q.state]}` : ''}`;
    const total = this.sqlite.prepare(`SELECT count(*) FROM webhook_deliveries WHERE ${where}`).pluck().get(endpointId) as number;
    const rows = this.sqlite
      .prepare(`SELECT * FROM webhook_deliveries WHERE ${where} ORDER BY seq DESC LIMIT ? OFFSET ?`)
      .all(endpointId, q.pageSize, (q.page - 1) * q.pageSize) as DeliveryRow[];
    return { total, data: rows.map(toDelivery) };
  }

  private row(endpointId: string, id: string): DeliveryRow {
    const r = this.sqlite.prepare('SELECT * FROM webhook_deliveries WHERE endpoint_id = ? AND id = ?').get(endpointId, id) as DeliveryRow | undefined;
    if (!r) throw new DiwanError('NOT_FOUND', [{ resource: 'webhook-deliveries', id }]);
    return r;
  }

  get(endpointId: string, id: string): Delivery & { attempts: Attempt[] } {
    const r = this.row(endpointId, id);
    const attempts = (
      this.sqlite.prepare('SELECT * FROM webhook_attempts WHERE delivery_id = ? ORDER BY seq').all(id) as {
        attempt: number; at: string; duration_ms: number; status: number | null; failure: string | null; detail: string | null; response_excerpt: string; response_bytes: number;
      }[]
    ).map((a) => ({
      attempt: a.attempt, at: a.at, durationMs: a.duration_ms, status: a.status, failure: a.failure, detail: a.detail,
      responseExcerpt: a.response_excerpt, responseBytes: a.response_bytes,
    }));
    return { ...toDelivery(r), attempts };
  }

  /** Schedules a new attempt now, dead deliveries included; audited. */
  retry(companyId: string, endpointId: string, id: string, actor: Actor, requestId?: string): Delivery {
    const nowMs = this.clock.now();
    return this.sqlite.transaction(() => {
      const before = this.row(endpointId, id);
      if (before.state === 'in_flight') throw new DiwanError('CONFLICT', [{ reason: 'in_flight', id }], { reason: 'the delivery is being attempted now' });
      this.sqlite.prepare("UPDATE webhook_deliveries SET state = 'pending', next_attempt_at = ?, updated_at = ? WHERE id = ?").run(nowMs, isoNow(nowMs), id);
      const after = toDelivery(this.row(endpointId, id));
      this.audit.record({ companyId, actor, appId: 'core', action: 'retry', resource: 'webhook-endpoints', resourceId: endpointId, before: toDelivery(before), after, requestId });
      return after;
    }).immediate();
  }

  /** Failed (retrying or dead) deliveries of an endpoint created at or after `since`. */
  recoverable(endpointId: string, since: string): { count: number; dead: number; retrying: number } {
    const rows = this.sqlite
      .prepare(`SELECT state, count(*) AS n FROM webhook_deliveries WHERE endpoint_id = ? AND created_at >= ? AND (state = 'dead' OR (state = 'pending' AND attempts > 0)) GROUP BY state`)
      .all(endpointId, since) as { state: string; n: number }[];
    const dead = rows.find((r) => r.state === 'dead')?.n ?? 0;
    const retrying = rows.find((r) => r.state === 'pending')?.n ?? 0;
    return { count: dead + retrying, dead, retrying };
  }

  /** Reschedules them all now; audited as one `retry` of the endpoint. */
  recover(companyId: string, endpointId: string, since: string, actor: Actor, requestId?: string): { count: number; dead: number; retrying: number } {
    const nowMs = this.clock.now();
    return this.sqlite.transaction(() => {
      const counts = this.recoverable(endpointId, since);
      this.sqlite
        .prepare(
          `UPDATE webhook_deliveries SET state = 'pending', next_attempt_at = ?, updated_at = ?
           WHERE endpoint_id = ? AND created_at >= ? AND (state = 'dead' OR (state = 'pending' AND attempts > 0))`,
        )
        .run(nowMs, isoNow(nowMs), endpointId, since);
      this.audit.record({ companyId, actor, appId: 'core', action: 'retry', resource: 'webhook-endpoints', resourceId: endpointId, after: { recover: { since, ...counts } }, requestId });
      return counts;
    }).immediate();
  }
}
