import type { Db } from '../db.ts';

export interface OutboxRow {
  id: string;
  companyId: string;
  topic: string;
  /** The event's data as JSON text, stored and delivered without re-serialising. */
  data: string;
  test: boolean;
  createdAt: string;
  /** The webhook endpoint an operational event is about (never delivered to it); null for others. */
  subjectId?: string | null;
}

export type PendingRow = Pick<OutboxRow, 'id' | 'companyId' | 'topic' | 'createdAt'> & {
  subjectId: string | null;
  /** As stored (JSON text): the deliveries' bodies are built from it. */
  data: string;
  test: number;
};

/** A stored event with its position in the outbox order. */
export interface StoredEvent {
  seq: number;
  id: string;
  companyId: string;
  topic: string;
  data: string;
  test: boolean;
  createdAt: string;
}

/**
 * Which topics a read keeps, as the subscription grammar parses them: exact topics, whole
 * families, and (`all`) every family but those in `allExcept`. Empty lists and no `all`: none.
 */
export interface TopicFilter {
  topics: string[];
  prefixes: string[];
  all: boolean;
  allExcept: string[];
}

export interface EventQuery {
  /** Only events after this position (exclusive); 0 from the start. */
  afterSeq: number;
  /** Only events up to this position (inclusive). */
  upTo?: number;
  filter?: TopicFilter;
  /** ISO times: `from` inclusive, `to` exclusive. */
  from?: string;
  to?: string;
  limit: number;
  /** Look at no more than this many of the company's events past `afterSeq` (bounds a selective filter's scan). */
  scan?: number;
}

interface RawEvent {
  seq: number;
  id: string;
  companyId: string;
  topic: string;
  data: string;
  test: number;
  createdAt: string;
}

const EVENT_COLUMNS = 'seq, id, company_id AS "companyId", topic, data, test, created_at AS "createdAt"';
const toEvent = (r: RawEvent): StoredEvent => ({ seq: Number(r.seq), id: r.id, companyId: r.companyId, topic: r.topic, data: r.data, test: Number(r.test) === 1, createdAt: r.createdAt });

/** The SQL condition of a topic filter, with its parameters. */
function filterSql(f: TopicFilter): { sql: string; params: unknown[] } {
  const parts: string[] = [];
  const params: unknown[] = [];
  const inFamily = (prefix: string) => {
    params.push(prefix.length + 1, `${prefix}.`);
    return 'substr(topic, 1, ?) = ?';
  };
  if (f.topics.length) {
    parts.push(`topic IN (${f.topics.map(() => '?').join(', ')})`);
    params.push(...f.topics);
  }
  for (const p of f.prefixes) parts.push(inFamily(p));
  if (f.all) parts.push(f.allExcept.length ? `NOT (${f.allExcept.map(inFamily).join(' OR ')})` : '1 = 1');
  return { sql: parts.length ? `(${parts.join(' OR ')})` : '1 = 0', params };
}

export class OutboxRepo {
  constructor(private db: Db) {}

  async insert(e: OutboxRow): Promise<void> {
    await this.db.run('INSERT INTO outbox (id, company_id, topic, data, test, created_at, subject_id) VALUES (?, ?, ?, ?, ?, ?, ?)', [
      e.id, e.companyId, e.topic, e.data, e.test ? 1 : 0, e.createdAt, e.subjectId ?? null,
    ]);
    // Workers in other processes wake at the commit (several in one transaction are told once).
    if (this.db.dialect.notifyEvents) await this.db.get(this.db.dialect.notifyEvents);
  }

  /**
   * The oldest events not yet fanned out to endpoints, marked fanned out at `at` (in the
   * transaction under way), oldest first: one statement, not a read and a mark (on PostgreSQL a
   * round trip less per fan-out). With them, the `endpoints` cache version in the same snapshot
   * (null when no event was taken): an index of endpoints older than it may miss an endpoint
   * committed before these events, whose notice this process has not heard yet.
   */
  async takePending(limit: number, at: string): Promise<{ events: PendingRow[]; endpointsVersion: number | null }> {
    const rows = await this.db.all<PendingRow & { seq: number; endpointsVersion: number | null }>(
      // Several workers fan out side by side, each its own events. The version's subquery runs
      // once per statement (PostgreSQL: an InitPlan; SQLite: a Once).
      `UPDATE outbox SET dispatched_at = ? WHERE seq IN (SELECT seq FROM outbox WHERE dispatched_at IS NULL ORDER BY seq LIMIT ? ${this.db.dialect.skipLocked})
       RETURNING seq, id, company_id AS "companyId", topic, created_at AS "createdAt", subject_id AS "subjectId", data, test,
         (SELECT version FROM cache_versions WHERE scope = 'endpoints') AS "endpointsVersion"`,
      [at, limit],
    );
    // RETURNING promises no order.
    rows.sort((x, y) => Number(x.seq) - Number(y.seq));
    return { events: rows, endpointsVersion: rows.length ? Number(rows[0].endpointsVersion ?? 0) : null };
  }

