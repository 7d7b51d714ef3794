// Two small apps that number their tickets with `ctx.sequences` (test/api-sequences.test.ts):
// `POST /<app>/take { fail?, pauseMs? }` takes the next number of the app's `ticket` counter,
// stores a ticket with it, waits `pauseMs` (so that concurrent requests overlap while each holds
// its number) and then fails if told to.
import type { Manifest } from '../manifests/manifest.schema.ts';
import type { AppSource } from '../core/apps/app-source.ts';
import { bi, writeApp } from './fixtures.ts';

function manifest(id: string, resource: string, idPrefix: string): Manifest {
  return {
    id, version: '1.0.0', host: '^0.1.0',
    name: bi(`Tickets ${id}`, `تذاكر ${id}`), description: bi('Numbered tickets', 'تذاكر مرقمة'),
    strings: { en: { title: 'Tickets' }, ar: { title: 'التذاكر' } },
    permissions: [{ resource, action: 'take', role: 'Member', description: bi('Take a number', 'أخذ رقم') }],
    documentTypes: [{
      name: 'ticket', resource, idPrefix, label: bi('Ticket', 'تذكرة'), labelPlural: bi('Tickets', 'التذاكر'),
      fields: [{ name: 'number', type: 'integer', required: true, minimum: 1, filterable: true, label: bi('Number', 'الرقم') }],
    }],
  } as Manifest;
}

const server = (id: string, resource: string) => `
import { defineApp, route, AppError } from 'diwan/sdk';
export default defineApp({
  id: '${id}',
  routes: [route({
    method: 'POST', url: '/${resource}/take', permission: '${resource}:take', summary: 'Take the next number',
    schema: {
      body: { type: 'object', additionalProperties: false, properties: { fail: { type: 'boolean' }, pauseMs: { type: 'integer' } } },
      response: { 200: { type: 'object', additionalProperties: true } },
    },
    async handler(req, ctx) {
      const number = await ctx.sequences.next('ticket');
      const ticket = await ctx.docs('ticket').create({ number });
      if (req.body?.pauseMs) await new Promise((r) => setTimeout(r, req.body.pauseMs));
      if (req.body?.fail) throw new AppError('CONFLICT', [{ reason: 'told_to_fail', number }]);
      return { body: { data: ticket } };
    },
  })],
});
`;

export function sequenceSources(root: string): AppSource[] {
  return [
    writeApp(root, manifest('tickets', 'tickets', 'tkt'), server('tickets', 'tickets')),
    writeApp(root, manifest('stubs', 'stubs', 'stb'), server('stubs', 'stubs')),
  ];
}
