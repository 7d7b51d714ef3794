// Settings → Developers over the API: keys are listed without their secret, created (the full
// key shown once) and revoked. Nobody grants more than they hold (the identity domain's rule).
import { apiKeySchema, type ApiKeys, type NewKeyInput } from '../../identity/api-keys.ts';
import { actorOf } from '../../identity/principal.ts';
import { ROLES } from '../../identity/roles.ts';
import { core, dataOf, idParams, ok, type ApiRequest, type Route } from '../route.ts';

const scopeOf = (req: ApiRequest) => ({ companyId: req.company.id, actor: actorOf(req.principal), appId: 'core', requestId: req.id });

export function apiKeyRoutes(keys: ApiKeys): Route[] {
  return [
    core(
      { method: 'GET', url: '/api/v1/api-keys', operationId: 'core.listApiKeys', summary: "The company's API keys (never their secrets)", permission: 'api-keys:read', schema: { response: { 200: dataOf({ type: 'array', items: apiKeySchema }) } } },
      async (req) => ok(await keys.list(req.company.id)),
    ),
    core(
      {
        method: 'POST', url: '/api/v1/api-keys', operationId: 'core.createApiKey', summary: 'Create an API key; the full key is in the response once',
        description: 'The role may not be above the caller\'s, nor the scopes beyond the caller\'s (FORBIDDEN).',
        permission: 'api-keys:manage',
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
      async (req) => {
        const created = await keys.create(scopeOf(req), req.body as NewKeyInput, req.principal);
        return ok({ ...created.record, key: created.key }, 201);
      },
    ),
    core(
      {
        method: 'DELETE', url: '/api/v1/api-keys/:id', operationId: 'core.revokeApiKey', summary: 'Revoke an API key (revoking a revoked key changes nothing)',
        permission: 'api-keys:manage', errors: ['NOT_FOUND'],
        schema: { params: idParams, response: { 200: dataOf(apiKeySchema) } },
      },
      async (req) => ok(await keys.revoke(scopeOf(req), req.params.id, req.principal)),
    ),
  ];
}
