// People, their memberships in companies, their sessions and one-time links.
import type { Db } from '../db.ts';

export interface UserRow {
  id: string;
  email: string;
  name: string;
  passwordHash: string | null;
  createdAt: string;
  passwordChangedAt: string | null;
  disabledAt: string | null;
}

export interface MembershipRow {
  userId: string;
  companyId: string;
  role: string;
  createdAt: string;
  invitedBy: string | null;
}

export interface SessionRow {
  tokenHash: string;
  userId: string;
  createdAt: string;
  /** Unix ms. */
  expiresAt: number;
  lastSeenAt: string;
  revokedAt: string | null;
  userAgent: string | null;
}

export interface TokenRow {
  tokenHash: string;
  kind: 'signin' | 'invite';
  userId: string | null;
  companyId: string | null;
  email: string | null;
  role: string | null;
  createdBy: string | null;
  createdAt: string;
  expiresAt: number;
  usedAt: string | null;
}

const USER = `id, email, name, password_hash AS "passwordHash", created_at AS "createdAt", password_changed_at AS "passwordChangedAt", disabled_at AS "disabledAt"`;
const MEMBER = `user_id AS "userId", company_id AS "companyId", role, created_at AS "createdAt", invited_by AS "invitedBy"`;
const SESSION = `token_hash AS "tokenHash", user_id AS "userId", created_at AS "createdAt", expires_at AS "expiresAt", last_seen_at AS "lastSeenAt", revoked_at AS "revokedAt", user_agent AS "userAgent"`;
const TOKEN = `token_hash AS "tokenHash", kind, user_id AS "userId", company_id AS "companyId", email, role, created_by AS "createdBy", created_at AS "createdAt", expires_at AS "expiresAt", used_at AS "usedAt"`;

export class PeopleRepo {
  constructor(private db: Db) {}

  async insertUser(u: UserRow): Promise<void> {
    await this.db.run('INSERT INTO users (id, email, name, password_hash, created_at, password_changed_at, disabled_at) VALUES (?, ?, ?, ?, ?, ?, ?)', [
      u.id, u.email, u.name, u.passwordHash, u.createdAt, u.passwordChangedAt, u.disabledAt,
    ]);
  }

  user(id: string): Promise<UserRow | undefined> {
    return this.db.get<UserRow>(`SELECT ${USER} FROM users WHERE id = ?`, [id]);
  }

  userByEmail(email: string): Promise<UserRow | undefined> {
    return this.db.get<UserRow>(`SELECT ${USER} FROM users WHERE email = ?`, [email]);
  }

  async setPassword(id: string, hash: string, at: string): Promise<void> {
    await this.db.run('UPDATE users SET password_hash = ?, password_changed_at = ? WHERE id = ?', [hash, at, id]);
  }

  /** A new membership, or a new role for an existing one (which keeps when and by whom it began). */
  async putMembership(m: MembershipRow): Promise<void> {
    await this.db.run(
      'INSERT INTO memberships (user_id, company_id, role, created_at, invited_by) VALUES (?, ?, ?, ?, ?) ON CONFLICT (user_id, company_id) DO UPDATE SET role = excluded.role',
      [m.userId, m.companyId, m.role, m.createdAt, m.invitedBy],
    );
  }

  membership(userId: string, companyId: string): Promise<MembershipRow | undefined> {
    return this.db.get<MembershipRow>(`SELECT ${MEMBER} FROM memberships WHERE user_id = ? AND company_id = ?`, [userId, companyId]);
  }

  async removeMembership(userId: string, companyId: string): Promise<void> {
    await this.db.run('DELETE FROM memberships WHERE user_id = ? AND company_id = ?', [userId, companyId]);
  }

  /** A person's companies, with the company's name. */
  membershipsOf(userId: string): Promise<(MembershipRow & { companyName: string; currency: string })[]> {
    return this.db.all(
      `SELECT m.user_id AS "userId", m.company_id AS "companyId", m.role, m.created_at AS "createdAt", m.invited_by AS "invitedBy", c.name AS "companyName", c.currency
       FROM memberships m JOIN companies c ON c.id = m.company_id WHERE m.user_id = ? ORDER BY c.name, c.id`,
      [userId],
    );
  }

  /** A company's members, with their name and email. */
  members(companyId: string): Promise<(MembershipRow & { email: string; name: string })[]> {
    return this.db.all(
      `SELECT m.user_id AS "userId", m.company_id AS "companyId", m.role, m.created_at AS "createdAt", m.invited_by AS "invitedBy", u.email, u.name
       FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.company_id = ? ORDER BY u.name, u.email`,
      [companyId],
    );
  }

  /** One member of a company, with their name and email. */
  member(companyId: string, userId: string): Promise<(MembershipRow & { email: string; name: string }) | undefined> {
    return this.db.get(
      `SELECT m.user_id AS "userId", m.company_id AS "companyId", m.role, m.created_at AS "createdAt", m.invited_by AS "invitedBy", u.email, u.name
       FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.company_id = ? AND m.user_id = ?`,
      [companyId, userId],
    );
  }

