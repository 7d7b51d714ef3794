// People and their memberships: a person has one account (email and password) and a role in
// each company they belong to. The first Owner comes from the operator (`diwan users create`,
// with a one-time sign-in link); others are invited by an Owner or Admin (a link shown once).
// Nobody grants a role above their own, and a company keeps at least one Owner.
import { createHash } from 'node:crypto';
import type { PeopleRepo, TokenRow, UserRow } from '../storage/repos/people.ts';
import type { ChangeFeed } from '../storage/changes.ts';
import type { UnitOfWork, WriteScope } from '../audit/unit-of-work.ts';
import type { Clock } from '../kernel/clock.ts';
import { newId, isoNow, randomToken } from '../kernel/ids.ts';
import { DiwanError, type ErrorDetail } from '../kernel/errors/diwan-error.ts';
import { ROLES, isRole, roleAtLeast, type Role } from './roles.ts';
import { PASSWORD_MAX, PASSWORD_MIN, hashPassword, verifyPassword } from './passwords.ts';
import type { Grantor } from './api-keys.ts';

export interface Person {
  id: string;
  email: string;
  name: string;
  createdAt: string;
  /** Whether a password is set (a person signed in by a one-time link has none yet). */
  hasPassword: boolean;
}

export interface Member {
  userId: string;
  email: string;
  name: string;
  role: Role;
  since: string;
}

export interface Invitation {
  id: string;
  email: string;
  role: Role;
  createdBy: string | null;
  createdAt: string;
  expiresAt: string;
}

export const personSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'email', 'name', 'createdAt', 'hasPassword'],
  properties: { id: { type: 'string' }, email: { type: 'string' }, name: { type: 'string' }, createdAt: { type: 'string' }, hasPassword: { type: 'boolean' } },
} as const;

export const memberSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['userId', 'email', 'name', 'role', 'since'],
  properties: { userId: { type: 'string' }, email: { type: 'string' }, name: { type: 'string' }, role: { type: 'string', enum: [...ROLES] }, since: { type: 'string' } },
} as const;

export const invitationSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'email', 'role', 'createdBy', 'createdAt', 'expiresAt'],
  properties: {
    id: { type: 'string', description: 'The first characters of the invitation (never the link itself)' },
    email: { type: 'string' }, role: { type: 'string', enum: [...ROLES] }, createdBy: { type: ['string', 'null'] }, createdAt: { type: 'string' }, expiresAt: { type: 'string' },
  },
} as const;

/** How long one-time links stay valid. */
const SIGNIN_LINK_MS = 24 * 3600_000;
const INVITATION_MS = 7 * 24 * 3600_000;

export const tokenHash = (token: string) => createHash('sha256').update(token).digest('hex');

const toMember = (m: { userId: string; email: string; name: string; role: string; createdAt: string }): Member => ({ userId: m.userId, email: m.email, name: m.name, role: m.role as Role, since: m.createdAt });

const toPerson = (u: UserRow): Person => ({ id: u.id, email: u.email, name: u.name, createdAt: u.createdAt, hasPassword: !!u.passwordHash });

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}\.[^\s@]{2,}$/;

export class People {
  constructor(
    private repo: PeopleRepo,
    private changes: ChangeFeed,
    private uow: UnitOfWork,
    private clock: Clock,
  ) {}

  /** Every problem of an email, a name and a password at once. */
  static check(input: { email?: unknown; name?: unknown; password?: unknown }, need: { email?: boolean; name?: boolean; password?: boolean }): void {
    const details: ErrorDetail[] = [];
    if (need.email && (typeof input.email !== 'string' || !EMAIL.test(input.email.trim()))) details.push({ in: 'body', pointer: '/email', rule: 'format', message: 'email must be an email address' });
    if (need.name && (typeof input.name !== 'string' || !input.name.trim() || input.name.length > 200)) details.push({ in: 'body', pointer: '/name', rule: 'length', message: 'name must have 1 to 200 characters' });
    if (need.password) {
      const p = input.password;
      if (typeof p !== 'string' || p.length < PASSWORD_MIN || p.length > PASSWORD_MAX) {
        details.push({ in: 'body', pointer: '/password', rule: 'length', limit: PASSWORD_MIN, message: `password must have ${PASSWORD_MIN} to ${PASSWORD_MAX} characters` });
      }
    }
    if (details.length) throw new DiwanError('VALIDATION_ERROR', details, { summary: details.map((d) => d.message).join('; ') });
  }

  private static grant(grantor: Grantor, role: string): void {
    if (!isRole(role)) throw new DiwanError('VALIDATION_ERROR', [{ in: 'body', pointer: '/role', rule: 'enum', allowed: [...ROLES], message: `role must be one of ${ROLES.join(', ')}` }], { summary: 'role is not a role' });
    if (grantor && !roleAtLeast(grantor.role, role)) throw new DiwanError('FORBIDDEN', [{ reason: 'role_above_own', requested: role, keyRole: grantor.role }]);
  }

  async get(id: string): Promise<Person | undefined> {
    const u = await this.repo.user(id);
    return u && toPerson(u);
  }

