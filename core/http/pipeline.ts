// The one request pipeline for every `/api/v1` route, the host's and every app's: match the
// route → identity and the company (unless the route is public) → the app is enabled → the
// route's permission → validation of params, query and body, every problem at once → the
// handler, inside one transaction with its `Idempotency-Key` when the route honours one → the
// answer serialised from the route's response schema. Routes can be added and removed while the
// host runs (apps install, upgrade and leave), which Fastify's own route table does not allow:
// Fastify serves one catch-all and parses the body; routing happens here, on the decoded path.
import { createHash } from 'node:crypto';
import FindMyWay from 'find-my-way';
import fastJson from 'fast-json-stringify';
import type { ValidateFunction } from 'ajv';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../storage/db.ts';
import type { IdempotencyRepo } from '../storage/repos/idempotency.ts';
import type { Translator, Lang } from '../kernel/i18n/i18n.ts';
import type { Clock } from '../kernel/clock.ts';
import type { HttpMethod } from '../kernel/route-doc.ts';
import { DiwanError, type ErrorDetail } from '../kernel/errors/diwan-error.ts';
import { compileFor, ajvDetails, unstorableDetails, validationError } from '../kernel/validation.ts';
import { isoNow } from '../kernel/ids.ts';
import type { PermissionRegistry } from '../identity/permissions.ts';
import type { Principal } from '../identity/principal.ts';
import type { Companies, Company } from '../tenancy/companies.ts';
import type { ApiRequest, Reply, Route } from './route.ts';

const METHODS: HttpMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

interface Compiled {
  params?: ValidateFunction;
  query?: ValidateFunction;
  body?: ValidateFunction;
  serializers: Map<number, (data: unknown) => string>;
}

export interface PipelineDeps {
  db: Db;
  tr: Translator;
  clock: Clock;
  companies: Companies;
  permissions: PermissionRegistry;
  idempotency: IdempotencyRepo;
  /** Who calls, from the request's credentials (throws UNAUTHENTICATED, RATE_LIMITED…). */
  authenticate(request: FastifyRequest): Promise<Principal>;
  /** Whether an app is enabled in a company. */
  appEnabled(companyId: string, appId: string): Promise<{ enabled: boolean; state: string }>;
  /** Called first on every request: lets caches notice writes by other processes. */
  beforeEach(): Promise<void> | undefined;
  /** Told which route a request matched (request metrics). */
  onRoute?(request: FastifyRequest, route: Route): void;
  log(err: unknown, message: string): void;
}

/** JSON with object keys sorted, so the same body in another key order is the same request. */
function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

interface Admitted {
  route: Route;
  /** The path as the pipeline matched it. */
  path: string;
  params: Record<string, string>;
  principal: Principal;
  company: Company;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** What `admit` decided for an `/api/v1` request. */
    admitted?: Admitted;
  }
}

/**
 * The path of the request target, as sent (an absolute-form target `http://host/…` gives its
 * path). Matched undecoded: the router decodes it, except `%2F`, which stays inside its
 * parameter instead of reaching another route.
 */
export function requestPath(target: string): string {
  let t = target;
  if (!t.startsWith('/')) {
    try {
      const u = new URL(t);
      t = u.pathname + u.search;
    } catch {
      return '/';
    }
  }
  const q = t.indexOf('?');
  return q === -1 ? t : t.slice(0, q);
}

export class Pipeline {
  private router = FindMyWay({ caseSensitive: true, ignoreTrailingSlash: false });
  private all = new Set<Route>();
  private compiled = new WeakMap<Route, Compiled>();

  constructor(private deps: PipelineDeps) {}

  add(route: Route): void {
    const { method, url } = route.doc;
    if (this.router.hasRoute(method, url)) throw new Error(`route ${method} ${url} is already served`);
    this.router.on(method, url, () => {}, route);
    this.all.add(route);
  }