  async countRole(companyId: string, role: string): Promise<number> {
    return Number((await this.db.get<{ n: number }>('SELECT count(*) AS n FROM memberships WHERE company_id = ? AND role = ?', [companyId, role]))!.n);
  }

  // ---- sessions ----

  async insertSession(s: SessionRow): Promise<void> {
    await this.db.run(
      'INSERT INTO sessions (token_hash, user_id, created_at, expires_at, last_seen_at, revoked_at, user_agent) VALUES (?, ?, ?, ?, ?, ?, ?)',
      [s.tokenHash, s.userId, s.createdAt, s.expiresAt, s.lastSeenAt, s.revokedAt, s.userAgent],
    );
  }

  async session(tokenHash: string): Promise<SessionRow | undefined> {
    const r = await this.db.get<SessionRow>(`SELECT ${SESSION} FROM sessions WHERE token_hash = ?`, [tokenHash]);
    return r && { ...r, expiresAt: Number(r.expiresAt) };
  }

  async touchSession(tokenHash: string, at: string, expiresAt: number): Promise<void> {
    await this.db.run('UPDATE sessions SET last_seen_at = ?, expires_at = ? WHERE token_hash = ?', [at, expiresAt, tokenHash]);
  }

  async revokeSession(tokenHash: string, at: string): Promise<void> {
    await this.db.run('UPDATE sessions SET revoked_at = ? WHERE token_hash = ? AND revoked_at IS NULL', [at, tokenHash]);
  }

  /** Every other session of a person (after a password change). */
  async revokeSessionsOf(userId: string, at: string, except?: string): Promise<void> {
    await this.db.run('UPDATE sessions SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL AND token_hash <> ?', [at, userId, except ?? '']);
  }

  // ---- one-time tokens ----

  async insertToken(t: TokenRow): Promise<void> {
    await this.db.run(
      'INSERT INTO one_time_tokens (token_hash, kind, user_id, company_id, email, role, created_by, created_at, expires_at, used_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      [t.tokenHash, t.kind, t.userId, t.companyId, t.email, t.role, t.createdBy, t.createdAt, t.expiresAt, t.usedAt],
    );
  }

  async token(tokenHash: string): Promise<TokenRow | undefined> {
    const r = await this.db.get<TokenRow>(`SELECT ${TOKEN} FROM one_time_tokens WHERE token_hash = ?`, [tokenHash]);
    return r && { ...r, expiresAt: Number(r.expiresAt) };
  }

  /** Marks a token used; false if another request used it first. */
  async useToken(tokenHash: string, at: string): Promise<boolean> {
    return (await this.db.run('UPDATE one_time_tokens SET used_at = ? WHERE token_hash = ? AND used_at IS NULL', [at, tokenHash])).changes === 1;
  }

  /** A company's open invitations. */
  invitations(companyId: string, nowMs: number): Promise<TokenRow[]> {
    return this.db.all<TokenRow>(`SELECT ${TOKEN} FROM one_time_tokens WHERE company_id = ? AND kind = 'invite' AND used_at IS NULL AND expires_at > ? ORDER BY created_at`, [companyId, nowMs]);
  }
}

/** Fixed-window counters shared by every process. */
export class ThrottlesRepo {
  constructor(private db: Db) {}

  /**
   * Adds one to the key's window (a new window once `windowMs` passed); returns the count. One
   * statement, so that processes counting the same key at once each add their one.
   */
  async hit(key: string, nowMs: number, windowMs: number): Promise<number> {
    return (await this.hitWindow(key, nowMs, windowMs)).count;
  }

  /** `hit`, also answering when the key's window started. */
  async hitWindow(key: string, nowMs: number, windowMs: number): Promise<{ count: number; windowStart: number }> {
    const row = await this.db.get<{ count: number; window_start: number }>(
      `INSERT INTO throttles (key, window_start, count) VALUES (?, ?, 1)
       ON CONFLICT (key) DO UPDATE SET
         count = CASE WHEN ? - throttles.window_start >= ? THEN 1 ELSE throttles.count + 1 END,
         window_start = CASE WHEN ? - throttles.window_start >= ? THEN excluded.window_start ELSE throttles.window_start END
       RETURNING count, window_start`,
      [key, nowMs, nowMs, windowMs, nowMs, windowMs],
    );
    return { count: Number(row!.count), windowStart: Number(row!.window_start) };
  }

  /** Removes the keys under `prefix` whose window started before `before` (ended ones). */
  async prune(prefix: string, before: number): Promise<number> {
    return (await this.db.run("DELETE FROM throttles WHERE key >= ? AND key < ? AND window_start < ?", [prefix, `${prefix}\uffff`, before])).changes;
  }

  /** The current count and when its window ends. */
  async peek(key: string, nowMs: number, windowMs: number): Promise<{ count: number; resetAt: number }> {
    const row = await this.db.get<{ window_start: number; count: number }>('SELECT window_start, count FROM throttles WHERE key = ?', [key]);
    if (!row || nowMs - Number(row.window_start) >= windowMs) return { count: 0, resetAt: nowMs };
    return { count: Number(row.count), resetAt: Number(row.window_start) + windowMs };
  }

  async clear(key: string): Promise<void> {
    await this.db.run('DELETE FROM throttles WHERE key = ?', [key]);
  }
}
