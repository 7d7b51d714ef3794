// The routes an app contributes: five per document type (list, create, get, update, delete),
// one per transition, and the custom routes of its server bundle. Described as data plus a
// handler; the HTTP layer serves them through the same pipeline as the host's own routes.
import type { AppDefinition } from '../../sdk/define-app.ts';
import type { RouteDoc } from '../kernel/route-doc.ts';
import { DiwanError } from '../kernel/errors/diwan-error.ts';
import type { DocType, Caller } from './doc-type.ts';
import type { AppContext } from '../../sdk/define-app.ts';
import { appFault } from './app-fault.ts';

export interface Invocation {
  params: Record<string, string>;
  query: Record<string, unknown>;
  body: unknown;
  headers: Record<string, string | string[] | undefined>;
  caller: Caller;
}

/** `json` is already-serialised text (the list's fast path); otherwise `body` is serialised from the response schema. */
export type RouteOutput = { status: number; body?: unknown; json?: string; bytes?: Buffer; headers?: Record<string, string> };

export interface AppRoute {
  appId: string;
  doc: RouteDoc;
  /** Honours `Idempotency-Key` inside the write's transaction. */
  idempotent: boolean;
  handle(i: Invocation): Promise<RouteOutput>;
}

/** `?dryRun=true` on a create, an update or a transition: answers what would be stored (200) and stores nothing. */
const dryRunQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    dryRun: { type: 'boolean', description: 'Compute the document (its computed fields, every broken rule as VALIDATION_ERROR) without storing it: nothing is written, no event goes out, an Idempotency-Key is not used' },
  },
} as const;

const envelope = (schema: object) => ({ type: 'object', additionalProperties: false, required: ['data'], properties: { data: schema } });

const idempotencyHeader = {
  name: 'Idempotency-Key',
  description: 'Repeating the request with the same key (and body) answers the first result instead of writing again',
  schema: { type: 'string', maxLength: 255 },
};