  /** A company's events, newest first. */
  recent(companyId: string, limit: number): Promise<OutboxRow[]> {
    return this.db
      .all<Omit<OutboxRow, 'test'> & { test: number }>(
        'SELECT id, company_id AS "companyId", topic, data, test, created_at AS "createdAt" FROM outbox WHERE company_id = ? ORDER BY seq DESC LIMIT ?',
        [companyId, limit],
      )
      .then((rows) => rows.map((r) => ({ ...r, test: Number(r.test) === 1 })));
  }

  /** When the oldest event not yet fanned out was written, or null when none waits. */
  async oldestPending(): Promise<string | null> {
    const r = await this.db.get<{ at: string }>('SELECT created_at AS at FROM outbox WHERE dispatched_at IS NULL ORDER BY seq LIMIT 1');
    return r?.at ?? null;
  }

  /** One event of a company. */
  async get(companyId: string, id: string): Promise<StoredEvent | undefined> {
    const r = await this.db.get<RawEvent>(`SELECT ${EVENT_COLUMNS} FROM outbox WHERE id = ? AND company_id = ?`, [id, companyId]);
    return r && toEvent(r);
  }

  /** Where an event of a company stands in the outbox order. */
  async positionOf(companyId: string, id: string): Promise<number | undefined> {
    const r = await this.db.get<{ seq: number }>('SELECT seq FROM outbox WHERE id = ? AND company_id = ?', [id, companyId]);
    return r ? Number(r.seq) : undefined;
  }

  /** The last position of the whole outbox (0 when empty): where a live reader starts. */
  async lastPosition(): Promise<number> {
    const r = await this.db.get<{ seq: number | null }>('SELECT max(seq) AS seq FROM outbox');
    return r?.seq == null ? 0 : Number(r.seq);
  }

  /**
   * A company's events after a position, oldest first, that pass the filter and times. With
   * `scan`, at most that many of the company's events are looked at: `scannedTo` then says how far
   * the look went (with its event id and time), so a caller can page on past a stretch that
   * matched nothing.
   */
  async page(companyId: string, q: EventQuery): Promise<{ rows: StoredEvent[]; scannedTo?: { seq: number; id: string; createdAt: string } }> {
    let bound: { seq: number; id: string; createdAt: string } | undefined;
    if (q.scan !== undefined) {
      const b = await this.db.get<{ seq: number; id: string; createdAt: string }>(
        'SELECT seq, id, created_at AS "createdAt" FROM outbox WHERE company_id = ? AND seq > ? ORDER BY seq LIMIT 1 OFFSET ?',
        [companyId, q.afterSeq, q.scan - 1],
      );
      if (b) bound = { ...b, seq: Number(b.seq) };
    }
    const where = ['company_id = ?', 'seq > ?'];
    const params: unknown[] = [companyId, q.afterSeq];
    const upTo = bound && q.upTo !== undefined ? Math.min(bound.seq, q.upTo) : (bound?.seq ?? q.upTo);
    if (upTo !== undefined) {
      where.push('seq <= ?');
      params.push(upTo);
    }
    if (q.from !== undefined) {
      where.push('created_at >= ?');
      params.push(q.from);
    }
    if (q.to !== undefined) {
      where.push('created_at < ?');
      params.push(q.to);
    }
    if (q.filter) {
      const f = filterSql(q.filter);
      where.push(f.sql);
      params.push(...f.params);
    }
    params.push(q.limit);
    const rows = await this.db.all<RawEvent>(`SELECT ${EVENT_COLUMNS} FROM outbox WHERE ${where.join(' AND ')} ORDER BY seq LIMIT ?`, params);
    return { rows: rows.map(toEvent), ...(bound ? { scannedTo: bound } : {}) };
  }

  /** The oldest events of the whole outbox, for the retention loop: position, company, time, and whether fanned out. */
  oldest(limit: number): Promise<{ seq: number; id: string; companyId: string; createdAt: string; dispatched: boolean }[]> {
    return this.db
      .all<{ seq: number; id: string; companyId: string; createdAt: string; dispatchedAt: string | null }>(
        'SELECT seq, id, company_id AS "companyId", created_at AS "createdAt", dispatched_at AS "dispatchedAt" FROM outbox ORDER BY seq LIMIT ?',
        [limit],
      )
      .then((rows) => rows.map((r) => ({ seq: Number(r.seq), id: r.id, companyId: r.companyId, createdAt: r.createdAt, dispatched: r.dispatchedAt !== null })));
  }

  async remove(seqs: number[]): Promise<number> {
    let n = 0;
    for (const seq of seqs) n += (await this.db.run('DELETE FROM outbox WHERE seq = ?', [seq])).changes;
    return n;
  }
}
