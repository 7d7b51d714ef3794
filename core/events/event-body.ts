// An event as consumers receive it, the same bytes everywhere: the body of a webhook delivery,
// an item of the events API, the data of the event stream (and so what `diwan listen` signs).
// Built from the outbox row's stored JSON, without re-serialising `data`.

/** `{ id, type, createdAt, companyId, data }`, plus `"test": true` for test events. */
export function eventJson(id: string, topic: string, createdAt: string, companyId: string, data: string, test: boolean | number): string {
  return `{"id":${JSON.stringify(id)},"type":${JSON.stringify(topic)},"createdAt":${JSON.stringify(createdAt)},"companyId":${JSON.stringify(companyId)},"data":${data}${test ? ',"test":true' : ''}}`;
}

/** JSON Schema of that body, for the routes and the OpenAPI document. */
export const eventBodySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'type', 'createdAt', 'companyId', 'data'],
  properties: {
    id: { type: 'string', description: 'The event id (`evt_…`), as in the `x-diwan-event-id` header of its deliveries' },
    type: { type: 'string', description: 'The topic, e.g. `invoice.created`' },
    createdAt: { type: 'string', format: 'date-time' },
    companyId: { type: 'string' },
    data: { type: 'object', additionalProperties: true, description: "The topic's payload (see the event catalogue)" },
    test: { type: 'boolean', description: 'Present (true) on test events only' },
  },
} as const;
