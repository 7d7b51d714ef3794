// A route as the pipeline serves it: its description (which gives the validation, the response
// serialisation, the permission and the OpenAPI operation) and its handler. The host's routes
// and every app's routes are the same kind of thing.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RouteDoc } from '../kernel/route-doc.ts';
import type { Lang } from '../kernel/i18n/i18n.ts';
import type { Principal } from '../identity/principal.ts';
import type { Company } from '../tenancy/companies.ts';

export interface ApiRequest {
  params: Record<string, string>;
  query: Record<string, unknown>;
  body: unknown;
  headers: FastifyRequest['headers'];
  /** Absent only on public routes. */
  principal: Principal;
  company: Company;
  lang: Lang;
  /** The request id (in audit rows and logs). */
  id: string;
  raw: FastifyRequest;
  reply: FastifyReply;
}

export interface Reply {
  status?: number;
  /** Serialised from the route's response schema for the status. */
  body?: unknown;
  /** Already-serialised JSON (a hot path that splices stored JSON). */
  json?: string;
  /** Already-encoded bytes (with a Content-Encoding header): a compressed document. */
  bytes?: Buffer;
  headers?: Record<string, string>;
  /** The handler took the raw reply over (a stream) and answers on it itself; the pipeline sends nothing. */
  hijacked?: true;
}

export interface Route {
  doc: RouteDoc;
  /** The app the route belongs to: answered only where it is enabled. */
  appId?: string;
  /** Honours `Idempotency-Key` inside the write's transaction. */
  idempotent?: boolean;
  handler(req: ApiRequest): Promise<Reply>;
}

/** A host route: tagged `core`, and its handler may answer the data alone for 200. */
export function core(doc: Omit<RouteDoc, 'tag'>, handler: (req: ApiRequest) => Promise<Reply>, opts: { idempotent?: boolean } = {}): Route {
  return { doc: { tag: 'core', ...doc }, handler, ...opts };
}

export const paging = {
  page: { type: 'integer', minimum: 1, maximum: 1_000_000, default: 1, description: 'Page number, from 1' },
  pageSize: { type: 'integer', minimum: 1, maximum: 100, default: 20, description: 'Items per page, at most 100' },
} as const;

export const listOf = (item: object) => ({
  type: 'object',
  additionalProperties: false,
  required: ['data', 'total', 'page', 'pageSize'],
  properties: { data: { type: 'array', items: item }, total: { type: 'integer' }, page: { type: 'integer' }, pageSize: { type: 'integer' } },
});

export const dataOf = (schema: object) => ({ type: 'object', additionalProperties: false, required: ['data'], properties: { data: schema } });

export const idParams = { type: 'object', required: ['id'], properties: { id: { type: 'string', maxLength: 64 } } } as const;

/** `{ data }` with 200 (or `status`). */
export const ok = (data: unknown, status = 200): Reply => ({ status, body: { data } });
