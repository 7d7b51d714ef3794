// The transactional outbox: events are rows written in the same transaction as the write
// that caused them, so a rolled-back write emits nothing and a crash after commit loses
// nothing. The webhook dispatcher reads the rows that are not yet dispatched.
import type { Sqlite } from '../db/connection.ts';
import { newId, isoNow } from '../ids.ts';

export interface OutboxEvent {
  id: string;
  companyId: string;
  topic: string;
  data: unknown;
  test: boolean;
  createdAt: string;
}

/** What fan-out needs of an event. */
export type PendingEvent = Pick<OutboxEvent, 'id' | 'companyId' | 'topic' | 'createdAt'>;

export class Outbox {
  private insert;
  private pendingStmt;
  private markStmt;
  /** Called after a transaction that emitted commits, to wake the dispatcher. */
  onEmit: () => void = () => {};

  constructor(
    private sqlite: Sqlite,
    private now: () => number,
  ) {
    this.insert = sqlite.prepare(
      'INSERT INTO outbox (id, company_id, topic, data, test, created_at) VALUES (?, ?, ?, ?, ?, ?)',
    );
    this.pendingStmt = sqlite.prepare('SELECT id, company_id, topic, created_at FROM outbox WHERE dispatched_at IS NULL ORDER BY seq LIMIT ?');
    this.markStmt = sqlite.prepare('UPDATE outbox SET dispatched_at = ? WHERE id = ?');
  }

  /** Must be called inside the write's transaction. */
  emit(companyId: string, topic: string, data: unknown, test = false): OutboxEvent {
    const ev: OutboxEvent = { id: newId('evt'), companyId, topic, data, test, createdAt: isoNow(this.now()) };
    this.insert.run(ev.id, companyId, topic, JSON.stringify(data), test ? 1 : 0, ev.createdAt);
    queueMicrotask(() => this.onEmit());
    return ev;
  }

  /** Oldest events not yet fanned out to endpoints; their `data` stays JSON text (fan-out does not read it). */
  pending(limit: number): PendingEvent[] {
    return (this.pendingStmt.all(limit) as { id: string; company_id: string; topic: string; created_at: string }[]).map((r) => ({
      id: r.id,
      companyId: r.company_id,
      topic: r.topic,
      createdAt: r.created_at,
    }));
  }

  markDispatched(ids: string[]): void {
    const at = isoNow(this.now());
    this.sqlite.transaction(() => ids.forEach((id) => this.markStmt.run(at, id))).immediate();
  }
}
