// Builds the OpenAPI 3.1.0 document (served at GET /api/v1/openapi.json) from the
// host's route list, its error table and its shared schemas. Pure: the same input
// always gives the same plain-JSON document, and the input is never mutated.
//
// What it adds on top of the routes' own schemas:
// - Fastify paths (`:id`, `:seq(^\\d+)`) become templates (`{id}`) with path parameters;
//   querystring / params / headers schemas are exploded into Parameter Objects.
// - Security: `bearerAuth` + `companyHeader`, required together on every route with a
//   permission; public routes carry `security: []`. `x-permission` names the permission.
// - Errors: every route documents the errors it may answer, grouped by HTTP status, as a
//   reference to a shared response (`components.responses`): the `ErrorEnvelope` narrowed
//   to the codes possible at that status (implicit ones: see `implicitErrorCodes`: what its
//   security, method, parameters and body imply). The whole error table is `x-error-codes`.
// - Schemas are normalised from Fastify / ajv / draft-07 habits to the OAS 3.1 dialect
//   (JSON Schema 2020-12): see `normaliseSchema`.

import type { DocumentInput, ErrorCodeDoc, HttpMethod, JsonSchema, RouteDoc } from '../kernel/route-doc.ts';
import { planWebhooks, webhookParameters, webhookPathItem, webhookResponses } from './webhooks.ts';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export const OPENAPI_VERSION = '3.1.0';
/** The default dialect of OAS 3.1.0, stated explicitly. */
export const JSON_SCHEMA_DIALECT = 'https://spec.openapis.org/oas/3.1/dialect/base';
export const ERROR_ENVELOPE = 'ErrorEnvelope';
export const ERROR_ENVELOPE_REF = `#/components/schemas/${ERROR_ENVELOPE}`;
export const COMPANY_HEADER = 'X-Company-Id';

/** Codes the builder adds by itself; each must be present in `input.errorCodes`. */
export const IMPLICIT_ERROR_CODES = {
  unauthenticated: 'UNAUTHENTICATED',
  forbidden: 'FORBIDDEN',
  companyRequired: 'COMPANY_REQUIRED',
  validation: 'VALIDATION_ERROR',
  notFound: 'NOT_FOUND',
  rateLimited: 'RATE_LIMITED',
  badRequest: 'BAD_REQUEST',
  mediaType: 'UNSUPPORTED_MEDIA_TYPE',
  tooLarge: 'PAYLOAD_TOO_LARGE',
  appNotEnabled: 'APP_NOT_ENABLED',
  unavailable: 'SERVICE_UNAVAILABLE',
  internal: 'INTERNAL',
} as const;

export interface ParameterObject {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  description?: string;
  deprecated?: boolean;
  schema: Json;
}

export interface MediaTypeObject {
  schema: Json;
  examples?: Record<string, { summary?: string; value: Json }>;
}

export interface ResponseObject {
  description: string;
  content?: Record<string, MediaTypeObject>;
}

/** An error answer: a reference to the shared response for that set of codes. */
export interface ResponseRef {
  $ref: string;
}

export interface OperationObject {
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  parameters?: ParameterObject[];
  requestBody?: { required: boolean; content: Record<string, MediaTypeObject> };
  responses: Record<string, ResponseObject | ResponseRef>;
  security: Record<string, string[]>[];
  'x-permission'?: string;
}

export interface OpenApiDocument {
  openapi: typeof OPENAPI_VERSION;
  jsonSchemaDialect: string;
  info: { title: string; version: string; description?: string };
  servers: { url: string }[];
  tags: { name: string; description?: string }[];
  paths: Record<string, Partial<Record<Lowercase<HttpMethod>, OperationObject>>>;
  /** Event topics the host delivers to webhook endpoints (OAS 3.1), see webhooks.ts. */
  webhooks?: Record<string, JsonObject>;
  components: {
    schemas: Record<string, Json>;
    parameters?: Record<string, JsonObject>;
    responses?: Record<string, JsonObject>;
    examples?: Record<string, JsonObject>;
    securitySchemes: Record<string, JsonObject>;
  };
  'x-error-codes': ErrorCodeDoc[];
}

const SECURITY_SCHEMES = {
  bearerAuth: {
    type: 'http',
    scheme: 'bearer',
    description: 'API key created in Settings → Developers, sent as `Authorization: Bearer <API_KEY>`.',
  },
  companyHeader: {
    type: 'apiKey',
    in: 'header',
    name: COMPANY_HEADER,
    description: 'The company (tenant) the request acts in; it must be the company the API key belongs to.',
  },
} satisfies Record<string, JsonObject>;