  async byEmail(email: string): Promise<UserRow | undefined> {
    return this.repo.userByEmail(email.trim().toLowerCase());
  }

  /**
   * The operator's `diwan users create`: a person (or the existing one with that email) made a
   * member of the company with the role, and a one-time sign-in link (its token, shown once).
   */
  async createWithLink(scope: WriteScope, input: { email: string; name: string; role: string }): Promise<{ person: Person; token: string; expiresAt: string; created: boolean }> {
    People.check(input, { email: true, name: true });
    People.grant(undefined, input.role);
    const email = input.email.trim().toLowerCase();
    const now = this.clock.now();
    const token = randomToken(40);
    return this.uow.run(scope, async (w) => {
      let user = await this.repo.userByEmail(email);
      const created = !user;
      if (!user) {
        user = { id: newId('usr'), email, name: input.name.trim(), passwordHash: null, createdAt: isoNow(now), passwordChangedAt: null, disabledAt: null };
        await this.repo.insertUser(user);
      }
      // An existing member keeps their membership (since when) and gets the role asked for, but
      // the company's last Owner is never demoted this way either.
      const before = await this.repo.membership(user.id, scope.companyId);
      if (before?.role === 'Owner' && input.role !== 'Owner' && (await this.repo.countRole(scope.companyId, 'Owner')) <= 1) {
        throw new DiwanError('CONFLICT', [{ reason: 'last_owner' }], { reason: 'a company keeps at least one Owner' });
      }
      if (before?.role !== input.role) {
        await this.repo.putMembership({ userId: user.id, companyId: scope.companyId, role: input.role, createdAt: before?.createdAt ?? isoNow(now), invitedBy: before?.invitedBy ?? null });
      }
      await this.repo.insertToken({ tokenHash: tokenHash(token), kind: 'signin', userId: user.id, companyId: scope.companyId, email, role: null, createdBy: scope.actor.id, createdAt: isoNow(now), expiresAt: now + SIGNIN_LINK_MS, usedAt: null });
      const after = { userId: user.id, email, role: input.role };
      if (!before) await w.audit({ action: 'create', resource: 'members', resourceId: user.id, after });
      else await w.audit({ action: before.role === input.role ? 'signin_link' : 'update', resource: 'members', resourceId: user.id, before: { userId: user.id, email, role: before.role }, after });
      await this.changes.bump('people');
      return { person: toPerson(user), token, expiresAt: isoNow(now + SIGNIN_LINK_MS), created };
    });
  }

  /** An invitation into the scope's company with a role up to the inviter's; the link's token is answered once. */
  async invite(scope: WriteScope, input: { email: string; role: string }, grantor: Grantor): Promise<Invitation & { token: string }> {
    People.check(input, { email: true });
    People.grant(grantor, input.role);
    const email = input.email.trim().toLowerCase();
    const existing = await this.repo.userByEmail(email);
    if (existing && (await this.repo.membership(existing.id, scope.companyId))) {
      throw new DiwanError('CONFLICT', [{ reason: 'already_member', email }], { reason: `${email} is already a member` });
    }
    const now = this.clock.now();
    const token = randomToken(40);
    const row: TokenRow = {
      tokenHash: tokenHash(token), kind: 'invite', userId: null, companyId: scope.companyId, email, role: input.role,
      createdBy: scope.actor.id, createdAt: isoNow(now), expiresAt: now + INVITATION_MS, usedAt: null,
    };
    const invitation = this.toInvitation(row);
    await this.uow.run(scope, async (w) => {
      await this.repo.insertToken(row);
      await w.audit({ action: 'invite', resource: 'members', resourceId: invitation.id, after: invitation });
    });
    return { ...invitation, token };
  }

  private toInvitation(t: TokenRow): Invitation {
    return { id: t.tokenHash.slice(0, 12), email: t.email!, role: t.role as Role, createdBy: t.createdBy, createdAt: t.createdAt, expiresAt: isoNow(t.expiresAt) };
  }

  async invitations(companyId: string): Promise<Invitation[]> {
    return (await this.repo.invitations(companyId, this.clock.now())).map((t) => this.toInvitation(t));
  }

  /** A valid, unused token of the kind, or UNAUTHENTICATED (never saying which part was wrong). */
  async openToken(token: string, kind: TokenRow['kind']): Promise<TokenRow> {
    const row = typeof token === 'string' && token.length <= 200 ? await this.repo.token(tokenHash(token)) : undefined;
    if (!row || row.kind !== kind || row.usedAt || row.expiresAt <= this.clock.now()) {
      throw new DiwanError('UNAUTHENTICATED', [{ reason: 'link', message: 'the link is unknown, used or expired' }]);
    }
    return row;
  }

