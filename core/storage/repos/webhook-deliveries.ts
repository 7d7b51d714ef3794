// The delivery log: one row per event × matching endpoint (the same id across retries) and one
// attempt row per POST. States: `pending` (due at next_attempt_at), `in_flight`, `delivered`, `dead`.
import type { Db } from '../db.ts';

export const DELIVERY_STATES = ['pending', 'in_flight', 'delivered', 'dead'] as const;
export type DeliveryStateName = (typeof DELIVERY_STATES)[number];
/** Filters of the delivery log: the states, plus `retrying` (pending after a failed attempt) and `failed` (retrying or dead). */
export const DELIVERY_FILTERS = [...DELIVERY_STATES, 'retrying', 'failed'] as const;
export type DeliveryFilter = (typeof DELIVERY_FILTERS)[number];

export interface DeliveryRow {
  id: string;
  company_id: string;
  endpoint_id: string;
  event_id: string;
  topic: string;
  state: DeliveryStateName;
  attempts: number;
  next_attempt_at: number | null;
  last_status: number | null;
  last_failure: string | null;
  created_at: string;
  updated_at: string;
  delivered_at: string | null;
}

export interface AttemptRow {
  attempt: number;
  at: string;
  duration_ms: number;
  status: number | null;
  failure: string | null;
  detail: string | null;
  response_excerpt: string;
  response_bytes: number;
}

/** An endpoint's limits and its shared throttle bucket. */
export interface EndpointPace {
  max_in_flight: number | null;
  rate_per_second: number | null;
  throttle_milli: number | null;
  throttle_at: number | null;
}

const numOrNull = (v: unknown): number | null => (v == null ? null : Number(v));

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

export interface AttemptResult {
  deliveryId: string;
  attempt: number;
  at: string;
  durationMs: number;
  status: number | null;
  failure: string | null;
  detail: string | null;
  responseExcerpt: string;
  responseBytes: number;
  next: { state: Exclude<DeliveryStateName, 'in_flight'>; at: number | null };
}

const FILTER_SQL: Record<DeliveryFilter, string> = {
  pending: "state = 'pending'",
  in_flight: "state = 'in_flight'",
  delivered: "state = 'delivered'",
  dead: "state = 'dead'",
  retrying: "state = 'pending' AND attempts > 0",
  failed: "(state = 'dead' OR (state IN ('pending', 'in_flight') AND attempts > 0))",
};

const RECOVERABLE = "(state = 'dead' OR (state = 'pending' AND attempts > 0))";

export class WebhookDeliveriesRepo {
  constructor(private db: Db) {}

  /** One new pending delivery; a second one for the same event and endpoint is ignored. */
  async insert(id: string, companyId: string, endpointId: string, eventId: string, topic: string, dueMs: number, at: string): Promise<void> {
    await this.db.run(
      `INSERT INTO webhook_deliveries (id, company_id, endpoint_id, event_id, topic, state, attempts, next_attempt_at, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?) ON CONFLICT (endpoint_id, event_id) DO NOTHING`,
      [id, companyId, endpointId, eventId, topic, dueMs, at, at],
    );
  }

  /** Endpoints with a due delivery. */
  async dueEndpoints(nowMs: number): Promise<string[]> {
    const rows = await this.db.all<{ endpoint_id: string }>("SELECT DISTINCT endpoint_id FROM webhook_deliveries WHERE state = 'pending' AND next_attempt_at <= ?", [nowMs]);
    return rows.map((r) => r.endpoint_id);
  }

  /**
   * An enabled endpoint's limits and throttle bucket, its row locked to the end of the
   * transaction so that workers take its deliveries one at a time: `busy` when another worker
   * holds it now (PostgreSQL; SQLite's writers already take turns), undefined when disabled or gone.
   */
  async lockEndpoint(endpointId: string): Promise<EndpointPace | 'busy' | undefined> {
    const r = await this.db.get<EndpointPace>(
      `SELECT max_in_flight, rate_per_second, throttle_milli, throttle_at FROM webhook_endpoints WHERE id = ? AND enabled = 1 ${this.db.dialect.skipLocked}`,
      [endpointId],
    );
    if (r) return { max_in_flight: numOrNull(r.max_in_flight), rate_per_second: numOrNull(r.rate_per_second), throttle_milli: numOrNull(r.throttle_milli), throttle_at: numOrNull(r.throttle_at) };
    if (!this.db.dialect.skipLocked) return undefined;
    return (await this.db.get('SELECT 1 AS one FROM webhook_endpoints WHERE id = ? AND enabled = 1', [endpointId])) ? 'busy' : undefined;
  }

