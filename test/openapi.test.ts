import { brotliDecompressSync, gunzipSync } from 'node:zlib';
// The OpenAPI 3.1 document the API serves about itself: valid, public, complete for the
// invoicing routes, and rebuilt when the set of apps changes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Validator } from '@seriousme/openapi-schema-validator';
import type { Host } from '../core/host.ts';
import { errorCodes } from '../core/kernel/errors/codes.ts';
import { createCompany, makeHost, writeTempApp } from './helpers.ts';
import { buildHost } from '../core/host.ts';
import { documentAjv } from './fuzz/oracle.ts';
import { eventBody, EVENT_ID_HEADER, DELIVERY_ID_HEADER } from '../core/webhooks/dispatcher.ts';
import {
  SIGNATURE_HEADER, STANDARD_ID_HEADER, STANDARD_SIGNATURE_HEADER, STANDARD_TIMESTAMP_HEADER, generateSecret, generateSigningKeyPair, signHeader, standardSignatureHeader,
} from '../core/webhooks/signature.ts';
import { WEBHOOK_HEADERS } from '../core/openapi/webhooks.ts';
import { inlineResponses } from './openapi-refs.ts';

type WebhookOp = {
  post: {
    operationId: string;
    summary: string;
    tags: string[];
    parameters: { $ref: string }[];
    requestBody: { required: boolean; content: { 'application/json': { schema: Record<string, unknown> } } };
    responses: Record<string, { $ref?: string; description?: string }>;
  };
};

type Doc = {
  openapi: string;
  webhooks?: Record<string, WebhookOp>;
  paths: Record<string, Record<string, { security?: unknown[]; parameters?: { name: string; in: string; required?: boolean; schema: Record<string, unknown> }[]; requestBody?: { content: Record<string, { schema: Record<string, unknown> }> }; responses: Record<string, { content?: Record<string, { schema: Record<string, unknown> }> }>; 'x-permission'?: string }>>;
  components: {
    schemas: Record<string, Record<string, unknown>>;
    parameters?: Record<string, { name: string; in: string; required?: boolean; schema: Record<string, unknown> }>;
    responses?: Record<string, { description: string }>;
    securitySchemes: Record<string, Record<string, unknown>>;
  };
  'x-error-codes': { code: string; status: number }[];
};

async function validate(doc: unknown): Promise<{ valid: boolean; errors?: unknown }> {
  const validator = new Validator();
  const res = await validator.validate(structuredClone(doc) as Parameters<Validator['validate']>[0]);
  expect(validator.version).toBe('3.1');
  return res;
}

/** Every `$ref` in the document, with where it sits. */
function refs(node: unknown, at = '#', out: [string, string][] = []): [string, string][] {
  if (Array.isArray(node)) node.forEach((v, i) => refs(v, `${at}/${i}`, out));
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string') out.push([at, v]);
      else refs(v, `${at}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`, out);
    }
  }
  return out;
}

function resolvePointer(doc: unknown, ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined;
  return ref
    .slice(2)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<unknown>((n, t) => (n && typeof n === 'object' ? (n as Record<string, unknown>)[t] : undefined), doc);
}

