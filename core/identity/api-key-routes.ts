// Settings → Developers over the API: keys are listed without their secret, created (the
// full key shown once) and revoked. A key can never mint a key above its own role.
import type { CoreRoutes } from '../http/core-route.ts';
import { dataOf, idParams } from '../http/core-route.ts';
import { apiKeySchema, type ApiKeys } from './api-keys.ts';
import { DiwanError } from '../errors/diwan-error.ts';
import { ROLES, roleAtLeast, type Role } from './roles.ts';
import type { AuditLog } from '../audit/audit-log.ts';
import type { Sqlite } from '../db/connection.ts';
import { actorOf } from './principal.ts';

export function apiKeyRoutes(r: CoreRoutes, deps: { keys: ApiKeys; audit: AuditLog; sqlite: Sqlite }) {
  const { keys, audit } = deps;
  r.add(
    { method: 'GET', url: '/api/v1/api-keys', operationId: 'core.listApiKeys', summary: "The company's API keys (never their secrets)", permission: 'api-keys:read', schema: { response: { 200: dataOf({ type: 'array', items: apiKeySchema }) } } },
    async (req) => ({ data: keys.list(req.principal.companyId) }),
  );
  r.add(
    {
      method: 'POST', url: '/api/v1/api-keys', operationId: 'core.createApiKey', summary: 'Create an API key; the full key is in the response once',
      permission: 'api-keys:manage', errors: [],
      schema: {
        body: {
          type: 'object', additionalProperties: false, required: ['role', 'scopes'],
          properties: {
            name: { type: 'string', minLength: 1, maxLength: 100 },
            role: { type: 'string', enum: [...ROLES] },
            scopes: { type: 'array', minItems: 1, maxItems: 100, items: { type: 'string', minLength: 1, maxLength: 64 } },
            expiresAt: { type: 'string', format: 'date-time' },
          },
        },
        response: { 201: dataOf({ ...apiKeySchema, required: [...apiKeySchema.required, 'key'], properties: { ...apiKeySchema.properties, key: { type: 'string', description: 'The full key, shown this once' } } }) },
      },
    },
    async (req, reply) => {
      const body = req.body as { name?: string; role: Role; scopes: string[]; expiresAt?: string };
      // Nobody grants more than they hold: a role up to their own, scopes within their own.
      if (!roleAtLeast(req.principal.role, body.role)) {
        throw new DiwanError('FORBIDDEN', [{ reason: 'role_above_own', requested: body.role, keyRole: req.principal.role }]);
      }
      const own = req.principal.scopes;
      const beyond = own.includes('*') ? [] : body.scopes.filter((s) => !own.includes(s));
      if (beyond.length) {
        throw new DiwanError('FORBIDDEN', [{ reason: 'scope_beyond_own', requested: beyond, keyScopes: own }]);
      }
      const created = deps.sqlite.transaction(() => {
        const c = keys.create({ companyId: req.principal.companyId, ...body });
        audit.record({ companyId: req.principal.companyId, actor: actorOf(req.principal), appId: 'core', action: 'create', resource: 'api-keys', resourceId: c.record.id, after: c.record, requestId: req.id });
        return c;
      }).immediate();
      reply.code(201);
      return { data: { ...created.record, key: created.key } };
    },
  );
  r.add(
    { method: 'DELETE', url: '/api/v1/api-keys/:id', operationId: 'core.revokeApiKey', summary: 'Revoke an API key', permission: 'api-keys:manage', schema: { params: idParams, response: { 200: dataOf(apiKeySchema) } } },
    async (req) => {
      const { id } = req.params as { id: string };
      const record = deps.sqlite.transaction(() => {
        const before = keys.get(req.principal.companyId, id);
        if (!before) throw new DiwanError('NOT_FOUND', [{ resource: 'api-keys', id }]);
        if (!roleAtLeast(req.principal.role, before.role)) {
          throw new DiwanError('FORBIDDEN', [{ reason: 'role_above_own', keyRole: req.principal.role, targetRole: before.role }]);
        }
        // Revoking a revoked key changes nothing, so it records nothing.
        if (before.revokedAt) return before;
        const after = keys.revoke(req.principal.companyId, id);
        audit.record({ companyId: req.principal.companyId, actor: actorOf(req.principal), appId: 'core', action: 'revoke', resource: 'api-keys', resourceId: id, before, after, requestId: req.id });
        return after;
      }).immediate();
      return { data: record };
    },
  );
}
