// /api/v1/webhook-endpoints: endpoints of the caller's company, their secret (shown at create
// and rotate only), test events, and the delivery log with retry and recover-since. Another
// company's endpoint answers 404 NOT_FOUND, as an unknown one does.
import { actorOf } from '../../identity/principal.ts';
import { DiwanError, fieldError } from '../../kernel/errors/diwan-error.ts';
import type { CatalogueService } from '../../apps/catalogue-service.ts';
import { familyOf, isOptInTopic, parsePattern } from '../../events/patterns.ts';
import { endpointSchema, endpointWithSecretSchema, endpointWithWarningsSchema, MAX_IN_FLIGHT_LIMIT, MAX_RATE_PER_SECOND, type EndpointPatch, type EndpointInput } from '../../webhooks/endpoints.ts';
import { DELIVERY_FILTERS, deliverySchema, deliveryWithAttemptsSchema, type DeliveryFilter } from '../../webhooks/deliveries.ts';
import type { Webhooks } from '../../webhooks/webhooks.ts';
import { core, dataOf, idParams, listOf, ok, paging, type ApiRequest, type Route } from '../route.ts';

const BASE = '/api/v1/webhook-endpoints';

const urlProp = { type: 'string', minLength: 1, maxLength: 2048, description: 'http(s) URL that receives deliveries; internal addresses are refused' } as const;
const topicsProp = {
  type: 'array', minItems: 1, maxItems: 100,
  items: { type: 'string', maxLength: 255 },
  description: 'Topic patterns: exact topics, `<family>.*`, or `*` (every topic but the opt-in families, the audit trail and the webhook operations, which need `audit.*` and `webhook.*`)',
} as const;
const descriptionProp = { type: ['string', 'null'], maxLength: 500 } as const;
const limitProps = {
  maxInFlight: {
    type: ['integer', 'null'], minimum: 1, maximum: MAX_IN_FLIGHT_LIMIT,
    description: 'Attempts in flight at once to this endpoint; null: the host default (DIWAN_WEBHOOK_MAX_IN_FLIGHT)',
  },
  ratePerSecond: {
    type: ['integer', 'null'], minimum: 1, maximum: MAX_RATE_PER_SECOND,
    description: 'Deliveries started per second at most (a second’s worth may start at once); null: no throttle. A throttled endpoint never holds up another',
  },
} as const;

/** Checked in full by endpoints.ts (checkHeaders), so that every bad header is listed at once. */
const headersProp = {
  type: ['object', 'null'],
  additionalProperties: { type: 'string' },
  description:
    'Headers sent with every delivery (at most 20, 4096 bytes in all). Refused: the signature and delivery headers (`x-service-signature`, `webhook-*`, `x-diwan-*`), hop-by-hop headers (`connection`, `keep-alive`, `transfer-encoding`, `te`, `trailer`, `upgrade`, `proxy-*`), `host`, `content-length`, `content-type`, and invalid names or values. On PATCH the set replaces the old one; null or {} removes them',
} as const;
const asymmetricProp = {
  type: 'boolean',
  description: 'Also sign each delivery with ed25519 (Standard Webhooks `v1a,…` in `webhook-signature`); the endpoint shows the public key as `publicKey`. Turning it off and on again makes a new key pair',
} as const;

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
    else if (parsed.kind === 'all') out.push(...sorted.filter((t) => !isOptInTopic(t)));
  }
  return [...new Set(out)];
}

const scopeOf = (req: ApiRequest) => ({ companyId: req.company.id, actor: actorOf(req.principal), appId: 'core', requestId: req.id, lang: req.lang });

