// The event catalogue, and test events for consumers to exercise their endpoints.
import { direction } from '../../kernel/i18n/i18n.ts';
import { actorOf } from '../../identity/principal.ts';
import { catalogueSchema } from '../../events/catalogue.ts';
import type { CatalogueService } from '../../apps/catalogue-service.ts';
import { core, dataOf, type Route } from '../route.ts';

export function eventRoutes(catalogue: CatalogueService): Route[] {
  return [
    core(
      {
        method: 'GET', url: '/api/v1/events/catalogue', operationId: 'core.getEventCatalogue',
        summary: "Every event family and topic of the apps on this host, marked installed or not in the caller's company",
        description: '`*` in `pattern` leaves out the audit trail, which is reached only through `audit.*` or an exact audit topic. Each topic says what makes it fire (`source`).',
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
          response: { 200: { type: 'object', additionalProperties: false, required: ['data', 'lang', 'dir'], properties: { data: catalogueSchema, lang: { type: 'string', enum: ['en', 'ar'] }, dir: { type: 'string', enum: ['ltr', 'rtl'] } } } },
        },
      },
      async (req) => {
        const q = req.query as { family?: string; pattern?: string; installed?: boolean };
        const data = await catalogue.catalogue(req.company.id, { lang: req.lang, family: q.family, pattern: q.pattern, installedOnly: q.installed });
        // The catalogue is large and already shaped by its schema: skip a second serialisation pass.
        return { json: JSON.stringify({ data, lang: req.lang, dir: direction(req.lang) }) };
      },
    ),
    core(
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
            202: dataOf({ type: 'object', additionalProperties: false, required: ['id', 'topic', 'test', 'createdAt'], properties: { id: { type: 'string' }, topic: { type: 'string' }, test: { type: 'boolean' }, createdAt: { type: 'string' } } }),
          },
        },
      },
      async (req) => {
        const b = req.body as { topic: string; data?: Record<string, unknown> };
        const ev = await catalogue.trigger(req.company.id, b.topic, actorOf(req.principal), b.data, req.id);
        return { status: 202, body: { data: { id: ev.id, topic: ev.topic, test: true, createdAt: ev.createdAt } } };
      },
    ),
  ];
}