function docTypeRoutes(appId: string, dt: DocType): AppRoute[] {
  const r = dt.resource;
  const base = `/api/v1/${r}`;
  const label = dt.decl.label.en.toLowerCase();
  const aLabel = `${/^[aeio]/.test(label) ? 'an' : 'a'} ${label}`;
  const plural = (dt.decl.labelPlural?.en ?? `${dt.decl.label.en}s`).toLowerCase();
  const op = (name: string) => `${appId}.${name}${dt.decl.name[0].toUpperCase()}${dt.decl.name.slice(1)}`;
  const s = () => dt.schemas;
  // Schemas are read when the route is first described or served, not at load.
  const route = (doc: Omit<RouteDoc, 'tag' | 'schema'> & { schema: () => RouteDoc['schema'] }, handle: AppRoute['handle'], idempotent = false): AppRoute => {
    let schema: RouteDoc['schema'] | undefined;
    const full = { ...doc, tag: appId } as Omit<RouteDoc, 'schema'>;
    return {
      appId,
      idempotent,
      handle,
      doc: Object.defineProperty(full, 'schema', { enumerable: true, get: () => (schema ??= doc.schema()) }) as RouteDoc,
    };
  };
  const routes: AppRoute[] = [
    route(
      { method: 'GET', url: base, operationId: op('list'), summary: `List ${plural}`, permission: `${r}:read`, schema: () => ({ querystring: s().listQuery, response: { 200: s().list } }) },
      async (i) => {
        const { page, pageSize, sort, ...filters } = i.query as Record<string, string | number | boolean>;
        return { status: 200, json: await dt.listJson(i.caller.company.id, { page: page as number, pageSize: pageSize as number, sort: sort as string, filters }) };
      },
    ),
    route(
      {
        method: 'POST', url: base, operationId: op('create'), summary: `Create ${aLabel}`, permission: `${r}:create`,
        schema: () => ({ querystring: dryRunQuery, body: s().write, response: { 200: envelope(s().read), 201: envelope(s().read) } }), errors: ['CONFLICT'], headers: [idempotencyHeader],
      },
      async (i) =>
        i.query.dryRun === true
          ? { status: 200, body: { data: await dt.dryRun(i.caller, i.body as Record<string, unknown>) } }
          : { status: 201, body: { data: await dt.create(i.caller, i.body as Record<string, unknown>, { validated: true }) } },
      true,
    ),
    route(
      { method: 'GET', url: `${base}/:id`, operationId: op('get'), summary: `Get ${aLabel}`, permission: `${r}:read`, schema: () => ({ params: s().params, response: { 200: envelope(s().read) } }), errors: ['NOT_FOUND'] },
      async (i) => {
        const doc = await dt.get(i.caller.company.id, i.params.id);
        if (!doc) throw new DiwanError('NOT_FOUND', [{ resource: r, id: i.params.id }]);
        return { status: 200, body: { data: doc } };
      },
    ),
    route(
      { method: 'PATCH', url: `${base}/:id`, operationId: op('update'), summary: `Change ${aLabel}`, permission: `${r}:update`, schema: () => ({ params: s().params, querystring: dryRunQuery, body: s().patch, response: { 200: envelope(s().read) } }), errors: ['NOT_FOUND', 'CONFLICT'] },
      async (i) => {
        const body = i.body as Record<string, unknown>;
        return { status: 200, body: { data: i.query.dryRun === true ? await dt.dryRun(i.caller, body, i.params.id) : await dt.update(i.caller, i.params.id, body, { validated: true }) } };
      },
    ),
    route(
      { method: 'DELETE', url: `${base}/:id`, operationId: op('delete'), summary: `Delete ${aLabel}`, permission: `${r}:delete`, schema: () => ({ params: s().params, response: { 200: envelope(s().read) } }), errors: ['NOT_FOUND', 'CONFLICT'] },
      async (i) => ({ status: 200, body: { data: await dt.remove(i.caller, i.params.id) } }),
    ),
  ];
  for (const t of dt.decl.transitions ?? []) {
    routes.push(
      route(
        {
          method: 'POST', url: `${base}/:id/${t.name}`, operationId: op(t.name), permission: `${r}:${t.name}`,
          summary: `${t.label?.en ?? t.name} ${aLabel} (${t.from.join(', ')} → ${t.to})`,
          ...(t.description ? { description: t.description.en } : {}),
          // The body is the transition's declared input, and nothing else: what is not declared is refused, not dropped.
          schema: () => ({ params: s().params, querystring: dryRunQuery, body: s().transitions[t.name], response: { 200: envelope(s().read) } }), errors: ['NOT_FOUND', 'CONFLICT'],
        },
        async (i) => {
          const body = i.body as Record<string, unknown>;
          const doc = i.query.dryRun === true ? await dt.dryRunTransition(i.caller, i.params.id, t.name, body) : await dt.transition(i.caller, i.params.id, t.name, body, { validated: true });
          return { status: 200, body: { data: doc } };
        },
      ),
    );
  }
  return routes;
}

function customRoutes(def: AppDefinition, context: (caller: Caller) => AppContext): AppRoute[] {
  return (def.routes ?? []).map((r) => {
    const url = `/api/v1${r.url}`;
    return {
      appId: def.id,
      idempotent: false,
      doc: {
        method: r.method,
        url,
        operationId: `${def.id}.${r.method.toLowerCase()}${url.replace(/[^a-zA-Z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
        summary: r.summary,
        description: r.description,
        tag: def.id,
        permission: r.permission,
        schema: r.schema as RouteDoc['schema'],
        errors: r.errors,
        ...(r.produces ? { produces: r.produces } : {}),
      },
      async handle(i) {
        try {
          const out = await r.handler({ params: i.params, query: i.query, body: i.body, headers: i.headers } as never, context(i.caller));
          // Another media type than JSON: the body's bytes as they are, with their Content-Type.
          if (r.produces && (typeof out.body === 'string' || out.body instanceof Uint8Array)) {
            return { status: out.status ?? 200, bytes: Buffer.from(out.body), headers: { 'content-type': r.produces, ...out.headers } };
          }
          return { status: out.status ?? 200, body: out.body, ...(out.headers ? { headers: out.headers } : {}) };
        } catch (err) {
          throw appFault(err, def.id, { rule: 'route', route: `${r.method} ${url}` }, `${r.method} ${url} failed`);
        }
      },
    };
  });
}

export function routesForApp(appId: string, docTypes: DocType[], def: AppDefinition, context: (caller: Caller) => AppContext): AppRoute[] {
  return [...docTypes.flatMap((dt) => docTypeRoutes(appId, dt)), ...customRoutes(def, context)];
}
