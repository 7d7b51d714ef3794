// One unit of work for every write: the write, its audit row and its events commit together or
// not at all. Callers (routes, the CLI, the app runtime, the scheduler) describe who acts for
// which company and app; the work they do inside gets `audit()` and `emit()` bound to that, and
// `emit` holds the rule that only the owner of a family emits inside it.
import type { Db } from '../storage/db.ts';
import type { Actor } from '../kernel/actor.ts';
import type { Lang } from '../kernel/i18n/i18n.ts';
import type { Outbox, OutboxEvent } from '../events/outbox.ts';
import type { EventFamilies } from '../events/families.ts';
import type { AuditLog, AuditRow } from './audit-log.ts';
import { DiwanError } from '../kernel/errors/diwan-error.ts';

export interface WriteScope {
  companyId: string;
  actor: Actor;
  /** `core` or the app whose code writes. */
  appId: string;
  requestId?: string | null;
  /** The caller's language, for what a write answers in words. */
  lang?: Lang;
}

export interface Work {
  readonly scope: WriteScope;
  audit(e: { action: string; resource: string; resourceId?: string | null; before?: unknown; after?: unknown }): Promise<AuditRow>;
  /**
   * Only inside a family the scope's app owns; `test` events (the catalogue's examples) may be any
   * known topic. `subjectId`: the webhook endpoint an operational event is about (never sent to it).
   */
  emit(topic: string, data: unknown, opts?: { test?: boolean; subjectId?: string }): Promise<OutboxEvent>;
}

/** An app emitting inside a family it does not own: a fault of the app, refused. */
function familyNotOwned(appId: string, topic: string, owner: string | undefined): DiwanError {
  const reason = `${topic} is in the ${topic.split('.')[0]}.* family, which belongs to ${owner ?? 'no app'}`;
  return new DiwanError('APP_ERROR', [{ app: appId, rule: 'family_not_owned', topic, owner: owner ?? null }], { app: appId, reason });
}

export class UnitOfWork {
  constructor(
    private db: Db,
    private auditLog: AuditLog,
    private outbox: Outbox,
    /** Who owns each topic prefix (`core` or an app id). */
    private families: EventFamilies,
  ) {}

  run<T>(scope: WriteScope, fn: (w: Work) => Promise<T>): Promise<T> {
    const work: Work = {
      scope,
      // Field by field: the scope's tenant, actor and app are never the caller's to set.
      audit: (e) =>
        this.auditLog.record({
          action: e.action, resource: e.resource, resourceId: e.resourceId, before: e.before, after: e.after,
          companyId: scope.companyId, actor: scope.actor, appId: scope.appId, requestId: scope.requestId ?? null,
        }),
      emit: (topic, data, opts = {}) => {
        if (!opts.test) {
          const owner = this.families.ownerOf(topic.split('.')[0]);
          if (owner !== scope.appId) throw familyNotOwned(scope.appId, topic, owner);
        }
        return this.outbox.emit(scope.companyId, topic, data, opts.test ?? false, opts.subjectId ?? null);
      },
    };
    return this.db.transaction(() => fn(work));
  }
}
