// The delivery log: one row per event × matching endpoint (the same id across retries) and one
// attempt row per POST. States: `pending` (due at next_attempt_at), `in_flight`, `delivered`, `dead`.
import type { Db } from '../db.ts';
import { inList } from '../dialect.ts';
import { healthyStatement } from './webhook-endpoints.ts';

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

/** What sending to an endpoint needs (read with its lock). */
export interface EndpointTarget {
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_until: number | null;
  /** Custom headers as stored (JSON text), or null. */
  headers: string | null;
  /** The sealed ed25519 signing key, or null. */
  signing_key: string | null;
}

/** What a take may lease of an endpoint: at most `limit` now, and at most `cap` in flight in all. */
export interface LeaseWant {
  endpointId: string;
  cap: number;
  limit: number;
}

/** A delivery just leased. */
export interface LeasedRow {
  id: string;
  event_id: string;
  topic: string;
  attempts: number;
  /** Attempts a Retry-After deferred (they do not walk the ladder). */
  deferrals: number;
}

/** An event as the deliveries of it send it. */
export interface EventRow {
  id: string;
  company_id: string;
  data: string;
  test: number;
  created_at: string;
}

/** A delivery a fan-out makes; with `lease`, taken at once by the take it runs in. */
export interface NewDelivery {
  id: string;
  companyId: string;
  endpointId: string;
  eventId: string;
  topic: string;
  lease?: { token: string; until: number };
}

/** Rows per multi-row statement: well under both databases' limits on parameters. */
const ROWS_PER_STATEMENT = 100;

const numOrNull = (v: unknown): number | null => (v == null ? null : Number(v));

/** An endpoint's room in a take (what it could take) and the deliveries leased, oldest first. */
export interface Leased {
  room: number;
  rows: LeasedRow[];
}

const LEASED_COLUMNS = 'RETURNING seq, id, endpoint_id, event_id, topic, attempts, deferrals';

const leasedRow = (r: LeasedRow): LeasedRow => ({ id: r.id, event_id: r.event_id, topic: r.topic, attempts: Number(r.attempts), deferrals: Number(r.deferrals ?? 0) });

function pushTo<T>(map: Map<string, T[]>, key: string, value: T): void {
  const of = map.get(key);
  if (of) of.push(value);
  else map.set(key, [value]);
}

/** Leased rows into their endpoints' lists, oldest first (RETURNING promises no order). */
function sortInto(leased: Map<string, Leased>, rows: (LeasedRow & { seq: number; endpoint_id: string })[]): void {
  rows.sort((a, b) => Number(a.seq) - Number(b.seq));
  for (const r of rows) leased.get(r.endpoint_id)!.rows.push(leasedRow(r));
}

/** A due delivery with what sending it needs. */
export interface DueRow {
  id: string;
  endpoint_id: string;
  event_id: string;
  topic: string;
  attempts: number;
  deferrals: number;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_until: number | null;
  headers: string | null;
  signing_key: string | null;
  company_id: string;
  data: string;
  test: number;
  event_created_at: string;
}

export interface AttemptResult {
  deliveryId: string;
  companyId: string;
  endpointId: string;
  attempt: number;
  at: string;
  durationMs: number;
  status: number | null;
  failure: string | null;
  detail: string | null;
  responseExcerpt: string;
  responseBytes: number;
  next: { state: Exclude<DeliveryStateName, 'in_flight'>; at: number | null };
  /** The delivery's deferrals after this attempt; absent: unchanged. */
  deferrals?: number;
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

