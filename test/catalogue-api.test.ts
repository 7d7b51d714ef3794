// The event catalogue as the API serves it: every first-party app available, the spec's 80
// families and 521 events plus invoicing's own, marked installed per company, in the caller's
// language, filterable by family and pattern; and test events.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Host } from '../core/host.ts';
import { buildHost } from './db.ts';
import { REPO_ROOT } from '../core/apps/app-source.ts';
import { createKey } from './helpers.ts';

interface SpecFamily { family: string; prefix: string; listed: string[]; further: number }
const spec = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'test/data/event-catalogue.json'), 'utf8')) as { families: number; events: number; catalogue: SpecFamily[] };

let host: Host;
let full: { id: string; key: string };
let bare: { id: string; key: string };

const get = async (who: { id: string; key: string }, url: string, lang?: string) => {
  const r = await host.app.inject({ url, headers: { authorization: `Bearer ${who.key}`, 'x-company-id': who.id, ...(lang ? { 'accept-language': lang } : {}) } });
  return { status: r.statusCode, body: r.json() };
};

beforeAll(async () => {
  host = await buildHost({ dbFile: ':memory:', config: { rateLimitPerMinute: 0 } });
  const a = await host.createCompany({ name: 'Full' });
  const b = await host.createCompany({ name: 'Bare', apps: [] });
  full = { id: a.company.id, key: (await createKey(host, a.company.id, { role: 'Admin', scopes: ['*'] })).key };
  bare = { id: b.company.id, key: (await createKey(host, b.company.id, { role: 'Admin', scopes: ['*'] })).key };
}, 60_000);
afterAll(async () => host?.close());

describe('GET /api/v1/events/catalogue', () => {
  it("a new company gets every first-party app, so its workspace receives the spec's 80 families and 521 events, plus invoicing's", async () => {
    const { body } = await get(full, '/api/v1/events/catalogue');
    const families = body.data.families as { prefix: string; owner: string; installed: boolean; count: number; topics: { topic: string }[] }[];
    const specPrefixes = new Set(spec.catalogue.map((f) => f.prefix));
    const specFamilies = families.filter((f) => specPrefixes.has(f.prefix));
    expect(specFamilies).toHaveLength(spec.families);
    expect(specFamilies.filter((f) => f.prefix !== 'audit').reduce((n, f) => n + f.count, 0)).toBe(spec.events);
    for (const s of spec.catalogue) {
      if (s.prefix === 'audit') continue;
      const f = specFamilies.find((x) => x.prefix === s.prefix)!;
      expect(f.count, s.family).toBe(s.listed.length + s.further);
      expect(f.topics.map((t) => t.topic), s.family).toEqual(expect.arrayContaining(s.listed));
      expect(f.installed, s.family).toBe(true);
    }
    const invoicing = families.filter((f) => f.owner === 'invoicing').map((f) => f.prefix).sort();
    expect(invoicing).toEqual(['customer', 'invoice']);
    expect(families.find((f) => f.prefix === 'invoice')!.topics.map((t) => t.topic)).toEqual(
      expect.arrayContaining(['invoice.created', 'invoice.updated', 'invoice.sent', 'invoice.paid', 'invoice.voided', 'invoice.overdue']),
    );
    expect(body.data.totals.families).toBe(families.length);
  });

  it('the apps family is the core’s, and the audit trail is opt-in with topics generated from audited writes', async () => {
    const { body } = await get(full, '/api/v1/events/catalogue?family=audit');
    const audit = body.data.families[0];
    expect(audit).toMatchObject({ prefix: 'audit', owner: 'core', optIn: true, installed: true });
    // Audit topics are snake_case since issue 9 (`audit.api_keys.revoke`, was `audit.api-keys.revoke`).
    const auditTopics = audit.topics.map((t: { topic: string }) => t.topic);
    expect(auditTopics).toEqual(expect.arrayContaining(['audit.invoices.create', 'audit.customers.delete', 'audit.apps.install', 'audit.api_keys.revoke', 'audit.webhook_endpoints.rotate']));
    expect(auditTopics.filter((t: string) => t.includes('-'))).toEqual([]);
    const apps = (await get(full, '/api/v1/events/catalogue?family=app')).body.data.families[0];
    expect(apps).toMatchObject({ owner: 'core', optIn: false });
    expect(apps.topics.map((t: { topic: string }) => t.topic)).toEqual(['app.disabled', 'app.enabled', 'app.installed', 'app.uninstalled']);
  });

  it('marks families installed or not per company; ?installed=true narrows to the installed ones', async () => {
    const all = await get(bare, '/api/v1/events/catalogue');
    const crm = all.body.data.families.find((f: { prefix: string }) => f.prefix === 'crm');
    expect(crm.installed).toBe(false);
    const installed = await get(bare, '/api/v1/events/catalogue?installed=true');
    expect(installed.body.data.families.map((f: { owner: string }) => f.owner).every((o: string) => o === 'core')).toBe(true);
  });

  it("describes every topic in the caller's language, with an example that validates against its payload schema", async () => {
    const ar = await get(full, '/api/v1/events/catalogue?family=crm', 'ar');
    expect(ar.body).toMatchObject({ lang: 'ar', dir: 'rtl' });
    const fam = ar.body.data.families[0];
    expect(fam.label).toMatch(/[\u0600-\u06FF]/);
    for (const t of fam.topics) {
      expect(t.description).toMatch(/[\u0600-\u06FF]/);
      expect(t.example).toBeTypeOf('object');
    }
    const en = await get(full, '/api/v1/events/catalogue?family=point of sale');
    expect(en.body.data.families[0].prefix).toBe('pos');
    expect(en.body.data.families[0].topics[0].description).not.toMatch(/[\u0600-\u06FF]/);
  });

  it('filters by pattern with the subscription grammar: `*` leaves the audit trail out, `audit.*` reaches it', async () => {
    const star = await get(full, '/api/v1/events/catalogue?pattern=*');
    expect(star.body.data.families.some((f: { prefix: string }) => f.prefix === 'audit')).toBe(false);
    const audit = await get(full, '/api/v1/events/catalogue?pattern=audit.*');
    expect(audit.body.data.families.map((f: { prefix: string }) => f.prefix)).toEqual(['audit']);
    const exact = await get(full, '/api/v1/events/catalogue?pattern=pos.sale');
    expect(exact.body.data.totals.topics).toBe(1);
  });

  it.each([['**'], ['invoice.*.x'], ['crm lead'], ['*.created'], ['invoice.']])('refuses the pattern %j with VALIDATION_ERROR naming it and the rule', async (p) => {
    const r = await get(full, `/api/v1/events/catalogue?pattern=${encodeURIComponent(p)}`);
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('VALIDATION_ERROR');
    expect(r.body.error.details[0]).toMatchObject({ pointer: '/pattern', pattern: p });
    expect(['grammar', 'whitespace']).toContain(r.body.error.details[0].rule);
  });
});

