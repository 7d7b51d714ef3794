// The `webhooks` section of the OpenAPI 3.1 document: one POST per topic of the event catalogue,
// described as the host delivers it (core/webhooks/dispatcher.ts, `eventBody`):
// - the body is the event `{ id, type, createdAt, companyId, data, test? }`, `type` the topic and
//   `data` the topic's payload schema;
// - the headers of both signature schemes (core/webhooks/signature.ts): the spec's
//   `x-service-signature` (`t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`, one `v1` per
//   valid secret during a rotation), and Standard Webhooks' `webhook-id`, `webhook-timestamp` and
//   `webhook-signature` (`v1,<base64>` per secret, `v1a,<base64>` for ed25519); then
//   `x-diwan-event-id` and `x-diwan-delivery-id`;
// - the answer expected: any 2xx within the delivery time-out; what 410, 429 and 503 mean.
// Large schemas are components, each once: the envelope (`WebhookEvent`), every distinct payload
// (`EventData.<name>`; topics with the same payload share one: a document type's created, updated
// and deleted, the whole audit trail), the three headers and the answer.
//
// Pure, like build-document.ts, which calls it: the input is the catalogue's topics.
import type { JsonSchema, WebhookDoc } from '../kernel/route-doc.ts';
import type { Catalogue } from '../events/catalogue.ts';

/** Header names as the dispatcher sends them (a test keeps them in step with core/webhooks). */
export const WEBHOOK_HEADERS = {
  signature: 'x-service-signature',
  standardId: 'webhook-id',
  standardTimestamp: 'webhook-timestamp',
  standardSignature: 'webhook-signature',
  eventId: 'x-diwan-event-id',
  deliveryId: 'x-diwan-delivery-id',
} as const;

export const WEBHOOK_EVENT = 'WebhookEvent';
export const EVENT_DATA_PREFIX = 'EventData.';

type JsonObject = { [key: string]: unknown };

const schemaRef = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** The delivered event, whatever its topic; `data` is narrowed per topic. */
export function webhookEventSchema(): JsonSchema {
  return {
    type: 'object',
    description:
      'A delivered event: one POST per event to every enabled endpoint of the company whose topic patterns match it (an exact topic, `<family>.*`, or `*`, which leaves the audit trail out). Delivery is at least once, in event order per endpoint where possible: the same event (same `id`) may arrive more than once.',
    additionalProperties: false,
    required: ['id', 'type', 'createdAt', 'companyId', 'data'],
    properties: {
      id: { type: 'string', pattern: '^evt_[0-9a-z]+$', description: 'Event id, also in `x-diwan-event-id`; the same in every delivery of the event.' },
      type: { type: 'string', description: 'The topic, e.g. `invoice.created`.' },
      createdAt: { type: 'string', format: 'date-time', description: 'When the event was emitted (in the same transaction as the write that caused it).' },
      companyId: { type: 'string', pattern: '^co_[0-9a-z]+$', description: 'The company the event belongs to.' },
      data: { description: "The topic's payload. A test event carries the topic's example, or the data given to `POST /api/v1/events/test`." },
      test: { type: 'boolean', const: true, description: 'Present, and true, only on test events (`POST /api/v1/events/test`, `POST /api/v1/webhook-endpoints/{id}/test`).' },
    },
  };
}

export function webhookParameters(): Record<string, JsonObject> {
  return {
    WebhookSignature: {
      name: WEBHOOK_HEADERS.signature,
      in: 'header',
      required: true,
      description:
        'The spec\'s scheme: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`, keyed with the endpoint\'s signing secret as its whole string (`whsec_…`, prefix included, not decoded), as Stripe\'s libraries do. During a secret rotation there is one `v1=` per valid secret; accept the delivery if any matches and `t` is recent (`verifySignature` in `diwan/sdk`). Every delivery also carries the Standard Webhooks headers: verify either.',
      schema: { type: 'string', pattern: '^t=[0-9]+(,v1=[0-9a-f]{64})+$' },
    },
    WebhookStandardId: {
      name: WEBHOOK_HEADERS.standardId,
      in: 'header',
      required: true,
      description: 'Standard Webhooks: the message id, here the event id (the body\'s `id`); the same on every retry.',
      schema: { type: 'string', pattern: '^evt_[0-9a-z]+$' },
    },
    WebhookStandardTimestamp: {
      name: WEBHOOK_HEADERS.standardTimestamp,
      in: 'header',
      required: true,
      description: 'Standard Webhooks: the signing time in Unix seconds (the same `t` as in `x-service-signature`).',
      schema: { type: 'string', pattern: '^[0-9]+$' },
    },
    WebhookStandardSignature: {
      name: WEBHOOK_HEADERS.standardSignature,
      in: 'header',
      required: true,
      description:
        'Standard Webhooks (www.standardwebhooks.com): space-separated `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<raw body>">`, one per valid secret during a rotation, keyed with the secret\'s bytes (the base64 after `whsec_`; the `standardwebhooks` and `svix` libraries take the secret as shown; a secret minted before 2026-11-28, unpadded base64url, is given to them as `standardSecret(secret)` from `diwan/sdk`). An endpoint with `asymmetric: true` also gets `v1a,<base64 ed25519 signature>` of the same text, verified with its `publicKey` (`whpk_…`).',
      schema: { type: 'string', pattern: '^v1a?,[A-Za-z0-9+/]+={0,2}( v1a?,[A-Za-z0-9+/]+={0,2})*$' },
    },
    WebhookEventId: {
      name: WEBHOOK_HEADERS.eventId,
      in: 'header',
      required: true,
      description: 'The event id (the body\'s `id`).',
      schema: { type: 'string', pattern: '^evt_[0-9a-z]+$' },
    },
    WebhookDeliveryId: {
      name: WEBHOOK_HEADERS.deliveryId,
      in: 'header',
      required: true,
      description: 'The delivery id: one per event and endpoint, the same on every retry, so duplicates can be dropped.',
      schema: { type: 'string' },
    },
  };
}

