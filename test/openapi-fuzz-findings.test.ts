// One reproduction per defect class the OpenAPI fuzz (test/openapi-fuzz.test.ts) found, each
// judged by the same oracle: the answer's status and code must be declared by the document for
// the operation, and a success must match the declared schema.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Host } from '../core/host.ts';
import { createCompany, createCustomer, expectError, invoiceBody, makeHost, type TestCompany } from './helpers.ts';
import { Oracle, operationsOf, type Answer, type OpenApiDoc, type Operation } from './fuzz/oracle.ts';
import { fuzzAppSources } from './fuzz/apps.ts';
import { invoicingSources } from './helpers.ts';
import { inlineAllResponses } from './openapi-refs.ts';

let host: Host;
let a: TestCompany;
let doc: OpenApiDoc;
let oracle: Oracle;
let ops: Operation[];

const answer = (r: { statusCode: number; headers: Answer['headers']; body: string }): Answer => ({ status: r.statusCode, headers: r.headers, body: r.body });
const opOf = (method: string, path: string) => ops.find((o) => o.method === method && o.path === path)!;
/** The answer breaks none of the oracle's rules for the operation. */
const declared = (method: string, path: string, r: { statusCode: number; headers: Answer['headers']; body: string }) =>
  expect(oracle.check(opOf(method, path), answer(r)), r.body.slice(0, 300)).toEqual([]);

