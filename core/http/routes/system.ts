// The permission matrix and the OpenAPI document (the company: routes/company.ts).
import type { PermissionRegistry } from '../../identity/permissions.ts';
import { ROLES } from '../../identity/roles.ts';
import { core, dataOf, ok, type Route } from '../route.ts';
import { pickEncoding, REVALIDATE } from '../static-assets.ts';

/** The OpenAPI document as served (see core/openapi/openapi-text.ts). */
interface OpenApiText {
  json: string;
  etag: string;
  encoded(encoding: 'br' | 'gzip' | 'identity'): Buffer;
}

export function systemRoutes(deps: { permissions: PermissionRegistry; openapi: () => Promise<OpenApiText> }): Route[] {
  return [
    core(
      {
        method: 'GET', url: '/api/v1/openapi.json', operationId: 'core.openapi', summary: 'This API described in OpenAPI 3.1',
        description: "Generated from the routes' own schemas, the host's and every available app's.",
        schema: {
          headers: { type: 'object', properties: { 'if-none-match': { type: 'string', maxLength: 1000, description: 'The ETag of a copy held: answered 304 while it is current' } } },
          response: { 200: { type: 'object', additionalProperties: true }, 304: { description: 'Not Modified: the copy held is current' } },
        },
      },
      async (req) => {
        const doc = await deps.openapi();
        // Revalidated on every use (no-cache), answered 304 while current, compressed when accepted.
        const headers: Record<string, string> = { etag: doc.etag, 'cache-control': REVALIDATE, vary: 'Accept-Encoding' };
        if (ifNoneMatch(req.headers['if-none-match'], doc.etag)) return { status: 304, headers, json: '' };
        const encoding = pickEncoding(req.headers['accept-encoding']);
        return { headers: encoding === 'identity' ? headers : { ...headers, 'content-encoding': encoding }, bytes: doc.encoded(encoding) };
      },
    ),
    core(
      {
        method: 'GET', url: '/api/v1/permissions', operationId: 'core.listPermissions', summary: 'Every permission and the roles that hold it',
        permission: 'company:read',
        schema: {
          response: {
            200: dataOf({
              type: 'array',
              items: {
                type: 'object',
                additionalProperties: false,
                required: ['permission', 'owner', 'lowestRole', 'roles', 'held'],
                properties: {
                  permission: { type: 'string' }, owner: { type: 'string' }, lowestRole: { type: 'string', enum: [...ROLES] },
                  description: { type: 'string' },
                  roles: { type: 'object', additionalProperties: false, required: [...ROLES], properties: Object.fromEntries(ROLES.map((r) => [r, { type: 'boolean' }])) },
                  held: { type: 'boolean', description: 'Whether the caller holds it' },
                },
              },
            }),
          },
        },
      },
      async (req) =>
        ok(
          deps.permissions.matrix().map((m) => {
            const e = deps.permissions.get(m.permission)!;
            return { ...m, lowestRole: e.role, description: e.description?.[req.lang], held: deps.permissions.allows(req.principal, m.permission) };
          }),
        ),
    ),
  ];
}

/** RFC 9110 §13.1.2: a list of entity tags (weak ones compare weakly) or `*`. */
function ifNoneMatch(header: string | string[] | undefined, etag: string): boolean {
  if (typeof header !== 'string') return false;
  return header.split(',').some((t) => {
    const tag = t.trim();
    return tag === '*' || tag.replace(/^W\//, '') === etag;
  });
}