export function webhookResponses(): Record<string, JsonObject> {
  return {
    WebhookAcknowledged: {
      description:
        'Any 2xx within the delivery time-out (10 seconds by default) acknowledges the delivery; the body is ignored beyond an excerpt kept in the delivery log. Any other status (3xx included), a time-out or a failed connection fails the attempt: it is retried after 1 minute, 5 minutes, 30 minutes, 2 hours and 12 hours (each ±10 % at random, in that order), then the delivery is dead. `410 Gone` disables the endpoint at once (`disabledReason: "gone"`). `429` or `503` with `Retry-After` (seconds or an HTTP-date) puts the next attempt at the time asked, at most an hour later, without using a retry step (up to 5 times per delivery).',
    },
  };
}

/** The longest common dotted prefix of topics (`invoice.created`, `invoice.sent` → `invoice`); one topic: itself. */
function commonPrefix(topics: string[]): string {
  if (topics.length === 1) return topics[0];
  const parts = topics.map((t) => t.split('.'));
  const out: string[] = [];
  for (let i = 0; ; i++) {
    const seg = parts[0][i];
    if (seg === undefined || parts.some((p) => p[i] !== seg)) break;
    out.push(seg);
  }
  return out.join('.');
}

export interface WebhookPlan {
  /** Components to add (before normalisation): the envelope and each distinct payload. */
  schemas: Record<string, JsonSchema>;
  /** topic → name of its payload component. */
  payloadOf: Map<string, string>;
}

/**
 * One component per distinct payload, named after what the topics sharing it have in common
 * (`EventData.invoice` for invoice.created/updated/…, `EventData.invoice.overdue` for a payload of
 * its own). `taken`: component names already in use.
 */
export function planWebhooks(webhooks: readonly WebhookDoc[], taken: ReadonlySet<string>): WebhookPlan {
  const byPayload = new Map<string, { payload: JsonSchema; topics: string[] }>();
  for (const w of webhooks) {
    const payload = stripId(w.payload);
    const key = JSON.stringify(payload);
    const entry = byPayload.get(key) ?? { payload, topics: [] };
    entry.topics.push(w.topic);
    byPayload.set(key, entry);
  }
  const used = new Set(taken);
  if (used.has(WEBHOOK_EVENT)) throw new Error(`OpenAPI: component name '${WEBHOOK_EVENT}' is reserved for the webhook event`);
  used.add(WEBHOOK_EVENT);
  const schemas: Record<string, JsonSchema> = { [WEBHOOK_EVENT]: webhookEventSchema() };
  const payloadOf = new Map<string, string>();
  // Deterministic whatever the input order: groups by their first topic.
  const groups = [...byPayload.values()].map((g) => ({ ...g, topics: [...g.topics].sort() })).sort((a, b) => (a.topics[0] < b.topics[0] ? -1 : 1));
  for (const g of groups) {
    const candidates = [commonPrefix(g.topics), g.topics[0]].filter((c) => c !== '');
    let name = candidates.map((c) => `${EVENT_DATA_PREFIX}${c}`).find((c) => !used.has(c));
    for (let i = 2; name === undefined; i++) if (!used.has(`${EVENT_DATA_PREFIX}${g.topics[0]}.${i}`)) name = `${EVENT_DATA_PREFIX}${g.topics[0]}.${i}`;
    used.add(name);
    schemas[name] = g.payload;
    for (const t of g.topics) payloadOf.set(t, name);
  }
  return { schemas, payloadOf };
}

/** A payload's own `$id`/`$schema` would claim a document-wide identity; it is described by its component name instead. */
function stripId(payload: JsonSchema): JsonSchema {
  if (typeof payload !== 'object' || payload === null) return payload;
  const { $id: _id, $schema: _schema, ...rest } = payload as JsonObject;
  return rest;
}

/** The Path Item of one topic under `webhooks`. */
export function webhookPathItem(w: WebhookDoc, payloadComponent: string): JsonObject {
  const op: JsonObject = {
    operationId: `webhook.${w.topic}`,
    summary: w.summary,
    ...(w.description !== undefined ? { description: w.description } : {}),
    tags: [w.tag],
    parameters: ['WebhookSignature', 'WebhookStandardId', 'WebhookStandardTimestamp', 'WebhookStandardSignature', 'WebhookEventId', 'WebhookDeliveryId'].map((p) => ({
      $ref: `#/components/parameters/${p}`,
    })),
    requestBody: {
      required: true,
      content: {
        'application/json': {
          schema: { allOf: [schemaRef(WEBHOOK_EVENT), { properties: { type: { const: w.topic }, data: schemaRef(payloadComponent) } }] },
        },
      },
    },
    responses: { '2XX': { $ref: '#/components/responses/WebhookAcknowledged' } },
  };
  return { post: op };
}

/** Every topic of the catalogue (in English), as the builder's input. */
export function webhooksFromCatalogue(catalogue: Catalogue): WebhookDoc[] {
  return catalogue.families.flatMap((f) =>
    f.topics.map((t) => ({
      topic: t.topic,
      summary: t.description,
      // What every topic shares (who receives it, retries) is said once, on WebhookEvent and WebhookAcknowledged.
      ...(f.optIn ? { description: `Opt-in: delivered only to endpoints subscribed to \`${f.prefix}.*\` or to this exact topic; \`*\` leaves it out.` } : {}),
      tag: t.owner,
      payload: t.payload as JsonSchema,
    })),
  );
}
