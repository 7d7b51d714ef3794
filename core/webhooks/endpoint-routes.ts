// /api/v1/webhook-endpoints: endpoints of the caller's company, their secret (shown at create
// and rotate only), test events, and the delivery log with retry and recover-since. Another
// company's endpoint answers 404 NOT_FOUND, as an unknown one does.
import type { CoreRoutes } from '../http/core-route.ts';
import { dataOf, idParams, listOf, paging } from '../http/core-route.ts';
import { actorOf } from '../identity/principal.ts';
import { DiwanError } from '../errors/diwan-error.ts';
import { fieldError } from '../errors/diwan-error.ts';
import type { EventService } from '../events/event-service.ts';
import { familyOf, isAuditTopic, parsePattern } from '../events/patterns.ts';
import { endpointSchema, endpointWithSecretSchema, type EndpointPatch, type EndpointInput } from './endpoints.ts';
import { DELIVERY_FILTERS, deliverySchema, deliveryWithAttemptsSchema, type DeliveryFilter } from './deliveries.ts';
import type { Webhooks } from './dispatcher.ts';

const BASE = '/api/v1/webhook-endpoints';

const urlProp = { type: 'string', minLength: 1, maxLength: 2048, description: 'http(s) URL that receives deliveries; internal addresses are refused' } as const;
const topicsProp = {
  type: 'array', minItems: 1, maxItems: 100,
  items: { type: 'string', maxLength: 255 },
  description: 'Topic patterns: exact topics, `<family>.*`, or `*` (every topic but the audit trail, which needs `audit.*`)',
} as const;
const descriptionProp = { type: ['string', 'null'], maxLength: 500 } as const;

const deliveryParams = {
  type: 'object', required: ['id', 'deliveryId'],
  properties: { id: { type: 'string', maxLength: 64 }, deliveryId: { type: 'string', maxLength: 64 } },
} as const;

const recoverCounts = {
  type: 'object', required: ['since', 'count', 'dead', 'retrying'],
  properties: { since: { type: 'string' }, count: { type: 'integer' }, dead: { type: 'integer' }, retrying: { type: 'integer' } },
} as const;

function sinceOf(value: unknown, where: 'query' | 'body'): string {
  const d = typeof value === 'string' ? new Date(value) : undefined;
  if (!d || Number.isNaN(d.getTime())) {
    throw new DiwanError('VALIDATION_ERROR', [{ in: where, pointer: '/since', rule: 'format', limit: 'date-time', message: 'since must be an ISO 8601 date-time' }], { summary: 'since must be an ISO 8601 date-time' });
  }
  return d.toISOString();
}

/** Candidate topics for a test event of an endpoint: its exact topics, then topics of its families. */
function testTopics(patterns: string[], known: Set<string>): string[] {
  const out: string[] = [];
  const sorted = [...known].sort();
  for (const p of patterns) {
    const parsed = parsePattern(p);
    if (parsed.kind === 'exact') out.push(parsed.topic);
    else if (parsed.kind === 'family') out.push(...sorted.filter((t) => familyOf(t) === parsed.prefix));
    else if (parsed.kind === 'all') out.push(...sorted.filter((t) => !isAuditTopic(t)));
  }
  return [...new Set(out)];
}

