// A field declared `secret` (a device password, a token) or `detailOnly` (a large value, e.g. a
// file's text) is answered only by its document's get route: never in the list, the audit
// trail, or events.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Host } from '../core/host.ts';
import { validManifest } from '../core/apps/app-source.ts';
import { checkManifest } from '../core/apps/manifest-check.ts';
import { createCompany, makeHost, type TestCompany } from './helpers.ts';
import { bi } from './fixtures.ts';

const manifest = {
  id: 'vault', version: '1.0.0', host: '^0.1.0', name: bi('Vault', 'الخزنة'), description: bi('Secrets of devices.', 'أسرار الأجهزة.'),
  strings: { en: { title: 'Vault' }, ar: { title: 'الخزنة' } },
  documentTypes: [{
    name: 'entry', resource: 'vault-entries', idPrefix: 'vte', label: bi('Entry', 'قيد'),
    fields: [
      { name: 'label', type: 'string', required: true, filterable: true, label: bi('Label', 'الوصف') },
      { name: 'token', type: 'string', required: true, secret: true, label: bi('Token', 'الرمز') },
      { name: 'manual', type: 'string', detailOnly: true, label: bi('Manual', 'الدليل') },
    ],
  }],
  eventFamilies: [{ family: 'vault', prefix: 'vault', label: bi('Vault', 'الخزنة'), topics: [
    { topic: 'vault.entry.created', description: bi('An entry was stored.', 'خُزّن قيد.'), source: { on: 'create', type: 'entry' } },
    { topic: 'vault.entry.updated', description: bi('An entry was changed.', 'عُدّل قيد.'), source: { on: 'update', type: 'entry' } },
  ] }],
};

describe('secret fields', () => {
  let host: Host;
  let a: TestCompany;
  let dir: string;

  beforeAll(async () => {
    host = await makeHost();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'diwan-vault-'));
    fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(manifest));
    await host.runtime.load({ manifest: validManifest(manifest), dir, origin: 'package' });
    a = await createCompany(host, { apps: ['invoicing', 'vault'] });
  });
  afterAll(async () => {
    await host.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('are answered by the get route only: not in lists, audit rows or events', async () => {
    const created = await a.as().post('/api/v1/vault-entries', { label: 'Gate camera', token: 's3cr3t-value', manual: 'l0ng-manual-text' });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().data.id;
    await a.as().patch(`/api/v1/vault-entries/${id}`, { token: 'n3w-s3cr3t' });
    expect((await a.as().get(`/api/v1/vault-entries/${id}`)).json().data).toMatchObject({ token: 'n3w-s3cr3t', manual: 'l0ng-manual-text' });
    const list = (await a.as().get('/api/v1/vault-entries')).json().data;
    expect(list).toHaveLength(1);
    expect(list[0]).not.toHaveProperty('token');
    expect(list[0]).not.toHaveProperty('manual');
    const audit = JSON.stringify((await a.as().get(`/api/v1/audit-log?resource=vault-entries`)).json().data);
    expect(audit).toContain(id);
    expect(audit).not.toMatch(/s3cr3t|l0ng-manual/);
    const events = await host.storage.db.all<{ topic: string; data: string }>('SELECT topic, data FROM outbox WHERE company_id = ?', [a.company.id]);
    expect(events.map((e) => e.topic)).toEqual(expect.arrayContaining(['vault.entry.created', 'vault.entry.updated', 'audit.vault_entries.create']));
    expect(events.map((e) => e.data).join('\n')).not.toMatch(/s3cr3t|l0ng-manual/);
    const topic = host.catalogue.topic('vault.entry.created')!.decl;
    expect(Object.keys(topic.payload.properties as object)).not.toContain('token');
    expect(Object.keys(topic.payload.properties as object)).not.toContain('manual');
  });

  it('must be strings (a secret) and cannot be filters (either)', () => {
    const bad = structuredClone(manifest);
    bad.documentTypes[0].fields[1] = { ...bad.documentTypes[0].fields[1], type: 'number', filterable: true } as never;
    bad.documentTypes[0].fields[2] = { ...bad.documentTypes[0].fields[2], filterable: true } as never;
    const rules = checkManifest(bad).problems.map((p) => p.rule);
    expect(rules).toEqual(expect.arrayContaining(['secretType', 'secretFilter', 'detailFilter']));
  });
});