  /** Stores an endpoint's throttle bucket (its row locked by `lockEndpoint`). */
  async saveThrottle(endpointId: string, milli: number, atMs: number): Promise<void> {
    await this.db.run('UPDATE webhook_endpoints SET throttle_milli = ?, throttle_at = ? WHERE id = ?', [Math.round(milli), atMs, endpointId]);
  }

  /** An endpoint's deliveries in flight under a lease not yet ended. */
  async inFlightOf(endpointId: string, nowMs: number): Promise<number> {
    const r = await this.db.get<{ n: number }>(
      "SELECT count(*) AS n FROM webhook_deliveries WHERE endpoint_id = ? AND state = 'in_flight' AND lease_until > ?",
      [endpointId, nowMs],
    );
    return Number(r!.n);
  }

  /** The oldest due deliveries of one enabled endpoint, with the event and the endpoint's secrets. */
  dueOf(endpointId: string, nowMs: number, limit: number): Promise<DueRow[]> {
    return this.db.all<DueRow>(
      `SELECT d.id, d.endpoint_id, d.event_id, d.topic, d.attempts, e.url, e.secret, e.previous_secret, e.previous_secret_until,
              o.company_id, o.data, o.test, o.created_at AS event_created_at
       FROM webhook_deliveries d ${this.db.dialect.indexHint('webhook_deliveries_endpoint_state')}
       JOIN webhook_endpoints e ON e.id = d.endpoint_id AND e.enabled = 1
       JOIN outbox o ON o.id = d.event_id
       WHERE d.endpoint_id = ? AND d.state = 'pending' AND d.next_attempt_at <= ? ORDER BY d.seq LIMIT ?`,
      [endpointId, nowMs, limit],
    );
  }

  /** How many deliveries are in each state. */
  async countByState(): Promise<Record<string, number>> {
    const rows = await this.db.all<{ state: string; n: number }>('SELECT state, count(*) AS n FROM webhook_deliveries GROUP BY state');
    return Object.fromEntries(rows.map((r) => [r.state, Number(r.n)]));
  }

  /** Takes pending deliveries under one lease; answers the ids taken (a row changed meanwhile is left). */
  async lease(ids: string[], token: string, untilMs: number, at: string): Promise<Set<string>> {
    const taken = new Set<string>();
    // One row at a time: an `id IN (…)` list leads SQLite's planner to the state index instead of the id.
    for (const id of ids) {
      const { changes } = await this.db.run(
        "UPDATE webhook_deliveries SET state = 'in_flight', lease_until = ?, lease_token = ?, updated_at = ? WHERE id = ? AND state = 'pending'",
        [untilMs, token, at, id],
      );
      if (changes === 1) taken.add(id);
    }
    return taken;
  }

  /** When the next pending delivery of an enabled endpoint falls due, or the next lease ends (ms), or null. */
  async nextDue(): Promise<number | null> {
    const due = await this.db.get<{ t: number | null }>(
      "SELECT d.next_attempt_at AS t FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id AND e.enabled = 1 WHERE d.state = 'pending' ORDER BY d.next_attempt_at LIMIT 1",
    );
    const lease = await this.db.get<{ t: number | null }>("SELECT min(lease_until) AS t FROM webhook_deliveries WHERE state = 'in_flight'");
    const times = [due?.t, lease?.t].filter((t) => t != null).map(Number);
    return times.length ? Math.min(...times) : null;
  }

  /**
   * Stores an attempt's result if the lease it was sent under still holds (fencing: a worker
   * whose lease ended, the delivery since taken again, records nothing). Answers whether it did.
   */
  async record(r: AttemptResult, token: string): Promise<boolean> {
    const { changes } = await this.db.run(
      `UPDATE webhook_deliveries SET state = ?, attempts = ?, next_attempt_at = ?, last_status = ?, last_failure = ?, updated_at = ?,
         delivered_at = COALESCE(?, delivered_at), lease_until = NULL, lease_token = NULL
       WHERE id = ? AND state = 'in_flight' AND lease_token = ?`,
      [r.next.state, r.attempt, r.next.at, r.status, r.failure, r.at, r.next.state === 'delivered' ? r.at : null, r.deliveryId, token],
    );
    if (changes !== 1) return false;
    await this.db.run(
      `INSERT INTO webhook_attempts (delivery_id, company_id, attempt, at, duration_ms, status, failure, detail, response_excerpt, response_bytes)
       VALUES (?, (SELECT company_id FROM webhook_deliveries WHERE id = ?), ?, ?, ?, ?, ?, ?, ?, ?)`,
      [r.deliveryId, r.deliveryId, r.attempt, r.at, Math.round(r.durationMs), r.status, r.failure, r.detail, r.responseExcerpt, r.responseBytes],
    );
    return true;
  }

