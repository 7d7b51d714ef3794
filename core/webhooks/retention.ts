// Retention: events (their payloads), their deliveries and the attempts are kept
// `retentionDays` (DIWAN_EVENT_RETENTION_DAYS, 30 by default; 0 keeps them forever), then pruned
// by a loop on the delivery worker's side. It works in small batches, oldest first, each in its
// own short transaction with a pause between them, so writes never wait for more than one batch.
// An event is pruned with every delivery of it, whatever their state (an event that old is not
// sent any more), except while one is in flight: that event waits for the next round. The
// cutoff comes from the injected clock, so tests drive it.
import type { Db } from '../storage/db.ts';
import type { OutboxRepo } from '../storage/repos/outbox.ts';
import type { WebhookDeliveriesRepo } from '../storage/repos/webhook-deliveries.ts';
import type { WebhookEndpointsRepo } from '../storage/repos/webhook-endpoints.ts';
import type { Clock } from '../kernel/clock.ts';
import { isoNow } from '../kernel/ids.ts';

export const DAY_MS = 86_400_000;

/** The oldest creation time still kept (ISO), or null when nothing is ever pruned. */
export function retentionCutoff(nowMs: number, retentionDays: number): string | null {
  return retentionDays > 0 ? isoNow(nowMs - retentionDays * DAY_MS) : null;
}

export interface RetentionDeps {
  db: Db;
  outbox: OutboxRepo;
  deliveries: WebhookDeliveriesRepo;
  endpoints: WebhookEndpointsRepo;
  clock: Clock;
  retentionDays: number;
  /** Events per batch (one transaction). */
  batch?: number;
  /** Pause between batches, so writes waiting for the connection go first. */
  pauseMs?: number;
  /** Between rounds of the loop. */
  intervalMs?: number;
  /** Before the first round after start. */
  firstDelayMs?: number;
}

export interface PruneResult {
  events: number;
  deliveries: number;
  attempts: number;
  /** Transactions it took. */
  batches: number;
}

export class Retention {
  private timer?: NodeJS.Timeout;
  private running?: Promise<PruneResult>;
  private started = false;
  /** Set by stop(): a round under way ends after its current batch. */
  private halting = false;
  readonly batch: number;
  private readonly pauseMs: number;
  private readonly intervalMs: number;
  private readonly firstDelayMs: number;

  constructor(private deps: RetentionDeps) {
    this.batch = Math.max(1, deps.batch ?? 100);
    this.pauseMs = deps.pauseMs ?? 5;
    this.intervalMs = deps.intervalMs ?? 10 * 60_000;
    this.firstDelayMs = deps.firstDelayMs ?? 5_000;
  }

  get retentionDays(): number {
    return this.deps.retentionDays;
  }

  /** The oldest creation time still kept now (ISO), or null when nothing is pruned. */
  cutoff(): string | null {
    return retentionCutoff(this.deps.clock.now(), this.deps.retentionDays);
  }

  /**
   * One batch in one transaction: the oldest events created before the cutoff (in outbox order,
   * stopping at the first one still kept) with their deliveries and attempts.
   */
  async pruneBatch(): Promise<PruneResult & { more: boolean }> {
    const cutoff = this.cutoff();
    const none = { events: 0, deliveries: 0, attempts: 0, batches: 0, more: false };
    if (cutoff === null) return none;
    const { db, outbox, deliveries, endpoints } = this.deps;
    return db.transaction(async () => {
      const oldest = await outbox.oldest(this.batch);
      const old = [];
      for (const e of oldest) {
        if (e.createdAt >= cutoff) break;
        old.push(e);
      }
      if (!old.length) return none;
      const endpointsOf = new Map<string, string[]>();
      const seqs: number[] = [];
      const deliveryIds: string[] = [];
      for (const e of old) {
        let ids = endpointsOf.get(e.companyId);
        if (!ids) endpointsOf.set(e.companyId, (ids = await endpoints.idsOf(e.companyId)));
        const of: { id: string; state: string }[] = [];
        for (const endpointId of ids) of.push(...(await deliveries.ofEvent(endpointId, e.id)));
        // Being attempted now: its result must find its row. Pruned in a later round.
        if (of.some((d) => d.state === 'in_flight')) continue;
        seqs.push(e.seq);
        deliveryIds.push(...of.map((d) => d.id));
      }
      const removed = await deliveries.removeWithAttempts(deliveryIds);
      const events = await outbox.remove(seqs);
      return { events, ...removed, batches: 1, more: oldest.length === this.batch && old.length === oldest.length };
    });
  }

  /** Batches until nothing older than the cutoff is left (or `maxBatches`); one round of the loop. */
  prune(maxBatches = Number.MAX_SAFE_INTEGER): Promise<PruneResult> {
    this.running ??= (async () => {
      const total: PruneResult = { events: 0, deliveries: 0, attempts: 0, batches: 0 };
      try {
        for (let i = 0; i < maxBatches; i++) {
          const r = await this.pruneBatch();
          total.events += r.events;
          total.deliveries += r.deliveries;
          total.attempts += r.attempts;
          total.batches += r.batches;
          if (!r.more || this.halting) break;
          await new Promise((resolve) => setTimeout(resolve, this.pauseMs));
        }
        return total;
      } finally {
        this.running = undefined;
      }
    })();
    return this.running;
  }

  /** The loop: a round shortly after start, then every interval. */
  start(): void {
    if (this.started || this.deps.retentionDays <= 0) return;
    this.started = true;
    this.halting = false;
    this.schedule(this.firstDelayMs);
  }

  private schedule(ms: number): void {
    if (!this.started) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.prune()
        .catch(() => {
          // The store is closed or busy: the next round tries again.
        })
        .finally(() => this.schedule(this.intervalMs));
    }, ms);
    this.timer.unref();
  }

  /** Stops the loop; a round under way ends after its current batch. */
  async stop(): Promise<void> {
    this.started = false;
    this.halting = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => {});
    this.halting = false;
  }
}
