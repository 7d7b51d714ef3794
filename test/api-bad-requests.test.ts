// Requests the API cannot serve never answer 500 and never in Fastify's own error shape:
// each leaves as `{ error: { code, message, details: [...] } }` with the code's status.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Host } from '../core/host.ts';
import { CLI_ACTOR } from '../core/kernel/actor.ts';

// An app route with a schema for each of params, query and body; it records that it ran.
const CHECK_SERVER = `
export default {
  id: 'gadgets',
  routes: [
    {
      method: 'POST',
      url: '/gadgets/:code/check',
      permission: 'gadgets:create',
      summary: 'Checks a gadget code',
      schema: {
        params: { type: 'object', required: ['code'], properties: { code: { type: 'string', pattern: '^[a-z]+$' } } },
        querystring: { type: 'object', additionalProperties: false, properties: { limit: { type: 'integer', maximum: 10 }, dryRun: { type: 'boolean' } } },
        body: { type: 'object', additionalProperties: false, required: ['name'], properties: { name: { type: 'string' }, count: { type: 'integer', minimum: 1 } } },
        response: { 200: { type: 'object', properties: { ok: { type: 'boolean' } } } },
      },
      async handler(req, ctx) {
        await ctx.docs('gadget').create({ name: req.body.name });
        return { status: 200, body: { ok: true } };
      },
    },
  ],
};
`;
import { ARABIC, authHeaders, count, createCompany, createCustomer, expectError, invoiceBody, makeHost, writeTempApp, type TestCompany } from './helpers.ts';

