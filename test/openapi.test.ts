// The OpenAPI 3.1 document the API serves about itself: valid, public, complete for the
// invoicing routes, and rebuilt when the set of apps changes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Validator } from '@seriousme/openapi-schema-validator';
import type { Host } from '../core/host.ts';
import { errorCodes } from '../core/errors/codes.ts';
import { createCompany, makeHost, writeTempApp } from './helpers.ts';

type Doc = {
  openapi: string;
  paths: Record<string, Record<string, { security?: unknown[]; parameters?: { name: string; in: string; required?: boolean; schema: Record<string, unknown> }[]; requestBody?: { content: Record<string, { schema: Record<string, unknown> }> }; responses: Record<string, { content?: Record<string, { schema: Record<string, unknown> }> }>; 'x-permission'?: string }>>;
  components: { schemas: Record<string, Record<string, unknown>>; securitySchemes: Record<string, Record<string, unknown>> };
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
    const co = createCompany(host);
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
    const body = create.requestBody!.content['application/json'].schema as { required: string[]; properties: Record<string, { items?: { properties: Record<string, Record<string, unknown>> } }> };
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
        if (p === '/api/v1/openapi.json') expect(op.security).toEqual([]);
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

    const create = doc.paths['/api/v1/invoices'].post;
    for (const status of ['400', '401', '403']) {
      expect(JSON.stringify(create.responses[status].content!['application/json'].schema), status).toContain('#/components/schemas/ErrorEnvelope');
    }
    expect(JSON.stringify(create.responses['400'])).toContain('VALIDATION_ERROR');
    expect(JSON.stringify(create.responses['409'])).toContain('CONFLICT');
    expect(JSON.stringify(doc.paths['/api/v1/invoices/{id}'].get.responses['404'])).toContain('NOT_FOUND');
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
});
