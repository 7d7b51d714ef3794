// The host's own routes are Fastify routes declared with a RouteDoc: the same object gives
// Fastify its schemas and permission, and the OpenAPI document its operation.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RouteDoc } from '../openapi/route-doc.ts';

export type CoreHandler = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown> | unknown;

export interface CoreRoutes {
  add(doc: Omit<RouteDoc, 'tag'> & { tag?: string }, handler: CoreHandler): void;
  docs: RouteDoc[];
}

export function coreRoutes(app: FastifyInstance): CoreRoutes {
  const docs: RouteDoc[] = [];
  return {
    docs,
    add(doc, handler) {
      const full: RouteDoc = { tag: 'core', ...doc };
      docs.push(full);
      // Fastify warns about parts given as undefined, so only the parts present are passed.
      const schema = Object.fromEntries(Object.entries(full.schema).filter(([k, v]) => v !== undefined && k !== 'headers'));
      app.route({
        method: full.method,
        url: full.url,
        schema,
        config: full.permission ? { permission: full.permission } : { public: true },
        handler,
      });
    },
  };
}

export const paging = {
  page: { type: 'integer', minimum: 1, maximum: 1_000_000, default: 1, description: 'Page number, from 1' },
  pageSize: { type: 'integer', minimum: 1, maximum: 100, default: 20, description: 'Items per page, at most 100' },
} as const;

export const listOf = (item: object) => ({
  type: 'object',
  required: ['data', 'total', 'page', 'pageSize'],
  properties: { data: { type: 'array', items: item }, total: { type: 'integer' }, page: { type: 'integer' }, pageSize: { type: 'integer' } },
});

export const dataOf = (schema: object) => ({ type: 'object', required: ['data'], properties: { data: schema } });

export const idParams = { type: 'object', required: ['id'], properties: { id: { type: 'string', maxLength: 64 } } } as const;
