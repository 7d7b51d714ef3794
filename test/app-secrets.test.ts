// Apps' secrets (`ctx.secrets`, core/apps/secrets.ts): sealed at rest with the host's key ring,
// bound to their company, app and name (a row moved elsewhere does not open), out of reach of
// another company or app, re-sealed by a key rotation, gone when the app's data is purged.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Host } from '../core/host.ts';
import type { AppContext } from '../sdk/define-app.ts';
import type { Company } from '../core/tenancy/companies.ts';
import { SYSTEM_ACTOR } from '../core/kernel/actor.ts';
import { SecretBox, SecretBoxError, generateKey } from '../core/kernel/secret-box.ts';
import { AppSecrets, resealAppSecrets } from '../core/apps/secrets.ts';
import { buildHost } from './db.ts';
import { tempDir } from './fixtures.ts';
import { invoicingSources } from './helpers.ts';
import { ledgerSource } from './ledger-app.ts';

const PRIVATE_KEY = '-----BEGIN EC PRIVATE KEY-----\nMHQCAQEEIDmKzc3Ga6Lz9YhGSBcLh1z3LqfXhQDvxyZSkQ4gM4c4oAcGBSuBBAAK\n-----END EC PRIVATE KEY-----\n';

describe("apps' sealed secrets", () => {
  let host: Host;
  let root: string;
  let a: Company;
  let b: Company;
  const firstKey = generateKey();
  const ctx = (company: Company, appId: string): AppContext => host.runtime.contextFor(appId, { company, actor: SYSTEM_ACTOR, lang: 'en', requestId: null });
  const rows = () => host.storage.db.all<{ company_id: string; app_id: string; name: string; value: string }>('SELECT company_id, app_id, name, value FROM app_secrets ORDER BY company_id, app_id, name');

  beforeAll(async () => {
    root = tempDir();
    host = await buildHost({ sources: [...invoicingSources(), ledgerSource(root)], secretBox: new SecretBox([firstKey]), config: { rateLimitPerMinute: 0 } });
    a = (await host.createCompany({ name: 'Alpha', apps: ['invoicing', 'ledger'] })).company;
    b = (await host.createCompany({ name: 'Beta', apps: ['invoicing', 'ledger'] })).company;
  });
  afterAll(async () => {
    await host.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('keeps a value sealed at rest: the stored row holds neither the value nor its base64, and the app reads it back', async () => {
    await ctx(a, 'invoicing').secrets.set('zatca.key', PRIVATE_KEY);
    expect(await ctx(a, 'invoicing').secrets.get('zatca.key')).toBe(PRIVATE_KEY);
    const [row] = await rows();
    expect(row).toMatchObject({ company_id: a.id, app_id: 'invoicing', name: 'zatca.key' });
    expect(row.value).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+\.[\w-]+$/);
    for (const clear of ['MHQCAQEEIDmKzc3Ga6Lz9YhGSBcLh1z3', 'EC PRIVATE KEY', Buffer.from(PRIVATE_KEY).toString('base64').slice(0, 24)]) expect(row.value).not.toContain(clear);
    // Setting again replaces it (one row), sealed anew.
    await ctx(a, 'invoicing').secrets.set('zatca.key', `${PRIVATE_KEY} `);
    expect((await rows()).map((r) => r.value)).not.toContain(row.value);
    expect(await ctx(a, 'invoicing').secrets.get('zatca.key')).toBe(`${PRIVATE_KEY} `);
  });

  it("is out of reach of another company and another app, each keeping its own under the same name", async () => {
    expect(await ctx(b, 'invoicing').secrets.get('zatca.key')).toBeUndefined();
    expect(await ctx(a, 'ledger').secrets.get('zatca.key')).toBeUndefined();
    await ctx(b, 'invoicing').secrets.set('zatca.key', 'beta');
    await ctx(a, 'ledger').secrets.set('zatca.key', 'ledger');
    expect(await ctx(a, 'invoicing').secrets.get('zatca.key')).toBe(`${PRIVATE_KEY} `);
    expect(await ctx(b, 'invoicing').secrets.get('zatca.key')).toBe('beta');
    expect(await ctx(a, 'ledger').secrets.get('zatca.key')).toBe('ledger');
    expect(await ctx(b, 'ledger').secrets.get('zatca.key')).toBeUndefined();
    // Deleting one deletes that one only.
    expect(await ctx(a, 'ledger').secrets.delete('zatca.key')).toBe(true);
    expect(await ctx(a, 'ledger').secrets.delete('zatca.key')).toBe(false);
    expect(await ctx(a, 'ledger').secrets.get('zatca.key')).toBeUndefined();
    expect(await ctx(a, 'invoicing').secrets.get('zatca.key')).toBe(`${PRIVATE_KEY} `);
  });

  it("does not open a sealed value copied into another company's row: it is bound to where it was sealed", async () => {
    const sealed = (await rows()).find((r) => r.company_id === a.id && r.app_id === 'invoicing')!.value;
    await host.storage.appSecrets.set(b.id, 'invoicing', 'stolen', sealed, new Date().toISOString());
    // Not the app's fault: a CONFLICT naming the secret and what the operator can do, in the caller's language.
    const err = await ctx(b, 'invoicing').secrets.get('stolen').catch((e) => e);
    expect(err).toMatchObject({ code: 'CONFLICT', details: [{ reason: 'secretUnreadable', app: 'invoicing', secret: 'stolen' }] });
    expect(err.params.reason).toContain('sealed with a key the host no longer has');
    await ctx(b, 'invoicing').secrets.delete('stolen');
  });

  it('answers a value sealed with a key the host no longer has (its key file lost) as a named CONFLICT, never a 500', async () => {
    const lost = new SecretBox([generateKey()]);
    await host.storage.appSecrets.set(a.id, 'ledger', 'api.token', lost.encrypt('t0k3n', `app-secret:${a.id}:ledger:api.token`), new Date().toISOString());
    const en = await ctx(a, 'ledger').secrets.get('api.token').catch((e) => e);
    expect(en).toMatchObject({ code: 'CONFLICT', details: [{ reason: 'secretUnreadable', app: 'ledger', secret: 'api.token' }] });
    expect(en.params.reason).toContain('restore that key');
    const arCtx = host.runtime.contextFor('ledger', { company: a, actor: SYSTEM_ACTOR, lang: 'ar', requestId: null });
    expect((await arCtx.secrets.get('api.token').catch((e) => e)).params.reason).toContain('أعد ذلك المفتاح');
    // The app may set it again: sealed with the host's key, it opens.
    await ctx(a, 'ledger').secrets.set('api.token', 't0k3n');
    expect(await ctx(a, 'ledger').secrets.get('api.token')).toBe('t0k3n');
    await ctx(a, 'ledger').secrets.delete('api.token');
  });

  it('is re-sealed with a new key by a rotation (and at boot by a ring whose first key is new), and then opens with the new key alone', async () => {
    const newKey = generateKey();
    const ring = new SecretBox([newKey, firstKey]);
    const before = await rows();
    expect(await host.storage.db.transaction(() => resealAppSecrets(host.storage.appSecrets, ring))).toBe(before.length);
    expect(await host.storage.db.transaction(() => resealAppSecrets(host.storage.appSecrets, ring))).toBe(0);
    // A host booting with the new key first re-seals the same way (here back to the first key).
    const booted = new AppSecrets(host.storage.appSecrets, host.clock, { box: new SecretBox([firstKey, newKey]) });
    expect(await booted.resealStale((fn) => host.storage.db.transaction(fn))).toBe(before.length);
    expect(await booted.resealStale((fn) => host.storage.db.transaction(fn))).toBe(0);
    expect(await host.storage.db.transaction(() => resealAppSecrets(host.storage.appSecrets, ring))).toBe(before.length);
    const newOnly = new AppSecrets(host.storage.appSecrets, host.clock, { box: new SecretBox([newKey]) });
    expect(await newOnly.get(a.id, 'invoicing', 'zatca.key')).toBe(`${PRIVATE_KEY} `);
    expect(await newOnly.get(b.id, 'invoicing', 'zatca.key')).toBe('beta');
    const oldOnly = new AppSecrets(host.storage.appSecrets, host.clock, { box: new SecretBox([firstKey]) });
    await expect(oldOnly.get(a.id, 'invoicing', 'zatca.key')).rejects.toMatchObject({ reason: 'unknown_key' });
  });

  it('lets an app set read-only fields of its own documents (DocHandle.set), never computed or undeclared ones', async () => {
    const docs = ctx(a, 'invoicing').docs('invoice');
    const customerId = (await ctx(a, 'invoicing').docs('customer').create({ name: 'Al Noor Trading' })).id;
    const inv = await docs.create({ customerId, date: '2026-03-01', dueDate: '2026-03-31', lines: [{ description: 'Consulting', quantity: 2, unitPrice: 500, taxCategory: 'S' }] });
    // A client may not send it: the update refuses it.
    await expect(docs.update(inv.id, { zatcaMessages: [] })).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    const set = await docs.set(inv.id, { zatcaMessages: [{ type: 'warning', code: 'W-1', message: 'A note from a service' }] });
    expect(set).toMatchObject({ zatcaMessages: [{ code: 'W-1' }], total: 1_150 });
    expect(await docs.get(inv.id)).toMatchObject({ zatcaMessages: [{ code: 'W-1' }] });
    await expect(docs.set(inv.id, { total: 1 })).rejects.toMatchObject({ code: 'APP_ERROR', details: [{ app: 'invoicing', rule: 'set', fields: ['total'] }] });
    await expect(docs.set(inv.id, { nope: 1 })).rejects.toMatchObject({ code: 'APP_ERROR', details: [{ fields: ['nope'] }] });
    expect((await docs.get(inv.id))!.total).toBe(1_150);
  });

  it("stays while the app is uninstalled (its data is kept), and goes when the company purges the app", async () => {
    await ctx(b, 'ledger').secrets.set('token', 'x');
    await host.lifecycle.uninstall(b.id, 'ledger', SYSTEM_ACTOR);
    expect((await rows()).filter((r) => r.company_id === b.id).map((r) => r.app_id)).toEqual(['invoicing', 'ledger']);
    await host.lifecycle.purge(b.id, 'ledger', SYSTEM_ACTOR);
    expect((await rows()).filter((r) => r.company_id === b.id).map((r) => r.app_id)).toEqual(['invoicing']);
  });
});
