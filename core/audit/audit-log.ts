// The audit log: one row per write, in the write's transaction, and an `audit.<resource>.<action>`
// event in the outbox (the opt-in audit trail family).
import type { Sqlite } from '../db/connection.ts';
import { newId, isoNow } from '../ids.ts';
import type { Actor } from '../identity/principal.ts';
import type { Outbox } from '../events/outbox.ts';

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
  required: ['id', 'companyId', 'actor', 'appId', 'action', 'resource', 'resourceId', 'at'],
  properties: {
    id: { type: 'string' },
    companyId: { type: 'string' },
    actor: {
      type: 'object',
      required: ['type', 'id'],
      properties: { type: { type: 'string', enum: ['key', 'cli', 'system'] }, id: { type: 'string' } },
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

/** The audit trail topic for a write; the `audit` family has no other names. */
export const auditTopic = (resource: string, action: string) => `audit.${resource}.${action}`;

export class AuditLog {
  private insert;

  constructor(
    private sqlite: Sqlite,
    private outbox: Outbox,
    private now: () => number,
  ) {
    this.insert = sqlite.prepare(
      `INSERT INTO audit_log (id, company_id, actor_type, actor_id, app_id, action, resource, resource_id,
         before_json, after_json, request_id, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
  }

  /** Must be called inside the write's transaction. */
  record(e: AuditEntry): AuditRow {
    const row: AuditRow = {
      id: newId('aud'),
      companyId: e.companyId,
      actor: e.actor,
      appId: e.appId,
      action: e.action,
      resource: e.resource,
      resourceId: e.resourceId ?? null,
      before: e.before ?? null,
      after: e.after ?? null,
      requestId: e.requestId ?? null,
      at: isoNow(this.now()),
    };
    this.insert.run(
      row.id, row.companyId, row.actor.type, row.actor.id, row.appId, row.action, row.resource, row.resourceId,
      row.before === null ? null : JSON.stringify(row.before),
      row.after === null ? null : JSON.stringify(row.after),
      row.requestId, row.at,
    );
    this.outbox.emit(e.companyId, auditTopic(e.resource, e.action), row);
    return row;
  }

  list(companyId: string, q: { page: number; pageSize: number; resource?: string; action?: string; resourceId?: string }) {
    const where = ['company_id = ?'];
    const args: unknown[] = [companyId];
    for (const [col, v] of [['resource', q.resource], ['action', q.action], ['resource_id', q.resourceId]] as const) {
      if (v) {
        where.push(`${col} = ?`);
        args.push(v);
      }
    }
    const w = where.join(' AND ');
    const total = this.sqlite.prepare(`SELECT count(*) FROM audit_log WHERE ${w}`).pluck().get(...args) as number;
    const rows = this.sqlite
      .prepare(`SELECT * FROM audit_log WHERE ${w} ORDER BY seq DESC LIMIT ? OFFSET ?`)
      .all(...args, q.pageSize, (q.page - 1) * q.pageSize) as Record<string, string | null>[];
    return {
      total,
      data: rows.map((r) => ({
        id: r.id!,
        companyId: r.company_id!,
        actor: { type: r.actor_type as Actor['type'], id: r.actor_id! },
        appId: r.app_id!,
        action: r.action!,
        resource: r.resource!,
        resourceId: r.resource_id,
        before: r.before_json ? JSON.parse(r.before_json) : null,
        after: r.after_json ? JSON.parse(r.after_json) : null,
        requestId: r.request_id,
        at: r.at!,
      })),
    };
  }
}