  /**
   * New deliveries due at `dueMs`, a few statements for all (a fan-out's), in their order;
   * duplicates are ignored. A row with a `lease` is written in flight under it (a take that
   * sends it at once: no pending row to lease after). Answers how many rows were written.
   */
  async insertMany(rows: NewDelivery[], dueMs: number, at: string): Promise<number> {
    let n = 0;
    for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) {
      const part = rows.slice(i, i + ROWS_PER_STATEMENT);
      n += (
        await this.db.run(
          `INSERT INTO webhook_deliveries (id, company_id, endpoint_id, event_id, topic, state, attempts, next_attempt_at, lease_until, lease_token, created_at, updated_at)
           VALUES ${part.map(() => '(?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?)').join(', ')} ON CONFLICT (endpoint_id, event_id) DO NOTHING`,
          part.flatMap((r) => [r.id, r.companyId, r.endpointId, r.eventId, r.topic, r.lease ? 'in_flight' : 'pending', dueMs, r.lease?.until ?? null, r.lease?.token ?? null, at, at]),
        )
      ).changes;
    }
    return n;
  }

  /** Those of the ids that are deliveries (a fan-out's rows its insert may have ignored as duplicates). */
  async existing(ids: string[]): Promise<Set<string>> {
    const found = new Set<string>();
    for (let i = 0; i < ids.length; i += ROWS_PER_STATEMENT) {
      const list = inList(ids.slice(i, i + ROWS_PER_STATEMENT));
      for (const r of await this.db.all<{ id: string }>(`SELECT id FROM webhook_deliveries WHERE id IN ${list.sql}`, list.params)) found.add(r.id);
    }
    return found;
  }

  /** Endpoints with a due delivery. */
  async dueEndpoints(nowMs: number): Promise<string[]> {
    // SQLite would rather walk every pending row (by endpoint) than the due ones (by time).
    const rows = await this.db.all<{ endpoint_id: string }>(
      `SELECT DISTINCT endpoint_id FROM webhook_deliveries ${this.db.dialect.indexHint('webhook_deliveries_due_at')} WHERE state = 'pending' AND next_attempt_at <= ?`,
      [nowMs],
    );
    return rows.map((r) => r.endpoint_id);
  }

  /**
   * Enabled endpoints' limits, throttle buckets and targets, their rows locked to the end of the
   * transaction so that workers take their deliveries one at a time, in one statement: `busy`
   * lists those another worker holds now (PostgreSQL; SQLite's writers already take turns); a
   * disabled or deleted endpoint is in neither.
   */
  async lockEndpoints(endpointIds: string[]): Promise<{ locked: Map<string, EndpointPace & EndpointTarget>; busy: string[] }> {
    const locked = new Map<string, EndpointPace & EndpointTarget>();
    const busy: string[] = [];
    for (let i = 0; i < endpointIds.length; i += ROWS_PER_STATEMENT) {
      const part = endpointIds.slice(i, i + ROWS_PER_STATEMENT);
      const list = inList(part);
      // Locked in one order by every worker.
      const rows = await this.db.all<EndpointPace & EndpointTarget & { id: string }>(
        `SELECT id, max_in_flight, rate_per_second, throttle_milli, throttle_at, url, secret, previous_secret, previous_secret_until, headers, signing_key
         FROM webhook_endpoints WHERE id IN ${list.sql} AND enabled = 1 ORDER BY id ${this.db.dialect.skipLocked}`,
        list.params,
      );
      for (const r of rows) {
        locked.set(r.id, {
          max_in_flight: numOrNull(r.max_in_flight), rate_per_second: numOrNull(r.rate_per_second), throttle_milli: numOrNull(r.throttle_milli), throttle_at: numOrNull(r.throttle_at),
          url: r.url, secret: r.secret, previous_secret: r.previous_secret, previous_secret_until: numOrNull(r.previous_secret_until),
          headers: r.headers ?? null, signing_key: r.signing_key ?? null,
        });
      }
      const missing = part.filter((id) => !locked.has(id));
      if (!this.db.dialect.skipLocked || !missing.length) continue;
      const left = inList(missing);
      for (const r of await this.db.all<{ id: string }>(`SELECT id FROM webhook_endpoints WHERE id IN ${left.sql} AND enabled = 1`, left.params)) busy.push(r.id);
    }
    return { locked, busy };
  }

  /** Stores an endpoint's throttle bucket (its row locked by `lockEndpoints`). */
  async saveThrottle(endpointId: string, milli: number, atMs: number): Promise<void> {
    await this.db.run('UPDATE webhook_endpoints SET throttle_milli = ?, throttle_at = ? WHERE id = ?', [Math.round(milli), atMs, endpointId]);
  }

  /** An endpoint's deliveries in flight under a lease not yet ended. */
  async inFlightOf(endpointId: string, nowMs: number): Promise<number> {
    return (await this.inFlightOfMany([endpointId], nowMs)).get(endpointId) ?? 0;
  }

  /** Endpoints' deliveries in flight under a lease not yet ended, in one statement (those with none are missing). */
  async inFlightOfMany(endpointIds: string[], nowMs: number): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    for (let i = 0; i < endpointIds.length; i += ROWS_PER_STATEMENT) {
      const list = inList(endpointIds.slice(i, i + ROWS_PER_STATEMENT));
      const rows = await this.db.all<{ endpoint_id: string; n: number }>(
        `SELECT endpoint_id, count(*) AS n FROM webhook_deliveries WHERE endpoint_id IN ${list.sql} AND state = 'in_flight' AND lease_until > ? GROUP BY endpoint_id`,
        [...list.params, nowMs],
      );
      for (const r of rows) counts.set(r.endpoint_id, Number(r.n));
    }
    return counts;
  }

  /** Leases the oldest due deliveries of one endpoint (its row locked by `lockEndpoints`); answers them oldest first. */
  async leaseDue(endpointId: string, nowMs: number, limit: number, token: string, untilMs: number, at: string): Promise<LeasedRow[]> {
    return (await this.leaseDueMany([{ endpointId, cap: limit, limit }], nowMs, token, untilMs, at)).get(endpointId)?.rows ?? [];
  }

  /**
   * Leases the oldest due deliveries of each endpoint (their rows locked by `lockEndpoints`, so no
   * other take runs on them): at most `limit`, and at most `cap` in flight under leases not yet
   * ended; answers by endpoint its room (what it could take) and what it took, oldest first.
   */
  async leaseDueMany(wants: LeaseWant[], nowMs: number, token: string, untilMs: number, at: string): Promise<Map<string, Leased>> {
    return (await this.leaseAndWrite(wants, [], nowMs, token, untilMs, at)).leased;
  }

  /**
   * Leases as `leaseDueMany` does, then writes a fan-out's new deliveries (`fresh`, in their order,
   * due now, duplicates ignored): the first of each endpoint in flight under the same lease, as
   * many as its room left after its older due ones, the rest pending; answers those written in
   * flight by endpoint (`written`). Each is durable before it is sent, so a crash after the
   * commit only lets the lease end and the same delivery goes again: one row write fewer than
   * pending, then leased.
   *
   * The deliveries in flight are counted after the locks were taken, so that every lease
   * committed before is seen (the cap across workers). PostgreSQL: one statement for all of it,
   * the lists as arrays (a round trip per statement was most of a take's, and of the light
   * load's latency). SQLite (no round trips): the counts, then per endpoint `SELECT seq` and the
   * `UPDATE`, which cost ~10 % less CPU per row than the UPDATE with the subquery, and an endpoint
   * with nothing due writes nothing; then the insert. No `state` test outside the subquery:
   * SQLite's planner then scanned an index by state instead of the rowids.
   */
  async leaseAndWrite(
    wants: LeaseWant[], fresh: NewDelivery[], nowMs: number, token: string, untilMs: number, at: string,
  ): Promise<{ leased: Map<string, Leased>; written: Map<string, LeasedRow[]> }> {
    const leased = new Map<string, Leased>();
    const written = new Map<string, LeasedRow[]>();
    if (!wants.length && !fresh.length) return { leased, written };
    const rows: (LeasedRow & { seq: number; endpoint_id: string })[] = [];
    if (this.db.dialect.name === 'sqlite') {
      const inFlight = wants.length ? await this.inFlightOfMany(wants.map((w) => w.endpointId), nowMs) : new Map<string, number>();
      for (const { endpointId, cap, limit } of wants) {
        const room = Math.min(limit, cap - (inFlight.get(endpointId) ?? 0));
        leased.set(endpointId, { room, rows: [] });
        if (room <= 0) continue;
        const due = await this.db.all<{ seq: number }>(
          `SELECT seq FROM webhook_deliveries ${this.db.dialect.indexHint('webhook_deliveries_pending')}
           WHERE endpoint_id = ? AND state = 'pending' AND next_attempt_at <= ? ORDER BY seq LIMIT ?`,
          [endpointId, nowMs, room],
        );
        if (!due.length) continue;
        const list = inList(due.map((r) => r.seq));
        rows.push(
          ...(await this.db.all<LeasedRow & { seq: number; endpoint_id: string }>(
            `UPDATE webhook_deliveries SET state = 'in_flight', lease_until = ?, lease_token = ?, updated_at = ? WHERE seq IN ${list.sql} ${LEASED_COLUMNS}`,
            [untilMs, token, at, ...list.params],
          )),
        );
      }
      sortInto(leased, rows);
      if (fresh.length) await this.writeFresh(fresh, leased, written, nowMs, token, untilMs, at);
      return { leased, written };
    }
    // One snapshot for the statement: `room` counts without the rows `leased` updates, and the
    // lease does not see the rows `written` inserts.
    const got = await this.db.all<LeasedRow & { kind: 'l' | 'r' | 'w'; seq: number | null; endpoint_id: string; room: number | null }>(
      `WITH room AS (SELECT v.endpoint_id, LEAST(v.n, v.cap - (SELECT count(*) FROM webhook_deliveries f
                                                            WHERE f.endpoint_id = v.endpoint_id AND f.state = 'in_flight' AND f.lease_until > ?)) AS n
                     FROM unnest(CAST(? AS TEXT[]), CAST(? AS INTEGER[]), CAST(? AS INTEGER[])) AS v (endpoint_id, cap, n)),
       leased AS (UPDATE webhook_deliveries SET state = 'in_flight', lease_until = ?, lease_token = ?, updated_at = ?
                  WHERE seq IN (SELECT d.seq FROM room CROSS JOIN LATERAL (SELECT seq FROM webhook_deliveries
                                  WHERE endpoint_id = room.endpoint_id AND state = 'pending' AND next_attempt_at <= ? ORDER BY seq LIMIT GREATEST(room.n, 0)) d)
                  ${LEASED_COLUMNS}),
       spare AS (SELECT room.endpoint_id, room.n - (SELECT count(*) FROM leased WHERE leased.endpoint_id = room.endpoint_id) AS n FROM room),
       fresh AS (SELECT f.*, row_number() OVER (PARTITION BY f.endpoint_id ORDER BY f.ord) <= COALESCE(spare.n, 0) AS direct
                 FROM unnest(CAST(? AS TEXT[]), CAST(? AS TEXT[]), CAST(? AS TEXT[]), CAST(? AS TEXT[]), CAST(? AS TEXT[]))
                      WITH ORDINALITY AS f (id, company_id, endpoint_id, event_id, topic, ord)
                 LEFT JOIN spare ON spare.endpoint_id = f.endpoint_id),
       written AS (INSERT INTO webhook_deliveries (id, company_id, endpoint_id, event_id, topic, state, attempts, next_attempt_at, lease_until, lease_token, created_at, updated_at)
                   SELECT id, company_id, endpoint_id, event_id, topic, CASE WHEN direct THEN 'in_flight' ELSE 'pending' END, 0, CAST(? AS BIGINT),
                          CASE WHEN direct THEN CAST(? AS BIGINT) END, CASE WHEN direct THEN CAST(? AS TEXT) END, ?, ?
                   FROM fresh ORDER BY ord
                   ON CONFLICT (endpoint_id, event_id) DO NOTHING RETURNING seq, id, endpoint_id, event_id, topic, attempts, deferrals, state)
       SELECT 'l' AS kind, seq, id, endpoint_id, event_id, topic, attempts, deferrals, NULL AS room FROM leased
       UNION ALL SELECT 'r', NULL, NULL, endpoint_id, NULL, NULL, NULL, NULL, n FROM room
       UNION ALL SELECT 'w', seq, id, endpoint_id, event_id, topic, attempts, deferrals, NULL FROM written WHERE state = 'in_flight'`,
      [
        nowMs, wants.map((w) => w.endpointId), wants.map((w) => w.cap), wants.map((w) => w.limit), untilMs, token, at, nowMs,
        fresh.map((r) => r.id), fresh.map((r) => r.companyId), fresh.map((r) => r.endpointId), fresh.map((r) => r.eventId), fresh.map((r) => r.topic),
        nowMs, untilMs, token, at, at,
      ],
    );
    const sent: (LeasedRow & { seq: number; endpoint_id: string })[] = [];
    for (const r of got) {
      if (r.kind === 'r') leased.set(r.endpoint_id, { room: Number(r.room), rows: [] });
      else (r.kind === 'l' ? rows : sent).push(r as LeasedRow & { seq: number; endpoint_id: string });
    }
    sortInto(leased, rows);
    sent.sort((a, b) => Number(a.seq) - Number(b.seq));
    for (const r of sent) pushTo(written, r.endpoint_id, leasedRow(r));
    return { leased, written };
  }

  /** SQLite's half of `leaseAndWrite`: the fan-out's rows, in flight as far as each endpoint's room is left. */
  private async writeFresh(
    fresh: NewDelivery[], leased: Map<string, Leased>, written: Map<string, LeasedRow[]>, nowMs: number, token: string, untilMs: number, at: string,
  ): Promise<void> {
    const spare = new Map<string, number>();
    for (const [id, { room, rows }] of leased) spare.set(id, room - rows.length);
    const lease = { token, until: untilMs };
    const made = fresh.map((r) => {
      const left = spare.get(r.endpointId) ?? 0;
      if (left <= 0) return r;
      spare.set(r.endpointId, left - 1);
      pushTo(written, r.endpointId, { id: r.id, event_id: r.eventId, topic: r.topic, attempts: 0, deferrals: 0 });
      return { ...r, lease };
    });
    const n = await this.insertMany(made, nowMs, at);
    if (n < made.length && written.size) {
      // A duplicate (endpoint, event) was ignored: only what was written is sent.
      const kept = await this.existing(made.filter((m) => m.lease).map((m) => m.id));
      for (const [id, of] of written) written.set(id, of.filter((r) => kept.has(r.id)));
    }
  }

  /** Events by id (those pruned meanwhile are missing). */
  events(ids: string[]): Promise<EventRow[]> {
    if (!ids.length) return Promise.resolve([]);
    const list = inList(ids);
    return this.db.all<EventRow>(`SELECT id, company_id, data, test, created_at FROM outbox WHERE id IN ${list.sql}`, list.params);
  }

  /** How many deliveries are in each state. */
  async countByState(): Promise<Record<string, number>> {
    const rows = await this.db.all<{ state: string; n: number }>('SELECT state, count(*) AS n FROM webhook_deliveries GROUP BY state');
    return Object.fromEntries(rows.map((r) => [r.state, Number(r.n)]));
  }

  /** When the next pending delivery of an enabled endpoint falls due, or the next lease ends (ms), or null. */
  async nextDue(): Promise<number | null> {
    // One statement: on PostgreSQL, one round trip each time the loop goes idle.
    const row = await this.db.get<{ due: number | null; lease: number | null }>(
      `SELECT (SELECT d.next_attempt_at FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id AND e.enabled = 1
               WHERE d.state = 'pending' ORDER BY d.next_attempt_at LIMIT 1) AS due,
              (SELECT min(lease_until) FROM webhook_deliveries WHERE state = 'in_flight') AS lease`,
    );
    const times = [row?.due, row?.lease].filter((t) => t != null).map(Number);
    return times.length ? Math.min(...times) : null;
  }

  /**
   * Stores attempts' results, each if the lease it was sent under still holds (fencing: a worker
   * whose lease ended, the delivery since taken again, records nothing); answers the deliveries
   * recorded. `heal`: endpoints whose failing streak ends with any of their results recorded
   * (all succeeded), in the same statement on PostgreSQL (a round trip fewer per take).
   */
  async recordMany(results: (AttemptResult & { token: string })[], heal: readonly string[] = []): Promise<Set<string>> {
    const recorded = new Set<string>();
    // An attempt that delivers is kept in its delivery's row (schema.ts), the others in webhook_attempts.
    const next = (r: AttemptResult) => {
      const ok = r.next.state === 'delivered';
      return [
        r.next.state, r.attempt, r.next.at, r.status, r.failure, r.at, ok ? r.at : null, r.deferrals ?? null,
        ok ? Math.round(r.durationMs) : null, ok ? r.detail : null, ok ? r.responseExcerpt : null, ok ? r.responseBytes : null,
      ];
    };
    for (let i = 0; i < results.length; i += ROWS_PER_STATEMENT) {
      const part = results.slice(i, i + ROWS_PER_STATEMENT);
      if (this.db.dialect.bulkUpdate) {
        // Typed values: PostgreSQL would read untyped parameters in a VALUES list as text.
        const rows = await this.db.all<{ id: string }>(
          `WITH r AS (UPDATE webhook_deliveries SET state = v.column3, attempts = v.column4, next_attempt_at = v.column5, last_status = v.column6,
             last_failure = v.column7, updated_at = v.column8, delivered_at = COALESCE(v.column9, webhook_deliveries.delivered_at),
             deferrals = COALESCE(v.column10, webhook_deliveries.deferrals), lease_until = NULL, lease_token = NULL,
             delivered_duration_ms = v.column11, delivered_detail = v.column12, delivered_excerpt = v.column13, delivered_bytes = v.column14
           FROM (VALUES ${part
             .map(
               () =>
                 '(CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS INTEGER), CAST(? AS BIGINT), CAST(? AS INTEGER), CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS INTEGER), CAST(? AS INTEGER), CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS INTEGER))',
             )
             .join(', ')}) AS v
           WHERE webhook_deliveries.id = v.column1 AND webhook_deliveries.state = 'in_flight' AND webhook_deliveries.lease_token = v.column2
           RETURNING webhook_deliveries.id, webhook_deliveries.endpoint_id),
           healed AS (UPDATE webhook_endpoints SET failing_since = NULL
                      WHERE id = ANY(CAST(? AS TEXT[])) AND id IN (SELECT endpoint_id FROM r) AND failing_since IS NOT NULL)
           SELECT id FROM r`,
          [...part.flatMap((r) => [r.deliveryId, r.token, ...next(r)]), heal],
        );
        for (const row of rows) recorded.add(row.id);
      } else {
        for (const r of part) {
          const { changes } = await this.db.run(
            `UPDATE webhook_deliveries SET state = ?, attempts = ?, next_attempt_at = ?, last_status = ?, last_failure = ?, updated_at = ?,
               delivered_at = COALESCE(?, delivered_at), deferrals = COALESCE(?, deferrals), lease_until = NULL, lease_token = NULL,
               delivered_duration_ms = ?, delivered_detail = ?, delivered_excerpt = ?, delivered_bytes = ?
             WHERE id = ? AND state = 'in_flight' AND lease_token = ?`,
            [...next(r), r.deliveryId, r.token],
          );
          if (changes === 1) recorded.add(r.deliveryId);
        }
        const healed = heal.filter((id) => part.some((r) => r.endpointId === id && recorded.has(r.deliveryId)));
        if (healed.length) {
          const { sql, params } = healthyStatement(healed);
          await this.db.run(sql, params);
        }
      }
      const stored = part.filter((r) => r.next.state !== 'delivered' && recorded.has(r.deliveryId));
      if (!stored.length) continue;
      await this.db.run(
        `INSERT INTO webhook_attempts (delivery_id, company_id, attempt, at, duration_ms, status, failure, detail, response_excerpt, response_bytes)
         VALUES ${stored.map(() => '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}`,
        stored.flatMap((r) => [r.deliveryId, r.companyId, r.attempt, r.at, Math.round(r.durationMs), r.status, r.failure, r.detail, r.responseExcerpt, r.responseBytes]),
      );
    }
    return recorded;
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

  /** The endpoint a delivery of the company belongs to (the CLI names a delivery alone). */
  async endpointOf(companyId: string, id: string): Promise<string | undefined> {
    const row = await this.db.get<{ endpointId: string }>('SELECT endpoint_id AS "endpointId" FROM webhook_deliveries WHERE company_id = ? AND id = ?', [companyId, id]);
    return row?.endpointId;
  }

  get(endpointId: string, id: string): Promise<DeliveryRow | undefined> {
    return this.db.get<DeliveryRow>('SELECT * FROM webhook_deliveries WHERE endpoint_id = ? AND id = ?', [endpointId, id]);
  }

  /** A delivery's attempts in order: those in webhook_attempts, then the one that delivered it (kept in its row). */
  async attempts(deliveryId: string): Promise<AttemptRow[]> {
    const rows = await this.db.all<AttemptRow>('SELECT * FROM webhook_attempts WHERE delivery_id = ? ORDER BY seq', [deliveryId]);
    const delivering = await this.db.get<AttemptRow>(
      `SELECT attempts AS attempt, delivered_at AS at, delivered_duration_ms AS duration_ms, last_status AS status, NULL AS failure, delivered_detail AS detail,
         delivered_excerpt AS response_excerpt, delivered_bytes AS response_bytes
       FROM webhook_deliveries WHERE id = ? AND delivered_duration_ms IS NOT NULL`,
      [deliveryId],
    );
    if (delivering) rows.push({ ...delivering, attempt: Number(delivering.attempt), status: numOrNull(delivering.status), duration_ms: Number(delivering.duration_ms), response_bytes: Number(delivering.response_bytes) });
    return rows;
  }

  /** Due again now; the attempt that had delivered it (kept in its row) moves to webhook_attempts, before the next one. */
  async reschedule(id: string, nowMs: number, at: string): Promise<void> {
    await this.db.run(
      `INSERT INTO webhook_attempts (delivery_id, company_id, attempt, at, duration_ms, status, failure, detail, response_excerpt, response_bytes)
       SELECT id, company_id, attempts, delivered_at, delivered_duration_ms, last_status, NULL, delivered_detail, delivered_excerpt, delivered_bytes
       FROM webhook_deliveries WHERE id = ? AND delivered_duration_ms IS NOT NULL`,
      [id],
    );
    await this.db.run(
      `UPDATE webhook_deliveries SET state = 'pending', next_attempt_at = ?, updated_at = ?,
         delivered_duration_ms = NULL, delivered_detail = NULL, delivered_excerpt = NULL, delivered_bytes = NULL WHERE id = ?`,
      [nowMs, at, id],
    );
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
      // The attempt that delivered it goes with its row.
      for (const d of await this.db.all<{ kept: number }>('DELETE FROM webhook_deliveries WHERE id = ? RETURNING delivered_duration_ms AS kept', [id])) {
        deliveries++;
        if (d.kept !== null) attempts++;
      }
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
