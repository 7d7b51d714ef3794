import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestHost, type TestHost } from './test-host.ts';

const manifest = {
  id: 'field-notes',
  version: '1.0.0',
  host: '^0.1.0',
  name: { en: 'Field notes', ar: 'ملاحظات ميدانية' },
  description: { en: 'Notes taken in the field.', ar: 'ملاحظات تُكتب في الميدان.' },
  strings: { en: { count: '{{n}} notes' }, ar: { count: '{{n}} ملاحظات' } },
  permissions: [{ resource: 'field-notes', action: 'stats', role: 'Viewer' }],
  documentTypes: [
    {
      name: 'note',
      resource: 'field-notes',
      idPrefix: 'fnote',
      label: { en: 'Note', ar: 'ملاحظة' },
      fields: [{ name: 'title', type: 'string', required: true, maxLength: 80, label: { en: 'Title', ar: 'العنوان' } }],
    },
  ],
  eventFamilies: [{ family: 'field notes', prefix: 'fieldnote', label: { en: 'Field notes', ar: 'ملاحظات ميدانية' }, topics: [] }],
  server: 'server.ts',
};

// TypeScript with a type-only import, a sibling module and an SDK error thrown from a hook:
// what an app author writes, run the way its package would run.
const server = `
import { defineApp, route, fieldError, type AppContext } from 'diwan/sdk';
import { countLabel } from './lib/label.ts';

export default defineApp({
  id: 'field-notes',
  hooks: {
    note: {
      beforeCreate(doc: Record<string, unknown>, ctx: AppContext): void {
        doc.title = String(doc.title).trim();
        if (doc.title === '') throw fieldError('/title', 'minLength', 'title must not be blank');
      },
    },
  },
  routes: [
    route({
      method: 'GET',
      url: '/field-notes/stats',
      permission: 'field-notes:stats',
      summary: 'How many notes there are',
      schema: { response: { 200: { type: 'object', properties: { data: { type: 'object', properties: { total: { type: 'integer' }, label: { type: 'string' } } } } } } },
      handler(_req, ctx: AppContext) {
        const total: number = ctx.docs('note').list().total;
        return { body: { data: { total, label: countLabel(ctx, total) } } };
      },
    }),
  ],
});
`;

const label = `
import type { AppContext } from 'diwan/sdk';
export const countLabel = (ctx: AppContext, n: number): string => ctx.t('count', { n });
`;

let root: string;
let t: TestHost;

beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'diwan-test-host-app-'));
  fs.writeFileSync(path.join(root, 'manifest.json'), JSON.stringify(manifest, null, 2));
  fs.writeFileSync(path.join(root, 'server.ts'), server);
  fs.mkdirSync(path.join(root, 'lib'));
  fs.writeFileSync(path.join(root, 'lib', 'label.ts'), label);
  t = await createTestHost({ apps: [root], currency: 'SAR' });
});

afterAll(async () => {
  await t?.close();
  fs.rmSync(root, { recursive: true, force: true });
});

