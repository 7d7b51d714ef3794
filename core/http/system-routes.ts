// The caller's company, the permission matrix and the OpenAPI document.
import type { CoreRoutes } from './core-route.ts';
import { dataOf } from './core-route.ts';
import { companySchema, type Companies } from '../tenancy/companies.ts';
import type { PermissionRegistry } from '../identity/permissions.ts';

export function systemRoutes(r: CoreRoutes, deps: { companies: Companies; permissions: PermissionRegistry; openapi: () => unknown }) {
  r.add(
    {
      method: 'GET', url: '/api/v1/openapi.json', operationId: 'core.openapi', summary: 'This API described in OpenAPI 3.1',
      description: 'Generated from the routes\' own schemas, the host\'s and every available app\'s.',
      schema: { response: { 200: { type: 'object', additionalProperties: true } } },
    },
    async (_req, reply) => reply.type('application/json; charset=utf-8').send(JSON.stringify(deps.openapi())),
  );
  r.add(
    { method: 'GET', url: '/api/v1/company', operationId: 'core.getCompany', summary: "The caller's company", permission: 'company:read', schema: { response: { 200: dataOf(companySchema) } } },
    async (req) => ({ data: deps.companies.get(req.principal.companyId) }),
  );
  r.add(
    {
      method: 'GET', url: '/api/v1/permissions', operationId: 'core.listPermissions', summary: 'Every permission and the roles that hold it',
      permission: 'company:read',
      schema: {
        response: {
          200: dataOf({
            type: 'array',
            items: {
              type: 'object',
              required: ['permission', 'owner', 'lowestRole', 'roles'],
              properties: {
                permission: { type: 'string' }, owner: { type: 'string' }, lowestRole: { type: 'string' },
                description: { type: 'string' },
                roles: { type: 'object', additionalProperties: { type: 'boolean' } },
                held: { type: 'boolean', description: 'Whether the calling key holds it' },
              },
            },
          }),
        },
      },
    },
    async (req) => ({
      data: deps.permissions.matrix().map((m) => {
        const e = deps.permissions.get(m.permission)!;
        return { ...m, lowestRole: e.role, description: e.description?.[req.lang], held: deps.permissions.allows(req.principal, m.permission) };
      }),
    }),
  );
}
