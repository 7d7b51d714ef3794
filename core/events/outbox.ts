// The transactional outbox: an event is a row written in the same transaction as the write that
// caused it, so a rolled-back write emits nothing and a crash after commit loses nothing. The
// webhook dispatcher reads the rows not yet dispatched.
import type { Db } from '../storage/db.ts';
import type { OutboxRepo, PendingRow } from '../storage/repos/outbox.ts';
import type { Clock } from '../kernel/clock.ts';
import { newSortableId, isoNow } from '../kernel/ids.ts';

export interface OutboxEvent {
  id: string;
  companyId: string;
  topic: string;
  data: unknown;
  test: boolean;
  createdAt: string;
}

export type PendingEvent = PendingRow;

export class Outbox {
  private listeners = new Set<() => void>();

  constructor(
    private db: Db,
    private repo: OutboxRepo,
    private clock: Clock,
  ) {}

  /**
   * Must be called inside the write's transaction. `subjectId`: the webhook endpoint an
   * operational event is about, which never receives it.
   */
  async emit(companyId: string, topic: string, data: unknown, test = false, subjectId: string | null = null): Promise<OutboxEvent> {
    if (!this.db.inTransaction()) throw new Error(`event ${topic} emitted outside a transaction`);
    const now = this.clock.now();
    const ev: OutboxEvent = { id: newSortableId('evt', now), companyId, topic, data, test, createdAt: isoNow(now) };
    await this.repo.insert({ id: ev.id, companyId, topic, data: JSON.stringify(data), test, createdAt: ev.createdAt, subjectId });
    this.db.afterCommit(this.committed);
    return ev;
  }

  private committed = () => {
    for (const fn of this.listeners) fn();
  };

  /** Hears every commit of this process that emitted (the dispatcher, the event stream). */
  listen(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /**
   * The oldest events not yet fanned out, marked fanned out (call in the fan-out's transaction),
   * and the endpoints' cache version they were read with (OutboxRepo.takePending).
   */
  takePending(limit: number): Promise<{ events: PendingEvent[]; endpointsVersion: number | null }> {
    return this.repo.takePending(limit, isoNow(this.clock.now()));
  }
}