/** OAS 3.1 §4.8.12.1: header parameters with these names are ignored; security covers Authorization. */
const IGNORED_HEADER_PARAMETERS = new Set(['accept', 'content-type', 'authorization']);

/** Methods whose requests may carry a body (Fastify parses it for these, route schema or not). */
const BODY_METHODS = new Set<HttpMethod>(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Path Item field order of the specification. */
const METHOD_ORDER: Lowercase<HttpMethod>[] = ['get', 'put', 'post', 'delete', 'patch'];

const STATUS_TEXT: Record<string, string> = {
  '200': 'OK',
  '201': 'Created',
  '202': 'Accepted',
  '204': 'No Content',
  '304': 'Not Modified',
};

// ---------------------------------------------------------------------------------------
// Schema normalisation

const SCHEMA_KEYWORDS = new Set([
  'additionalProperties', 'not', 'if', 'then', 'else', 'contains', 'propertyNames',
  'unevaluatedItems', 'unevaluatedProperties', 'contentSchema',
]);
const SCHEMA_ARRAY_KEYWORDS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
const SCHEMA_MAP_KEYWORDS = new Set(['properties', 'patternProperties', 'dependentSchemas']);
/** Annotations kept on the outside when a nullable schema without `type` is wrapped. */
const ANNOTATIONS = ['title', 'description', 'default', 'examples', 'deprecated', 'readOnly', 'writeOnly'];

interface SchemaContext {
  /** Where the schema comes from, for error messages. */
  where: string;
  /** `$ref` to the root of this schema in the output, when it is addressable (components). */
  rootRef?: string;
  /** `definitions/<name>` or `$defs/<name>` of the root → hoisted component name. */
  localDefs: Map<string, string>;
}

interface Registry {
  /** Component `$id`s and names → component name. */
  ids: Map<string, string>;
  /** Root-level defs of each component: `<component>|<kw>/<name>` → hoisted component name. */
  componentDefs: Map<string, string>;
  /** Output `components.schemas`. */
  schemas: Map<string, Json>;
  /** Titled schemas already shared: their JSON text → component name. */
  titled: Map<string, string>;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function jsonClone(v: unknown): Json {
  const text = JSON.stringify(v);
  return text === undefined ? null : (JSON.parse(text) as Json);
}

function decodePointerToken(token: string): string {
  let t = token;
  try {
    t = decodeURIComponent(token);
  } catch {
    // keep as written
  }
  return t.replace(/~1/g, '/').replace(/~0/g, '~');
}

function componentName(raw: string): string {
  const name = raw.replace(/[^A-Za-z0-9._-]/g, '_');
  return name.length > 0 ? name : '_';
}

function rootDefs(schema: JsonSchema): [keyword: string, name: string, def: unknown][] {
  if (!isObject(schema)) return [];
  const out: [string, string, unknown][] = [];
  for (const kw of ['definitions', '$defs']) {
    const defs = schema[kw];
    if (isObject(defs)) for (const [name, def] of Object.entries(defs)) out.push([kw, name, def]);
  }
  return out;
}

function rewriteRef(ref: string, ctx: SchemaContext, reg: Registry): string {
  if (ref.startsWith('#/components/')) return ref;
  const hash = ref.indexOf('#');
  const base = hash === -1 ? ref : ref.slice(0, hash);
  const fragment = hash === -1 ? '' : ref.slice(hash + 1);
  const defMatch = /^\/(definitions|\$defs)\/([^/]+)(.*)$/.exec(fragment);

  if (base === '') {
    if (defMatch) {
      const hoisted = ctx.localDefs.get(`${defMatch[1]}/${decodePointerToken(defMatch[2])}`);
      if (hoisted) return `#/components/schemas/${hoisted}${defMatch[3]}`;
    }
    if (ctx.rootRef && (fragment === '' || fragment.startsWith('/'))) return `${ctx.rootRef}${fragment}`;
    throw new Error(`OpenAPI: ${ctx.where}: cannot resolve local $ref '${ref}' outside a named component`);
  }

  const target = reg.ids.get(base);
  if (target !== undefined) {
    if (fragment === '') return `#/components/schemas/${target}`;
    if (defMatch) {
      const hoisted = reg.componentDefs.get(`${target}|${defMatch[1]}/${decodePointerToken(defMatch[2])}`);
      if (hoisted) return `#/components/schemas/${hoisted}${defMatch[3]}`;
    }
    if (fragment.startsWith('/')) return `#/components/schemas/${target}${fragment}`;
  }
  // An absolute URI that names no component is an external reference: leave it alone.
  if (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(base)) return ref;
  throw new Error(`OpenAPI: ${ctx.where}: $ref '${ref}' names no component schema`);
}

/**
 * Turns one Fastify/ajv JSON Schema into an OAS 3.1 Schema Object:
 * - `$id`, `$schema` and draft-04 `id` are dropped (their references are rewritten to
 *   `#/components/schemas/...`); root `definitions`/`$defs` are hoisted into components;
 * - `nullable: true` → `type: [..., 'null']` (and `null` added to `enum`), or an
 *   `anyOf` with `{ type: 'null' }` when the schema has no `type`;
 * - `example` → `examples: [...]`;
 * - draft-07 tuple `items: [...]` → `prefixItems` (+ `additionalItems` → `items`),
 *   `dependencies` → `dependentRequired` / `dependentSchemas`, nested `definitions` → `$defs`,
 *   draft-04 boolean `exclusiveMinimum`/`exclusiveMaximum` → numeric form.
 * Value keywords (`enum`, `const`, `default`, ...) are copied untouched.
 */
function normaliseSchema(schema: unknown, ctx: SchemaContext, reg: Registry, isRoot: boolean): Json {
  if (typeof schema === 'boolean') return schema;
  if (!isObject(schema)) throw new Error(`OpenAPI: ${ctx.where}: a schema must be an object or a boolean`);

  const out: JsonObject = {};
  const norm = (s: unknown) => normaliseSchema(s, ctx, reg, false);
  const normMap = (m: unknown): JsonObject => {
    const res: JsonObject = {};
    if (isObject(m)) for (const [k, s] of Object.entries(m)) res[k] = norm(s);
    return res;
  };
  let example: { value: unknown } | undefined;
  let nullable = false;
  const tuple = Array.isArray(schema.items);

  for (const [key, value] of Object.entries(schema)) {
    if (value === undefined) continue;
    switch (key) {
      case '$id':
      case '$schema':
        continue;
      case 'id':
        if (typeof value === 'string') continue; // draft-04 identifier
        out[key] = jsonClone(value);
        continue;
      case 'nullable':
        nullable = value === true;
        continue;
      case 'example':
        example = { value };
        continue;
      case '$ref':
        out.$ref = rewriteRef(String(value), ctx, reg);
        continue;
      case 'definitions':
      case '$defs':
        if (isRoot) continue; // hoisted into components
        out.$defs = { ...(isObject(out.$defs) ? out.$defs : {}), ...normMap(value) };
        continue;
      case 'items':
        if (Array.isArray(value)) out.prefixItems = value.map(norm);
        else out.items = norm(value);
        continue;
      case 'additionalItems':
        if (tuple) out.items = norm(value); // ignored by draft-07 unless items is a tuple
        continue;
      case 'dependencies':
        if (isObject(value)) {
          for (const [prop, dep] of Object.entries(value)) {
            const kw = Array.isArray(dep) ? 'dependentRequired' : 'dependentSchemas';
            const target = (isObject(out[kw]) ? out[kw] : (out[kw] = {})) as JsonObject;
            target[prop] = Array.isArray(dep) ? jsonClone(dep) : norm(dep);
          }
        }
        continue;
      case 'exclusiveMinimum':
      case 'exclusiveMaximum':
        if (typeof value === 'boolean') {
          const bound = key === 'exclusiveMinimum' ? 'minimum' : 'maximum';
          if (value && typeof schema[bound] === 'number') out[key] = schema[bound] as number;
          continue;
        }
        out[key] = jsonClone(value);
        continue;
      case 'minimum':
      case 'maximum':
        if (schema[key === 'minimum' ? 'exclusiveMinimum' : 'exclusiveMaximum'] === true) continue;
        out[key] = jsonClone(value);
        continue;
    }
    if (SCHEMA_KEYWORDS.has(key) && (isObject(value) || typeof value === 'boolean')) out[key] = norm(value);
    else if (SCHEMA_ARRAY_KEYWORDS.has(key) && Array.isArray(value)) out[key] = value.map(norm);
    else if (SCHEMA_MAP_KEYWORDS.has(key)) {
      out[key] = { ...(isObject(out[key]) ? out[key] : {}), ...normMap(value) };
    } else out[key] = jsonClone(value);
  }

  if (example) {
    const examples = Array.isArray(out.examples) ? out.examples : [];
    const value = jsonClone(example.value);
    const text = JSON.stringify(value);
    if (!examples.some((e) => JSON.stringify(e) === text)) examples.unshift(value);
    out.examples = examples;
  }

  if (!nullable) return out;
  if (typeof out.type === 'string' || Array.isArray(out.type)) {
    const types = Array.isArray(out.type) ? out.type : [out.type];
    if (!types.includes('null')) out.type = [...types, 'null'];
    if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
    return out;
  }
  const outer: JsonObject = {};
  for (const k of ANNOTATIONS) {
    if (k in out) {
      outer[k] = out[k];
      delete out[k];
    }
  }
  return { anyOf: [out, { type: 'null' }], ...outer };
}

/** Normalises a root schema that has no place in components (body, response, parameter). */
function normaliseInline(schema: JsonSchema, where: string, hoistPrefix: string, reg: Registry): Json {
  const ctx: SchemaContext = { where, localDefs: new Map() };
  const defs = rootDefs(schema);
  for (const [kw, name] of defs) {
    const hoisted = componentName(`${hoistPrefix}.${name}`);
    if (reg.schemas.has(hoisted) || [...ctx.localDefs.values()].includes(hoisted)) {
      throw new Error(`OpenAPI: ${where}: hoisted definition '${hoisted}' collides with another schema`);
    }
    ctx.localDefs.set(`${kw}/${name}`, hoisted);
  }
  for (const [kw, name, def] of defs) {
    reg.schemas.set(ctx.localDefs.get(`${kw}/${name}`)!, normaliseSchema(def, ctx, reg, false));
  }
  return normaliseSchema(schema, ctx, reg, true);
}

/** Keywords whose values are data, not schemas: never searched for titled schemas. */
const DATA_KEYWORDS = new Set(['examples', 'default', 'const', 'enum']);

/**
 * Moves every titled object schema inside an operation's schema into `components.schemas`
 * (`<tag>.<Title in PascalCase>`, e.g. `invoicing.Invoice`) and refers to it: a document type's
 * schema then appears once, not in each of its list, get, create and update answers.
 * Two different schemas with the same name get `.2`, `.3`, … in the order met.
 */
function shareTitled(schema: Json, tag: string, reg: Registry): Json {
  if (Array.isArray(schema)) return schema.map((s) => shareTitled(s, tag, reg));
  if (!isObject(schema)) return schema;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(schema)) out[k] = DATA_KEYWORDS.has(k) ? v : shareTitled(v, tag, reg);
  if (typeof out.title !== 'string' || out.type !== 'object') return out;
  const text = JSON.stringify(out);
  let name = reg.titled.get(text);
  if (name === undefined) {
    const base = componentName(`${tag}.${out.title.replace(/(?:^|[^A-Za-z0-9]+)([A-Za-z0-9])/g, (_m, c: string) => c.toUpperCase())}`);
    name = base;
    for (let n = 2; reg.schemas.has(name) || reg.ids.has(name); n++) name = `${base}.${n}`;
    reg.titled.set(text, name);
    reg.schemas.set(name, out);
  }
  return { $ref: `#/components/schemas/${name}` };
}

function buildRegistry(input: DocumentInput): Registry {
  const reg: Registry = { ids: new Map(), componentDefs: new Map(), schemas: new Map(), titled: new Map() };
  const components = input.components ?? {};
  if (ERROR_ENVELOPE in components) {
    throw new Error(`OpenAPI: component name '${ERROR_ENVELOPE}' is reserved for the error envelope`);
  }
  const names = Object.keys(components).sort();
  for (const name of names) {
    if (componentName(name) !== name) throw new Error(`OpenAPI: component name '${name}' must match [A-Za-z0-9._-]+`);
    reg.ids.set(name, name);
  }
  for (const name of names) {
    const schema = components[name];
    const id = isObject(schema) && typeof schema.$id === 'string' ? schema.$id : undefined;
    if (id !== undefined) {
      const other = reg.ids.get(id);
      if (other !== undefined && other !== name) {
        throw new Error(`OpenAPI: components '${other}' and '${name}' share the $id '${id}'`);
      }
      reg.ids.set(id, name);
    }
  }
  const contexts = new Map<string, SchemaContext>();
  const hoistedNames = new Set<string>();
  for (const name of names) {
    const ctx: SchemaContext = {
      where: `component '${name}'`,
      rootRef: `#/components/schemas/${name}`,
      localDefs: new Map(),
    };
    for (const [kw, def] of rootDefs(components[name])) {
      const hoisted = componentName(`${name}.${def}`);
      if (hoistedNames.has(hoisted) || reg.ids.get(hoisted) === hoisted) {
        throw new Error(`OpenAPI: ${ctx.where}: hoisted definition '${hoisted}' collides with another schema`);
      }
      hoistedNames.add(hoisted);
      ctx.localDefs.set(`${kw}/${def}`, hoisted);
      reg.componentDefs.set(`${name}|${kw}/${def}`, hoisted);
    }
    contexts.set(name, ctx);
  }
  for (const name of names) {
    const ctx = contexts.get(name)!;
    for (const [kw, def, schema] of rootDefs(components[name])) {
      reg.schemas.set(ctx.localDefs.get(`${kw}/${def}`)!, normaliseSchema(schema, ctx, reg, false));
    }
    reg.schemas.set(name, normaliseSchema(components[name], ctx, reg, true));
  }
  return reg;
}

// ---------------------------------------------------------------------------------------
// Paths and parameters

interface PathTemplate {
  path: string;
  /** Path parameters in order, with the regular expression Fastify constrains them by. */
  params: { name: string; pattern?: string }[];
}

/** '/api/v1/customers/:id' → '/api/v1/customers/{id}'; `::` is a literal colon. */
export function toOpenApiPath(url: string): PathTemplate {
  if (url.includes('*')) throw new Error(`OpenAPI: wildcard route '${url}' cannot be described`);
  const params: PathTemplate['params'] = [];
  const LITERAL_COLON = '\u0000';
  const path = url
    .replace(/::/g, LITERAL_COLON)
    .replace(/:([A-Za-z_$][A-Za-z0-9_$]*)(\((?:\\.|[^)])*\))?/g, (_m, name: string, regex?: string) => {
      if (params.some((p) => p.name === name)) throw new Error(`OpenAPI: '${url}' repeats the parameter '${name}'`);
      params.push(regex ? { name, pattern: regex.slice(1, -1) } : { name });
      return `{${name}}`;
    })
    .replace(new RegExp(LITERAL_COLON, 'g'), ':');
  return { path, params };
}

