import type { CoreRoutes } from '../http/core-route.ts';
import { listOf, paging } from '../http/core-route.ts';
import { auditRowSchema, type AuditLog } from './audit-log.ts';

export function auditRoutes(r: CoreRoutes, audit: AuditLog) {
  r.add(
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
          },
        },
        response: { 200: listOf(auditRowSchema) },
      },
    },
    async (req) => {
      const q = req.query as { page: number; pageSize: number; resource?: string; action?: string; resourceId?: string };
      const { total, data } = audit.list(req.principal.companyId, q);
      return { data, total, page: q.page, pageSize: q.pageSize };
    },
  );
}
