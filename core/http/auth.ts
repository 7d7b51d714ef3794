// Who calls: a bearer API key, or a person's session cookie (with its CSRF token on writes),
// bound to the company the request names in `X-Company-Id`, with a per-principal rate limit and
// a throttle on failed authentications per address. Used by the pipeline for every route that
// needs a permission, whatever the path looked like on the wire.
import type { FastifyRequest } from 'fastify';
import { DiwanError } from '../kernel/errors/diwan-error.ts';
import type { ApiKeys } from '../identity/api-keys.ts';
import type { Sessions } from '../identity/sessions.ts';
import type { Principal } from '../identity/principal.ts';
import type { PermissionRegistry } from '../identity/permissions.ts';
import type { AuthThrottle } from './auth-throttle.ts';
import type { RateLimiter } from './rate-limit.ts';
import { SESSION_COOKIE, cookieOf } from './cookies.ts';

export interface AuthDeps {
  keys: ApiKeys;
  sessions?: Sessions;
  /** Requests per principal and window (core/http/rate-limit.ts); absent: no limit. */
  rateLimit?: RateLimiter;
  /** Failed authentications per client address (core/http/auth-throttle.ts). */
  throttle?: AuthThrottle;
}

export function bearerOf(request: FastifyRequest): string | undefined {
  const h = request.headers.authorization;
  if (!h) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m ? m[1] : '';
}

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

function throttled(t: AuthThrottle, seconds: number): DiwanError {
  return new DiwanError('RATE_LIMITED', [{ reason: 'authentication_failures', limit: t.limit, windowSeconds: t.windowSeconds }], { seconds }, { 'retry-after': String(seconds) });
}

export function makeAuthenticate(deps: AuthDeps): (request: FastifyRequest) => Promise<Principal> {
  const companyHeader = (request: FastifyRequest) => {
    const company = request.headers['x-company-id'];
    if (typeof company !== 'string' || company.trim() === '') throw new DiwanError('COMPANY_REQUIRED', [{ header: 'X-Company-Id' }]);
    return company;
  };
  const fail = async (request: FastifyRequest, reason: string, counts = true): Promise<never> => {
    if (counts) await deps.throttle?.fail(request.ip);
    throw new DiwanError('UNAUTHENTICATED', [{ reason }], {}, { 'www-authenticate': 'Bearer' });
  };

  return async (request) => {
    // An address with too many failures is refused before its credentials are looked at.
    const wait = deps.throttle?.check(request.ip) ?? 0;
    if (wait > 0) throw throttled(deps.throttle!, wait);

    let principal: Principal;
    const bearer = bearerOf(request);
    const cookie = bearer === undefined && deps.sessions ? cookieOf(request.headers.cookie, SESSION_COOKIE) : undefined;
    if (cookie !== undefined) {
      const company = companyHeader(request);
      const s = await deps.sessions!.authenticate(cookie, company);
      if (typeof s === 'string') {
        if (s === 'not_member') throw new DiwanError('FORBIDDEN', [{ reason: 'company', header: 'X-Company-Id' }]);
        return fail(request, s);
      }
      // A cookie rides along on any request the browser makes: writes must also carry the token
      // only the console's own pages can read.
      if (!SAFE.has(request.method) && !deps.sessions!.csrfMatches(cookie, request.headers['x-csrf-token'])) {
        throw new DiwanError('FORBIDDEN', [{ reason: 'csrf', header: 'X-CSRF-Token' }]);
      }
      principal = s.principal;
    } else {
      const auth = await deps.keys.authenticate(bearer);
      if (typeof auth === 'string') return fail(request, auth === 'malformed' ? 'unknown' : auth, auth !== 'missing');
      if (companyHeader(request) !== auth.companyId) throw new DiwanError('FORBIDDEN', [{ reason: 'company', header: 'X-Company-Id' }]);
      principal = auth;
    }

    if (deps.rateLimit) {
      const seconds = await deps.rateLimit.hit(`${principal.kind}:${principal.id}`);
      if (seconds > 0) {
        throw new DiwanError('RATE_LIMITED', [{ limit: deps.rateLimit.limit, windowSeconds: deps.rateLimit.windowSeconds }], { seconds }, { 'retry-after': String(seconds) });
      }
    }
    return principal;
  };
}

/**
 * Whether a principal authenticated earlier still holds a permission with the same credentials
 * (a long-lived stream asks now and then): the key is not revoked or expired, the session not
 * ended, the member's role still reaches it. No rate limit or failure throttle is counted.
 */
export function makeStillValid(deps: { keys: ApiKeys; sessions?: Sessions; permissions: PermissionRegistry }) {
  return async (request: FastifyRequest, principal: Principal, permission: string): Promise<boolean> => {
    let now: Principal | undefined;
    if (principal.kind === 'key') {
      const p = await deps.keys.authenticate(bearerOf(request));
      if (typeof p !== 'string' && p.id === principal.id) now = p;
    } else if (deps.sessions) {
      const s = await deps.sessions.authenticate(cookieOf(request.headers.cookie, SESSION_COOKIE) ?? '', principal.companyId);
      if (typeof s !== 'string' && s.principal.id === principal.id) now = s.principal;
    }
    return now !== undefined && now.companyId === principal.companyId && deps.permissions.allows(now, permission);
  };
}
