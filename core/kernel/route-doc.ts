// Input of the OpenAPI builder (`build-document.ts`): what the host knows about
// each of its routes, its error table and its shared schemas. Plain data, so
// the host, the app runtime and tests can all produce it.

/** A JSON Schema as written beside a route (draft-07 / ajv / Fastify flavour accepted). */
export type JsonSchema = { readonly [keyword: string]: unknown } | boolean;

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface RouteHeaderDoc {
  /** Header name as sent on the wire, e.g. 'Idempotency-Key'. */
  name: string;
  description: string;
  required?: boolean;
  schema: JsonSchema;
}

export interface RouteDoc {
  method: HttpMethod;
  /** Fastify style: '/api/v1/customers/:id'. */
  url: string;
  /** Unique across the document, e.g. 'invoicing.listCustomers'. */
  operationId: string;
  summary: string;
  description?: string;
  /** App id or 'core'. */
  tag: string;
  /** e.g. 'customers:read'; absent => public route (no security). */
  permission?: string;
  schema: {
    params?: JsonSchema;
    querystring?: JsonSchema;
    headers?: JsonSchema;
    body?: JsonSchema;
    /** Success responses, e.g. { 200: {...} } or { 201: {...} }. */
    response: Record<number, JsonSchema>;
  };
  /** Error codes this route may answer beyond the implicit ones, e.g. ['CONFLICT']. */
  errors?: string[];
  /** Documented request headers, e.g. Idempotency-Key. */
  headers?: RouteHeaderDoc[];
  /** Media type of the success responses; `application/json` unless said (e.g. `text/event-stream`). */
  produces?: string;
}

/** One event topic, delivered to webhook endpoints: an entry of the document's `webhooks`. */
export interface WebhookDoc {
  /** e.g. 'invoice.created'; the key under `webhooks`. */
  topic: string;
  summary: string;
  description?: string;
  /** The app (or 'core') that owns the topic's family. */
  tag: string;
  /** JSON Schema of the event's `data`. */
  payload: JsonSchema;
}

export interface ErrorCodeDoc {
  code: string;
  status: number;
  description: string;
}

export interface DocumentInput {
  title: string;
  version: string;
  description?: string;
  serverUrl?: string;
  routes: RouteDoc[];
  errorCodes: ErrorCodeDoc[];
  tags?: { name: string; description?: string }[];
  /** Event topics, described under the document's `webhooks` (see webhooks.ts). */
  webhooks?: WebhookDoc[];
  /** Named shared schemas, referenced by '#/components/schemas/<name>' (or by their `$id`). */
  components?: Record<string, JsonSchema>;
}