  remove(route: Route): void {
    if (!this.all.delete(route)) return;
    this.router.off(route.doc.method, route.doc.url);
  }

  routes(): Route[] {
    return [...this.all];
  }

  /** Methods some route serves at this path, for 405 and `Allow`. */
  allowed(path: string): string[] {
    return METHODS.filter((m) => this.router.find(m, path));
  }

  private compile(route: Route): Compiled {
    let c = this.compiled.get(route);
    if (!c) {
      const s = route.doc.schema;
      c = {
        params: s.params ? compileFor('params', s.params as object) : undefined,
        query: s.querystring ? compileFor('query', s.querystring as object) : undefined,
        body: s.body ? compileFor('body', s.body as object) : undefined,
        serializers: new Map(),
      };
      this.compiled.set(route, c);
    }
    return c;
  }

  private serializer(route: Route, c: Compiled, status: number): (data: unknown) => string {
    let s = c.serializers.get(status);
    if (!s) {
      const schema = route.doc.schema.response?.[status];
      if (schema && typeof schema === 'object') {
        const stringify = fastJson(schema as unknown as Parameters<typeof fastJson>[0]);
        s = (data) => {
          try {
            return stringify(data);
          } catch (err) {
            // The handler answered outside its own schema: answer it anyway, and say so in the log.
            this.deps.log(err, `response of ${route.doc.operationId} does not match its schema`);
            return JSON.stringify(data);
          }
        };
      } else {
        s = JSON.stringify;
      }
      c.serializers.set(status, s);
    }
    return s;
  }

  /** 404 for an unknown path, 405 (with `Allow`) for a known path with another method. */
  notFound(path: string, method: string): DiwanError {
    const allowed = this.allowed(path);
    if (allowed.length && !allowed.includes(method)) {
      return new DiwanError('METHOD_NOT_ALLOWED', [{ method, allowed }], { method }, { allow: allowed.join(', ') });
    }
    return new DiwanError('NOT_FOUND', [{ path }]);
  }

  /**
   * Before the body is read (Fastify's `onRequest`): the route, who calls, the app is enabled
   * and the permission. A caller who may not use a route learns nothing of its rules, whatever
   * body it sends; an unknown path asks a caller without a key for one first, unless a public
   * route serves the path.
   */
  async admit(request: FastifyRequest): Promise<void> {
    const pending = this.deps.beforeEach();
    if (pending) await pending;
    const path = requestPath(request.raw.url ?? request.url);
    // HEAD is a GET without a body.
    const method = request.method === 'HEAD' ? 'GET' : request.method;
    const found = this.router.find(method as HttpMethod, path);
    if (!found) {
      const isPublic = this.allowed(path).some((m) => !(this.router.find(m as HttpMethod, path)!.store as Route).doc.permission);
      if (!isPublic) await this.deps.authenticate(request);
      throw this.notFound(path, request.method);
    }
    const route = found.store as Route;
    this.deps.onRoute?.(request, route);
    const admitted: Admitted = { route, path, params: found.params as Record<string, string>, principal: undefined as unknown as Principal, company: undefined as unknown as Company };
    if (route.doc.permission) {
      admitted.principal = await this.deps.authenticate(request);
      const company = await this.deps.companies.get(admitted.principal.companyId);
      if (!company) throw new DiwanError('UNAUTHENTICATED', [{ reason: 'unknown' }], {}, { 'www-authenticate': 'Bearer' });
      admitted.company = company;
      if (route.appId) {
        const app = await this.deps.appEnabled(company.id, route.appId);
        if (!app.enabled) throw new DiwanError('APP_NOT_ENABLED', [{ app: route.appId, state: app.state }], { app: route.appId });
      }
      this.deps.permissions.require(admitted.principal, route.doc.permission);
    }
    request.admitted = admitted;
  }

