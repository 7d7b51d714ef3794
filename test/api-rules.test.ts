// The manifest's rules through the API, one kind at a time, with their bad inputs: computed
// fields (exact money, dependency order, refused when a client sends them, readOnly in the
// OpenAPI document), validations (every broken rule at once, in the caller's language), a
// transition's guard, roles, input and `set` (a failing `set` leaves nothing behind), and locks
// by state; computed fields and validations of each line, rules that read the documents the
// references name (`ref`), defaults, aggregates over child documents (kept in the child's unit
// of work, refused by a locked parent or one whose rules they would break) and an event fired by
// a rule over computed values. On SQLite, and again on PostgreSQL (vitest.config.ts's `onPostgres`).
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
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
      expect(Object.keys(write.properties)).toEqual(['customer', 'lines', 'discountPercent', 'startDate', 'endDate', 'notes', 'probability', 'lostReason', 'bookId', 'number']);
      // A line's computed amount: read-only in the read schema, absent from the write schema's lines.
      expect(read.properties.lines).toMatchObject({ items: { properties: { amount: { readOnly: true } } } });
      expect(Object.keys((write.properties.lines as { items: { properties: object } }).items.properties)).toEqual(['quantity', 'unitPrice']);
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

  describe('lines', () => {
    it('computes each line (quantity × unit price) before the document sums them, on create and on update', async () => {
      const doc = await create();
      expect(doc.lines).toEqual([{ quantity: 3, unitPrice: 100.1, amount: 300.3 }, { quantity: 1, unitPrice: 0.05, amount: 0.05 }]);
      expect(doc.subtotal).toBe(300.35);
      const res = await co.as().patch(`/api/v1/orders/${doc.id}`, { lines: [{ quantity: 2.5, unitPrice: 0.99 }, { quantity: 7, unitPrice: 12.34 }] });
      // 2.5 × 0.99 = 2.475 → 2.48; 7 × 12.34 = 86.38; subtotal 88.86.
      expect(res.json().data).toMatchObject({ lines: [{ amount: 2.48 }, { amount: 86.38 }], subtotal: 88.86 });
    });

    it('refuses a line’s computed field sent by a client, at its pointer', async () => {
      const e = expectError(await co.as().post('/api/v1/orders', order({ lines: [{ quantity: 1, unitPrice: 5 }, { quantity: 1, unitPrice: 5, amount: 1 }] })), 400, 'VALIDATION_ERROR');
      expect(e.details).toEqual([expect.objectContaining({ pointer: '/lines/1/amount', rule: 'additionalProperties' })]);
    });

    it('reports a rule on each line at that line’s pointer, every broken line at once, in the caller’s language', async () => {
      const lines = [{ quantity: 2000, unitPrice: 1 }, { quantity: 5, unitPrice: 1 }, { quantity: 1001, unitPrice: 1 }];
      const en = expectError(await co.as().post('/api/v1/orders', order({ lines })), 400, 'VALIDATION_ERROR');
      expect(en.details.map((d) => [d.pointer, d.message])).toEqual([['/lines/0/quantity', 'At most 1,000 of a line'], ['/lines/2/quantity', 'At most 1,000 of a line']]);
      const ar = expectError(await co.as().post('/api/v1/orders', order({ lines }), { 'accept-language': 'ar' }), 400, 'VALIDATION_ERROR');
      expect(ar.details[0].message).toBe('لا تزيد كمية البند على 1000');
    });
  });

  describe('books: references, defaults, aggregates and a computed event', () => {
    const book = async (over: Record<string, unknown> = {}) => {
      const res = await co.as().post('/api/v1/books', { name: 'North', firstNumber: 100, lastNumber: 199, limit: 1000, discountPercent: 10, ...over });
      expect(res.statusCode, res.body).toBe(201);
      return res.json().data as Record<string, unknown> & { id: string };
    };
    const getBook = async (id: string) => (await co.as().get(`/api/v1/books/${id}`)).json().data;
    const lines = (unitPrice: number) => [{ quantity: 1, unitPrice }];

    it('checks the number against the range of the book it names (ref), read once with the reference check', async () => {
      const b = await book();
      const e = expectError(await co.as().post('/api/v1/orders', order({ bookId: b.id, number: 250 })), 400, 'VALIDATION_ERROR');
      expect(e.details).toEqual([expect.objectContaining({ pointer: '/number', rule: 'validation', message: "The number is outside the book's range" })]);
      const books = host.runtime.list().find((a) => a.manifest.id === 'rules-lab')!.docTypes.get('book')!.table;
      const reads = vi.spyOn(books, 'get');
      await create({ bookId: b.id, number: 150 });
      expect(reads).toHaveBeenCalledTimes(1);
      reads.mockRestore();
      // An order without a book is not held to a range.
      expect((await create({ number: 5000 })).number).toBe(5000);
    });

    it('defaults the discount from the book when the client leaves it out; what the client sends stays', async () => {
      const b = await book({ discountPercent: 12.5 });
      const { discountPercent: _, ...noDiscount } = order({ bookId: b.id, number: 101 });
      const res = await co.as().post('/api/v1/orders', noDiscount);
      // 12.5 % of 300.35 = 37.54, as if the client had sent it.
      expect(res.json().data).toMatchObject({ discountPercent: 12.5, discount: 37.54, total: 262.81 });
      expect((await create({ bookId: b.id, number: 102, discountPercent: 0 })).discount).toBe(0);
      // A required field with a default may be left out of a create (and only of a create).
      const res2 = await co.as().post('/api/v1/books', { name: 'West', firstNumber: 1, lastNumber: 9, limit: 10 });
      expect(res2.statusCode, res2.body).toBe(201);
      expect(res2.json().data.discountPercent).toBe(10);
      const doc = (await host.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
      expect(bodySchema(doc, '/api/v1/books').required).toEqual(['name', 'firstNumber', 'lastNumber', 'limit']);
      // Without a book there is nothing to default from: the field stays out.
      const { discountPercent: __, ...bare } = order();
      expect((await co.as().post('/api/v1/orders', bare)).json().data.discountPercent).toBeUndefined();
    });

    it('keeps a book’s totals by its orders: counted, committed when sent, moved with an order, out when lost or deleted', async () => {
      const a = await book();
      const b = await book({ name: 'South' });
      expect(await getBook(a.id)).toMatchObject({ committed: 0, orders: 0, available: 1000 });
      const o1 = await create({ bookId: a.id, number: 110, lines: lines(100.1), discountPercent: 0 });
      const o2 = await create({ bookId: a.id, number: 111, lines: lines(250.25), discountPercent: 0 });
      const o3 = await create({ bookId: a.id, number: 112, lines: lines(0.2), discountPercent: 0 });
      expect(await getBook(a.id)).toMatchObject({ committed: 0, orders: 3 });
      for (const o of [o1, o2, o3]) await co.as().post(`/api/v1/orders/${o.id}/send`);
      // 100.10 + 250.25 + 0.20 = 350.55 exactly; the book's computed field follows.
      expect(await getBook(a.id)).toMatchObject({ committed: 350.55, orders: 3, available: 649.45 });
      // A sent order's lines change: the difference moves.
      await co.as().patch(`/api/v1/orders/${o3.id}`, { lines: lines(0.1) });
      expect((await getBook(a.id)).committed).toBe(350.45);
      // Moved to the other book: out of one, into the other. The discount defaulted from the book
      // is proposed again from the new one (10 %): 250.25 − 25.03 = 225.22 committed there.
      await co.as().patch(`/api/v1/orders/${o2.id}`, { bookId: b.id, number: 150 });
      expect(await getBook(a.id)).toMatchObject({ committed: 100.2, orders: 2 });
      expect(await getBook(b.id)).toMatchObject({ committed: 225.22, orders: 1 });
      await co.as().post(`/api/v1/orders/${o1.id}/lose`, { reason: 'price' });
      expect(await getBook(a.id)).toMatchObject({ committed: 0.1, orders: 1 });
      const draft = await create({ bookId: b.id, number: 160 });
      expect((await getBook(b.id)).orders).toBe(2);
      await co.as().delete(`/api/v1/orders/${draft.id}`);
      expect((await getBook(b.id)).orders).toBe(1);
      // A derived total is not a person's change: no audit entry and no update event of the book
      // (the orders' own writes are audited: 3 creates, 3 sends, a change, a move, a loss).
      expect(await count(host, "SELECT count(*) FROM audit_log WHERE company_id = ? AND resource_id = ? AND action = 'update'", co.company.id, a.id)).toBe(0);
      expect(await count(host, "SELECT count(*) FROM audit_log WHERE company_id = ? AND resource_id IN (?, ?, ?)", co.company.id, o1.id, o2.id, o3.id)).toBe(9);
    });

    it('adds up orders written at the same time (each locks its book until it commits: none overwrites another)', async () => {
      const b = await book();
      const res = await Promise.all(Array.from({ length: 12 }, (_, i) => co.as().post('/api/v1/orders', order({ bookId: b.id, number: 170 + i }))));
      expect(res.map((r) => r.statusCode)).toEqual(Array(12).fill(201));
      expect((await getBook(b.id)).orders).toBe(12);
    });

    it('lets a transition’s guard and `set` read the book (ref)', async () => {
      const b = await book({ name: 'East', limit: 300 });
      const none = await create({ lines: lines(10), discountPercent: 0 });
      expectError(await co.as().post(`/api/v1/orders/${none.id}/reserve`), 409, 'CONFLICT');
      const big = await create({ bookId: b.id, number: 190, lines: lines(300.01), discountPercent: 0 });
      const e = expectError(await co.as().post(`/api/v1/orders/${big.id}/reserve`), 409, 'CONFLICT');
      expect(e.message).toContain('Only an order its book can still cover is reserved');
      const ok = await create({ bookId: b.id, number: 191, lines: lines(300), discountPercent: 0 });
      expect((await co.as().post(`/api/v1/orders/${ok.id}/reserve`)).json().data).toMatchObject({ state: 'sent', notes: 'Reserved in East' });
      expect(await getBook(b.id)).toMatchObject({ committed: 300, available: 0 });
    });

    it('refuses a client that sends an aggregate', async () => {
      const e = expectError(await co.as().post('/api/v1/books', { name: 'X', firstNumber: 1, lastNumber: 2, limit: 5, committed: 5 }), 400, 'VALIDATION_ERROR');
      expect(e.details[0]).toMatchObject({ pointer: '/committed', rule: 'additionalProperties' });
      const doc = (await host.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
      const read = Object.values(doc.components.schemas as Record<string, { title?: string; properties: Record<string, { readOnly?: boolean }> }>).find((s) => s.title === 'Book')!;
      expect([read.properties.committed.readOnly, read.properties.orders.readOnly, read.properties.limit.readOnly]).toEqual([true, true, undefined]);
    });

    it('refuses an order whose send would pass the book’s limit, naming the book, and leaves both as they were', async () => {
      const b = await book({ limit: 500 });
      const first = await create({ bookId: b.id, number: 120, lines: lines(400), discountPercent: 0 });
      await co.as().post(`/api/v1/orders/${first.id}/send`);
      const second = await create({ bookId: b.id, number: 121, lines: lines(100.01), discountPercent: 0 });
      const e = expectError(await co.as().post(`/api/v1/orders/${second.id}/send`, undefined, { 'accept-language': 'ar' }), 409, 'CONFLICT');
      expect(e.details[0]).toMatchObject({ reason: 'parentRule', resource: 'books', id: b.id });
      expect(e.message).toContain('سيتجاوز الدفتر حدّه');
      expect((await co.as().get(`/api/v1/orders/${second.id}`)).json().data.state).toBe('draft');
      expect(await getBook(b.id)).toMatchObject({ committed: 400, orders: 2 });
      expect(await count(host, "SELECT count(*) FROM audit_log WHERE company_id = ? AND resource_id = ? AND action = 'send'", co.company.id, second.id)).toBe(0);
    });

    it('refuses a write that would move the totals of a closed book, and stores nothing of it', async () => {
      const b = await book();
      const o = await create({ bookId: b.id, number: 130 });
      await co.as().post(`/api/v1/books/${b.id}/close`);
      const before = await count(host, 'SELECT count(*) FROM doc_rules_lab_order WHERE company_id = ?', co.company.id);
      const e = expectError(await co.as().post('/api/v1/orders', order({ bookId: b.id, number: 131 })), 409, 'CONFLICT');
      expect(e.details[0]).toMatchObject({ reason: 'parentLocked', resource: 'books', id: b.id, state: 'closed' });
      expect(e.message).toContain(b.id);
      expect(await count(host, 'SELECT count(*) FROM doc_rules_lab_order WHERE company_id = ?', co.company.id)).toBe(before);
      expectError(await co.as().post(`/api/v1/orders/${o.id}/lose`, { reason: 'price' }), 409, 'CONFLICT');
      // What does not move its totals is not refused.
      expect((await co.as().patch(`/api/v1/orders/${o.id}`, { notes: 'still here' })).statusCode).toBe(200);
      expect(await getBook(b.id)).toMatchObject({ orders: 1, state: 'closed' });
    });

    it('fires the event when a rule over the aggregate becomes true (nine tenths committed), once', async () => {
      const b = await book({ limit: 1000 });
      const send = async (amount: number, number: number) => {
        const o = await create({ bookId: b.id, number, lines: lines(amount), discountPercent: 0 });
        expect((await co.as().post(`/api/v1/orders/${o.id}/send`)).statusCode).toBe(200);
      };
      const events = async () => (await host.storage.db.all<{ data: string }>("SELECT data FROM outbox WHERE company_id = ? AND topic = 'ruleslab.book.nearlySpent'", [co.company.id]))
        .map((r) => JSON.parse(r.data)).filter((d) => d.id === b.id);
      await send(850, 140);
      expect(await events()).toEqual([]);
      await send(50, 141);
      const fired = await events();
      expect(fired).toHaveLength(1);
      expect(fired[0]).toMatchObject({ committed: 900, available: 100, previous: { committed: 850 } });
      await send(10, 142);
      expect(await events()).toHaveLength(1);
    });
  });
});