beforeAll(async () => {
  host = await makeHost({ sources: [...invoicingSources(), ...fuzzAppSources()] });
  a = await createCompany(host);
  doc = inlineAllResponses((await host.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json());
  oracle = new Oracle(doc);
  ops = operationsOf(doc);
});
afterAll(() => host.close());

describe('statuses and codes the server answers are declared', () => {
  it('installing an app the host does not have: 404 NOT_FOUND, declared', async () => {
    const res = await a.as().post('/api/v1/apps', { appId: 'no-such-app' });
    expectError(res, 404, 'NOT_FOUND');
    declared('POST', '/api/v1/apps', res);
  });

  it('a body sent to an operation that takes none: 415, 413 and BAD_REQUEST, declared', async () => {
    const c = await createCustomer(a.as());
    const inv = (await a.as().post('/api/v1/invoices', invoiceBody(c.id))).json().data;
    const send = `/api/v1/invoices/${inv.id}/send`;
    const text = await a.as().raw({ method: 'POST', url: send, payload: 'hello', headers: { 'content-type': 'text/plain' } });
    expectError(text, 415, 'UNSUPPORTED_MEDIA_TYPE');
    declared('POST', '/api/v1/invoices/{id}/send', text);
    const broken = await a.as().raw({ method: 'POST', url: send, payload: '{', headers: { 'content-type': 'application/json' } });
    expectError(broken, 400, 'BAD_REQUEST');
    declared('POST', '/api/v1/invoices/{id}/send', broken);
    const big = await a.as().raw({ method: 'DELETE', url: `/api/v1/webhook-endpoints/whe_x`, payload: JSON.stringify({ x: 'y'.repeat(1024 * 1024) }), headers: { 'content-type': 'application/json' } });
    expectError(big, 413, 'PAYLOAD_TOO_LARGE');
    declared('DELETE', '/api/v1/webhook-endpoints/{id}', big);
  });

  it('a path parameter that is not correctly percent-encoded: 400 BAD_REQUEST, declared', async () => {
    const res = await a.as().get('/api/v1/customers/%ZZ');
    expectError(res, 400, 'BAD_REQUEST');
    declared('GET', '/api/v1/customers/{id}', res);
  });
});

describe('what is decided before the body is read', () => {
  it('an encoded slash stays inside its parameter: the customer "<id>/balance" is not the balance route', async () => {
    const c = await createCustomer(a.as());
    const get = await a.as().get(`/api/v1/customers/${c.id}%2Fbalance`);
    expectError(get, 404, 'NOT_FOUND'); // was 200 with the balance of c
    declared('GET', '/api/v1/customers/{id}', get);
    const patch = await a.as().patch(`/api/v1/customers/${c.id}%2Fbalance`, { name: 'x' });
    expectError(patch, 404, 'NOT_FOUND'); // was 405 METHOD_NOT_ALLOWED
    declared('PATCH', '/api/v1/customers/{id}', patch);
    // Percent-encoded letters still reach the route.
    expect((await a.as().get(`/api/v1/%63ustomers/${c.id}`)).statusCode).toBe(200);
  });

  it('a key without the permission is refused on an app route whatever body it sends (403, not 415 or 400)', async () => {
    for (const [payload, type] of [['x', 'text/plain'], ['{', 'application/json'], ['{"zz":1}', 'application/json']]) {
      const res = await a.as('Viewer').raw({ method: 'POST', url: '/api/v1/customers', payload, headers: { 'content-type': type } });
      expectError(res, 403, 'FORBIDDEN');
    }
  });

  it('an app the company has not installed answers APP_NOT_ENABLED whatever body it sends', async () => {
    const res = await a.as().raw({ method: 'POST', url: '/api/v1/gizmos', payload: '{', headers: { 'content-type': 'application/json' } });
    expectError(res, 404, 'APP_NOT_ENABLED');
  });

  it('a method the path does not serve answers 405 with Allow, whatever body it carries', async () => {
    const cases: [string, string, string | undefined, string | undefined][] = [
      ['PUT', '/api/v1/customers', 'x', 'text/plain'],
      ['DELETE', '/api/v1/company', '{', 'application/json'],
      ['OPTIONS', '/api/v1/invoices', '{', 'application/json'],
      ['QUERY', '/api/v1/webhook-endpoints', undefined, undefined],
    ];
    for (const [method, url, payload, type] of cases) {
      const res = await a.as().raw({ method: method as 'PUT', url, payload, headers: type ? { 'content-type': type } : {} });
      const err = expectError(res, 405, 'METHOD_NOT_ALLOWED');
      expect(res.headers.allow, `${method} ${url}`).toBeTruthy();
      expect(err.details[0]).toMatchObject({ method });
    }
  });
});

describe('read schemas say what is always there', () => {
  /** A shared schema (`$ref`) read from the document's components. */
  const deref = (s: Record<string, unknown>): Record<string, unknown> =>
    typeof s.$ref === 'string' ? deref((doc as unknown as { components: { schemas: Record<string, Record<string, unknown>> } }).components.schemas[s.$ref.split('/').pop()!]) : s;
  const dataOf = (method: string, path: string, status: string) => {
    const data = deref((opOf(method, path).op.responses[status].content!['application/json'].schema as { properties: { data: Record<string, unknown> } }).properties.data);
    return (data.items ? { ...data, items: deref(data.items as Record<string, unknown>) } : data) as Record<string, unknown>;
  };

  it("an invoice's required and computed fields are required on read", () => {
    const inv = dataOf('GET', '/api/v1/invoices/{id}', '200') as { required: string[]; properties: { lines: { items: { required: string[] } } } };
    expect(inv.required).toEqual(expect.arrayContaining(['id', 'state', 'customerId', 'date', 'dueDate', 'lines', 'currency', 'subtotal', 'total', 'createdAt', 'updatedAt']));
    expect(inv.required).not.toContain('notes');
    expect(inv.properties.lines.items.required).toEqual(expect.arrayContaining(['description', 'quantity', 'unitPrice', 'amount']));
  });

  it('a read-only field no hook sets stays optional (a code-less app)', () => {
    const w = dataOf('GET', '/api/v1/widgets/{id}', '200') as { required: string[] };
    expect(w.required).toEqual(expect.arrayContaining(['title', 'price']));
    expect(w.required).not.toContain('score');
  });

  it('a computed amount beyond the bounds the read schema declares is refused, not stored: 400, declared', async () => {
    // Each input is within its bounds; their product (the line amount, the total) is not.
    const c = await createCustomer(a.as());
    const res = await a.as().post('/api/v1/invoices', invoiceBody(c.id, { lines: [{ description: 'Bulk', quantity: 1_000_000, unitPrice: 999_999_999_999 }] }));
    const err = expectError(res, 400, 'VALIDATION_ERROR');
    // The invoice's total is a computed field (with VAT): the rule that sums it overflows first and says so.
    expect(err.details).toEqual(expect.arrayContaining([expect.objectContaining({ pointer: '/total', rule: 'compute', computed: true })]));
    declared('POST', '/api/v1/invoices', res);
    // Nothing was stored: the read schema's bounds hold for every invoice that exists.
    const list = (await a.as().get(`/api/v1/invoices?customerId=${c.id}`)).json();
    expect(list.total).toBe(0);
  });

  it('core answers declare the fields they always carry', async () => {
    const apps = dataOf('GET', '/api/v1/apps', '200') as { items: { required: string[] } };
    expect(apps.items.required).toEqual(expect.arrayContaining(['installedVersion', 'upgradeAvailable', 'dependencies']));
    const enable = await a.as().post('/api/v1/apps/invoicing/enable');
    declared('POST', '/api/v1/apps/{id}/enable', enable);
    expect((dataOf('POST', '/api/v1/apps/{id}/enable', '200') as { required: string[] }).required).toEqual(expect.arrayContaining(['appId', 'version', 'state', 'installedAt', 'updatedAt']));
    const endpoint = dataOf('GET', '/api/v1/webhook-endpoints/{id}', '200') as { required: string[] };
    expect(endpoint.required).toContain('companyId');
  });
});

describe('document types', () => {
  it('a document type may reference itself (it could not be loaded)', async () => {
    expect(host.runtime.get('widgets')).toBeDefined();
    const w = await createCompany(host);
    await host.lifecycle.install(w.company.id, 'widgets', { type: 'cli', id: 'test' });
    const first = await w.as().post('/api/v1/widgets', { title: 'Root', price: 1 });
    expect(first.statusCode, first.body).toBe(201);
    const child = await w.as().post('/api/v1/widgets', { title: 'Child', price: 2, parentId: first.json().data.id });
    expect(child.statusCode, child.body).toBe(201);
    declared('POST', '/api/v1/widgets', child);
  });
});