describe('OpenAPI document', () => {
  let host: Host;
  let doc: Doc;

  beforeAll(async () => {
    host = await makeHost();
    const res = await host.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    doc = res.json();
  });
  afterAll(() => host.close());

  it('is served at GET /api/v1/openapi.json without a key or company header', async () => {
    expect(doc.openapi).toBe('3.1.0');
    // A key of some company does not change it.
    const co = await createCompany(host);
    const withKey = await co.as().get('/api/v1/openapi.json');
    expect(withKey.json()).toEqual(doc);
  });

  it('validates as OpenAPI 3.1', async () => {
    const res = await validate(doc);
    expect(res.errors).toBeUndefined();
    expect(res.valid).toBe(true);
  });

  it('uses a validator that does catch a broken document', async () => {
    const broken = structuredClone(doc) as unknown as Record<string, unknown>;
    delete broken.info;
    (broken.paths as Record<string, unknown>)['/api/v1/invoices'] = { get: { responses: 'none' } };
    expect((await validate(broken)).valid).toBe(false);
  });

  it('has every $ref resolve inside the document', () => {
    const all = refs(doc);
    expect(all.length).toBeGreaterThan(0);
    for (const [at, ref] of all) expect(resolvePointer(doc, ref), `${ref} at ${at}`).toBeDefined();
  });

  it('describes the customer and invoice routes', () => {
    for (const p of ['/api/v1/customers', '/api/v1/customers/{id}', '/api/v1/invoices', '/api/v1/invoices/{id}', '/api/v1/invoices/{id}/send', '/api/v1/customers/{id}/balance']) {
      expect(doc.paths, p).toHaveProperty([p]);
    }
    expect(Object.keys(doc.paths['/api/v1/invoices']).sort()).toEqual(['get', 'post']);
    expect(Object.keys(doc.paths['/api/v1/invoices/{id}']).sort()).toEqual(['delete', 'get', 'patch']);
    const create = doc.paths['/api/v1/invoices'].post;
    expect(create['x-permission']).toBe('invoices:create');
    expect(create.responses).toHaveProperty('201');
    const body = resolvePointer(doc, (create.requestBody!.content['application/json'].schema as { $ref: string }).$ref) as { required: string[]; properties: Record<string, { items?: { properties: Record<string, Record<string, unknown>> } }> };
    expect([...body.required].sort()).toEqual(['customerId', 'date', 'dueDate', 'lines']);
    expect(body.properties.lines.items!.properties.quantity).toMatchObject({ type: 'number', minimum: 0 });
    expect(create.parameters?.find((p) => p.name === 'Idempotency-Key')).toMatchObject({ in: 'header' });
    const get = doc.paths['/api/v1/invoices/{id}'].get;
    expect(get.parameters).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'id', in: 'path', required: true })]));
    const list = doc.paths['/api/v1/invoices'].get;
    const pageSize = list.parameters!.find((p) => p.name === 'pageSize')!;
    expect(pageSize).toMatchObject({ in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } });
    const envelope = list.responses['200'].content!['application/json'].schema as { required: string[] };
    expect([...envelope.required].sort()).toEqual(['data', 'page', 'pageSize', 'total']);
  });

  it('declares bearer and company-header security, required together on protected routes', () => {
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.components.securitySchemes.companyHeader).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-Company-Id' });
    for (const [p, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        // Public: the document itself, and signing in (the session cookie authenticates those).
        if (p === '/api/v1/openapi.json' || p.startsWith('/api/v1/session') || p === '/api/v1/invitations/accept') expect(op.security).toEqual([]);
        else expect(op.security, `${method} ${p}`).toEqual([{ bearerAuth: [], companyHeader: [] }]);
      }
    }
  });

  it('documents the error envelope and answers errors with it', () => {
    const env = doc.components.schemas.ErrorEnvelope as { required: string[]; properties: { error: { required: string[]; properties: { code: { enum: string[] }; details: { type: string } } } } };
    expect(env.required).toEqual(['error']);
    expect([...env.properties.error.required].sort()).toEqual(['code', 'details', 'message']);
    expect(env.properties.error.properties.details.type).toBe('array');
    expect([...env.properties.error.properties.code.enum].sort()).toEqual(Object.keys(errorCodes).sort());
    expect(doc['x-error-codes'].map((e) => e.code).sort()).toEqual(Object.keys(errorCodes).sort());

    const { responses } = inlineResponses(doc, doc.paths['/api/v1/invoices'].post);
    const create = { responses };
    for (const status of ['400', '401', '403']) {
      expect(JSON.stringify(create.responses[status].content!['application/json'].schema), status).toContain('#/components/schemas/ErrorEnvelope');
    }
    expect(JSON.stringify(create.responses['400'])).toContain('VALIDATION_ERROR');
    expect(JSON.stringify(create.responses['409'])).toContain('CONFLICT');
    expect(JSON.stringify(inlineResponses(doc, doc.paths['/api/v1/invoices/{id}'].get).responses['404'])).toContain('NOT_FOUND');
  });

  it('stays in step when an app is added to the host', async () => {
    expect(doc.paths).not.toHaveProperty(['/api/v1/gadgets']);
    const app = writeTempApp();
    try {
      await host.runtime.load(app);
      const after = (await host.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json() as Doc;
      expect(Object.keys(after.paths['/api/v1/gadgets']).sort()).toEqual(['get', 'post']);
      expect(Object.keys(after.paths['/api/v1/gadgets/{id}']).sort()).toEqual(['delete', 'get', 'patch']);
      expect(after.paths['/api/v1/gadgets'].post['x-permission']).toBe('gadgets:create');
      expect((after as unknown as { tags: { name: string }[] }).tags.map((t) => t.name)).toContain('gadgets');
      // Everything that was there still is.
      for (const p of Object.keys(doc.paths)) expect(after.paths, p).toHaveProperty([p]);
      expect((await validate(after)).valid).toBe(true);

      // ... and leaves again when the app is unloaded.
      host.runtime.unload('gadgets');
      const gone = (await host.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json() as Doc;
      expect(gone.paths).not.toHaveProperty(['/api/v1/gadgets']);
      expect(gone).toEqual(doc);
    } finally {
      app.cleanup();
    }
  });
  it('describes every catalogue event under webhooks: the delivered body, the signature and id headers, the 2xx expected', async () => {
    const co = await createCompany(host);
    const cat = (await co.as().get('/api/v1/events/catalogue')).json().data as { families: { topics: { topic: string; example: unknown }[] }[] };
    const topics = cat.families.flatMap((f) => f.topics);
    expect(Object.keys(doc.webhooks ?? {}).sort()).toEqual(topics.map((t) => t.topic).sort());
    expect(WEBHOOK_HEADERS).toEqual({
      signature: SIGNATURE_HEADER, standardId: STANDARD_ID_HEADER, standardTimestamp: STANDARD_TIMESTAMP_HEADER, standardSignature: STANDARD_SIGNATURE_HEADER,
      eventId: EVENT_ID_HEADER, deliveryId: DELIVERY_ID_HEADER,
    });
    const params = doc.components.parameters!;
    expect(Object.values(params).map((p) => [p.name, p.in, p.required])).toEqual([
      [SIGNATURE_HEADER, 'header', true],
      [STANDARD_ID_HEADER, 'header', true],
      [STANDARD_TIMESTAMP_HEADER, 'header', true],
      [STANDARD_SIGNATURE_HEADER, 'header', true],
      [EVENT_ID_HEADER, 'header', true],
      [DELIVERY_ID_HEADER, 'header', true],
    ]);
    const signature = new RegExp(params.WebhookSignature.schema.pattern as string);
    expect(signHeader(['whsec_a'], 1_700_000_000, '{}')).toMatch(signature);
    expect(signHeader(['whsec_a', 'whsec_b'], 1_700_000_000, '{}')).toMatch(signature);
    const standard = new RegExp(params.WebhookStandardSignature.schema.pattern as string);
    const [s1, s2] = [generateSecret(), generateSecret()];
    expect(standardSignatureHeader([s1], 'evt_1', 1_700_000_000, '{}')).toMatch(standard);
    expect(standardSignatureHeader([s1, s2], 'evt_1', 1_700_000_000, '{}', generateSigningKeyPair().signingKey)).toMatch(standard);

    const { compile } = documentAjv(doc);
    for (const { topic, example } of topics) {
      const op = doc.webhooks![topic].post;
      expect(op.operationId).toBe(`webhook.${topic}`);
      expect(op.parameters.map((p) => resolvePointer(doc, p.$ref))).toEqual(Object.values(params));
      expect(resolvePointer(doc, op.responses['2XX'].$ref!)).toMatchObject({ description: expect.stringContaining('2xx') });
      // The body as the dispatcher writes it, with the topic's example as data, validates.
      const validate = compile(op.requestBody.content['application/json'].schema);
      const body = JSON.parse(eventBody({ event_id: 'evt_0example0000000000000', topic, event_created_at: '2026-01-15T09:30:00.000Z', company_id: 'co_0example0000000000000', data: JSON.stringify(example), test: 1 }));
      expect(validate(body), `${topic}: ${JSON.stringify(validate.errors)}`).toBe(true);
      // ...and the type is the topic's own.
      expect(validate({ ...body, type: 'other.topic' }), topic).toBe(false);
    }
  });

  it('delivers what it describes: a real test event validates against its webhook', async () => {
    const co = await createCompany(host);
    const res = await co.as().post('/api/v1/events/test', { topic: 'invoice.created' });
    expect(res.statusCode, res.body).toBe(202);
    const row = (await host.storage.db.get('SELECT id AS event_id, topic, created_at AS event_created_at, company_id, data, test FROM outbox WHERE id = ?', [res.json().data.id])) as Parameters<typeof eventBody>[0];
    const validate = documentAjv(doc).compile(doc.webhooks!['invoice.created'].post.requestBody.content['application/json'].schema);
    const body = JSON.parse(eventBody(row));
    expect(validate(body), JSON.stringify(validate.errors)).toBe(true);
    expect(body).toMatchObject({ type: 'invoice.created', companyId: co.company.id, test: true });
  });

  it('shares payload schemas between topics as components', () => {
    const dataRef = (topic: string) => ((doc.webhooks![topic].post.requestBody.content['application/json'].schema.allOf as Record<string, any>[])[1].properties.data.$ref as string);
    expect(dataRef('invoice.created')).toBe('#/components/schemas/EventData.invoice');
    expect(dataRef('invoice.updated')).toBe(dataRef('invoice.created'));
    // The schedule's event is the invoice too (a document-sourced event carries the document).
    expect(dataRef('invoice.overdue')).toBe(dataRef('invoice.created'));
    // A transition's event also carries `previous` (the state it left): one schema for all of them.
    expect(dataRef('invoice.paid')).not.toBe(dataRef('invoice.created'));
    expect(dataRef('invoice.sent')).toBe(dataRef('invoice.paid'));
    expect(doc.components.schemas[dataRef('invoice.paid').split('/').pop()!]).toMatchObject({ required: expect.arrayContaining(['previous']) });
    expect(dataRef('audit.invoices.create')).toBe('#/components/schemas/EventData.audit');
    expect(doc.components.schemas['EventData.invoice']).toMatchObject({ required: expect.arrayContaining(['id', 'customerId', 'total']) });
  });

  it('is built once per set of apps and served from that build', async () => {
    expect(await host.openapi()).toBe(await host.openapi());
    const a = await host.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
    const b = await host.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
    expect(a.body).toBe(b.body);
  });

  it('is answered with an ETag (304 while current) and compressed when the client accepts it', async () => {
    const get = (headers: Record<string, string> = {}) => host.app.inject({ method: 'GET', url: '/api/v1/openapi.json', headers });
    const plain = await get();
    expect(plain.headers).toMatchObject({ 'cache-control': 'no-cache', vary: 'Accept-Encoding', 'content-type': 'application/json; charset=utf-8' });
    expect(plain.headers['content-encoding']).toBeUndefined();
    const etag = String(plain.headers.etag);
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    // Revalidation: the same tag (or a weak one, or one of a list) answers 304 with no body.
    for (const tag of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const again = await get({ 'if-none-match': tag });
      expect(again.statusCode, tag).toBe(304);
      expect(again.body).toBe('');
    }
    expect((await get({ 'if-none-match': '"stale"' })).statusCode).toBe(200);
    // Compressed forms decode to the same text; q=0 refuses an encoding.
    const gz = await get({ 'accept-encoding': 'gzip' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.rawPayload).toString()).toBe(plain.body);
    const br = await get({ 'accept-encoding': 'gzip, br' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(br.rawPayload).toString()).toBe(plain.body);
    expect((await get({ 'accept-encoding': 'gzip;q=0' })).headers['content-encoding']).toBeUndefined();
  });

  it('with every first-party app: one valid webhook per catalogue topic, each payload schema compiling', async () => {
    const full = await buildHost({ dbFile: ':memory:' });
    try {
      const big = JSON.parse(await full.openapi()) as Doc;
      const topics = (await full.catalogue.catalogue(undefined, { lang: 'en' })).families.flatMap((f) => f.topics);
      expect(topics.length).toBeGreaterThan(500);
      expect(Object.keys(big.webhooks!).sort()).toEqual(topics.map((t) => t.topic).sort());
      // Each payload component compiles once; every topic's example validates against its own.
      const { compile } = documentAjv(big, { allErrors: false });
      const payloads = new Map<string, ReturnType<typeof compile>>();
      const envelope = compile({ $ref: '#/components/schemas/WebhookEvent' });
      for (const t of topics) {
        const parts = big.webhooks![t.topic].post.requestBody.content['application/json'].schema.allOf as Record<string, any>[];
        const ref = parts[1].properties.data.$ref as string;
        if (!payloads.has(ref)) payloads.set(ref, compile({ $ref: ref }));
        const validate = payloads.get(ref)!;
        expect(validate(t.example), `${t.topic}: ${JSON.stringify(validate.errors)}`).toBe(true);
        expect(envelope({ id: 'evt_0example0000000000000', type: t.topic, createdAt: '2026-01-15T09:30:00.000Z', companyId: 'co_0example0000000000000', data: t.example })).toBe(true);
      }
      expect(payloads.size).toBe(Object.keys(big.components.schemas).filter((k) => k.startsWith('EventData.')).length);
      const res = await validate(big);
      expect(res.errors).toBeUndefined();
      // Shared schemas and error answers keep it in bounds: 5.6 MB for 2,011 operations and 521
      // webhooks at the time of writing (its build time is measured by bench/openapi.ts).
      expect(JSON.stringify(big).length).toBeLessThan(7 * 1024 * 1024);
    } finally {
      await full.close();
    }
  });
});
