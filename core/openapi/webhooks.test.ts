import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from './build-document.ts';
import { planWebhooks, WEBHOOK_EVENT } from './webhooks.ts';
import type { DocumentInput, WebhookDoc } from '../kernel/route-doc.ts';

const read = { type: 'object', required: ['id'], properties: { id: { type: 'string' } } };
const hook = (topic: string, payload: object = read, tag = 'shop'): WebhookDoc => ({ topic, summary: `${topic} happened.`, tag, payload: payload as WebhookDoc['payload'] });

const input = (webhooks: WebhookDoc[]): DocumentInput => ({
  title: 'T',
  version: '1.0.0',
  routes: [{ method: 'GET', url: '/api/v1/ping', operationId: 'core.ping', summary: 'Ping', tag: 'core', schema: { response: { 200: { type: 'object' } } } }],
  errorCodes: [{ code: 'SERVICE_UNAVAILABLE', status: 503, description: 'Busy.' }, { code: 'INTERNAL', status: 500, description: 'Fault.' }],
  webhooks,
});

describe('planWebhooks', () => {
  it('gives each distinct payload one component, named after what its topics share', () => {
    const plan = planWebhooks(
      [hook('order.created'), hook('order.updated'), hook('order.overdue', { type: 'object', properties: { days: { type: 'integer' } } }), hook('audit.a.create', { type: 'object' }), hook('audit.b.update', { type: 'object' })],
      new Set(),
    );
    expect(Object.keys(plan.schemas).sort()).toEqual(['EventData.audit', 'EventData.order', 'EventData.order.overdue', WEBHOOK_EVENT]);
    expect(plan.payloadOf.get('order.updated')).toBe('EventData.order');
    expect(plan.payloadOf.get('order.overdue')).toBe('EventData.order.overdue');
    expect(plan.payloadOf.get('audit.b.update')).toBe('EventData.audit');
  });

  it('is the same whatever the order of its input, and avoids names in use', () => {
    const hooks = [hook('a.x'), hook('b.y', { type: 'object' }), hook('c.z', { type: 'string' })];
    const one = planWebhooks(hooks, new Set(['EventData.b.y']));
    const two = planWebhooks([...hooks].reverse(), new Set(['EventData.b.y']));
    expect(one.schemas).toEqual(two.schemas);
    expect([...one.payloadOf].sort()).toEqual([...two.payloadOf].sort());
    expect(one.payloadOf.get('b.y')).toBe('EventData.b.y.2');
    expect(() => planWebhooks(hooks, new Set([WEBHOOK_EVENT]))).toThrow(/reserved/);
  });

  it("drops a payload's own $id and $schema", () => {
    const plan = planWebhooks([hook('a.x', { $id: 'https://x.example/a', $schema: 'http://json-schema.org/draft-07/schema#', type: 'object' })], new Set());
    expect(plan.schemas['EventData.a.x']).toEqual({ type: 'object' });
  });
});

describe('the document with webhooks', () => {
  it('has a webhooks section of POST operations, with shared headers, envelope and answer', () => {
    const doc = buildOpenApiDocument(input([hook('order.created'), hook('order.paid'), hook('app.enabled', { type: 'object' }, 'core')]));
    expect(Object.keys(doc.webhooks!)).toEqual(['app.enabled', 'order.created', 'order.paid']);
    expect(Object.keys(doc).indexOf('webhooks')).toBe(Object.keys(doc).indexOf('paths') + 1);
    const op = (doc.webhooks!['order.paid'] as { post: Record<string, any> }).post;
    expect(op).toMatchObject({ operationId: 'webhook.order.paid', summary: 'order.paid happened.', tags: ['shop'] });
    expect(op.parameters.map((p: { $ref: string }) => p.$ref)).toEqual([
      '#/components/parameters/WebhookSignature',
      '#/components/parameters/WebhookStandardId',
      '#/components/parameters/WebhookStandardTimestamp',
      '#/components/parameters/WebhookStandardSignature',
      '#/components/parameters/WebhookEventId',
      '#/components/parameters/WebhookDeliveryId',
    ]);
    expect(op.requestBody.content['application/json'].schema).toEqual({
      allOf: [{ $ref: '#/components/schemas/WebhookEvent' }, { properties: { type: { const: 'order.paid' }, data: { $ref: '#/components/schemas/EventData.order' } } }],
    });
    expect(op.responses).toEqual({ '2XX': { $ref: '#/components/responses/WebhookAcknowledged' } });
    expect(doc.components.parameters!.WebhookSignature).toMatchObject({ name: 'x-service-signature', in: 'header', required: true });
    expect(doc.components.schemas.WebhookEvent).toMatchObject({ required: ['id', 'type', 'createdAt', 'companyId', 'data'] });
    // Topics that share no payload and no prefix: named after the first.
    expect(doc.components.schemas).toHaveProperty(['EventData.app.enabled']);
    // Owners of topics are tags even without routes.
    expect(doc.tags.map((t) => t.name)).toContain('shop');
  });

  it('normalises payloads like any component (nullable, example)', () => {
    const doc = buildOpenApiDocument(input([hook('a.x', { type: 'object', properties: { n: { type: 'string', nullable: true, example: 'x' } } })]));
    expect(doc.components.schemas['EventData.a.x']).toEqual({ type: 'object', properties: { n: { type: ['string', 'null'], examples: ['x'] } } });
  });

  it('leaves the section out without topics, and refuses a topic twice', () => {
    const doc = buildOpenApiDocument(input([]));
    expect(doc).not.toHaveProperty('webhooks');
    expect(doc.components).not.toHaveProperty('parameters');
    expect(() => buildOpenApiDocument(input([hook('a.x'), hook('a.x')]))).toThrow(/twice/);
  });
});
