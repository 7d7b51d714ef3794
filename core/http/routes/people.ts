// People over the API: signing in and out (a server-side session in a `__Host-` cookie, a CSRF
// token for writes), one-time links, the password; a company's members and invitations.
import type { People } from '../../identity/people.ts';
import { personSchema, memberSchema, invitationSchema } from '../../identity/people.ts';
import type { Sessions, SignedIn } from '../../identity/sessions.ts';
import { actorOf } from '../../identity/principal.ts';
import { ROLES } from '../../identity/roles.ts';
import { DiwanError } from '../../kernel/errors/diwan-error.ts';
import { PASSWORD_MAX } from '../../identity/passwords.ts';
import { SESSION_COOKIE, clearedSessionCookie, cookieOf, sessionCookie } from '../cookies.ts';
import { core, dataOf, ok, type ApiRequest, type Reply, type Route } from '../route.ts';

const sessionSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['person', 'companies', 'csrfToken', 'expiresAt'],
  properties: {
    person: personSchema,
    companies: {
      type: 'array',
      items: { type: 'object', additionalProperties: false, required: ['id', 'name', 'currency', 'role'], properties: { id: { type: 'string' }, name: { type: 'string' }, currency: { type: 'string' }, role: { type: 'string', enum: [...ROLES] } } },
    },
    csrfToken: { type: 'string', description: 'Send it as `X-CSRF-Token` on every write made with the session cookie' },
    expiresAt: { type: 'string', description: 'When the session ends if unused' },
  },
} as const;

const password = { type: 'string', minLength: 1, maxLength: PASSWORD_MAX } as const;
const token = { type: 'string', minLength: 1, maxLength: 200 } as const;
const userParams = { type: 'object', required: ['userId'], properties: { userId: { type: 'string', maxLength: 64 } } } as const;
const cookieNote = 'Public: authenticated by the session cookie it sets or reads, not by a key.';

const cookie = (req: ApiRequest) => cookieOf(req.headers.cookie, SESSION_COOKIE);
const scopeOf = (req: ApiRequest) => ({ companyId: req.company.id, actor: actorOf(req.principal), appId: 'core', requestId: req.id });