export function webhookRoutes(deps: { webhooks: Webhooks; catalogue: CatalogueService }): Route[] {
  const { endpoints, deliveries, dispatcher } = deps.webhooks;
  const endpoint = (req: ApiRequest) => endpoints.get(req.company.id, req.params.id, req.lang);

  return [
    core(
      {
        method: 'POST', url: BASE, operationId: 'core.createWebhookEndpoint', summary: 'Register a webhook endpoint; its signing secret is in the response once',
        permission: 'webhooks:manage',
        schema: {
          body: {
            type: 'object', additionalProperties: false, required: ['url', 'topics'],
            properties: { url: urlProp, topics: topicsProp, description: descriptionProp, enabled: { type: 'boolean', default: true }, ...limitProps, headers: headersProp, asymmetric: asymmetricProp },
          },
          response: { 201: dataOf(endpointWithSecretSchema) },
        },
      },
      async (req) => ok(await endpoints.create(scopeOf(req), req.body as EndpointInput), 201),
    ),
    core(
      {
        method: 'GET', url: BASE, operationId: 'core.listWebhookEndpoints', summary: "The company's webhook endpoints (never their secrets)",
        permission: 'webhooks:read',
        schema: { querystring: { type: 'object', additionalProperties: false, properties: { ...paging } }, response: { 200: listOf(endpointSchema) } },
      },
      async (req) => {
        const q = req.query as { page: number; pageSize: number };
        const { data, total } = await endpoints.list(req.company.id, q, req.lang);
        return { body: { data, total, page: q.page, pageSize: q.pageSize } };
      },
    ),
    core(
      {
        method: 'GET', url: `${BASE}/:id`, operationId: 'core.getWebhookEndpoint', summary: 'One webhook endpoint (never its secret)',
        permission: 'webhooks:read', errors: ['NOT_FOUND'],
        schema: { params: idParams, response: { 200: dataOf(endpointSchema) } },
      },
      async (req) => ok(await endpoint(req)),
    ),
    core(
      {
        method: 'PATCH', url: `${BASE}/:id`, operationId: 'core.updateWebhookEndpoint', summary: "Change an endpoint's URL, topics, enabled flag, description, limits, custom headers or asymmetric signing",
        description: '`enabled: true` enables an endpoint again, one the host disabled included: its reason is cleared, its failing streak starts afresh and its pending deliveries go out.',
        permission: 'webhooks:manage', errors: ['NOT_FOUND'],
        schema: {
          params: idParams,
          body: {
            type: 'object', additionalProperties: false, minProperties: 1,
            properties: { url: urlProp, topics: topicsProp, description: descriptionProp, enabled: { type: 'boolean' }, ...limitProps, headers: headersProp, asymmetric: asymmetricProp },
          },
          response: { 200: dataOf(endpointWithWarningsSchema) },
        },
      },
      async (req) => ok(await endpoints.update(scopeOf(req), req.params.id, req.body as EndpointPatch)),
    ),
    core(
      {
        method: 'POST', url: `${BASE}/:id/enable`, operationId: 'core.enableWebhookEndpoint',
        summary: 'Enable an endpoint again (one the host disabled for failing included): the reason is cleared, the failing streak starts afresh, pending deliveries go out',
        permission: 'webhooks:manage', errors: ['NOT_FOUND'],
        schema: { params: idParams, response: { 200: dataOf(endpointSchema) } },
      },
      async (req) => {
        const data = await endpoints.enable(scopeOf(req), req.params.id);
        dispatcher.wake(true);
        return ok(data);
      },
    ),
    core(
      {
        method: 'DELETE', url: `${BASE}/:id`, operationId: 'core.deleteWebhookEndpoint', summary: 'Delete an endpoint with its delivery log',
        permission: 'webhooks:manage', errors: ['NOT_FOUND'],
        schema: { params: idParams, response: { 200: dataOf(endpointSchema) } },
      },
      async (req) => ok(await endpoints.remove(scopeOf(req), req.params.id)),
    ),
    core(
      {
        method: 'POST', url: `${BASE}/:id/rotate-secret`, operationId: 'core.rotateWebhookSecret',
        summary: 'A new signing secret, shown once; the previous one keeps signing (a second v1) during the grace period',
        permission: 'webhooks:manage', errors: ['NOT_FOUND'],
        schema: {
          params: idParams,
          response: {
            200: dataOf({
              ...endpointSchema,
              required: [...endpointSchema.required, 'secret', 'previousSecretValidUntil'],
              properties: { ...endpointSchema.properties, secret: endpointWithSecretSchema.properties.secret, previousSecretValidUntil: { type: ['string', 'null'] } },
            }),
          },
        },
      },
      async (req) => ok(await endpoints.rotate(scopeOf(req), req.params.id)),
    ),
    core(
      {
        method: 'POST', url: `${BASE}/:id/test`, operationId: 'core.testWebhookEndpoint',
        summary: "Emit a test event (the topic's example payload, marked `test: true`) for a topic, by default the first one the endpoint subscribes to",
        permission: 'webhooks:manage', errors: ['NOT_FOUND', 'APP_NOT_ENABLED', 'CONFLICT'],
        schema: {
          params: idParams,
          body: {
            type: ['object', 'null'], additionalProperties: false,
            properties: { topic: { type: 'string', minLength: 3, maxLength: 255 }, data: { type: 'object' } },
          },
          response: {
            202: dataOf({ type: 'object', additionalProperties: false, required: ['eventId', 'topic', 'test', 'createdAt'], properties: { eventId: { type: 'string' }, topic: { type: 'string' }, test: { type: 'boolean' }, createdAt: { type: 'string' } } }),
          },
        },
      },
      async (req) => {
        const ep = await endpoint(req);
        // A disabled endpoint would not receive it: say so rather than answer 202 for nothing.
        if (!ep.enabled) throw new DiwanError('CONFLICT', [{ reason: 'endpoint_disabled', id: ep.id, disabledReason: ep.disabledReason }], { reason: 'the endpoint is disabled; enable it first' });
        const body = (req.body ?? {}) as { topic?: string; data?: Record<string, unknown> };
        const actor = actorOf(req.principal);
        let ev;
        if (body.topic) {
          ev = await deps.catalogue.trigger(req.company.id, body.topic, actor, body.data, req.id);
        } else {
          let lastErr: unknown;
          for (const topic of testTopics(ep.topics, deps.catalogue.known().topics).slice(0, 200)) {
            try {
              ev = await deps.catalogue.trigger(req.company.id, topic, actor, body.data, req.id);
              break;
            } catch (err) {
              lastErr = err;
              if (!(err instanceof DiwanError) || err.code !== 'APP_NOT_ENABLED') throw err;
            }
          }
          if (!ev) throw lastErr ?? fieldError('/topic', 'required', 'the endpoint subscribes to no topic that can be triggered; name one in topic');
        }
        return { status: 202, body: { data: { eventId: ev.id, topic: ev.topic, test: true, createdAt: ev.createdAt } } };
      },
    ),
    core(
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
        const ep = await endpoint(req);
        const q = req.query as { page: number; pageSize: number; state?: DeliveryFilter };
        const { data, total } = await deliveries.list(ep.id, q);
        return { body: { data, total, page: q.page, pageSize: q.pageSize } };
      },
    ),
    core(
      {
        method: 'GET', url: `${BASE}/:id/deliveries/:deliveryId`, operationId: 'core.getWebhookDelivery', summary: 'One delivery with every attempt',
        permission: 'webhooks:read', errors: ['NOT_FOUND'],
        schema: { params: deliveryParams, response: { 200: dataOf(deliveryWithAttemptsSchema) } },
      },
      async (req) => ok(await deliveries.get((await endpoint(req)).id, req.params.deliveryId)),
    ),
    core(
      {
        method: 'POST', url: `${BASE}/:id/deliveries/:deliveryId/retry`, operationId: 'core.retryWebhookDelivery',
        summary: 'Schedule a new attempt of a delivery now, dead ones included (same delivery and event ids)',
        permission: 'webhooks:manage', errors: ['NOT_FOUND', 'CONFLICT'],
        schema: { params: deliveryParams, response: { 202: dataOf(deliverySchema) } },
      },
      async (req) => {
        const ep = await endpoint(req);
        const data = await deliveries.retry(scopeOf(req), ep.id, req.params.deliveryId);
        dispatcher.wake(true);
        return { status: 202, body: { data } };
      },
    ),
    core(
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
        const ep = await endpoint(req);
        const since = sinceOf((req.query as { since: string }).since, 'query');
        return ok({ since, ...(await deliveries.recoverable(ep.id, since)) });
      },
    ),
    core(
      {
        method: 'POST', url: `${BASE}/:id/recover`, operationId: 'core.applyWebhookRecover', summary: 'Reschedule now every failed (retrying or dead) delivery created since a time',
        permission: 'webhooks:manage', errors: ['NOT_FOUND'],
        schema: {
          params: idParams,
          body: { type: 'object', additionalProperties: false, required: ['since'], properties: { since: { type: 'string', maxLength: 40, description: 'ISO 8601 date-time' } } },
          response: { 202: dataOf(recoverCounts) },
        },
      },
      async (req) => {
        const ep = await endpoint(req);
        const since = sinceOf((req.body as { since: string }).since, 'body');
        const counts = await deliveries.recover(scopeOf(req), ep.id, since);
        dispatcher.wake(true);
        return { status: 202, body: { data: { since, ...counts } } };
      },
    ),
  ];
}
