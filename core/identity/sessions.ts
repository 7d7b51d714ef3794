// Server-side sessions for people: signing in gives a random token (the cookie's value); only
// its hash is stored, so a copied database signs nobody in. A session idles out, is revoked at
// sign-out and by a password change, and acts in one of the person's companies at a time, with
// the role they hold there. Failed sign-ins are throttled per account and per address in the
// database, so every process counts the same failures.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { PeopleRepo, SessionRow, ThrottlesRepo } from '../storage/repos/people.ts';
import type { ChangeFeed } from '../storage/changes.ts';
import type { Clock } from '../kernel/clock.ts';
import { isoNow, randomToken } from '../kernel/ids.ts';
import { DiwanError } from '../kernel/errors/diwan-error.ts';
import type { Role } from './roles.ts';
import type { Principal } from './principal.ts';
import { verifyPassword } from './passwords.ts';
import { People, tokenHash, type Person } from './people.ts';

export interface SessionOptions {
  /** A session unused this long ends. */
  idleMs: number;
  /** Failed sign-ins allowed per account, and per address, in `windowMs`. */
  perAccount: number;
  perAddress: number;
  windowMs: number;
}

export const DEFAULT_SESSION_OPTIONS: SessionOptions = { idleMs: 12 * 3600_000, perAccount: 5, perAddress: 20, windowMs: 15 * 60_000 };

/** Last-seen times are written at most this often per session. */
const TOUCH_EVERY_MS = 5 * 60_000;

export type SessionFailure = 'unknown' | 'expired' | 'revoked' | 'not_member';

export interface SignedIn {
  /** The cookie's value, given once. */
  token: string;
  /** The value writes carry in `X-CSRF-Token`. */
  csrfToken: string;
  person: Person;
  expiresAt: string;
}

/** The CSRF token of a session: derived from its (secret, HttpOnly) cookie, so nothing more is stored. */
export const csrfTokenOf = (token: string) => createHash('sha256').update(`csrf:${token}`).digest('base64url');

export class Sessions {
  private roles = new Map<string, Role | null>();

  constructor(
    private repo: PeopleRepo,
    private throttles: ThrottlesRepo,
    private people: People,
    changes: ChangeFeed,
    private clock: Clock,
    private opts: SessionOptions = DEFAULT_SESSION_OPTIONS,
  ) {
    changes.on('people', () => this.roles.clear());
  }

  get idleSeconds(): number {
    return Math.floor(this.opts.idleMs / 1000);
  }

  private async open(userId: string, userAgent?: string): Promise<Omit<SignedIn, 'person'>> {
    const token = randomToken(48);
    const now = this.clock.now();
    const row: SessionRow = { tokenHash: tokenHash(token), userId, createdAt: isoNow(now), expiresAt: now + this.opts.idleMs, lastSeenAt: isoNow(now), revokedAt: null, userAgent: userAgent?.slice(0, 300) ?? null };
    await this.repo.insertSession(row);
    return { token, csrfToken: csrfTokenOf(token), expiresAt: isoNow(row.expiresAt) };
  }

  /** Refuses while the account or the address has failed too often; answers the throttle keys. */
  private async throttle(email: string, ip: string): Promise<[string, string]> {
    const keys: [string, string] = [`signin:account:${email}`, `signin:address:${ip}`];
    const now = this.clock.now();
    const [account, address] = await Promise.all(keys.map((k) => this.throttles.peek(k, now, this.opts.windowMs)));
    const over = account.count >= this.opts.perAccount ? account : address.count >= this.opts.perAddress ? address : undefined;
    if (over) {
      const seconds = Math.max(1, Math.ceil((over.resetAt - now) / 1000));
      throw new DiwanError('RATE_LIMITED', [{ reason: 'sign_in_failures', windowSeconds: this.opts.windowMs / 1000 }], { seconds }, { 'retry-after': String(seconds) });
    }
    return keys;
  }

