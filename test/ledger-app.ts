// A small app whose one route writes three things in one request (a document, an audit entry of
// its own and an event of its own) and may then throw, or pause between two writes: for the
// tests of the request's unit of work (test/unit-of-work.test.ts and its child process).
import type { Manifest } from '../manifests/manifest.schema.ts';
import type { AppSource } from '../core/apps/app-source.ts';
import { bi, writeApp } from './fixtures.ts';

export function ledgerManifest(): Manifest {
  return {
    id: 'ledger', version: '1.0.0', host: '^0.1.0',
    name: bi('Ledger', 'الدفتر'), description: bi('Entries posted with their audit entry and event', 'قيود تُرحَّل مع سجل تدقيقها وحدثها'),
    strings: { en: { title: 'Ledger' }, ar: { title: 'الدفتر' } },
    permissions: [{ resource: 'entries', action: 'post', role: 'Member', description: bi('Post entries', 'ترحيل القيود') }],
    settings: [
      { name: 'roundingPlaces', type: 'integer', minimum: 0, maximum: 4, default: 2, label: bi('Rounding places', 'منازل التقريب') },
      { name: 'postingMode', type: 'enum', values: ['draft', 'final'], default: 'final', label: bi('Posting mode', 'طريقة الترحيل') },
    ],
    documentTypes: [{
      name: 'entry', resource: 'entries', idPrefix: 'ent', label: bi('Entry', 'قيد'), labelPlural: bi('Entries', 'القيود'),
      fields: [{ name: 'memo', type: 'string', required: true, maxLength: 200, filterable: true, label: bi('Memo', 'البيان') }],
    }],
    eventFamilies: [{
      family: 'ledger', prefix: 'ledger', label: bi('Ledger', 'الدفتر'),
      topics: [{
        topic: 'ledger.entry.posted', description: bi('An entry was posted.', 'رُحِّل قيد.'),
        source: { on: 'operation', operation: 'POST /ledger/post' },
        payload: { type: 'object', additionalProperties: false, required: ['memo'], properties: { memo: { type: 'string' } } },
        example: { memo: 'Rent' },
      }],
    }],
  } as Manifest;
}

/**
 * `GET /ledger/today`: the app's clock and settings. `POST /ledger/post { memo, fail?, pauseMs? }`: creates an entry, records `entries:post` in the
 * audit log and emits `ledger.entry.posted`; `pauseMs` waits between the entry and a second
 * entry (`<memo> #2`), printing `between <memo>` on stdout first; `fail` throws at the end.
 */
export const LEDGER_SERVER = `
import { defineApp, route, AppError } from 'diwan/sdk';
export default defineApp({
  id: 'ledger',
  routes: [route({
    method: 'POST', url: '/ledger/post', permission: 'entries:post', summary: 'Post an entry',
    schema: {
      body: { type: 'object', additionalProperties: false, required: ['memo'], properties: { memo: { type: 'string' }, fail: { type: 'boolean' }, pauseMs: { type: 'integer' } } },
      response: { 200: { type: 'object', additionalProperties: true } },
    },
    async handler(req, ctx) {
      const { memo, fail, pauseMs } = req.body;
      const entry = await ctx.docs('entry').create({ memo });
      if (pauseMs !== undefined) {
        process.stdout.write('between ' + memo + '\\n');
        await new Promise((r) => setTimeout(r, pauseMs));
        await ctx.docs('entry').create({ memo: memo + ' #2' });
      }
      await ctx.audit.record({ action: 'post', resource: 'entries', resourceId: entry.id, after: { memo } });
      await ctx.events.emit('ledger.entry.posted', { memo });
      if (fail) throw new AppError('CONFLICT', [{ reason: 'told_to_fail' }]);
      return { body: { data: entry } };
    },
  }), route({
    method: 'GET', url: '/ledger/today', permission: 'entries:read', summary: "Today's date and the ledger's settings, as the app sees them",
    schema: { response: { 200: { type: 'object', additionalProperties: true } } },
    async handler(req, ctx) {
      ctx.log.info('today asked', { by: ctx.actor.id });
      return { body: { data: { today: ctx.clock.today(), now: ctx.clock.iso(), settings: await ctx.settings.get() } } };
    },
  })],
});
`;

export function ledgerSource(root: string): AppSource {
  return writeApp(root, ledgerManifest(), LEDGER_SERVER);
}
