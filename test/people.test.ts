// People: the first Owner's one-time sign-in link, sessions in a `__Host-` cookie, CSRF on
// cookie writes, throttled sign-ins, password change, invitations, members and roles, and a
// person held to the same permission rules as a key of the same role.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import type { Host } from '../core/host.ts';
import { ManualClock } from '../core/kernel/clock.ts';
import { CLI_ACTOR } from '../core/kernel/actor.ts';
import { invoicingSources } from './helpers.ts';
import { buildHost } from './db.ts';

const PASSWORD = 'correct horse battery';

function cookieFrom(res: LightMyRequestResponse): string {
  const set = String(res.headers['set-cookie'] ?? '');
  expect(set).toMatch(/^__Host-diwan-session=[^;]+; Path=\/; Secure; HttpOnly; SameSite=Lax; Max-Age=\d+$/);
  return set.split(';')[0];
}

describe('people and sessions', () => {
  let host: Host;
  let clock: ManualClock;
  let companyId: string;
  let otherCompanyId: string;
  let owner: { cookie: string; csrf: string; id: string };

  const as = (who: { cookie: string; csrf?: string }, company = companyId) => ({
    get: (url: string) => host.app.inject({ method: 'GET', url, headers: { cookie: who.cookie, 'x-company-id': company } }),
    send: (method: string, url: string, payload?: unknown, csrf = who.csrf) =>
      host.app.inject({ method: method as 'POST', url, payload: payload as object, headers: { cookie: who.cookie, 'x-company-id': company, ...(csrf ? { 'x-csrf-token': csrf } : {}) } }),
  });

  beforeAll(async () => {
    clock = new ManualClock(Date.UTC(2026, 10, 1));
    host = await buildHost({ dbFile: ':memory:', sources: invoicingSources(), clock });
    companyId = (await host.createCompany({ name: 'Alpha', apps: ['invoicing'] })).company.id;
    otherCompanyId = (await host.createCompany({ name: 'Beta', apps: ['invoicing'] })).company.id;
  });
  afterAll(() => host.close());

  it('the operator creates the first Owner with a one-time link, which signs in once and sets a password', async () => {
    const { person, token } = await host.people.createWithLink({ companyId, actor: CLI_ACTOR, appId: 'core' }, { email: 'Noura@Example.com', name: 'Noura', role: 'Owner' });
    expect(person).toMatchObject({ email: 'noura@example.com', hasPassword: false });
    const short = await host.app.inject({ method: 'POST', url: '/api/v1/session/link', payload: { token, password: 'short' } });
    expect(short.statusCode).toBe(400);
    expect(short.json().error.details[0]).toMatchObject({ pointer: '/password', rule: 'length' });
    const res = await host.app.inject({ method: 'POST', url: '/api/v1/session/link', payload: { token, password: PASSWORD } });
    expect(res.statusCode, res.body).toBe(201);
    const data = res.json().data;
    expect(data.person).toMatchObject({ email: 'noura@example.com', hasPassword: true });
    expect(data.companies).toEqual([expect.objectContaining({ id: companyId, role: 'Owner' })]);
    owner = { cookie: cookieFrom(res), csrf: data.csrfToken, id: data.person.id };
    const again = await host.app.inject({ method: 'POST', url: '/api/v1/session/link', payload: { token, password: PASSWORD } });
    expect(again.statusCode).toBe(401);
  });

  it('a new link for an existing member keeps their membership, and never demotes the last Owner', async () => {
    const scope = { companyId, actor: CLI_ACTOR, appId: 'core' };
    const before = (await host.people.members(companyId)).find((m) => m.userId === owner.id)!;
    // The only Owner asked to become a Viewer: 409, nothing changed.
    await expect(host.people.createWithLink(scope, { email: 'noura@example.com', name: 'Noura', role: 'Viewer' })).rejects.toMatchObject({ code: 'CONFLICT', details: [{ reason: 'last_owner' }] });
    expect((await host.people.members(companyId)).find((m) => m.userId === owner.id)).toEqual(before);
    // Same role: a fresh link, the membership as it was (its date too), audited as a link, not a new member.
    const again = await host.people.createWithLink(scope, { email: 'noura@example.com', name: 'Noura', role: 'Owner' });
    expect(again.created).toBe(false);
    expect((await host.people.members(companyId)).find((m) => m.userId === owner.id)).toEqual(before);
    const rows = (await as(owner).get(`/api/v1/audit-log?resource=members&resourceId=${owner.id}`)).json();
    expect(rows.data[0]).toMatchObject({ action: 'signin_link', before: { role: 'Owner' }, after: { role: 'Owner' } });
  });

  it('a session reads like a key of the same role, and its writes need the CSRF token', async () => {
    expect((await as(owner).get('/api/v1/company')).json().data.id).toBe(companyId);
    const noCsrf = await as(owner).send('POST', '/api/v1/customers', { name: 'Acme' }, '');
    expect(noCsrf.statusCode).toBe(403);
    expect(noCsrf.json().error.details[0]).toMatchObject({ reason: 'csrf' });
    const wrong = await as(owner).send('POST', '/api/v1/customers', { name: 'Acme' }, 'x'.repeat(43));
    expect(wrong.statusCode).toBe(403);
    const created = await as(owner).send('POST', '/api/v1/customers', { name: 'Acme' });
    expect(created.statusCode, created.body).toBe(201);
    const audit = await as(owner).get(`/api/v1/audit-log?resource=customers&resourceId=${created.json().data.id}`);
    expect(audit.json().data[0].actor).toEqual({ type: 'user', id: owner.id });
  });

  it('a session cookie does not work for another company (403), nor without a company (400)', async () => {
    const res = await as(owner, otherCompanyId).get('/api/v1/company');
    expect(res.statusCode).toBe(403);
    expect(res.json().error.details[0]).toMatchObject({ reason: 'company' });
    const none = await host.app.inject({ method: 'GET', url: '/api/v1/company', headers: { cookie: owner.cookie } });
    expect(none.json().error.code).toBe('COMPANY_REQUIRED');
  });

  it('keys created by a person record their creator; no one creates a key above their own role', async () => {
    const res = await as(owner).send('POST', '/api/v1/api-keys', { role: 'Member', scopes: ['customers'] });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().data.createdBy).toBe(owner.id);
  });

  it('an Owner invites a Viewer, who joins with the link and sees only their company and no writes', async () => {
    const inv = await as(owner).send('POST', '/api/v1/invitations', { email: 'sara@example.com', role: 'Viewer' });
    expect(inv.statusCode, inv.body).toBe(201);
    const link: string = inv.json().data.link;
    expect(link).toMatch(/\/invite#[0-9a-z]{40}$/);
    expect((await as(owner).get('/api/v1/invitations')).json().data).toHaveLength(1);
    const token = link.split('#')[1];
    const joined = await host.app.inject({ method: 'POST', url: '/api/v1/invitations/accept', payload: { token, name: 'Sara', password: PASSWORD } });
    expect(joined.statusCode, joined.body).toBe(201);
    const viewer = { cookie: cookieFrom(joined), csrf: joined.json().data.csrfToken };
    expect(joined.json().data.companies.map((c: { id: string }) => c.id)).toEqual([companyId]);
    expect((await as(viewer).get('/api/v1/customers')).statusCode).toBe(200);
    const write = await as(viewer).send('POST', '/api/v1/customers', { name: 'Nope' });
    expect(write.statusCode).toBe(403);
    expect(write.json().error.details[0]).toMatchObject({ permission: 'customers:create', reason: 'role' });
    expect((await as(viewer, otherCompanyId).get('/api/v1/customers')).statusCode).toBe(403);
    const reuse = await host.app.inject({ method: 'POST', url: '/api/v1/invitations/accept', payload: { token, name: 'Sara', password: PASSWORD } });
    expect(reuse.statusCode).toBe(401);
    const members = (await as(owner).get('/api/v1/members')).json().data;
    expect(members.map((m: { email: string; role: string }) => `${m.email}:${m.role}`).sort()).toEqual(['noura@example.com:Owner', 'sara@example.com:Viewer']);
  });

  it('roles: an Admin cannot raise anyone to Owner, and the last Owner stays', async () => {
    const lastOwner = await as(owner).send('PATCH', `/api/v1/members/${owner.id}`, { role: 'Admin' });
    expect(lastOwner.statusCode).toBe(409);
    expect(lastOwner.json().error.details[0]).toMatchObject({ reason: 'last_owner' });
  });

  it('sign-in with a wrong password is refused alike for unknown accounts, and throttled per account', async () => {
    const unknown = await host.app.inject({ method: 'POST', url: '/api/v1/session', payload: { email: 'nobody@example.com', password: PASSWORD } });
    const wrong = await host.app.inject({ method: 'POST', url: '/api/v1/session', payload: { email: 'noura@example.com', password: 'not the password' } });
    expect(unknown.statusCode).toBe(401);
    expect(wrong.json().error).toEqual(unknown.json().error);
    for (let i = 0; i < 4; i++) await host.app.inject({ method: 'POST', url: '/api/v1/session', payload: { email: 'noura@example.com', password: 'not the password' } });
    const locked = await host.app.inject({ method: 'POST', url: '/api/v1/session', payload: { email: 'noura@example.com', password: PASSWORD } });
    expect(locked.statusCode).toBe(429);
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(0);
    clock.advance(16 * 60_000);
    const ok = await host.app.inject({ method: 'POST', url: '/api/v1/session', payload: { email: 'noura@example.com', password: PASSWORD } });
    expect(ok.statusCode, ok.body).toBe(201);
  });

  it('a password change ends the other sessions; sign-out ends this one', async () => {
    const second = await host.app.inject({ method: 'POST', url: '/api/v1/session', payload: { email: 'noura@example.com', password: PASSWORD } });
    const other = { cookie: cookieFrom(second), csrf: second.json().data.csrfToken };
    const changed = await as(owner).send('POST', '/api/v1/session/password', { currentPassword: PASSWORD, newPassword: `${PASSWORD}!` });
    expect(changed.statusCode, changed.body).toBe(200);
    expect((await as(other).get('/api/v1/company')).statusCode).toBe(401);
    expect((await as(owner).get('/api/v1/company')).statusCode).toBe(200);
    const out = await as(owner).send('DELETE', '/api/v1/session');
    expect(out.statusCode).toBe(200);
    expect(String(out.headers['set-cookie'])).toContain('Max-Age=0');
    expect((await as(owner).get('/api/v1/company')).statusCode).toBe(401);
  });

  it('the console asks who is signed in without a 401 before anyone is (issue 29): null, the session, or null with the cookie cleared', async () => {
    const nobody = await host.app.inject({ method: 'GET', url: '/api/v1/session/current' });
    expect(nobody.statusCode).toBe(200);
    expect(nobody.json()).toEqual({ data: null });
    expect(nobody.headers['set-cookie']).toBeUndefined();
    expect(nobody.headers['cache-control']).toBe('no-store');

    const res = await host.app.inject({ method: 'POST', url: '/api/v1/session', payload: { email: 'noura@example.com', password: `${PASSWORD}!` } });
    const s = { cookie: cookieFrom(res) };
    const signedIn = await as(s).get('/api/v1/session/current');
    expect(signedIn.statusCode).toBe(200);
    expect(signedIn.json().data).toMatchObject({ person: { email: 'noura@example.com' }, csrfToken: res.json().data.csrfToken });

    // A session that ended: null, and the stale cookie cleared (the old route still answers 401).
    await as(s).send('DELETE', '/api/v1/session', undefined, res.json().data.csrfToken);
    const ended = await as(s).get('/api/v1/session/current');
    expect(ended.statusCode).toBe(200);
    expect(ended.json()).toEqual({ data: null });
    expect(String(ended.headers['set-cookie'])).toContain('Max-Age=0');
    expect((await as(s).get('/api/v1/session')).statusCode).toBe(401);
  });

  it('a session idles out', async () => {
    const res = await host.app.inject({ method: 'POST', url: '/api/v1/session', payload: { email: 'noura@example.com', password: `${PASSWORD}!` } });
    const s = { cookie: cookieFrom(res) };
    clock.advance(13 * 3600_000);
    const expired = await as(s).get('/api/v1/company');
    expect(expired.statusCode).toBe(401);
    expect(expired.json().error.details[0]).toMatchObject({ reason: 'expired' });
  });
});