describe('bad requests', () => {
  let host: Host;
  let co: TestCompany;
  let auth: Record<string, string>;
  let customerId: string;

  beforeAll(async () => {
    host = await makeHost({ config: { bodyLimit: 1024 } });
    co = await createCompany(host);
    auth = authHeaders(co.keys.Owner, co.company.id);
    customerId = (await createCustomer(co.as())).id;
  });
  afterAll(() => host.close());

  const inject = (method: string, url: string, payload?: string | Buffer, headers: Record<string, string> = {}) =>
    host.app.inject({ method: method as 'GET', url, payload, headers: { ...auth, ...headers } });

  it('answers malformed JSON with 400 BAD_REQUEST', async () => {
    for (const payload of ['{"customerId": ', '{customerId: 1}', "{'a': 1}", '{"a":1}}', '\u0000']) {
      const err = expectError(await inject('POST', '/api/v1/invoices', payload, { 'content-type': 'application/json' }), 400, 'BAD_REQUEST');
      expect(err.details).toEqual([{ reason: 'malformed_json' }]);
    }
  });

  it('refuses U+0000 in a body, a key, a path or a query with 400 VALIDATION_ERROR naming where, and stores nothing', async () => {
    const before = await count(host, 'SELECT count(*) FROM doc_invoicing_customer');
    const post = (payload: string, headers: Record<string, string> = {}) => inject('POST', '/api/v1/customers', payload, { 'content-type': 'application/json', ...headers });
    const nul = (part: string, pointer: string) => expect.objectContaining({ in: part, pointer, rule: 'nul' });
    expect(expectError(await post('{"name":"a\\u0000b"}'), 400, 'VALIDATION_ERROR').details).toEqual([nul('body', '/name')]);
    expect(expectError(await post('{"name":"ok","email":"x@y.z","notes":["\\u0000"]}'), 400, 'VALIDATION_ERROR').details).toContainEqual(nul('body', '/notes/0'));
    expect(expectError(await post('{"name":"ok","a\\u0000":1}'), 400, 'VALIDATION_ERROR').details).toContainEqual(nul('body', '/a\u0000'));
    expect(expectError(await inject('GET', '/api/v1/customers/cus_%00'), 400, 'VALIDATION_ERROR').details).toEqual([nul('params', '/id')]);
    expect(expectError(await inject('GET', '/api/v1/customers?name=%00'), 400, 'VALIDATION_ERROR').details).toContainEqual(nul('query', '/name'));
    const ar = await post('{"name":"\\u0000"}', { 'accept-language': 'ar' });
    expect(expectError(ar, 400, 'VALIDATION_ERROR').message).toMatch(ARABIC);
    expect(await count(host, 'SELECT count(*) FROM doc_invoicing_customer')).toBe(before);
    // An escaped backslash before `u0000` is not the character.
    const fine = await post('{"name":"a\\\\u0000"}');
    expect(fine.statusCode, fine.body).toBe(201);
    expect(fine.json().data.name).toBe('a\\u0000');
  });

  // PostgreSQL refuses a JSON text holding `\udfff` (a document's jsonb indexes), SQLite stores
  // it: both refuse it before either sees it. The payloads are JSON text, escapes as a client sends them.
  it('refuses a lone surrogate in a customer, a document PATCH and POST, a key or a line with 400 VALIDATION_ERROR naming where, and stores nothing', async () => {
    const customers = () => count(host, 'SELECT count(*) FROM doc_invoicing_customer WHERE company_id = ?', co.company.id);
    const invoices = () => count(host, 'SELECT count(*) FROM doc_invoicing_invoice WHERE company_id = ?', co.company.id);
    const [nCustomers, nInvoices] = [await customers(), await invoices()];
    const json = { 'content-type': 'application/json' };
    const lone = (part: string, pointer: string) => expect.objectContaining({ in: part, pointer, rule: 'surrogate', message: expect.any(String) });

    const email = expectError(await inject('POST', '/api/v1/customers', '{"name":"Acme","email":"a\\udfffb@example.com"}', json), 400, 'VALIDATION_ERROR');
    expect(email.details).toContainEqual(lone('body', '/email'));
    expect(email.details.find((d) => d.pointer === '/email')!.message).toMatch(/email must not contain a lone surrogate/);
    expect(expectError(await inject('POST', '/api/v1/customers', '{"name":"\\ud800"}', json), 400, 'VALIDATION_ERROR').details).toEqual([lone('body', '/name')]);
    expect(expectError(await inject('POST', '/api/v1/customers', '{"name":"ok","k\\udc00":1}', json), 400, 'VALIDATION_ERROR').details).toContainEqual(lone('body', '/k\udc00'));
    const ar = await inject('POST', '/api/v1/customers', '{"name":"x\\udbffy"}', { ...json, 'accept-language': 'ar' });
    expect(expectError(ar, 400, 'VALIDATION_ERROR').details[0].message).toMatch(ARABIC);

    const patch = await inject('PATCH', `/api/v1/customers/${customerId}`, '{"name":"Renamed\\udfff"}', json);
    expect(expectError(patch, 400, 'VALIDATION_ERROR').details).toEqual([lone('body', '/name')]);
    const after = await inject('GET', `/api/v1/customers/${customerId}`);
    expect(after.json().data.name).not.toMatch(/^Renamed/);

    const invoice: Record<string, unknown> = { ...invoiceBody(customerId), notes: 'fine' };
    const text = JSON.stringify(invoice).replace('"fine"', '"\\ud83d"');
    const post = await inject('POST', '/api/v1/invoices', text, json);
    expect(expectError(post, 400, 'VALIDATION_ERROR').details).toEqual([lone('body', '/notes')]);
    const line = JSON.stringify({ ...invoice, lines: [{ ...(invoice.lines as object[])[0], description: 'LINE' }] }).replace('"LINE"', '"\\ude00 consulting"');
    expect(expectError(await inject('POST', '/api/v1/invoices', line, json), 400, 'VALIDATION_ERROR').details).toEqual([lone('body', '/lines/0/description')]);

    expect([await customers(), await invoices()]).toEqual([nCustomers, nInvoices]);
    // A pair, escaped or not, is a character like any other.
    const pair = await inject('POST', '/api/v1/customers', '{"name":"\\ud83d\\ude00 and 😀"}', json);
    expect(pair.statusCode, pair.body).toBe(201);
    expect(pair.json().data.name).toBe('😀 and 😀');
  });

  it("refuses a lone surrogate an app's own code writes (ctx.docs create and update), and stores nothing", async () => {
    const server = `
export default {
  id: 'halves',
  routes: [
    {
      method: 'POST', url: '/halves/lone', permission: 'halves:create', summary: 'Writes what it is told, plus half an emoji',
      schema: {
        body: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, id: { type: 'string' } } },
        response: { 200: { type: 'object', properties: { ok: { type: 'boolean' } } } },
      },
      async handler(req, ctx) {
        const docs = ctx.docs('gadget');
        const half = req.body.name + String.fromCharCode(0xd83d);
        if (req.body.id) await docs.update(req.body.id, { name: half });
        else await docs.create({ name: half });
        return { status: 200, body: { ok: true } };
      },
    },
  ],
};
`;
    const app = writeTempApp({ id: 'halves', resource: 'halves', server });
    try {
      await host.runtime.load(app);
      await host.lifecycle.install(co.company.id, 'halves', CLI_ACTOR);
      const gadgets = () => count(host, 'SELECT count(*) FROM doc_halves_gadget WHERE company_id = ?', co.company.id);
      const made = await inject('POST', '/api/v1/halves', JSON.stringify({ name: 'g' }), { 'content-type': 'application/json' });
      expect(made.statusCode, made.body).toBe(201);
      const id = made.json().data.id as string;
      const before = await gadgets();
      for (const body of [{ name: 'g' }, { name: 'g', id }]) {
        const res = await inject('POST', '/api/v1/halves/lone', JSON.stringify(body), { 'content-type': 'application/json' });
        expect(expectError(res, 400, 'VALIDATION_ERROR').details, JSON.stringify(body)).toEqual([expect.objectContaining({ pointer: '/name', rule: 'surrogate' })]);
      }
      expect(await gadgets()).toBe(before);
      expect((await inject('GET', `/api/v1/halves/${id}`)).json().data.name).toBe('g');
    } finally {
      host.runtime.unload('halves');
      app.cleanup();
    }
  });

  it('answers an empty JSON body with 400 BAD_REQUEST', async () => {
    const err = expectError(await inject('POST', '/api/v1/invoices', '', { 'content-type': 'application/json' }), 400, 'BAD_REQUEST');
    expect(err.details).toEqual([{ reason: 'empty_json' }]);
  });

  it('answers a body that is not application/json with 415 UNSUPPORTED_MEDIA_TYPE', async () => {
    const body = JSON.stringify(invoiceBody(customerId));
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml', 'multipart/form-data; boundary=x']) {
      const err = expectError(await inject('POST', '/api/v1/invoices', body, { 'content-type': type }), 415, 'UNSUPPORTED_MEDIA_TYPE');
      expect(err.details).toEqual([{ contentType: 'application/json' }]);
    }
    const ar = await inject('POST', '/api/v1/invoices', body, { 'content-type': 'text/plain', 'accept-language': 'ar' });
    expect(expectError(ar, 415, 'UNSUPPORTED_MEDIA_TYPE').message).toMatch(ARABIC);
    // With a charset, JSON is still JSON.
    const ok = await inject('POST', '/api/v1/invoices', body, { 'content-type': 'application/json; charset=utf-8' });
    expect(ok.statusCode, ok.body).toBe(201);
  });

  it('answers a body over the limit with 413 PAYLOAD_TOO_LARGE', async () => {
    const big = JSON.stringify(invoiceBody(customerId, { notes: 'x'.repeat(2000) }));
    expect(big.length).toBeGreaterThan(1024);
    const err = expectError(await inject('POST', '/api/v1/invoices', big, { 'content-type': 'application/json' }), 413, 'PAYLOAD_TOO_LARGE');
    expect(err.details).toEqual([{ limit: 1024 }]);
    expect(err.message).toContain('1024');
    // Just under the limit is read (and judged on its content).
    const fits = JSON.stringify(invoiceBody(customerId, { notes: 'x'.repeat(700) }));
    expect(fits.length).toBeLessThanOrEqual(1024);
    expect((await inject('POST', '/api/v1/invoices', fits, { 'content-type': 'application/json' })).statusCode).toBe(201);
  });

  it('answers an unknown route with 404 NOT_FOUND', async () => {
    for (const url of ['/api/v1/nothing', '/api/v1/invoices/inv_x/unknown-action', '/api/v1/customers/a/b/c', '/api/v2/invoices', '/nothing', '/api/v1']) {
      const res = await inject('GET', url);
      expectError(res, 404, 'NOT_FOUND');
    }
    // Without a key, a route under /api/v1 first asks for one.
    const anon = await host.app.inject({ method: 'GET', url: '/api/v1/nothing' });
    expectError(anon, 401, 'UNAUTHENTICATED');
  });

  it('answers a known path with another method with 405 METHOD_NOT_ALLOWED and Allow', async () => {
    const cases: [string, string, string[]][] = [
      ['PUT', '/api/v1/invoices', ['GET', 'POST']],
      ['DELETE', '/api/v1/customers', ['GET', 'POST']],
      ['PUT', '/api/v1/invoices/inv_abc', ['GET', 'PATCH', 'DELETE']],
      ['GET', '/api/v1/invoices/inv_abc/send', ['POST']],
      ['DELETE', '/api/v1/audit-log', ['GET']],
      ['PATCH', '/api/v1/api-keys', ['GET', 'POST']],
    ];
    for (const [method, url, allowed] of cases) {
      const res = await inject(method, url, method === 'GET' || method === 'DELETE' ? undefined : '{}', method === 'GET' || method === 'DELETE' ? {} : { 'content-type': 'application/json' });
      const err = expectError(res, 405, 'METHOD_NOT_ALLOWED');
      const allow = String(res.headers.allow).split(/,\s*/).sort();
      expect(allow, `${method} ${url}`).toEqual([...allowed].sort());
      expect(err.details[0]).toMatchObject({ method });
      expect(err.message).toContain(method);
    }
  });

  it('never answers 500 or a Fastify-shaped error for odd input', async () => {
    const odd: [string, string, string | undefined, Record<string, string>][] = [
      ['POST', '/api/v1/invoices', '{"__proto__": {"x": 1}}', { 'content-type': 'application/json' }],
      ['POST', '/api/v1/invoices', '{"constructor": {"prototype": {"x": 1}}}', { 'content-type': 'application/json' }],
      ['POST', '/api/v1/invoices', 'null', { 'content-type': 'application/json' }],
      ['POST', '/api/v1/invoices', '[]', { 'content-type': 'application/json' }],
      ['POST', '/api/v1/invoices', '"x"', { 'content-type': 'application/json' }],
      ['POST', '/api/v1/invoices', '{}', { 'content-type': 'application/json; charset=latin1' }],
      ['POST', '/api/v1/invoices', '{}', {}],
      ['GET', `/api/v1/invoices/${'x'.repeat(200)}`, undefined, {}],
      ['DELETE', `/api/v1/api-keys/${'k'.repeat(200)}`, undefined, {}],
      ['GET', '/api/v1/invoices?page=1&page=2', undefined, {}],
      ['GET', '/api/v1/invoices?customerId[]=1', undefined, {}],
      ['GET', '/api/v1/invoices?pageSize=99999999999999999999', undefined, {}],
      ['POST', '/api/v1/api-keys', '{"role": "God", "scopes": ["*"]}', { 'content-type': 'application/json' }],
      ['POST', '/api/v1/api-keys', '{"role": "Viewer", "scopes": ["NOT A SCOPE"]}', { 'content-type': 'application/json' }],
      ['POST', '/api/v1/customers', `{"name": "${'n'.repeat(300)}"}`, { 'content-type': 'application/json' }],
    ];
    for (const [method, url, payload, headers] of odd) {
      const res = await inject(method, url, payload, headers);
      const label = `${method} ${url} ${payload ?? ''} → ${res.statusCode} ${res.body}`;
      expect(res.statusCode, label).toBeGreaterThanOrEqual(400);
      expect(res.statusCode, label).toBeLessThan(500);
      expectError(res, res.statusCode, res.json().error?.code);
      expect(res.json().error).not.toHaveProperty('statusCode');
    }
  });

  // Fastify's router answers a URL it cannot decode before any hook or error handler runs, in
  // Fastify's own shape ({ error: 'Bad Request', code: 'FST_ERR_BAD_URL', message, statusCode }),
  // unless the instance is built with a `frameworkErrors` handler; core/host.ts passes none.
  it('answers a bad percent-encoding in the path with 400 BAD_REQUEST in the envelope', async () => {
    for (const url of ['/api/v1/invoices/%E0%A4%A', '/api/v1/api-keys/%zz']) {
      const err = expectError(await inject('GET', url), 400, 'BAD_REQUEST');
      expect(err.details.length).toBeGreaterThan(0);
    }
  });

  it('lists every problem of params, query and body in one VALIDATION_ERROR, before the handler runs', async () => {
    // A generated route: a path id over its length and two body problems at once.
    const patch = await inject('PATCH', `/api/v1/customers/${'c'.repeat(100)}`, JSON.stringify({ name: '', colour: 'red' }), { 'content-type': 'application/json' });
    const generated = expectError(patch, 400, 'VALIDATION_ERROR').details;
    expect(generated.map((d) => `${d.in} ${d.pointer} ${d.rule}`).sort()).toEqual(['body /colour additionalProperties', 'body /name minLength', 'params /id maxLength']);

    // An app's own route, with a schema for each part.
    const app = writeTempApp({ server: CHECK_SERVER });
    try {
      await host.runtime.load(app);
      await host.lifecycle.install(co.company.id, 'gadgets', CLI_ACTOR);
      const gadgets = () => count(host, 'SELECT count(*) FROM doc_gadgets_gadget WHERE company_id = ?', co.company.id);
      const ok = await inject('POST', '/api/v1/gadgets/abc/check?limit=3&dryRun=true', JSON.stringify({ name: 'fine', count: 2 }), { 'content-type': 'application/json' });
      expect(ok.statusCode, ok.body).toBe(200);
      expect(await gadgets()).toBe(1);

      const res = await inject('POST', '/api/v1/gadgets/ABC/check?limit=50&dryRun=maybe&colour=red', JSON.stringify({ count: 0, colour: 'red' }), { 'content-type': 'application/json', 'accept-language': 'ar' });
      const err = expectError(res, 400, 'VALIDATION_ERROR');
      expect(err.details.map((d) => `${d.in} ${d.pointer} ${d.rule}`).sort()).toEqual([
        'body /colour additionalProperties',
        'body /count minimum',
        'body /name required',
        'params /code pattern',
        'query /colour additionalProperties',
        'query /dryRun type',
        'query /limit maximum',
      ]);
      for (const d of err.details) expect(d.message, JSON.stringify(d)).toMatch(ARABIC);
      expect(err.details.find((d) => d.pointer === '/limit')).toMatchObject({ in: 'query', limit: 10 });
      expect(err.message).toMatch(ARABIC);
      // Refused before the handler: nothing was written.
      expect(await gadgets()).toBe(1);
    } finally {
      host.runtime.unload('gadgets');
      app.cleanup();
    }
  });

  it('keeps Object.prototype clean after a __proto__ body', async () => {
    await inject('POST', '/api/v1/customers', '{"name": "p", "__proto__": {"polluted": true}}', { 'content-type': 'application/json' });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