  /** Email and password; the same answer for an unknown account and a wrong password. */
  async signIn(input: { email: string; password: string }, ip: string, userAgent?: string): Promise<SignedIn> {
    const email = String(input.email ?? '').trim().toLowerCase();
    const keys = await this.throttle(email, ip);
    const user = email ? await this.repo.userByEmail(email) : undefined;
    const ok = await verifyPassword(String(input.password ?? ''), user?.passwordHash);
    if (!ok || !user || user.disabledAt) {
      const now = this.clock.now();
      for (const k of keys) await this.throttles.hit(k, now, this.opts.windowMs);
      throw new DiwanError('UNAUTHENTICATED', [{ reason: 'credentials', message: 'the email or the password is not right' }]);
    }
    await this.throttles.clear(keys[0]);
    return { ...(await this.open(user.id, userAgent)), person: (await this.people.get(user.id))! };
  }

  /** A one-time sign-in link (from `diwan users create`); a person without a password sets one with it. */
  async signInWithLink(input: { token: string; password?: string }, userAgent?: string): Promise<SignedIn> {
    const t = await this.people.openToken(input.token, 'signin');
    const user = t.userId ? await this.repo.user(t.userId) : undefined;
    if (!user || user.disabledAt) throw new DiwanError('UNAUTHENTICATED', [{ reason: 'link' }]);
    if (!user.passwordHash || input.password !== undefined) People.check(input, { password: true });
    if (!(await this.repo.useToken(t.tokenHash, isoNow(this.clock.now())))) throw new DiwanError('UNAUTHENTICATED', [{ reason: 'link', message: 'the link is unknown, used or expired' }]);
    if (input.password !== undefined) await this.people.setPassword(user.id, input.password);
    return { ...(await this.open(user.id, userAgent)), person: (await this.people.get(user.id))! };
  }

  /** The session of a cookie value, acting in `companyId` with the person's role there. */
  async authenticate(token: string, companyId: string): Promise<{ principal: Principal; session: SessionRow } | SessionFailure> {
    if (!token || token.length > 200) return 'unknown';
    const session = await this.repo.session(tokenHash(token));
    if (!session) return 'unknown';
    const now = this.clock.now();
    if (session.revokedAt) return 'revoked';
    if (session.expiresAt <= now) return 'expired';
    const key = `${session.userId}:${companyId}`;
    let role = this.roles.get(key);
    if (role === undefined) {
      role = (await this.people.membership(session.userId, companyId)) ?? null;
      this.roles.set(key, role);
    }
    if (!role) return 'not_member';
    if (now - Date.parse(session.lastSeenAt) >= TOUCH_EVERY_MS) {
      // Sliding expiry, written at most every few minutes; not awaited (no request waits for it).
      void this.repo.touchSession(session.tokenHash, isoNow(now), now + this.opts.idleMs).catch(() => {});
    }
    return { principal: { kind: 'user', id: session.userId, companyId, role, scopes: ['*'] }, session };
  }

  /** Whether a write carries the CSRF token of its session cookie (compared in constant time). */
  csrfMatches(cookieToken: string, header: unknown): boolean {
    if (typeof header !== 'string' || header.length > 100) return false;
    const a = Buffer.from(header);
    const b = Buffer.from(csrfTokenOf(cookieToken));
    return a.length === b.length && timingSafeEqual(a, b);
  }

  /** The person, their companies and the CSRF token of a cookie value, or UNAUTHENTICATED. */
  async current(token: string | undefined): Promise<{ person: Person; companies: { id: string; name: string; currency: string; role: Role }[]; csrfToken: string; expiresAt: string }> {
    const session = token ? await this.repo.session(tokenHash(token)) : undefined;
    if (!session || session.revokedAt || session.expiresAt <= this.clock.now()) throw new DiwanError('UNAUTHENTICATED', [{ reason: session ? 'expired' : 'missing' }]);
    const person = await this.people.get(session.userId);
    if (!person) throw new DiwanError('UNAUTHENTICATED', [{ reason: 'unknown' }]);
    return { person, companies: await this.people.companiesOf(session.userId), csrfToken: csrfTokenOf(token!), expiresAt: isoNow(session.expiresAt) };
  }

  async signOut(token: string | undefined): Promise<void> {
    if (token) await this.repo.revokeSession(tokenHash(token), isoNow(this.clock.now()));
  }

  /** A password change ends every other session of the person. */
  async changePassword(token: string, userId: string, current: string | undefined, next: string): Promise<void> {
    await this.people.changePassword(userId, current, next);
    await this.repo.revokeSessionsOf(userId, isoNow(this.clock.now()), tokenHash(token));
  }
}