  /**
   * Deliveries whose lease ended (their worker died or stopped mid-attempt; a row in flight with
   * no lease is from before leases): due again now, same delivery and event ids.
   */
  async reclaimExpired(nowMs: number, at: string): Promise<number> {
    const least = this.db.dialect.least('coalesce(next_attempt_at, ?)', '?');
    return (
      await this.db.run(
        // Rows another transaction holds are left to the next look: a worker frozen mid-transaction
        // must not stop every other worker's recovery.
        `UPDATE webhook_deliveries SET state = 'pending', next_attempt_at = ${least}, lease_until = NULL, lease_token = NULL, updated_at = ?
         WHERE id IN (SELECT id FROM webhook_deliveries WHERE state = 'in_flight' AND (lease_until IS NULL OR lease_until <= ?) ${this.db.dialect.skipLocked})`,
        [nowMs, nowMs, at, nowMs],
      )
    ).changes;
  }

  /** Gives back what a stopping worker took and did not finish: due again now. */
  async release(leases: { id: string; token: string }[], nowMs: number, at: string): Promise<number> {
    let n = 0;
    for (const l of leases) {
      n += (
        await this.db.run(
          "UPDATE webhook_deliveries SET state = 'pending', next_attempt_at = ?, lease_until = NULL, lease_token = NULL, updated_at = ? WHERE id = ? AND state = 'in_flight' AND lease_token = ?",
          [nowMs, at, l.id, l.token],
        )
      ).changes;
    }
    return n;
  }

  async list(endpointId: string, q: { page: number; pageSize: number; state?: DeliveryFilter }): Promise<{ total: number; rows: DeliveryRow[] }> {
    const where = `endpoint_id = ?${q.state ? ` AND ${FILTER_SQL[q.state]}` : ''}`;
    const total = (await this.db.get<{ n: number }>(`SELECT count(*) AS n FROM webhook_deliveries WHERE ${where}`, [endpointId]))!.n;
    const rows = await this.db.all<DeliveryRow>(`SELECT * FROM webhook_deliveries WHERE ${where} ORDER BY seq DESC LIMIT ? OFFSET ?`, [endpointId, q.pageSize, (q.page - 1) * q.pageSize]);
    return { total: Number(total), rows };
  }

  get(endpointId: string, id: string): Promise<DeliveryRow | undefined> {
    return this.db.get<DeliveryRow>('SELECT * FROM webhook_deliveries WHERE endpoint_id = ? AND id = ?', [endpointId, id]);
  }

  attempts(deliveryId: string): Promise<AttemptRow[]> {
    return this.db.all<AttemptRow>('SELECT * FROM webhook_attempts WHERE delivery_id = ? ORDER BY seq', [deliveryId]);
  }

  async reschedule(id: string, nowMs: number, at: string): Promise<void> {
    await this.db.run("UPDATE webhook_deliveries SET state = 'pending', next_attempt_at = ?, updated_at = ? WHERE id = ?", [nowMs, at, id]);
  }

  /** Failed (retrying or dead) deliveries of an endpoint created at or after `since`, by state. */
  async recoverable(endpointId: string, since: string): Promise<{ dead: number; retrying: number }> {
    const rows = await this.db.all<{ state: string; n: number }>(
      `SELECT state, count(*) AS n FROM webhook_deliveries WHERE endpoint_id = ? AND created_at >= ? AND ${RECOVERABLE} GROUP BY state`,
      [endpointId, since],
    );
    return { dead: Number(rows.find((r) => r.state === 'dead')?.n ?? 0), retrying: Number(rows.find((r) => r.state === 'pending')?.n ?? 0) };
  }

  /** The deliveries of one event to one endpoint (none or one), with their state: what pruning an event takes along. */
  ofEvent(endpointId: string, eventId: string): Promise<{ id: string; state: DeliveryStateName }[]> {
    return this.db.all('SELECT id, state FROM webhook_deliveries WHERE endpoint_id = ? AND event_id = ?', [endpointId, eventId]);
  }

  /** Deletes deliveries with their attempts; answers how many of each. */
  async removeWithAttempts(ids: string[]): Promise<{ deliveries: number; attempts: number }> {
    let deliveries = 0;
    let attempts = 0;
    for (const id of ids) {
      attempts += (await this.db.run('DELETE FROM webhook_attempts WHERE delivery_id = ?', [id])).changes;
      deliveries += (await this.db.run('DELETE FROM webhook_deliveries WHERE id = ?', [id])).changes;
    }
    return { deliveries, attempts };
  }

  async recover(endpointId: string, since: string, nowMs: number, at: string): Promise<void> {
    await this.db.run(
      `UPDATE webhook_deliveries SET state = 'pending', next_attempt_at = ?, updated_at = ? WHERE endpoint_id = ? AND created_at >= ? AND ${RECOVERABLE}`,
      [nowMs, at, endpointId, since],
    );
  }
}