  /**
   * Accepting an invitation: a new person sets their name and password; a person who already
   * has an account proves it with their password. Either way they become a member with the
   * invited role. Answers the person.
   */
  async acceptInvitation(token: string, input: { name?: string; password: string }): Promise<Person> {
    const t = await this.openToken(token, 'invite');
    const existing = await this.repo.userByEmail(t.email!);
    if (existing) {
      if (!(await verifyPassword(input.password ?? '', existing.passwordHash))) {
        throw new DiwanError('UNAUTHENTICATED', [{ reason: 'password', message: 'the password of the existing account is needed to join' }]);
      }
    } else {
      People.check(input, { name: true, password: true });
    }
    const now = this.clock.now();
    const hash = existing ? null : await hashPassword(input.password);
    const userId = existing?.id ?? newId('usr');
    const scope = { companyId: t.companyId!, actor: { type: 'user' as const, id: userId }, appId: 'core' };
    return this.uow.run(scope, async (w) => {
      if (!(await this.repo.useToken(t.tokenHash, isoNow(now)))) throw new DiwanError('UNAUTHENTICATED', [{ reason: 'link', message: 'the link is unknown, used or expired' }]);
      let user = existing;
      if (!user) {
        user = { id: userId, email: t.email!, name: input.name!.trim(), passwordHash: hash, createdAt: isoNow(now), passwordChangedAt: isoNow(now), disabledAt: null };
        await this.repo.insertUser(user);
      }
      await this.repo.putMembership({ userId: user.id, companyId: t.companyId!, role: t.role!, createdAt: isoNow(now), invitedBy: t.createdBy });
      await w.audit({ action: 'join', resource: 'members', resourceId: user.id, after: { userId: user.id, email: user.email, role: t.role } });
      await this.changes.bump('people');
      return toPerson(user);
    });
  }

  async setPassword(userId: string, password: string): Promise<void> {
    People.check({ password }, { password: true });
    await this.repo.setPassword(userId, await hashPassword(password), isoNow(this.clock.now()));
  }

  /** Changing one's password needs the current one (when there is one). */
  async changePassword(userId: string, current: string | undefined, next: string): Promise<void> {
    const user = await this.repo.user(userId);
    if (!user) throw new DiwanError('UNAUTHENTICATED', [{ reason: 'unknown' }]);
    if (user.passwordHash && !(await verifyPassword(current ?? '', user.passwordHash))) {
      throw new DiwanError('VALIDATION_ERROR', [{ in: 'body', pointer: '/currentPassword', rule: 'password', message: 'the current password is not right' }], { summary: 'the current password is not right' });
    }
    await this.setPassword(userId, next);
  }

  async membership(userId: string, companyId: string): Promise<Role | undefined> {
    return (await this.repo.membership(userId, companyId))?.role as Role | undefined;
  }

  async companiesOf(userId: string): Promise<{ id: string; name: string; currency: string; role: Role }[]> {
    return (await this.repo.membershipsOf(userId)).map((m) => ({ id: m.companyId, name: m.companyName, currency: m.currency, role: m.role as Role }));
  }

  async members(companyId: string): Promise<Member[]> {
    return (await this.repo.members(companyId)).map(toMember);
  }

  private async member(companyId: string, userId: string): Promise<Member> {
    const m = await this.repo.member(companyId, userId);
    if (!m) throw new DiwanError('NOT_FOUND', [{ resource: 'members', id: userId }]);
    return toMember(m);
  }

  /** Changes a member's role: within the grantor's own, never of someone above them, and never the last Owner's. */
  async setRole(scope: WriteScope, userId: string, role: string, grantor: Grantor): Promise<Member> {
    People.grant(grantor, role);
    return this.uow.run(scope, async (w) => {
      const before = await this.member(scope.companyId, userId);
      if (grantor && !roleAtLeast(grantor.role, before.role)) throw new DiwanError('FORBIDDEN', [{ reason: 'role_above_own', keyRole: grantor.role, targetRole: before.role }]);
      if (before.role === 'Owner' && role !== 'Owner' && (await this.repo.countRole(scope.companyId, 'Owner')) <= 1) {
        throw new DiwanError('CONFLICT', [{ reason: 'last_owner' }], { reason: 'a company keeps at least one Owner' });
      }
      await this.repo.putMembership({ userId, companyId: scope.companyId, role, createdAt: before.since, invitedBy: null });
      const after = { ...before, role: role as Role };
      await w.audit({ action: 'update', resource: 'members', resourceId: userId, before, after });
      await this.changes.bump('people');
      return after;
    });
  }

  async remove(scope: WriteScope, userId: string, grantor: Grantor): Promise<Member> {
    return this.uow.run(scope, async (w) => {
      const before = await this.member(scope.companyId, userId);
      if (grantor && !roleAtLeast(grantor.role, before.role)) throw new DiwanError('FORBIDDEN', [{ reason: 'role_above_own', keyRole: grantor.role, targetRole: before.role }]);
      if (before.role === 'Owner' && (await this.repo.countRole(scope.companyId, 'Owner')) <= 1) {
        throw new DiwanError('CONFLICT', [{ reason: 'last_owner' }], { reason: 'a company keeps at least one Owner' });
      }
      await this.repo.removeMembership(userId, scope.companyId);
      await w.audit({ action: 'delete', resource: 'members', resourceId: userId, before });
      await this.changes.bump('people');
      return before;
    });
  }
}