export function peopleRoutes(deps: { people: People; sessions: Sessions; publicUrl: () => string }): Route[] {
  const { people, sessions } = deps;

  /** A signed-in answer: the cookie, and what the console needs to start. */
  const signedIn = async (s: SignedIn, status = 201): Promise<Reply> => ({
    status,
    headers: { 'set-cookie': sessionCookie(s.token, sessions.idleSeconds), 'cache-control': 'no-store' },
    body: { data: await sessions.current(s.token) },
  });

  /** Writes made with the cookie alone carry its CSRF token. */
  const requireCsrf = (req: ApiRequest): string => {
    const c = cookie(req);
    if (!c) throw new DiwanError('UNAUTHENTICATED', [{ reason: 'missing' }]);
    if (!sessions.csrfMatches(c, req.headers['x-csrf-token'])) throw new DiwanError('FORBIDDEN', [{ reason: 'csrf', header: 'X-CSRF-Token' }]);
    return c;
  };

  return [
    core(
      {
        method: 'POST', url: '/api/v1/session', operationId: 'core.signIn', summary: 'Sign in with email and password: sets the session cookie',
        description: `${cookieNote} Failed sign-ins are throttled per account and per address (RATE_LIMITED).`, errors: ['UNAUTHENTICATED', 'RATE_LIMITED'],
        schema: {
          body: { type: 'object', additionalProperties: false, required: ['email', 'password'], properties: { email: { type: 'string', minLength: 1, maxLength: 320 }, password } },
          response: { 201: dataOf(sessionSchema) },
        },
      },
      async (req) => signedIn(await sessions.signIn(req.body as { email: string; password: string }, req.raw.ip, req.headers['user-agent'])),
    ),
    core(
      {
        method: 'POST', url: '/api/v1/session/link', operationId: 'core.signInWithLink', summary: 'Sign in with a one-time link (from `diwan users create`), setting a password if none is set yet',
        description: cookieNote, errors: ['UNAUTHENTICATED'],
        schema: {
          body: { type: 'object', additionalProperties: false, required: ['token'], properties: { token, password } },
          response: { 201: dataOf(sessionSchema) },
        },
      },
      async (req) => signedIn(await sessions.signInWithLink(req.body as { token: string; password?: string }, req.headers['user-agent'])),
    ),
    core(
      {
        method: 'GET', url: '/api/v1/session', operationId: 'core.getSession', summary: 'The signed-in person, their companies and the CSRF token',
        description: cookieNote, errors: ['UNAUTHENTICATED'],
        schema: { response: { 200: dataOf(sessionSchema) } },
      },
      async (req) => ({ headers: { 'cache-control': 'no-store' }, body: { data: await sessions.current(cookie(req)) } }),
    ),
    core(
      {
        method: 'GET', url: '/api/v1/session/current', operationId: 'core.currentSession', summary: 'The signed-in person, their companies and the CSRF token; null when nobody is signed in',
        description:
          `${cookieNote} Answers 200 either way, so a page that asks before anyone signed in does not log a failed request; ` +
          'a cookie whose session ended is cleared.',
        schema: { response: { 200: dataOf({ ...sessionSchema, type: ['object', 'null'] }) } },
      },
      async (req): Promise<Reply> => {
        const c = cookie(req);
        if (!c) return { headers: { 'cache-control': 'no-store' }, body: { data: null } };
        try {
          return { headers: { 'cache-control': 'no-store' }, body: { data: await sessions.current(c) } };
        } catch (err) {
          if (!(err instanceof DiwanError) || err.code !== 'UNAUTHENTICATED') throw err;
          return { headers: { 'cache-control': 'no-store', 'set-cookie': clearedSessionCookie }, body: { data: null } };
        }
      },
    ),
    core(
      {
        method: 'DELETE', url: '/api/v1/session', operationId: 'core.signOut', summary: 'Sign out: ends the session and clears the cookie',
        description: `${cookieNote} Needs \`X-CSRF-Token\`.`, errors: ['UNAUTHENTICATED', 'FORBIDDEN'],
        schema: { response: { 200: dataOf({ type: 'object', additionalProperties: false, required: ['signedOut'], properties: { signedOut: { type: 'boolean' } } }) } },
      },
      async (req) => {
        await sessions.signOut(requireCsrf(req));
        return { headers: { 'set-cookie': clearedSessionCookie }, body: { data: { signedOut: true } } };
      },
    ),
    core(
      {
        method: 'POST', url: '/api/v1/session/password', operationId: 'core.changePassword', summary: "Change the signed-in person's password; their other sessions end",
        description: `${cookieNote} Needs \`X-CSRF-Token\`.`, errors: ['UNAUTHENTICATED', 'FORBIDDEN'],
        schema: {
          body: { type: 'object', additionalProperties: false, required: ['newPassword'], properties: { currentPassword: password, newPassword: password } },
          response: { 200: dataOf({ type: 'object', additionalProperties: false, required: ['changed'], properties: { changed: { type: 'boolean' } } }) },
        },
      },
      async (req) => {
        const c = requireCsrf(req);
        const { person } = await sessions.current(c);
        const b = req.body as { currentPassword?: string; newPassword: string };
        await sessions.changePassword(c, person.id, b.currentPassword, b.newPassword);
        return ok({ changed: true });
      },
    ),
    core(
      {
        method: 'POST', url: '/api/v1/invitations/accept', operationId: 'core.acceptInvitation', summary: 'Join a company with an invitation link; a new person sets their name and password',
        description: cookieNote, errors: ['UNAUTHENTICATED'],
        schema: {
          body: { type: 'object', additionalProperties: false, required: ['token', 'password'], properties: { token, name: { type: 'string', minLength: 1, maxLength: 200 }, password } },
          response: { 201: dataOf(sessionSchema) },
        },
      },
      async (req) => {
        const b = req.body as { token: string; name?: string; password: string };
        const person = await people.acceptInvitation(b.token, b);
        return signedIn(await sessions.signIn({ email: person.email, password: b.password }, req.raw.ip, req.headers['user-agent']));
      },
    ),
    core(
      { method: 'GET', url: '/api/v1/members', operationId: 'core.listMembers', summary: "The company's members and their roles", permission: 'members:read', schema: { response: { 200: dataOf({ type: 'array', items: memberSchema }) } } },
      async (req) => ok(await people.members(req.company.id)),
    ),
    core(
      {
        method: 'PATCH', url: '/api/v1/members/:userId', operationId: 'core.updateMember', summary: "Change a member's role (up to one's own; a company keeps an Owner)",
        permission: 'members:manage', errors: ['NOT_FOUND', 'CONFLICT'],
        schema: { params: userParams, body: { type: 'object', additionalProperties: false, required: ['role'], properties: { role: { type: 'string', enum: [...ROLES] } } }, response: { 200: dataOf(memberSchema) } },
      },
      async (req) => ok(await people.setRole(scopeOf(req), req.params.userId, (req.body as { role: string }).role, req.principal)),
    ),
    core(
      {
        method: 'DELETE', url: '/api/v1/members/:userId', operationId: 'core.removeMember', summary: 'Remove a member from the company',
        permission: 'members:manage', errors: ['NOT_FOUND', 'CONFLICT'],
        schema: { params: userParams, response: { 200: dataOf(memberSchema) } },
      },
      async (req) => ok(await people.remove(scopeOf(req), req.params.userId, req.principal)),
    ),
    core(
      { method: 'GET', url: '/api/v1/invitations', operationId: 'core.listInvitations', summary: 'Invitations not yet accepted', permission: 'members:read', schema: { response: { 200: dataOf({ type: 'array', items: invitationSchema }) } } },
      async (req) => ok(await people.invitations(req.company.id)),
    ),
    core(
      {
        method: 'POST', url: '/api/v1/invitations', operationId: 'core.invite', summary: 'Invite a person with a role up to one\'s own; the link is in the response once',
        permission: 'members:manage', errors: ['CONFLICT'],
        schema: {
          body: { type: 'object', additionalProperties: false, required: ['email', 'role'], properties: { email: { type: 'string', minLength: 3, maxLength: 320 }, role: { type: 'string', enum: [...ROLES] } } },
          response: { 201: dataOf({ ...invitationSchema, required: [...invitationSchema.required, 'link'], properties: { ...invitationSchema.properties, link: { type: 'string', description: 'The invitation link, shown this once' } } }) },
        },
      },
      async (req) => {
        const inv = await people.invite(scopeOf(req), req.body as { email: string; role: string }, req.principal);
        const { token: t, ...rest } = inv;
        return ok({ ...rest, link: `${deps.publicUrl()}/invite#${t}` }, 201);
      },
    ),
  ];
}
