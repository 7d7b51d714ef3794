// The catch-all `/api/v1/*` handler: finds the app route, checks the app is enabled for the
// caller's company and the permission, validates, honours `Idempotency-Key` (inside the
// write's transaction), and replies in the envelope.
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DiwanError } from '../errors/diwan-error.ts';
import { check } from './validation.ts';
import type { AppRuntime } from '../apps/runtime.ts';
import type { RouteOutput } from '../apps/app-router.ts';
import type { Invocation } from '../apps/routes-for-app.ts';
import { actorOf } from '../identity/principal.ts';
import { isoNow } from '../ids.ts';

/** JSON with object keys sorted, so the same body in another key order is the same request. */
function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

export interface DispatchDeps {
  runtime: AppRuntime;
  /** Methods the host's own (Fastify) routes serve at a path, for 405. */
  coreAllowed(path: string): string[];
}

export function notFoundOrMethod(path: string, method: string, deps: DispatchDeps): DiwanError {
  const allowed = [...new Set([...deps.runtime.router.allowed(path), ...deps.coreAllowed(path)])];
  if (allowed.length && !allowed.includes(method)) {
    return new DiwanError('METHOD_NOT_ALLOWED', [{ method, allowed }], { method }, { allow: allowed.join(', ') });
  }
  return new DiwanError('NOT_FOUND', [{ path }]);
}

export function makeAppDispatch(deps: DispatchDeps) {
  const { runtime } = deps;
  const { host } = runtime;
  const idemGet = host.storage.sqlite.prepare('SELECT request_hash, status, body FROM idempotency_keys WHERE company_id = ? AND key_id = ? AND idem_key = ?');
  const idemPut = host.storage.sqlite.prepare('INSERT INTO idempotency_keys (company_id, key_id, idem_key, request_hash, status, body, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)');

  return async function dispatch(request: FastifyRequest, reply: FastifyReply) {
    // The matched wildcard, not request.url: that may be percent-encoded or in absolute form.
    const path = `/api/v1/${(request.params as { '*': string })['*']}`;
    // HEAD is a GET without a body, as for the host's own routes.
    const found = runtime.router.find(request.method === 'HEAD' ? 'GET' : request.method, path);
    if (!found) throw notFoundOrMethod(path, request.method, deps);
    const { route, params } = found;
    const principal = request.principal;
    if (!runtime.isEnabled(principal.companyId, route.appId)) {
      throw new DiwanError('APP_NOT_ENABLED', [{ app: route.appId, state: runtime.install(principal.companyId, route.appId)?.state ?? 'not_installed' }], { app: route.appId });
    }
    host.permissions.require(principal, route.doc.permission!);

    const lang = request.lang;
    const v = route.validators;
    const query = v.query ? check<Record<string, unknown>>(v.query, { ...(request.query as object) }, 'query', lang, host.tr) : {};
    const checkedParams = v.params ? check<Record<string, string>>(v.params, params, 'params', lang, host.tr) : params;
    const body = v.body ? check(v.body, request.body ?? {}, 'body', lang, host.tr) : undefined;

    const company = host.companies.get(principal.companyId)!;
    const caller = { company, actor: actorOf(principal), lang, requestId: request.id };
    const inv: Invocation = {
      params: checkedParams,
      query,
      body,
      headers: request.headers,
      caller,
      context: () => runtime.contextFor(route.appId, caller, principal),
    };

    let out: RouteOutput;
    const idemKey = request.headers['idempotency-key'];
    if (route.idempotent && typeof idemKey === 'string' && idemKey !== '') {
      if (idemKey.length > 255) throw new DiwanError('VALIDATION_ERROR', [{ in: 'headers', pointer: '/idempotency-key', rule: 'maxLength', limit: 255 }], { summary: 'Idempotency-Key is longer than 255 characters' });
      const hash = createHash('sha256').update(`${request.method} ${path}\n${canonicalJson(body ?? null)}`).digest('hex');
      out = host.storage.sqlite.transaction((): RouteOutput => {
        const prior = idemGet.get(company.id, principal.keyId, idemKey) as { request_hash: string; status: number; body: string } | undefined;
        if (prior) {
          if (prior.request_hash !== hash) {
            throw new DiwanError('CONFLICT', [{ reason: 'idempotency_key_reused', header: 'Idempotency-Key' }], { reason: host.tr.t(lang, 'reason.idempotencyReused') });
          }
          reply.header('idempotent-replayed', 'true');
          return { status: prior.status, json: prior.body };
        }
        const first = route.handle(inv) as RouteOutput;
        idemPut.run(company.id, principal.keyId, idemKey, hash, first.status, first.json ?? JSON.stringify(first.body), isoNow(host.clock.now()));
        return first;
      }).immediate();
    } else {
      out = await route.handle(inv);
    }
    if (out.status === 404 && out.body == null && out.json === undefined) throw new DiwanError('NOT_FOUND', [{ path }]);
    reply.code(out.status).type('application/json; charset=utf-8');
    return reply.send(out.json ?? JSON.stringify(out.body));
  };
}