export function webhookRoutes(r: CoreRoutes, deps: { webhooks: Webhooks; events: EventService }) {
  const { endpoints, deliveries } = deps.webhooks;

  r.add(
    {
      method: 'POST', url: BASE, operationId: 'core.createWebhookEndpoint', summary: 'Register a webhook endpoint; its signing secret is in the response once',
      permission: 'webhooks:manage',
      schema: {
        body: {
          type: 'object', additionalProperties: false, required: ['url', 'topics'],
          properties: { url: urlProp, topics: topicsProp, description: descriptionProp, enabled: { type: 'boolean', default: true } },
        },
        response: { 201: dataOf(endpointWithSecretSchema) },
      },
    },
    async (req, reply) => {
      const ep = await endpoints.create(req.principal.companyId, req.body as EndpointInput, actorOf(req.principal), req.id);
      reply.code(201);
      return { data: ep };
    },
  );

  r.add(
    {
      method: 'GET', url: BASE, operationId: 'core.listWebhookEndpoints', summary: "The company's webhook endpoints (never their secrets)",
      permission: 'webhooks:read',
      schema: { querystring: { type: 'object', additionalProperties: false, properties: { ...paging } }, response: { 200: listOf(endpointSchema) } },
    },
    async (req) => {
      const q = req.query as { page: number; pageSize: number };
      const { data, total } = endpoints.list(req.principal.companyId, q);
      return { data, total, page: q.page, pageSize: q.pageSize };
    },
  );

  r.add(
    {
      method: 'GET', url: `${BASE}/:id`, operationId: 'core.getWebhookEndpoint', summary: 'One webhook endpoint (never its secret)',
      permission: 'webhooks:read', errors: ['NOT_FOUND'],
      schema: { params: idParams, response: { 200: dataOf(endpointSchema) } },
    },
    async (req) => ({ data: endpoints.get(req.principal.companyId, (req.params as { id: string }).id) }),
  );

  r.add(
    {
      method: 'PATCH', url: `${BASE}/:id`, operationId: 'core.updateWebhookEndpoint', summary: "Change an endpoint's URL, topics, enabled flag or description",
      permission: 'webhooks:manage', errors: ['NOT_FOUND'],
      schema: {
        params: idParams,
        body: {
          type: 'object', additionalProperties: false, minProperties: 1,
          properties: { url: urlProp, topics: topicsProp, description: descriptionProp, enabled: { type: 'boolean' } },
        },
        response: { 200: dataOf(endpointSchema) },
      },
    },
    async (req) => ({
      data: await endpoints.update(req.principal.companyId, (req.params as { id: string }).id, req.body as EndpointPatch, actorOf(req.principal), req.id),
    }),
  );

  r.add(
    {
      method: 'DELETE', url: `${BASE}/:id`, operationId: 'core.deleteWebhookEndpoint', summary: 'Delete an endpoint with its delivery log',
      permission: 'webhooks:manage', errors: ['NOT_FOUND'],
      schema: { params: idParams, response: { 200: dataOf(endpointSchema) } },
    },
    async (req) => ({ data: endpoints.remove(req.principal.companyId, (req.params as { id: string }).id, actorOf(req.principal), req.id) }),
  );

  r.add(
    {
      method: 'POST', url: `${BASE}/:id/rotate-secret`, operationId: 'core.rotateWebhookSecret',
      summary: 'A new signing secret, shown once; the previous one keeps signing (a second v1) during the grace period',
      permission: 'webhooks:manage', errors: ['NOT_FOUND'],
      schema: {
        params: idParams,
        response: {
          200: dataOf({
            ...endpointWithSecretSchema,
            required: [...endpointWithSecretSchema.required, 'previousSecretValidUntil'],
            properties: { ...endpointWithSecretSchema.properties, previousSecretValidUntil: { type: ['string', 'null'] } },
          }),
        },
      },
    },
    async (req) => ({ data: endpoints.rotate(req.principal.companyId, (req.params as { id: string }).id, actorOf(req.principal), req.id) }),
  );

  r.add(
    {
      method: 'POST', url: `${BASE}/:id/test`, operationId: 'core.testWebhookEndpoint',
      summary: "Emit a test event (the topic's example payload, marked `test: true`) for a topic, by default the first one the endpoint subscribes to",
      permission: 'webhooks:manage', errors: ['NOT_FOUND', 'APP_NOT_ENABLED'],
      schema: {
        params: idParams,
        body: {
          type: ['object', 'null'], additionalProperties: false,
          properties: { topic: { type: 'string', minLength: 3, maxLength: 255 }, data: { type: 'object' } },
        },
        response: {
          202: dataOf({ type: 'object', required: ['eventId', 'topic', 'test'], properties: { eventId: { type: 'string' }, topic: { type: 'string' }, test: { type: 'boolean' }, createdAt: { type: 'string' } } }),
        },
      },
    },
    async (req, reply) => {
      const companyId = req.principal.companyId;
      const ep = endpoints.get(companyId, (req.params as { id: string }).id);
      const body = (req.body ?? {}) as { topic?: string; data?: Record<string, unknown> };
      const actor = actorOf(req.principal);
      let ev;
      if (body.topic) {
        ev = deps.events.trigger(companyId, body.topic, actor, body.data);
      } else {
        let lastErr: unknown;
        for (const topic of testTopics(ep.topics, deps.events.known().topics).slice(0, 200)) {
          try {
            ev = deps.events.trigger(companyId, topic, actor, body.data);
            break;
          } catch (err) {
            lastErr = err;
            if (!(err instanceof DiwanError) || err.code !== 'APP_NOT_ENABLED') throw err;
          }
        }
        if (!ev) throw lastErr ?? fieldError('/topic', 'required', 'the endpoint subscribes to no topic that can be triggered; name one in topic');
      }
      reply.code(202);
      return { data: { eventId: ev.id, topic: ev.topic, test: true, createdAt: ev.createdAt } };
    },
  );

  r.add(
    {
      method: 'GET', url: `${BASE}/:id/deliveries`, operationId: 'core.listWebhookDeliveries', summary: "The endpoint's delivery log, newest first",
      permission: 'webhooks:read', errors: ['NOT_FOUND'],
      schema: {
        params: idParams,
        querystring: {
          type: 'object', additionalProperties: false,
          properties: { ...paging, state: { type: 'string', enum: [...DELIVERY_FILTERS], description: '`retrying` is pending after a failed attempt; `failed` is retrying or dead' } },
        },
        response: { 200: listOf(deliverySchema) },
      },
    },
    async (req) => {
      const ep = endpoints.get(req.principal.companyId, (req.params as { id: string }).id);
      const q = req.query as { page: number; pageSize: number; state?: DeliveryFilter };
      const { data, total } = deliveries.list(ep.id, q);
      return { data, total, page: q.page, pageSize: q.pageSize };
    },
  );

  r.add(
    {
      method: 'GET', url: `${BASE}/:id/deliveries/:deliveryId`, operationId: 'core.getWebhookDelivery', summary: 'One delivery with every attempt',
      permission: 'webhooks:read', errors: ['NOT_FOUND'],
      schema: { params: deliveryParams, response: { 200: dataOf(deliveryWithAttemptsSchema) } },
    },
    async (req) => {
      const p = req.params as { id: string; deliveryId: string };
      const ep = endpoints.get(req.principal.companyId, p.id);
      return { data: deliveries.get(ep.id, p.deliveryId) };
    },
  );

  r.add(
    {
      method: 'POST', url: `${BASE}/:id/deliveries/:deliveryId/retry`, operationId: 'core.retryWebhookDelivery',
      summary: 'Schedule a new attempt of a delivery now, dead ones included (same delivery and event ids)',
      permission: 'webhooks:manage', errors: ['NOT_FOUND', 'CONFLICT'],
      schema: { params: deliveryParams, response: { 202: dataOf(deliverySchema) } },
    },
    async (req, reply) => {
      const p = req.params as { id: string; deliveryId: string };
      const companyId = req.principal.companyId;
      const ep = endpoints.get(companyId, p.id);
      const data = deliveries.retry(companyId, ep.id, p.deliveryId, actorOf(req.principal), req.id);
      deps.webhooks.dispatcher.wake(true);
      reply.code(202);
      return { data };
    },
  );

  r.add(
    {
      method: 'GET', url: `${BASE}/:id/recover`, operationId: 'core.previewWebhookRecover', summary: 'How many failed (retrying or dead) deliveries since a time a recover would reschedule',
      permission: 'webhooks:read', errors: ['NOT_FOUND'],
      schema: {
        params: idParams,
        querystring: { type: 'object', additionalProperties: false, required: ['since'], properties: { since: { type: 'string', maxLength: 40, description: 'ISO 8601 date-time' } } },
        response: { 200: dataOf(recoverCounts) },
      },
    },
    async (req) => {
      const ep = endpoints.get(req.principal.companyId, (req.params as { id: string }).id);
      const since = sinceOf((req.query as { since: string }).since, 'query');
      return { data: { since, ...deliveries.recoverable(ep.id, since) } };
    },
  );

  r.add(
    {
      method: 'POST', url: `${BASE}/:id/recover`, operationId: 'core.applyWebhookRecover', summary: 'Reschedule now every failed (retrying or dead) delivery created since a time',
      permission: 'webhooks:manage', errors: ['NOT_FOUND'],
      schema: {
        params: idParams,
        body: { type: 'object', additionalProperties: false, required: ['since'], properties: { since: { type: 'string', maxLength: 40, description: 'ISO 8601 date-time' } } },
        response: { 202: dataOf(recoverCounts) },
      },
    },
    async (req, reply) => {
      const companyId = req.principal.companyId;
      const ep = endpoints.get(companyId, (req.params as { id: string }).id);
      const since = sinceOf((req.body as { since: string }).since, 'body');
      const counts = deliveries.recover(companyId, ep.id, since, actorOf(req.principal), req.id);
      deps.webhooks.dispatcher.wake(true);
      reply.code(202);
      return { data: { since, ...counts } };
    },
  );
}