function anchored(regex: string): string {
  return `${regex.startsWith('^') ? '' : '^'}${regex}${regex.endsWith('$') ? '' : '$'}`;
}

/** The `properties` and `required` of an object schema (following a `$ref` to a component). */
function objectShape(
  schema: JsonSchema,
  where: string,
  input: DocumentInput,
  reg: Registry,
): { properties: [string, unknown][]; required: Set<string>; ctx: SchemaContext } {
  let s: unknown = schema;
  let ctx: SchemaContext = { where, localDefs: new Map() };
  if (isObject(s) && typeof s.$ref === 'string' && !isObject(s.properties)) {
    const ref = s.$ref;
    const name = ref.startsWith('#/components/schemas/')
      ? ref.slice('#/components/schemas/'.length)
      : reg.ids.get(ref.replace(/#$/, ''));
    const target = name !== undefined ? input.components?.[name] : undefined;
    if (target === undefined) throw new Error(`OpenAPI: ${where}: $ref '${ref}' names no component schema`);
    s = target;
    const localDefs = new Map<string, string>();
    for (const [key, hoisted] of reg.componentDefs) {
      if (key.startsWith(`${name}|`)) localDefs.set(key.slice(name!.length + 1), hoisted);
    }
    ctx = { where, rootRef: `#/components/schemas/${name}`, localDefs };
  }
  if (typeof s === 'boolean') return { properties: [], required: new Set(), ctx };
  if (!isObject(s)) throw new Error(`OpenAPI: ${where}: expected an object schema`);
  if (rootDefs(s as JsonSchema).length > 0 && ctx.rootRef === undefined) {
    throw new Error(`OpenAPI: ${where}: parameter schemas cannot carry definitions; use a component`);
  }
  const properties = isObject(s.properties) ? Object.entries(s.properties) : [];
  const required = new Set(Array.isArray(s.required) ? s.required.map(String) : []);
  return { properties, required, ctx };
}

function parameterFrom(
  name: string,
  location: ParameterObject['in'],
  property: unknown,
  required: boolean,
  ctx: SchemaContext,
  reg: Registry,
): ParameterObject {
  const param: ParameterObject = { name, in: location, schema: null };
  if (required || location === 'path') param.required = true;
  if (isObject(property)) {
    if (typeof property.description === 'string') param.description = property.description;
    if (property.deprecated === true) param.deprecated = true;
  }
  param.schema = normaliseSchema(property, { ...ctx, where: `${ctx.where} '${name}'` }, reg, false);
  return param;
}

function buildParameters(
  route: RouteDoc,
  template: PathTemplate,
  input: DocumentInput,
  reg: Registry,
): ParameterObject[] {
  const where = `route ${route.operationId}`;
  const out: ParameterObject[] = [];

  // Path: every template expression, typed by the params schema when it has one.
  const pathShape = route.schema.params
    ? objectShape(route.schema.params, `${where} params`, input, reg)
    : undefined;
  const byName = new Map(pathShape?.properties ?? []);
  for (const [name] of byName) {
    if (!template.params.some((p) => p.name === name)) {
      throw new Error(`OpenAPI: ${where}: params schema names '${name}', which is not in '${route.url}'`);
    }
  }
  for (const p of template.params) {
    let property: unknown = byName.get(p.name);
    if (property === undefined) property = p.pattern ? { type: 'string', pattern: anchored(p.pattern) } : { type: 'string' };
    else if (p.pattern && isObject(property) && property.pattern === undefined && property.type === 'string') {
      property = { ...property, pattern: anchored(p.pattern) };
    }
    const ctx = pathShape?.ctx ?? { where: `${where} params`, localDefs: new Map() };
    out.push(parameterFrom(p.name, 'path', property, true, ctx, reg));
  }

  if (route.schema.querystring) {
    const shape = objectShape(route.schema.querystring, `${where} querystring`, input, reg);
    for (const [name, property] of shape.properties) {
      out.push(parameterFrom(name, 'query', property, shape.required.has(name), shape.ctx, reg));
    }
  }

  const headers = new Map<string, ParameterObject>();
  const skipHeader = (name: string) =>
    IGNORED_HEADER_PARAMETERS.has(name.toLowerCase()) ||
    (route.permission !== undefined && name.toLowerCase() === COMPANY_HEADER.toLowerCase());
  if (route.schema.headers) {
    const shape = objectShape(route.schema.headers, `${where} headers`, input, reg);
    for (const [name, property] of shape.properties) {
      if (skipHeader(name)) continue;
      headers.set(name.toLowerCase(), parameterFrom(name, 'header', property, shape.required.has(name), shape.ctx, reg));
    }
  }
  for (const h of route.headers ?? []) {
    if (skipHeader(h.name)) continue;
    const schema = normaliseInline(h.schema, `${where} header '${h.name}'`, `${route.operationId}.header.${h.name}`, reg);
    const param: ParameterObject = { name: h.name, in: 'header', description: h.description, schema };
    if (h.required) param.required = true;
    headers.set(h.name.toLowerCase(), param);
  }
  out.push(...headers.values());
  return out;
}

// ---------------------------------------------------------------------------------------
// Errors

/** The error codes a route may answer: its own plus those implied by its shape. */
export function implicitErrorCodes(route: RouteDoc): string[] {
  const codes = new Set<string>();
  const c = IMPLICIT_ERROR_CODES;
  if (route.permission !== undefined) {
    // Only routes behind a key reach the database for the request itself.
    codes.add(c.unauthenticated).add(c.forbidden).add(c.companyRequired).add(c.rateLimited).add(c.unavailable);
    // App routes answer for the caller's company only while the app is enabled there.
    if (route.tag !== 'core') codes.add(c.appNotEnabled);
  }
  const s = route.schema;
  // A body sent with these methods is read before any handler runs, whether the route takes one
  // or not: it can be unreadable, too large or not JSON.
  if (s.body || BODY_METHODS.has(route.method)) codes.add(c.badRequest).add(c.mediaType).add(c.tooLarge);
  if (s.params || s.querystring || s.headers || s.body || route.headers?.some((h) => h.required)) {
    codes.add(c.validation);
  }
  if (toOpenApiPath(route.url).params.length > 0) {
    // No record by that id; or a value sent without percent-encoding ('%', '%ZZ') that cannot be read.
    codes.add(c.notFound).add(c.badRequest);
  }
  codes.add(c.internal);
  return [...codes];
}

function errorEnvelopeSchema(codes: string[]): Json {
  return {
    type: 'object',
    description: 'The body of every error answer.',
    required: ['error'],
    properties: {
      error: {
        type: 'object',
        required: ['code', 'message', 'details'],
        properties: {
          code: { type: 'string', description: 'Stable machine-readable code (see x-error-codes).', enum: codes },
          message: { type: 'string', description: 'Human-readable text in the language asked for by Accept-Language.' },
          details: { type: 'array', description: 'Further items, e.g. one per rule broken.', items: { type: 'object' } },
        },
      },
    },
  };
}

/**
 * The shared error answers: one response per set of codes a status may carry (named by its
 * codes, `Error.COMPANY_REQUIRED.VALIDATION_ERROR`) and one example per code. Operations only
 * reference them, which keeps a document of a thousand routes a few megabytes smaller.
 */
class ErrorResponses {
  readonly responses = new Map<string, ResponseObject>();
  readonly examples = new Map<string, JsonObject>();
  constructor(private readonly table: Map<string, ErrorCodeDoc>) {}

  forRoute(route: RouteDoc): Record<string, ResponseRef> {
    const byStatus = new Map<number, Set<string>>();
    for (const code of [...implicitErrorCodes(route), ...(route.errors ?? [])]) {
      const doc = this.table.get(code);
      if (!doc) throw new Error(`OpenAPI: route ${route.operationId}: error code '${code}' is not in the error table`);
      if (!byStatus.has(doc.status)) byStatus.set(doc.status, new Set());
      byStatus.get(doc.status)!.add(code);
    }
    const out: Record<string, ResponseRef> = {};
    for (const [status, set] of byStatus) out[String(status)] = { $ref: `#/components/responses/${this.response([...set].sort())}` };
    return out;
  }

  private response(codes: string[]): string {
    const name = `Error.${codes.join('.')}`;
    if (this.responses.has(name)) return name;
    const docs = codes.map((code) => this.table.get(code)!);
    const examples: Record<string, Json> = {};
    for (const d of docs) {
      if (!this.examples.has(d.code)) this.examples.set(d.code, { summary: d.description, value: { error: { code: d.code, message: d.description, details: [] } } });
      examples[d.code] = { $ref: `#/components/examples/${d.code}` };
    }
    this.responses.set(name, {
      description: docs.map((d) => `${d.code}: ${d.description}${/[.!?]$/.test(d.description) ? '' : '.'}`).join(' '),
      content: {
        'application/json': {
          schema: { allOf: [{ $ref: ERROR_ENVELOPE_REF }, { properties: { error: { properties: { code: { enum: codes } } } } }] },
          examples: examples as MediaTypeObject['examples'],
        },
      },
    });
    return name;
  }
}

// ---------------------------------------------------------------------------------------
// The document

function responseKey(status: string): string {
  if (/^[1-5]xx$/i.test(status)) return status.toUpperCase();
  if (status === 'default' || /^[1-5]\d\d$/.test(status)) return status;
  throw new Error(`OpenAPI: '${status}' is not an HTTP status`);
}

function compareStatus(a: string, b: string): number {
  const rank = (s: string) => (s === 'default' ? 1000 : Number(s.replace(/X/g, '0')) + (s.includes('X') ? 0.5 : 0));
  return rank(a) - rank(b);
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function buildOperation(
  route: RouteDoc,
  template: PathTemplate,
  input: DocumentInput,
  reg: Registry,
  errors: ErrorResponses,
): OperationObject {
  const op: OperationObject = {
    operationId: route.operationId,
    summary: route.summary,
    tags: [route.tag],
    responses: {},
    security: [],
  };
  if (route.description !== undefined) op.description = route.description;

  const parameters = buildParameters(route, template, input, reg);
  if (parameters.length > 0) op.parameters = parameters;

  if (route.schema.body !== undefined) {
    const schema = normaliseInline(route.schema.body, `route ${route.operationId} body`, `${route.operationId}.body`, reg);
    op.requestBody = { required: true, content: { 'application/json': { schema: shareTitled(schema, route.tag, reg) } } };
  }

  const responses: Record<string, ResponseObject | ResponseRef> = {};
  for (const [rawStatus, schema] of Object.entries(route.schema.response)) {
    const status = responseKey(rawStatus);
    const description =
      isObject(schema) && typeof schema.description === 'string' ? schema.description : (STATUS_TEXT[status] ?? 'Success');
    const response: ResponseObject = { description };
    if (status !== '204' && status !== '304') {
      const where = `route ${route.operationId} response ${status}`;
      response.content = {
        [route.produces ?? 'application/json']: { schema: shareTitled(normaliseInline(schema, where, `${route.operationId}.response${status}`, reg), route.tag, reg) },
      };
    }
    responses[status] = response;
  }
  for (const [status, response] of Object.entries(errors.forRoute(route))) {
    if (status in responses) {
      throw new Error(`OpenAPI: route ${route.operationId}: status ${status} is both a success and an error`);
    }
    responses[status] = response;
  }
  for (const status of Object.keys(responses).sort(compareStatus)) op.responses[status] = responses[status];

  if (route.permission !== undefined) {
    op.security = [{ bearerAuth: [], companyHeader: [] }];
    op['x-permission'] = route.permission;
  }
  return op;
}

function sortedObject<T>(map: Map<string, T>): Record<string, T> {
  return Object.fromEntries([...map].sort(([a], [b]) => compareText(a, b)));
}

/** Builds the OpenAPI 3.1.0 document of the host's routes. Throws on inconsistent input. */
export function buildOpenApiDocument(input: DocumentInput): OpenApiDocument {
  const table = new Map<string, ErrorCodeDoc>();
  for (const e of input.errorCodes) {
    if (table.has(e.code)) throw new Error(`OpenAPI: error code '${e.code}' appears twice in the error table`);
    if (!Number.isInteger(e.status) || e.status < 400 || e.status > 599) {
      throw new Error(`OpenAPI: error code '${e.code}' has status ${e.status}, not a 4xx/5xx`);
    }
    table.set(e.code, { code: e.code, status: e.status, description: e.description });
  }

  // Webhook payloads become components, normalised like every other shared schema.
  const hooks = input.webhooks?.length ? planWebhooks(input.webhooks, new Set([...Object.keys(input.components ?? {}), ERROR_ENVELOPE])) : undefined;
  const reg = buildRegistry(hooks ? { ...input, components: { ...input.components, ...hooks.schemas } } : input);

  const errors = new ErrorResponses(table);
  const operationIds = new Set<string>();
  const paths = new Map<string, Map<string, OperationObject>>();
  for (const route of input.routes) {
    if (operationIds.has(route.operationId)) throw new Error(`OpenAPI: operationId '${route.operationId}' is used twice`);
    operationIds.add(route.operationId);
    const template = toOpenApiPath(route.url);
    const method = route.method.toLowerCase() as Lowercase<HttpMethod>;
    if (!METHOD_ORDER.includes(method)) throw new Error(`OpenAPI: route ${route.operationId}: unknown method ${route.method}`);
    if (!paths.has(template.path)) paths.set(template.path, new Map());
    const item = paths.get(template.path)!;
    if (item.has(method)) throw new Error(`OpenAPI: ${route.method} ${template.path} is declared twice`);
    item.set(method, buildOperation(route, template, input, reg, errors));
  }

  const sortedCodes = [...table.keys()].sort(compareText);
  reg.schemas.set(ERROR_ENVELOPE, errorEnvelopeSchema(sortedCodes));

  const tags: { name: string; description?: string }[] = [];
  for (const t of input.tags ?? []) {
    if (tags.some((x) => x.name === t.name)) continue;
    tags.push(t.description !== undefined ? { name: t.name, description: t.description } : { name: t.name });
  }
  const undeclared = [...new Set([...input.routes.map((r) => r.tag), ...(input.webhooks ?? []).map((w) => w.tag)])].filter((n) => !tags.some((t) => t.name === n));
  for (const name of undeclared.sort(compareText)) tags.push({ name });

  const info: OpenApiDocument['info'] = { title: input.title, version: input.version };
  if (input.description !== undefined) info.description = input.description;

  const doc: OpenApiDocument = {
    openapi: OPENAPI_VERSION,
    jsonSchemaDialect: JSON_SCHEMA_DIALECT,
    info,
    servers: [{ url: input.serverUrl ?? '/' }],
    tags,
    paths: {},
    ...(hooks ? { webhooks: {} } : {}),
    components: {
      schemas: {},
      ...(hooks ? { parameters: webhookParameters() as Record<string, JsonObject> } : {}),
      responses: sortedObject(new Map<string, JsonObject>([...errors.responses, ...Object.entries(hooks ? webhookResponses() : {})] as [string, JsonObject][])),
      examples: sortedObject(errors.examples),
      securitySchemes: SECURITY_SCHEMES,
    },
    'x-error-codes': sortedCodes.map((code) => table.get(code)!),
  };
  if (hooks) {
    for (const w of [...input.webhooks!].sort((x, y) => compareText(x.topic, y.topic))) {
      if (w.topic in doc.webhooks!) throw new Error(`OpenAPI: webhook '${w.topic}' is declared twice`);
      if (operationIds.has(`webhook.${w.topic}`)) throw new Error(`OpenAPI: operationId 'webhook.${w.topic}' is used twice`);
      doc.webhooks![w.topic] = webhookPathItem(w, hooks.payloadOf.get(w.topic)!) as JsonObject;
    }
  }
  for (const path of [...paths.keys()].sort(compareText)) {
    const item: OpenApiDocument['paths'][string] = {};
    const ops = paths.get(path)!;
    for (const method of METHOD_ORDER) if (ops.has(method)) item[method] = ops.get(method);
    doc.paths[path] = item;
  }
  for (const name of [...reg.schemas.keys()].sort(compareText)) doc.components.schemas[name] = reg.schemas.get(name)!;

  // One round trip guarantees plain JSON with no shared references into the input.
  return JSON.parse(JSON.stringify(doc)) as OpenApiDocument;
}
