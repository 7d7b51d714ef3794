// `onRequest` for every /api/v1 route: language, bearer key, company header, rate limit and
// the route's permission, before any body is validated (so a caller without the permission
// learns nothing about the route's rules).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { DiwanError } from '../errors/diwan-error.ts';
import { pickLanguage, type Lang } from '../i18n/i18n.ts';
import type { ApiKeys } from '../identity/api-keys.ts';
import type { PermissionRegistry } from '../identity/permissions.ts';
import type { Principal } from '../identity/principal.ts';
import type { Clock } from '../clock.ts';

declare module 'fastify' {
  interface FastifyRequest {
    lang: Lang;
    principal: Principal;
  }
  interface FastifyContextConfig {
    /** `resource:action` the route needs; routes without one and without `public` need only a valid key. */
    permission?: string;
    public?: boolean;
  }
}

export interface AuthDeps {
  keys: ApiKeys;
  permissions: PermissionRegistry;
  clock: Clock;
  rateLimitPerMinute: number;
  /** Called first on every request: lets caches notice writes by other processes. */
  beforeEach(): void;
}

export function bearerOf(request: FastifyRequest): string | undefined {
  const h = request.headers.authorization;
  if (!h) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m ? m[1] : '';
}

export function installAuth(app: FastifyInstance, deps: AuthDeps): void {
  const windows = new Map<string, { start: number; count: number }>();
  app.decorateRequest('lang', 'en');
  app.decorateRequest('principal', null as unknown as Principal);

  app.addHook('onRequest', async (request, reply) => {
    request.lang = pickLanguage(request.headers['accept-language']);
    reply.header('content-language', request.lang);
    deps.beforeEach();
    // Decided from the route that matched, never from the raw URL: the router decodes
    // percent-escapes and accepts absolute-form request lines, so `/%61pi/v1/…` or
    // `http://host/api/v1/…` reach the same handlers as `/api/v1/…`.
    const route = request.routeOptions.url;
    if (route === undefined || !route.startsWith('/api/v1/') || request.routeOptions.config?.public) return;

    const auth = deps.keys.authenticate(bearerOf(request));
    if (typeof auth === 'string') {
      throw new DiwanError('UNAUTHENTICATED', [{ reason: auth === 'malformed' ? 'unknown' : auth }], {}, { 'www-authenticate': 'Bearer' });
    }
    const company = request.headers['x-company-id'];
    if (typeof company !== 'string' || company.trim() === '') throw new DiwanError('COMPANY_REQUIRED', [{ header: 'X-Company-Id' }]);
    if (company !== auth.companyId) throw new DiwanError('FORBIDDEN', [{ reason: 'company', header: 'X-Company-Id' }]);

    if (deps.rateLimitPerMinute > 0) {
      const now = deps.clock.now();
      let w = windows.get(auth.keyId);
      if (!w || now - w.start >= 60_000) windows.set(auth.keyId, (w = { start: now, count: 0 }));
      if (++w.count > deps.rateLimitPerMinute) {
        const seconds = Math.max(1, Math.ceil((w.start + 60_000 - now) / 1000));
        throw new DiwanError('RATE_LIMITED', [{ limit: deps.rateLimitPerMinute, windowSeconds: 60 }], { seconds }, { 'retry-after': String(seconds) });
      }
    }
    request.principal = auth;
    const permission = request.routeOptions.config?.permission;
    if (permission) deps.permissions.require(auth, permission);
  });
}