describe('POST /api/v1/events/test', () => {
  const post = (who: { id: string; key: string }, body: unknown) =>
    host.app.inject({ method: 'POST', url: '/api/v1/events/test', payload: body as object, headers: { authorization: `Bearer ${who.key}`, 'x-company-id': who.id } });

  it("emits the topic's example payload, marked as a test, into the outbox", async () => {
    const r = await post(full, { topic: 'crm.lead.created' });
    expect(r.statusCode).toBe(202);
    const row = (await host.storage.db.get<{ topic: string; data: string; test: number }>('SELECT topic, data, test FROM outbox WHERE id = ?', [r.json().data.id]))!;
    expect(row.topic).toBe('crm.lead.created');
    expect(row.test).toBe(1);
    expect(JSON.parse(row.data)).toEqual(host.catalogue.topic('crm.lead.created')!.decl.example);
  });

  it('refuses an unknown topic, a pattern, and a topic of an app the company has not installed', async () => {
    expect((await post(full, { topic: 'crm.lead.teleported' })).json().error.details[0]).toMatchObject({ pointer: '/topic', rule: 'unknown_topic' });
    expect((await post(full, { topic: 'crm.*' })).statusCode).toBe(400);
    const r = await post(bare, { topic: 'crm.lead.created' });
    expect(r.statusCode).toBe(404);
    expect(r.json().error.code).toBe('APP_NOT_ENABLED');
  });

  it('needs Admin or above', async () => {
    const viewer = (await createKey(host, full.id, { role: 'Viewer', scopes: ['*'] })).key;
    const r = await host.app.inject({ method: 'POST', url: '/api/v1/events/test', payload: { topic: 'crm.lead.created' }, headers: { authorization: `Bearer ${viewer}`, 'x-company-id': full.id } });
    expect(r.statusCode).toBe(403);
    expect(r.json().error.details[0]).toMatchObject({ permission: 'events:test', requiredRole: 'Admin' });
  });
});
