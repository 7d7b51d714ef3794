// The company's audit log, newest first, filterable by resource, action, record, actor and time.
import type { AuditLog } from '../../audit/audit-log.ts';
import { auditRowSchema } from '../../audit/audit-log.ts';
import { core, listOf, paging, type Route } from '../route.ts';

export function auditRoutes(audit: AuditLog): Route[] {
  return [
    core(
      {
        method: 'GET', url: '/api/v1/audit-log', operationId: 'core.listAuditLog', summary: "The company's audit log, newest first",
        permission: 'audit:read',
        schema: {
          querystring: {
            type: 'object', additionalProperties: false,
            properties: {
              ...paging,
              resource: { type: 'string', maxLength: 64, description: 'Only writes to this resource' },
              action: { type: 'string', maxLength: 64, description: 'Only this action (create, update, install, …)' },
              resourceId: { type: 'string', maxLength: 64, description: 'Only writes to this record' },
              actorType: { type: 'string', enum: ['user', 'key', 'cli', 'system'], description: 'Only writes by this kind of actor' },
              actorId: { type: 'string', maxLength: 64, description: 'Only writes by this person, key or process' },
              since: { type: 'string', format: 'date-time', description: 'Only writes at or after this time' },
              until: { type: 'string', format: 'date-time', description: 'Only writes before this time' },
            },
          },
          response: { 200: listOf(auditRowSchema) },
        },
      },
      async (req) => {
        const q = req.query as { page: number; pageSize: number; since?: string; until?: string };
        // Rows store UTC ISO times: compare like with like whatever offset the caller wrote.
        const times = { since: q.since && new Date(q.since).toISOString(), until: q.until && new Date(q.until).toISOString() };
        const { total, data } = await audit.list(req.principal.companyId, { ...q, ...times });
        return { body: { data, total, page: q.page, pageSize: q.pageSize } };
      },
    ),
  ];
}
