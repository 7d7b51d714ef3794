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
  permissions: [
    { resource: 'field-notes', action: 'stats', role: 'Viewer' },
    { resource: 'field-notes', action: 'emit', role: 'Member' },
  ],
  documentTypes: [
    {
      name: 'note',
      resource: 'field-notes',
      idPrefix: 'fnote',
      label: { en: 'Note', ar: 'ملاحظة' },
      fields: [{ name: 'title', type: 'string', required: true, maxLength: 80, label: { en: 'Title', ar: 'العنوان' } }],
    },
  ],
  eventFamilies: [
    {
      family: 'field notes',
      prefix: 'fieldnote',
      label: { en: 'Field notes', ar: 'ملاحظات ميدانية' },
      topics: [
        { topic: 'fieldnote.note.created', description: { en: 'A note was taken', ar: 'كُتبت ملاحظة' }, source: { type: 'note', on: 'create' } },
        {
          topic: 'fieldnote.note.flagged',
          description: { en: 'A note was flagged', ar: 'عُلّمت ملاحظة' },
          source: { on: 'operation', operation: 'POST /field-notes/emit' },
          payload: { type: 'object', additionalProperties: false, required: ['noteId'], properties: { noteId: { type: 'string' } } },
          example: { noteId: 'fnote_1' },
        },
      ],
    },
  ],
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
      async handler(_req, ctx: AppContext) {
        const total: number = (await ctx.docs('note').list()).total;
        return { body: { data: { total, label: countLabel(ctx, total) } } };
      },
    }),
    // Emits whatever it is asked to: the host decides what an app may emit.
    route({
      method: 'POST',
      url: '/field-notes/emit',
      permission: 'field-notes:emit',
      summary: 'Emit an event',
      schema: {
        body: { type: 'object', required: ['topic'], properties: { topic: { type: 'string' }, data: {} } },
        response: { 200: { type: 'object', properties: { data: { type: 'object', properties: { emitted: { type: 'string' } } } } } },
      },
      async handler(req, ctx: AppContext) {
        const { topic, data } = req.body as { topic: string; data: unknown };
        await ctx.events.emit(topic, data);
        return { body: { data: { emitted: topic } } };
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
  it('creates a company with the app installed', async () => {
    expect(t.company.currency).toBe('SAR');
    expect(t.installed).toEqual(['field-notes']);
    const apps = await t.request('GET', '/api/v1/apps');
    expect(apps.status).toBe(200);
    expect(apps.body.data).toContainEqual(expect.objectContaining({ id: 'field-notes', state: 'enabled', installedVersion: '1.0.0' }));
  });

  it('gives the test what a client sees, never the host', () => {
    expect(t).not.toHaveProperty('host');
    expect(Object.keys(t).sort()).toEqual(['clock', 'close', 'company', 'events', 'installed', 'keyFor', 'request', 'runJobs', 'runSchedules']);
    expect(Object.keys(t.company).sort()).toEqual(['currency', 'id', 'name']);
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

    // The document's declared event carries the document.
    const events = await t.events({ topic: 'fieldnote.note.created' });
    expect(events).toEqual([expect.objectContaining({ topic: 'fieldnote.note.created', test: false, data: expect.objectContaining({ id: created.body.data.id, title: 'Pump 3 leaks' }) })]);

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
    expect(await t.keyFor('Member')).toBe(await t.keyFor('Member'));
    expect(await t.keyFor('Member')).not.toBe(await t.keyFor('Admin'));
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

  it('closes the host, leaving no temporary folder behind', async () => {
    // The test host's folders go under the system temporary folder: point it at one of our own.
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'diwan-test-host-tmp-'));
    const saved = process.env.TMPDIR;
    let t2: TestHost;
    try {
      process.env.TMPDIR = tmp;
      t2 = await createTestHost({ apps: [root] });
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
    }
    try {
      expect(fs.readdirSync(tmp).length).toBeGreaterThan(0);
      expect((await t2.request('GET', '/api/v1/field-notes')).status).toBe(200);
      await t2.close();
      expect(fs.readdirSync(tmp)).toEqual([]);
      await expect(t2.request('GET', '/api/v1/field-notes')).rejects.toThrow();
      await t2.close();
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });

  it("refuses (APP_ERROR) an app's emit of an undeclared topic, of a document-sourced topic, and of data breaking the payload", async () => {
    const emit = (topic: string, data?: unknown) => t.request('POST', '/api/v1/field-notes/emit', { role: 'Member', body: { topic, data } });
    const before = (await t.events()).length;

    const ok = await emit('fieldnote.note.flagged', { noteId: 'fnote_42' });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(await t.events({ topic: 'fieldnote.note.flagged' })).toEqual([expect.objectContaining({ data: { noteId: 'fnote_42' }, test: false })]);

    const refused = async (topic: string, data: unknown, rule: string) => {
      const r = await emit(topic, data);
      expect(r.status, JSON.stringify(r.body)).toBe(500);
      expect(r.body.error.code).toBe('APP_ERROR');
      expect(r.body.error.details[0]).toMatchObject({ app: 'field-notes', rule, topic });
      expect(r.body.error.message).toContain('field-notes');
      return r.body.error;
    };
    // Not a topic the app declares: in its own family, and in another app's.
    await refused('fieldnote.note.vanished', { noteId: 'fnote_1' }, 'undeclared_topic');
    await refused('invoice.paid', { id: 'inv_1' }, 'undeclared_topic');
    // Declared, but the host emits it when the document is created.
    await refused('fieldnote.note.created', { id: 'fnote_1', title: 'forged' }, 'document_source');
    // Declared as the app's own, with data its payload schema refuses.
    const bad = await refused('fieldnote.note.flagged', { noteId: 42 }, 'payload');
    expect(bad.details[0].errors).toEqual([expect.objectContaining({ instancePath: '/noteId' })]);
    await refused('fieldnote.note.flagged', { noteId: 'fnote_1', extra: true }, 'payload');
    await refused('fieldnote.note.flagged', undefined, 'payload');

    // Only the accepted emit reached the outbox; none of the refused ones did.
    const after = await t.events();
    expect(after.slice(before).map((e) => e.topic)).toEqual(['fieldnote.note.flagged']);
  });

  it("fires a schedule once when the test clock passes the date: invoicing's invoice.overdue", async () => {
    const t2 = await createTestHost({ apps: [], installFirstParty: ['invoicing'], currency: 'SAR', now: Date.UTC(2026, 0, 15, 9, 0, 0) });
    try {
      expect(t2.clock.now()).toBe(Date.UTC(2026, 0, 15, 9, 0, 0));
      const customer = await t2.request('POST', '/api/v1/customers', { body: { name: 'Noura' } });
      expect(customer.status).toBe(201);
      const invoice = (dueDate: string) => ({ customerId: customer.body.data.id, date: '2026-01-15', dueDate, lines: [{ description: 'Survey', quantity: 1, unitPrice: 500 }] });
      const sent = await t2.request('POST', '/api/v1/invoices', { body: invoice('2026-02-14') });
      expect(sent.status).toBe(201);
      const id = sent.body.data.id as string;
      const send = await t2.request('POST', `/api/v1/invoices/${id}/send`);
      expect(send.status, JSON.stringify(send.body)).toBe(200);
      // A draft with the same due date is not overdue: the schedule covers sent invoices.
      const draft = await t2.request('POST', '/api/v1/invoices', { body: invoice('2026-02-14') });
      expect(draft.status).toBe(201);

      // The events so far, oldest first: the app's install, the documents' declared events and the audit trail.
      const topics = (await t2.events()).map((e) => e.topic).filter((x) => !x.startsWith('audit.'));
      // Sending issues the invoice in the same write: its number comes with invoice.issued.
      expect(topics).toEqual(['app.installed', 'customer.created', 'invoice.created', 'invoice.sent', 'invoice.updated', 'invoice.issued', 'invoice.created']);
      expect(await t2.events({ topic: 'invoice.sent' })).toEqual([
        expect.objectContaining({ data: expect.objectContaining({ id, state: 'sent', previous: { state: 'draft' } }) }),
      ]);
      expect((await t2.events()).some((e) => e.topic === 'audit.invoices.send')).toBe(true);

      // Not yet due: the due date passes at the end of 2026-02-14, plus the schedule's one day.
      t2.clock.set(Date.UTC(2026, 1, 14, 23, 0, 0));
      expect(await t2.runSchedules()).toBe(0);
      t2.clock.advance(2 * 86_400_000);
      expect(await t2.runSchedules()).toBe(1);
      const overdue = await t2.events({ topic: 'invoice.overdue' });
      expect(overdue).toEqual([expect.objectContaining({ topic: 'invoice.overdue', test: false, data: expect.objectContaining({ id, state: 'sent' }) })]);
      // Fired once: a second run, even later, writes nothing.
      expect(await t2.runSchedules()).toBe(0);
      t2.clock.advance(86_400_000);
      expect(await t2.runSchedules()).toBe(0);
      expect(await t2.events({ topic: 'invoice.overdue' })).toHaveLength(1);
    } finally {
      await t2.close();
    }
  });
});
