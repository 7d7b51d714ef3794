import type { Db } from '../db.ts';

export interface AuditRecord {
  id: string;
  companyId: string;
  actorType: string;
  actorId: string;
  appId: string;
  action: string;
  resource: string;
  resourceId: string | null;
  before: unknown;
  after: unknown;
  requestId: string | null;
  at: string;
}

export interface AuditQuery {
  page: number;
  pageSize: number;
  resource?: string;
  action?: string;
  resourceId?: string;
  actorType?: string;
  actorId?: string;
  /** From this time (inclusive) to that one (exclusive), ISO 8601 in UTC. */
  since?: string;
  until?: string;
}

interface Raw {
  id: string;
  company_id: string;
  actor_type: string;
  actor_id: string;
  app_id: string;
  action: string;
  resource: string;
  resource_id: string | null;
  before_json: string | null;
  after_json: string | null;
  request_id: string | null;
  at: string;
}

const FILTERS: [keyof AuditQuery, string][] = [
  ['resource', 'resource = ?'],
  ['action', 'action = ?'],
  ['resourceId', 'resource_id = ?'],
  ['actorType', 'actor_type = ?'],
  ['actorId', 'actor_id = ?'],
  ['since', 'at >= ?'],
  ['until', 'at < ?'],
];

export class AuditRepo {
  constructor(private db: Db) {}

  async insert(r: AuditRecord): Promise<void> {
    await this.db.run(
      `INSERT INTO audit_log (id, company_id, actor_type, actor_id, app_id, action, resource, resource_id, before_json, after_json, request_id, at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        r.id, r.companyId, r.actorType, r.actorId, r.appId, r.action, r.resource, r.resourceId,
        r.before === null || r.before === undefined ? null : JSON.stringify(r.before),
        r.after === null || r.after === undefined ? null : JSON.stringify(r.after),
        r.requestId, r.at,
      ],
    );
  }

  /** Newest first. */
  async list(companyId: string, q: AuditQuery): Promise<{ total: number; rows: AuditRecord[] }> {
    const where = ['company_id = ?'];
    const args: unknown[] = [companyId];
    for (const [key, sql] of FILTERS) {
      if (q[key] !== undefined && q[key] !== '') {
        where.push(sql);
        args.push(q[key]);
      }
    }
    const w = where.join(' AND ');
    const total = (await this.db.get<{ n: number }>(`SELECT count(*) AS n FROM audit_log WHERE ${w}`, args))!.n;
    const rows = await this.db.all<Raw>(`SELECT * FROM audit_log WHERE ${w} ORDER BY seq DESC LIMIT ? OFFSET ?`, [...args, q.pageSize, (q.page - 1) * q.pageSize]);
    return {
      total: Number(total),
      rows: rows.map((r) => ({
        id: r.id, companyId: r.company_id, actorType: r.actor_type, actorId: r.actor_id, appId: r.app_id, action: r.action,
        resource: r.resource, resourceId: r.resource_id,
        before: r.before_json ? JSON.parse(r.before_json) : null,
        after: r.after_json ? JSON.parse(r.after_json) : null,
        requestId: r.request_id, at: r.at,
      })),
    };
  }
}
