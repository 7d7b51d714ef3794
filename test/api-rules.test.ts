// The manifest's rules through the API, one kind at a time, with their bad inputs: computed
// fields (exact money, dependency order, refused when a client sends them, readOnly in the
// OpenAPI document), validations (every broken rule at once, in the caller's language), a
// transition's guard, roles, input and `set` (a failing `set` leaves nothing behind), and locks
// by state. On SQLite, and again on PostgreSQL (vitest.config.ts's `onPostgres`).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Host } from '../core/host.ts';
import { buildHost } from './db.ts';
import { ARABIC, count, createCompany, expectError, type TestCompany } from './helpers.ts';
import { tempDir } from './fixtures.ts';
import { rulesSource } from './rules-app.ts';

/** The JSON schema of an operation's request body, its `$ref` resolved. */
function bodySchema(doc: Record<string, any>, path: string): Record<string, any> {
  const s = doc.paths[path].post.requestBody.content['application/json'].schema;
  return s.$ref ? doc.components.schemas[s.$ref.split('/').pop()] : s;
}

describe('rules in the manifest', () => {
  let host: Host;
  let co: TestCompany;

  beforeAll(async () => {
    host = await buildHost({ sources: [rulesSource(tempDir())], config: { rateLimitPerMinute: 0 } });
    co = await createCompany(host, { apps: ['rules-lab'] });
  });
  afterAll(() => host.close());

  const order = (over: Record<string, unknown> = {}) => ({
    customer: 'Acme',
    lines: [{ quantity: 3, unitPrice: 100.1 }, { quantity: 1, unitPrice: 0.05 }],
    discountPercent: 12.5,
    ...over,
  });
  const create = async (over: Record<string, unknown> = {}) => {
    const res = await co.as().post('/api/v1/orders', order(over));
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data as Record<string, unknown> & { id: string };
  };

  describe('computed fields', () => {
    it('computes every one in minor units, each after the fields it reads, on create and on update', async () => {
      const doc = await create();
      // 3 × 100.10 + 1 × 0.05 = 300.35; 12.5 % of it is 37.54375 → 37.54; VAT 15 % of 262.81 = 39.4215 → 39.42.
      expect(doc).toMatchObject({ subtotal: 300.35, discount: 37.54, total: 262.81, vat: 39.42 });
      const res = await co.as().patch(`/api/v1/orders/${doc.id}`, { lines: [{ quantity: 3, unitPrice: 0.1 }], discountPercent: 0 });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data).toMatchObject({ subtotal: 0.3, discount: 0, total: 0.3, vat: 0.05 });
    });

    it('refuses a computed field sent by a client, on create and on update', async () => {
      const e = expectError(await co.as().post('/api/v1/orders', order({ total: 1 })), 400, 'VALIDATION_ERROR');
      expect(e.details).toEqual([expect.objectContaining({ pointer: '/total', rule: 'additionalProperties' })]);
      const doc = await create();
      const p = expectError(await co.as().patch(`/api/v1/orders/${doc.id}`, { subtotal: 5 }), 400, 'VALIDATION_ERROR');
      expect(p.details[0]).toMatchObject({ pointer: '/subtotal', rule: 'additionalProperties' });
      expect((await co.as().get(`/api/v1/orders/${doc.id}`)).json().data.subtotal).toBe(300.35);
    });

    it('is readOnly in the OpenAPI document, and absent from the write schemas', async () => {
      const doc = (await host.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
      const schemas = doc.components.schemas as Record<string, { properties: Record<string, { readOnly?: boolean }> }>;
      const read = Object.values(schemas).find((s) => s.properties?.total && s.properties?.id)!;
      expect(read.properties.total.readOnly).toBe(true);
      expect(read.properties.customer.readOnly).toBeUndefined();
      const write = bodySchema(doc, '/api/v1/orders');
      expect(Object.keys(write.properties)).toEqual(['customer', 'lines', 'discountPercent', 'startDate', 'endDate', 'notes', 'probability', 'lostReason']);
    });
  });

  describe('validations', () => {
    it('lists every broken rule with its pointer, in the caller’s language', async () => {
      const body = order({ startDate: '2026-03-10', endDate: '2026-03-01', lines: [{ quantity: 0, unitPrice: 5 }] });
      const en = expectError(await co.as().post('/api/v1/orders', body), 400, 'VALIDATION_ERROR');
      expect(en.details.map((d) => [d.pointer, d.rule, d.message])).toEqual([
        ['/endDate', 'validation', 'The order cannot end before it starts'],
        ['/lines', 'validation', 'Every line needs a quantity'],
      ]);
      const ar = expectError(await co.as().post('/api/v1/orders', body, { 'accept-language': 'ar' }), 400, 'VALIDATION_ERROR');
      expect(ar.details.map((d) => d.message)).toEqual(['لا يجوز أن ينتهي الطلب قبل بدايته', 'يلزم لكل بند كمية']);
    });

    it('does not apply a rule to a field the document does not have', async () => {
      const doc = await create({ startDate: '2026-03-10' });
      expect(doc.startDate).toBe('2026-03-10');
    });

    it('holds on update too', async () => {
      const doc = await create({ startDate: '2026-03-01', endDate: '2026-03-02' });
      const e = expectError(await co.as().patch(`/api/v1/orders/${doc.id}`, { endDate: '2026-02-01' }), 400, 'VALIDATION_ERROR');
      expect(e.details[0]).toMatchObject({ pointer: '/endDate', rule: 'validation' });
    });
  });

  describe('transitions', () => {
    it('refuses a guard that does not hold with its reason, in both languages', async () => {
      const doc = await create({ lines: [{ quantity: 1, unitPrice: 0 }] });
      const en = expectError(await co.as().post(`/api/v1/orders/${doc.id}/send`), 409, 'CONFLICT');
      expect(en.message).toContain('An order with nothing to pay cannot be sent');
      expect(en.details[0]).toMatchObject({ reason: 'guard', transition: 'send', state: 'draft' });
      const ar = expectError(await co.as().post(`/api/v1/orders/${doc.id}/send`, undefined, { 'accept-language': 'ar' }), 409, 'CONFLICT');
      expect(ar.message).toMatch(ARABIC);
      expect(ar.message).toContain('لا يرسل طلب لا مبلغ فيه');
      expect((await co.as().get(`/api/v1/orders/${doc.id}`)).json().data.state).toBe('draft');
      const ok = await create();
      expect((await co.as().post(`/api/v1/orders/${ok.id}/send`)).json().data.state).toBe('sent');
    });

    it('lets only the roles it names run it, beyond its permission', async () => {
      const doc = await create();
      const e = expectError(await co.as('Member').post(`/api/v1/orders/${doc.id}/approve`), 403, 'FORBIDDEN');
      expect(e.details[0]).toMatchObject({ reason: 'roles', transition: 'approve', roles: ['Manager'], role: 'Member' });
      // An input that names a document must name one of this company.
      const ref = expectError(await co.as('Manager').post(`/api/v1/orders/${doc.id}/approve`, { relatedId: 'ord_0nosuchorder00000000' }), 400, 'VALIDATION_ERROR');
      expect(ref.details[0]).toMatchObject({ pointer: '/relatedId', rule: 'exists' });
      expect((await co.as('Manager').post(`/api/v1/orders/${doc.id}/approve`, { relatedId: doc.id })).json().data.state).toBe('sent');
    });

    it('takes its declared input (required ones required, nothing undeclared) and stores what `set` says', async () => {
      const doc = await create();
      await co.as().post(`/api/v1/orders/${doc.id}/send`);
      const missing = expectError(await co.as().post(`/api/v1/orders/${doc.id}/close`), 400, 'VALIDATION_ERROR');
      expect(missing.details[0]).toMatchObject({ pointer: '/note', rule: 'required' });
      const extra = expectError(await co.as().post(`/api/v1/orders/${doc.id}/close`, { note: 'done', probability: 5 }), 400, 'VALIDATION_ERROR');
      expect(extra.details[0]).toMatchObject({ pointer: '/probability', rule: 'additionalProperties' });
      // A transition that declares no input refuses a body rather than dropping it.
      const fresh = await create();
      const none = expectError(await co.as().post(`/api/v1/orders/${fresh.id}/send`, { note: 'x' }), 400, 'VALIDATION_ERROR');
      expect(none.details[0]).toMatchObject({ pointer: '/note', rule: 'additionalProperties' });
      const closed = await co.as().post(`/api/v1/orders/${doc.id}/close`, { note: 'Signed on site' });
      expect(closed.statusCode, closed.body).toBe(200);
      expect(closed.json().data).toMatchObject({ state: 'closed', notes: 'Signed on site', probability: 100, total: 262.81 });
      const lost = await co.as().post(`/api/v1/orders/${fresh.id}/lose`, { reason: 'price' });
      expect(lost.json().data).toMatchObject({ state: 'lost', lostReason: 'price', probability: 0 });
      expectError(await co.as().post(`/api/v1/orders/${(await create()).id}/lose`, { reason: 'mood' }), 400, 'VALIDATION_ERROR');
    });

    it('shows its input in the OpenAPI document', async () => {
      const doc = (await host.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
      const body = bodySchema(doc, '/api/v1/orders/{id}/close');
      expect(body).toMatchObject({ type: 'object', additionalProperties: false, required: ['note'], properties: { note: { type: 'string', maxLength: 500 } } });
    });

    it('is described to clients (the console): inputs, roles, computed and locked fields, in the caller’s language', async () => {
      const res = await co.as('Viewer').get('/api/v1/document-types', { 'accept-language': 'ar' });
      expect(res.statusCode, res.body).toBe(200);
      const meta = res.json().data.find((d: { name: string }) => d.name === 'order');
      expect(meta.lockedIn).toEqual(['closed', 'lost']);
      const field = (name: string) => meta.fields.find((f: { name: string }) => f.name === name);
      expect(field('total')).toMatchObject({ readOnly: true, computed: true, description: 'المجموع الفرعي − الخصم' });
      expect(field('customer')).toMatchObject({ readOnly: false, lockedIn: ['sent'] });
      const tr = (name: string) => meta.transitions.find((t: { name: string }) => t.name === name);
      expect(tr('close').input).toEqual([expect.objectContaining({ name: 'note', type: 'string', required: true, label: 'ملاحظة' })]);
      expect(tr('lose').input[0].options.map((o: { value: string }) => o.value)).toEqual(['price', 'timing', 'other']);
      expect(tr('approve').roles).toEqual(['Manager']);
      expect(tr('send').input).toBeUndefined();
    });

    it('rolls back when what `set` gives breaks a rule: no state change, no audit entry', async () => {
      const doc = await create({ discountPercent: 50 });
      const e = expectError(await co.as().post(`/api/v1/orders/${doc.id}/boom`), 400, 'VALIDATION_ERROR');
      expect(e.details[0]).toMatchObject({ pointer: '/probability', rule: 'maximum', computed: true });
      expect((await co.as().get(`/api/v1/orders/${doc.id}`)).json().data).toMatchObject({ state: 'draft' });
      expect(await count(host, "SELECT count(*) FROM audit_log WHERE company_id = ? AND resource_id = ? AND action = 'boom'", co.company.id, doc.id)).toBe(0);
    });
  });

  describe('locks by state', () => {
    it('refuses an update or a delete of a document in a locked state, naming the state', async () => {
      const doc = await create();
      await co.as().post(`/api/v1/orders/${doc.id}/lose`, { reason: 'timing' });
      const e = expectError(await co.as().patch(`/api/v1/orders/${doc.id}`, { notes: 'changed' }), 409, 'CONFLICT');
      expect(e.details[0]).toMatchObject({ reason: 'locked', state: 'lost' });
      expect(e.message).toContain('"lost"');
      expectError(await co.as().delete(`/api/v1/orders/${doc.id}`), 409, 'CONFLICT');
      expect((await co.as().get(`/api/v1/orders/${doc.id}`)).json().data.notes).toBeUndefined();
    });

    it('refuses a change of a field locked in the state, and lets the others change', async () => {
      const doc = await create();
      await co.as().post(`/api/v1/orders/${doc.id}/send`);
      const e = expectError(await co.as().patch(`/api/v1/orders/${doc.id}`, { customer: 'Other' }, { 'accept-language': 'ar' }), 409, 'CONFLICT');
      expect(e.details[0]).toMatchObject({ reason: 'locked', state: 'sent', field: 'customer', pointer: '/customer' });
      expect(e.message).toMatch(ARABIC);
      // The same value is no change.
      expect((await co.as().patch(`/api/v1/orders/${doc.id}`, { customer: 'Acme', discountPercent: 0 })).json().data).toMatchObject({ customer: 'Acme', total: 300.35 });
    });
  });
});