  /** After `admit`: validation (every problem at once), the handler (with its idempotency key), the answer. */
  async handle(request: FastifyRequest, reply: FastifyReply, lang: Lang): Promise<void> {
    const { route, path, principal, company } = request.admitted!;
    const c = this.compile(route);
    const details: ErrorDetail[] = [];
    const params = { ...request.admitted!.params };
    // Object.assign, not a spread: the parsed query has a null prototype, and V8 spreads such an
    // object into a slow dictionary-mode copy (validation then cost ~2.5 µs instead of 0.5).
    const query: Record<string, unknown> = Object.assign({}, request.query);
    let body = request.body;
    this.check(details, c.params, params, 'params', lang);
    this.check(details, c.query, query, 'query', lang);
    if (c.body) {
      // No body at all is an empty one; a JSON `null` is a body of the wrong type (unless the schema allows it).
      if (body === undefined) body = {};
      this.check(details, c.body, body, 'body', lang);
    }
    details.push(...unstorableDetails(params, 'params', lang, this.deps.tr), ...unstorableDetails(query, 'query', lang, this.deps.tr), ...unstorableDetails(body, 'body', lang, this.deps.tr));
    if (details.length) throw validationError(details);

    const req: ApiRequest = { params, query, body, headers: request.headers, principal, company, lang, id: request.id, raw: request, reply };
    const idemKey = request.headers['idempotency-key'];
    const out =
      // A dry run stores nothing: its key is not spent on it.
      route.idempotent && typeof idemKey === 'string' && idemKey !== '' && query.dryRun !== true ? await this.idempotent(route, req, path, idemKey)
      : route.doc.method === 'GET' ? await route.handler(req)
      // One unit of work for every request that can write: whatever the handler writes (documents,
      // audit rows, events, through any service) commits together before the answer, or none of it.
      : await this.deps.db.transaction(() => route.handler(req), { lazy: true });
    if (out.hijacked) return;

    const status = out.status ?? 200;
    reply.code(status).type('application/json; charset=utf-8');
    if (out.headers) reply.headers(out.headers);
    await reply.send(out.bytes ?? out.json ?? this.serializer(route, c, status)(out.body));
  }

  private check(details: ErrorDetail[], v: ValidateFunction | undefined, value: unknown, part: 'params' | 'query' | 'body', lang: Lang): void {
    if (v && !v(value)) details.push(...ajvDetails(v.errors ?? [], part, lang, this.deps.tr));
  }

  /** Runs the handler once per key: a repeat (same body) answers the stored reply; another body is a CONFLICT. */
  private async idempotent(route: Route, req: ApiRequest, path: string, key: string): Promise<Reply & { json: string }> {
    if (key.length > 255) {
      throw new DiwanError('VALIDATION_ERROR', [{ in: 'headers', pointer: '/idempotency-key', rule: 'maxLength', limit: 255, message: 'Idempotency-Key is longer than 255 characters' }], { summary: 'Idempotency-Key is longer than 255 characters' });
    }
    const hash = createHash('sha256').update(`${req.raw.method} ${path}\n${canonicalJson(req.body ?? null)}`).digest('hex');
    const { companyId, id: principalId } = req.principal;
    return this.deps.db.transaction(async () => {
      const prior = await this.deps.idempotency.get(companyId, principalId, key);
      if (prior) {
        if (prior.requestHash !== hash) {
          throw new DiwanError('CONFLICT', [{ reason: 'idempotency_key_reused', header: 'Idempotency-Key' }], { reason: this.deps.tr.t(req.lang, 'reason.idempotencyReused') });
        }
        return { status: Number(prior.status), json: prior.body, headers: { 'idempotent-replayed': 'true' } };
      }
      const first = await route.handler(req);
      const status = first.status ?? 200;
      const json = first.json ?? this.serializer(route, this.compile(route), status)(first.body);
      await this.deps.idempotency.put(companyId, principalId, key, { requestHash: hash, status, body: json }, isoNow(this.deps.clock.now()));
      return { ...first, status, json };
    });
  }
}
