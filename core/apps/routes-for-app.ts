// The routes an app contributes: five per document type (list, create, get, update, delete),
// one per transition, and the custom routes of its server bundle.
import type { AppDefinition } from '../../sdk/define-app.ts';
import { compileFor } from '../http/validation.ts';
import type { RouteDoc } from '../openapi/route-doc.ts';
import type { MountedRoute, RouteInput } from './app-router.ts';
import type { DocType, Caller } from './doc-type.ts';
import type { AppContext } from '../../sdk/define-app.ts';

export interface Invocation extends RouteInput {
  caller: Caller;
  context(): AppContext;
}

type Handle = (i: Invocation) => ReturnType<MountedRoute['handle']>;

const envelope = (schema: object) => ({ type: 'object', required: ['data'], properties: { data: schema } });

function docTypeRoutes(appId: string, dt: DocType): MountedRoute[] {
  const r = dt.resource;
  const base = `/api/v1/${r}`;
  const label = dt.decl.label.en;
  const plural = dt.decl.labelPlural?.en ?? `${label}s`;
  const s = dt.schemas;
  const op = (name: string) => `${appId}.${name}${dt.decl.name[0].toUpperCase()}${dt.decl.name.slice(1)}`;
  const params = compileFor('params', s.params);
  const mk = (doc: Omit<RouteDoc, 'tag'>, validators: MountedRoute['validators'], handle: Handle, idempotent = false): MountedRoute => ({
    appId,
    doc: { ...doc, tag: appId },
    validators,
    idempotent,
    handle: handle as MountedRoute['handle'],
  });
  const one = envelope(s.read);
  const routes: MountedRoute[] = [
    mk(
      { method: 'GET', url: base, operationId: op('list'), summary: `List ${plural.toLowerCase()}`, permission: `${r}:read`, schema: { querystring: s.listQuery, response: { 200: s.list } } },
      { query: dt.validateListQuery },
      (i) => {
        const { page, pageSize, ...filters } = i.query as Record<string, string | number | boolean>;
        return { status: 200, json: dt.listJson(i.caller.company.id, { page: page as number, pageSize: pageSize as number, filters }) };
      },
    ),
    mk(
      {
        method: 'POST', url: base, operationId: op('create'), summary: `Create a ${label.toLowerCase()}`, permission: `${r}:create`,
        schema: { body: s.write, response: { 201: one } }, errors: ['CONFLICT'],
        headers: [{ name: 'Idempotency-Key', description: 'Repeating a create with the same key returns the first result', schema: { type: 'string', maxLength: 255 } }],
      },
      { body: dt.validateWrite },
      (i) => ({ status: 201, body: { data: dt.create(i.caller, i.body as Record<string, unknown>, { validated: true }) } }),
      true,
    ),
    mk(
      { method: 'GET', url: `${base}/:id`, operationId: op('get'), summary: `Get a ${label.toLowerCase()}`, permission: `${r}:read`, schema: { params: s.params, response: { 200: one } } },
      { params },
      (i) => {
        const doc = dt.get(i.caller.company.id, i.params.id);
        if (!doc) return { status: 404, body: null };
        return { status: 200, body: { data: doc } };
      },
    ),
    mk(
      { method: 'PATCH', url: `${base}/:id`, operationId: op('update'), summary: `Change a ${label.toLowerCase()}`, permission: `${r}:update`, schema: { params: s.params, body: s.patch, response: { 200: one } } },
      { params, body: dt.validatePatch },
      (i) => ({ status: 200, body: { data: dt.update(i.caller, i.params.id, i.body as Record<string, unknown>, { validated: true }) } }),
    ),
    mk(
      { method: 'DELETE', url: `${base}/:id`, operationId: op('delete'), summary: `Delete a ${label.toLowerCase()}`, permission: `${r}:delete`, schema: { params: s.params, response: { 200: one } }, errors: ['CONFLICT'] },
      { params },
      (i) => ({ status: 200, body: { data: dt.remove(i.caller, i.params.id) } }),
    ),
  ];
  for (const t of dt.decl.transitions ?? []) {
    routes.push(
      mk(
        {
          method: 'POST', url: `${base}/:id/${t.name}`, operationId: op(t.name), permission: `${r}:${t.name}`,
          summary: `${t.label?.en ?? t.name} a ${label.toLowerCase()} (${t.from.join(', ')} → ${t.to})`,
          schema: { params: s.params, response: { 200: one } }, errors: ['CONFLICT'],
        },
        { params },
        (i) => ({ status: 200, body: { data: dt.transition(i.caller, i.params.id, t.name) } }),
      ),
    );
  }
  return routes;
}

function customRoutes(def: AppDefinition): MountedRoute[] {
  return (def.routes ?? []).map((r) => {
    const url = `/api/v1${r.url}`;
    const doc: RouteDoc = {
      method: r.method,
      url,
      operationId: `${def.id}.${r.method.toLowerCase()}${url.replace(/[^a-zA-Z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
      summary: r.summary,
      description: r.description,
      tag: def.id,
      permission: r.permission,
      schema: r.schema as RouteDoc['schema'],
      errors: r.errors,
    };
    return {
      appId: def.id,
      doc,
      validators: {
        params: r.schema.params ? compileFor('params', r.schema.params as object) : undefined,
        query: r.schema.querystring ? compileFor('query', r.schema.querystring as object) : undefined,
        body: r.schema.body ? compileFor('body', r.schema.body as object) : undefined,
      },
      idempotent: false,
      handle: async (i: RouteInput) => {
        const inv = i as Invocation;
        const out = await r.handler({ params: inv.params, query: inv.query, body: inv.body, headers: inv.headers } as never, inv.context());
        return { status: out.status ?? 200, body: out.body };
      },
    };
  });
}

export function routesForApp(appId: string, docTypes: DocType[], def: AppDefinition): MountedRoute[] {
  return [...docTypes.flatMap((dt) => docTypeRoutes(appId, dt)), ...customRoutes(def)];
}