describe('createTestHost', () => {
  it('creates a company with the app installed', () => {
    expect(t.company.currency).toBe('SAR');
    expect(t.installed).toEqual(['field-notes']);
    expect(t.host.runtime.isEnabled(t.company.id, 'field-notes')).toBe(true);
  });

  it('serves the generated routes and the custom route', async () => {
    const created = await t.request('POST', '/api/v1/field-notes', { body: { title: '  Pump 3 leaks ' } });
    expect(created.status).toBe(201);
    expect(created.body.data.id).toMatch(/^fnote_/);
    expect(created.body.data.title).toBe('Pump 3 leaks');

    const list = await t.request('GET', '/api/v1/field-notes', { role: 'Viewer', query: { pageSize: 5 } });
    expect(list.status).toBe(200);
    expect(list.body.total).toBe(1);
    expect(list.body.data[0].id).toBe(created.body.data.id);

    const stats = await t.request('GET', '/api/v1/field-notes/stats', { role: 'Viewer', headers: { 'accept-language': 'ar' } });
    expect(stats.status).toBe(200);
    expect(stats.body.data).toEqual({ total: 1, label: '1 ملاحظات' });
  });

  it('refuses a role below the permission with FORBIDDEN', async () => {
    const r = await t.request('POST', '/api/v1/field-notes', { role: 'Viewer', body: { title: 'no' } });
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe('FORBIDDEN');
    expect(r.body.error.details[0]).toMatchObject({ permission: 'field-notes:create', requiredRole: 'Member', keyRole: 'Viewer' });
  });

  it('validates bodies against the manifest, and answers errors the app throws', async () => {
    const r = await t.request('POST', '/api/v1/field-notes', { role: 'Member', body: { title: 'x'.repeat(81) } });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('VALIDATION_ERROR');
    expect(r.body.error.details[0]).toMatchObject({ pointer: '/title', rule: 'maxLength' });
    const blank = await t.request('POST', '/api/v1/field-notes', { role: 'Member', body: { title: '   ' } });
    expect(blank.status).toBe(400);
    expect(blank.body.error.details[0]).toMatchObject({ pointer: '/title', rule: 'minLength', message: 'title must not be blank' });
  });

  it('leaves the app folder as it was', () => {
    expect(fs.readdirSync(root).sort()).toEqual(['lib', 'manifest.json', 'server.ts']);
  });

  it('mints one key per role, bound to the company', async () => {
    expect(t.keyFor('Member')).toBe(t.keyFor('Member'));
    expect(t.keyFor('Member')).not.toBe(t.keyFor('Admin'));
    const other = await t.request('GET', '/api/v1/field-notes', { headers: { 'x-company-id': 'co_other' } });
    expect(other.status).toBe(403);
  });

  it('makes named first-party apps available and installs them too', async () => {
    const t2 = await createTestHost({ apps: [root], installFirstParty: ['invoicing'], currency: 'SAR' });
    try {
      expect(t2.installed.sort()).toEqual(['field-notes', 'invoicing']);
      const customer = await t2.request('POST', '/api/v1/customers', { role: 'Member', body: { name: 'Noura' } });
      expect(customer.status).toBe(201);
      expect((await t2.request('GET', '/api/v1/field-notes')).status).toBe(200);
    } finally {
      await t2.close();
    }
  });

  it('refuses an unknown first-party app and a bad manifest before building anything', async () => {
    await expect(createTestHost({ apps: [], installFirstParty: ['no-such-app'] })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    const bad = fs.mkdtempSync(path.join(os.tmpdir(), 'diwan-test-host-bad-'));
    try {
      fs.writeFileSync(path.join(bad, 'manifest.json'), JSON.stringify({ ...manifest, version: 'one' }));
      await expect(createTestHost({ apps: [bad] })).rejects.toMatchObject({ code: 'MANIFEST_INVALID' });
    } finally {
      fs.rmSync(bad, { recursive: true, force: true });
    }
  });

  it('surfaces why an app was refused at boot', async () => {
    const clash = fs.mkdtempSync(path.join(os.tmpdir(), 'diwan-test-host-clash-'));
    try {
      // Claims the `fieldnote` event prefix, which field-notes owns.
      const { server: _s, ...rest } = manifest;
      fs.writeFileSync(path.join(clash, 'manifest.json'), JSON.stringify({
        ...rest, id: 'clash', documentTypes: [], permissions: [],
        eventFamilies: [{ family: 'x', prefix: 'fieldnote', label: { en: 'X', ar: 'س' }, topics: [] }],
      }));
      const err = await createTestHost({ apps: [root, clash] }).catch((e) => e);
      expect(err).toMatchObject({ code: 'APP_REFUSED' });
      expect(err.details).toContainEqual({ reason: 'event_prefix_taken', prefix: 'fieldnote', owner: 'field-notes' });
    } finally {
      fs.rmSync(clash, { recursive: true, force: true });
    }
  });

  it('closes the host', async () => {
    const t2 = await createTestHost({ apps: [root] });
    const dir = t2.host.config.dataDir;
    expect(fs.existsSync(dir)).toBe(true);
    await t2.close();
    expect(fs.existsSync(dir)).toBe(false);
    await expect(t2.request('GET', '/api/v1/field-notes')).rejects.toThrow();
    await t2.close();
  });
});
