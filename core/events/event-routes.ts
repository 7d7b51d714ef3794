import type { CoreRoutes } from '../http/core-route.ts';
import { direction } from '../i18n/i18n.ts';
import { actorOf } from '../identity/principal.ts';
import { catalogueSchema } from './catalogue.ts';
import type { EventService } from './event-service.ts';

export function eventRoutes(r: CoreRoutes, events: EventService) {
  r.add(
    {
      method: 'GET', url: '/api/v1/events/catalogue', operationId: 'core.getEventCatalogue',
      summary: "Every event family and topic of the apps on this host, marked installed or not in the caller's company",
      description: '`*` in `pattern` leaves out the audit trail, which is reached only through `audit.*` or an exact audit topic.',
      permission: 'events:read',
      schema: {
        querystring: {
          type: 'object', additionalProperties: false,
          properties: {
            family: { type: 'string', maxLength: 64, description: 'A family prefix (`crm`) or display name (`point of sale`)' },
            pattern: { type: 'string', maxLength: 255, description: 'A subscription pattern: exact topic, `<family>.*` or `*`' },
            installed: { type: 'boolean', description: "Only families of apps installed in the caller's company" },
          },
        },
        response: { 200: { type: 'object', required: ['data', 'lang', 'dir'], properties: { data: catalogueSchema, lang: { type: 'string' }, dir: { type: 'string' } } } },
      },
    },
    async (req, reply) => {
      const q = req.query as { family?: string; pattern?: string; installed?: boolean };
      const data = events.catalogue(req.principal.companyId, { lang: req.lang, family: q.family, pattern: q.pattern, installedOnly: q.installed });
      // The catalogue is large and already shaped by its schema: skip a second serialisation pass.
      return reply.type('application/json; charset=utf-8').send(JSON.stringify({ data, lang: req.lang, dir: direction(req.lang) }));
    },
  );
  r.add(
    {
      method: 'POST', url: '/api/v1/events/test', operationId: 'core.sendTestEvent',
      summary: "Emit a topic's example payload, marked as a test, to the company's matching webhook endpoints",
      permission: 'events:test', errors: ['APP_NOT_ENABLED'],
      schema: {
        body: {
          type: 'object', additionalProperties: false, required: ['topic'],
          properties: { topic: { type: 'string', minLength: 3, maxLength: 255 }, data: { type: 'object', description: 'Payload to send instead of the example' } },
        },
        response: {
          202: { type: 'object', required: ['data'], properties: { data: { type: 'object', required: ['id', 'topic', 'test'], properties: { id: { type: 'string' }, topic: { type: 'string' }, test: { type: 'boolean' }, createdAt: { type: 'string' } } } } },
        },
      },
    },
    async (req, reply) => {
      const b = req.body as { topic: string; data?: Record<string, unknown> };
      const ev = events.trigger(req.principal.companyId, b.topic, actorOf(req.principal), b.data);
      reply.code(202);
      return { data: { id: ev.id, topic: ev.topic, test: true, createdAt: ev.createdAt } };
    },
  );
}
