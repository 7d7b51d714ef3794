// The audit log: one row per write, in the write's transaction, with an
// `audit.<resource>.<action>` event in the outbox (the opt-in audit trail family).
import type { AuditQuery, AuditRepo } from '../storage/repos/audit-log.ts';
import type { Outbox } from '../events/outbox.ts';
import type { Actor } from '../kernel/actor.ts';
import type { Clock } from '../kernel/clock.ts';
import { newSortableId, isoNow } from '../kernel/ids.ts';

export interface AuditEntry {
  companyId: string;
  actor: Actor;
  appId: string;
  action: string;
  resource: string;
  resourceId?: string | null;
  before?: unknown;
  after?: unknown;
  requestId?: string | null;
}

export interface AuditRow {
  id: string;
  companyId: string;
  actor: Actor;
  appId: string;
  action: string;
  resource: string;
  resourceId: string | null;
  before: unknown;
  after: unknown;
  requestId: string | null;
  at: string;
}

export const auditRowSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'companyId', 'actor', 'appId', 'action', 'resource', 'resourceId', 'before', 'after', 'requestId', 'at'],
  properties: {
    id: { type: 'string' },
    companyId: { type: 'string' },
    actor: {
      type: 'object',
      additionalProperties: false,
      required: ['type', 'id'],
      properties: { type: { type: 'string', enum: ['user', 'key', 'cli', 'system'] }, id: { type: 'string' } },
    },
    appId: { type: 'string' },
    action: { type: 'string' },
    resource: { type: 'string' },
    resourceId: { type: ['string', 'null'] },
    before: {},
    after: {},
    requestId: { type: ['string', 'null'] },
    at: { type: 'string', format: 'date-time' },
  },
} as const;

const snake = (s: string) => s.replace(/-/g, '_').replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();

/** The audit trail topic for a write, in the catalogue's grammar (snake_case words). */
export const auditTopic = (resource: string, action: string) => `audit.${snake(resource)}.${snake(action)}`;

export class AuditLog {
  constructor(
    private repo: AuditRepo,
    private outbox: Outbox,
    private clock: Clock,
  ) {}

  /** Must be called inside the write's transaction. */
  async record(e: AuditEntry): Promise<AuditRow> {
    const now = this.clock.now();
    const row: AuditRow = {
      id: newSortableId('aud', now),
      companyId: e.companyId,
      actor: e.actor,
      appId: e.appId,
      action: e.action,
      resource: e.resource,
      resourceId: e.resourceId ?? null,
      before: e.before ?? null,
      after: e.after ?? null,
      requestId: e.requestId ?? null,
      at: isoNow(now),
    };
    await this.repo.insert({ actorType: row.actor.type, actorId: row.actor.id, ...row });
    await this.outbox.emit(e.companyId, auditTopic(e.resource, e.action), row);
    return row;
  }

  async list(companyId: string, q: AuditQuery): Promise<{ total: number; data: AuditRow[] }> {
    const { total, rows } = await this.repo.list(companyId, q);
    return {
      total,
      data: rows.map(({ actorType, actorId, ...r }) => ({ ...r, actor: { type: actorType as Actor['type'], id: actorId } })),
    };
  }
}
