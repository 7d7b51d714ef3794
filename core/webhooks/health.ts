// Endpoint health, kept as attempts are recorded (in their transaction): a success ends an
// endpoint's failing streak; a failure starts one; an endpoint whose streak has lasted
// `disableAfterMs` without a single success is disabled by the host (Endpoints.disableFailing:
// reason and time recorded, audited, `webhook.endpoint.disabled`); so, at once, is an endpoint
// that answered 410 Gone (reason `gone`), whatever the setting. A delivery that exhausted the
// ladder raises `webhook.delivery.dead`. Both events are about one endpoint, which never receives
// them (the outbox row names it as the subject); a dead delivery of a `webhook.*` event raises
// nothing, so two failing endpoints subscribed to each other's operations cannot feed a loop.
//
// On the dispatcher's hot path (every attempt stored passes here) an endpoint whose attempts in a
// batch all succeeded is healed by the statement that records them (healedBy), which writes
// nothing when the endpoint was already healthy; observe() sees the other endpoints' results.
import type { WebhookEndpointsRepo } from '../storage/repos/webhook-endpoints.ts';
import type { UnitOfWork } from '../audit/unit-of-work.ts';
import { WEBHOOK_PREFIX, familyOf } from '../events/patterns.ts';
import { SYSTEM_ACTOR } from '../kernel/actor.ts';
import { isoNow } from '../kernel/ids.ts';
import type { AttemptOutcome, ResultsObserver } from './deliveries.ts';
import type { Endpoints } from './endpoints.ts';

export interface HealthDeps {
  repo: WebhookEndpointsRepo;
  endpoints: Endpoints;
  uow: UnitOfWork;
  /** Failing without a success this long disables an endpoint; 0 never does. */
  disableAfterMs: number;
}

interface Streak {
  companyId: string;
  /** A success in this batch (with no failure after it). */
  healed: boolean;
  /** The first failure after the batch's last success (or from its start). */
  firstFailure?: AttemptOutcome;
  lastFailure?: AttemptOutcome;
  /** A 410 answer after the batch's last success. */
  gone?: AttemptOutcome;
}

export class EndpointHealth implements ResultsObserver {
  constructor(private deps: HealthDeps) {}

  /** Endpoints none of whose attempts in `items` failed: any of them recorded ends the streak. */
  healedBy(items: AttemptOutcome[]): string[] {
    const ok = new Map<string, boolean>();
    for (const item of items) ok.set(item.row.endpoint_id, item.result.ok && ok.get(item.row.endpoint_id) !== false);
    return [...ok].filter(([, yes]) => yes).map(([id]) => id);
  }

  /**
   * Call inside the transaction that records `items` (in the order the attempts ended). Ending
   * streaks is one UPDATE; the rest (failures, disabling, events) runs in `savepoint`, so that a
   * fault there is undone alone.
   */
  observe = async (items: AttemptOutcome[], savepoint: <T>(fn: () => Promise<T>) => Promise<T> = (fn) => fn()): Promise<void> => {
    const streaks = new Map<string, Streak>();
    let dead: AttemptOutcome[] | undefined;
    for (const item of items) {
      const id = item.row.endpoint_id;
      let s = streaks.get(id);
      if (!s) streaks.set(id, (s = { companyId: item.row.company_id, healed: false }));
      if (item.result.ok) {
        s.healed = true;
        s.firstFailure = s.lastFailure = s.gone = undefined;
      } else {
        s.firstFailure ??= item;
        s.lastFailure = item;
        if (item.result.status === 410) s.gone ??= item;
      }
      if (item.next.state === 'dead' && familyOf(item.row.topic) !== WEBHOOK_PREFIX) (dead ??= []).push(item);
    }
    await this.deps.repo.markHealthy([...streaks].filter(([, s]) => !s.firstFailure).map(([id]) => id));
    if (!dead && [...streaks.values()].every((s) => !s.firstFailure)) return;
    await savepoint(() => this.failures(streaks, dead));
  };

  private async failures(streaks: Map<string, Streak>, dead: AttemptOutcome[] | undefined): Promise<void> {
    for (const [id, s] of streaks) {
      if (!s.firstFailure) continue;
      // A success earlier in the batch ended the old streak: the new one starts at this failure.
      const h = await this.deps.repo.markFailing(id, s.firstFailure.nowMs, s.healed);
      const last = s.lastFailure!;
      const { disableAfterMs } = this.deps;
      if (h?.enabled && h.failingSince !== null && s.gone) {
        // The consumer asked for no more: disabled at once, on the same path as a failing one.
        await this.deps.endpoints.disableFailing(s.companyId, id, {
          failingSince: h.failingSince,
          lastStatus: 410,
          lastFailure: s.gone.result.failure ?? 'http_status',
          disableAfterSeconds: Math.round(disableAfterMs / 1000),
          reason: 'gone',
        });
      } else if (h?.enabled && h.failingSince !== null && disableAfterMs > 0 && last.nowMs - h.failingSince >= disableAfterMs) {
        await this.deps.endpoints.disableFailing(s.companyId, id, {
          failingSince: h.failingSince,
          lastStatus: last.result.status ?? null,
          lastFailure: last.result.failure ?? 'other',
          disableAfterSeconds: Math.round(disableAfterMs / 1000),
        });
      }
    }
    for (const item of dead ?? []) {
      const { row } = item;
      await this.deps.uow.run({ companyId: row.company_id, actor: SYSTEM_ACTOR, appId: 'core' }, (w) =>
        w.emit(
          'webhook.delivery.dead',
          {
            deliveryId: item.deliveryId, endpointId: row.endpoint_id, url: row.url, eventId: row.event_id, topic: row.topic,
            attempts: item.attemptNo, lastStatus: item.result.status ?? null, lastFailure: item.result.failure ?? 'other', deadAt: isoNow(item.nowMs),
          },
          { subjectId: row.endpoint_id },
        ),
      );
    }
  }
}
