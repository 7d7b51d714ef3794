import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import {
  buildOpenApiDocument,
  ERROR_ENVELOPE_REF,
  JSON_SCHEMA_DIALECT,
  toOpenApiPath,
  type Json,
  type OpenApiDocument,
  type OperationObject,
  type ResponseObject,
} from './build-document.ts';
import type { DocumentInput, ErrorCodeDoc, RouteDoc } from '../kernel/route-doc.ts';
import { inlineResponses } from '../../test/openapi-refs.ts';

// ---------------------------------------------------------------------------------------
// A realistic slice of the host: invoicing routes, a core route, two public routes.

const errorCodes: ErrorCodeDoc[] = [
  { code: 'VALIDATION_ERROR', status: 400, description: 'A request value breaks a rule.' },
  { code: 'COMPANY_REQUIRED', status: 400, description: 'The X-Company-Id header is missing.' },
  { code: 'UNAUTHENTICATED', status: 401, description: 'The API key is missing or not valid.' },
  { code: 'FORBIDDEN', status: 403, description: 'The key lacks the permission for this route.' },
  { code: 'NOT_FOUND', status: 404, description: 'No such record in this company.' },
  { code: 'CONFLICT', status: 409, description: 'The record already exists.' },
  { code: 'IDEMPOTENCY_KEY_REUSED', status: 409, description: 'The Idempotency-Key was used with another body.' },
  { code: 'RATE_LIMITED', status: 429, description: 'Too many requests.' },
  { code: 'BAD_REQUEST', status: 400, description: 'The body cannot be read.' },
  { code: 'UNSUPPORTED_MEDIA_TYPE', status: 415, description: 'The body is not JSON.' },
  { code: 'PAYLOAD_TOO_LARGE', status: 413, description: 'The body is too large.' },
  { code: 'APP_NOT_ENABLED', status: 404, description: 'The app is not enabled in this company.' },
  { code: 'SERVICE_UNAVAILABLE', status: 503, description: 'Busy.' },
  { code: 'INTERNAL', status: 500, description: 'Unexpected failure.' },
];

const components = {
  Customer: {
    $id: 'customer',
    $schema: 'http://json-schema.org/draft-07/schema#',
    type: 'object',
    required: ['id', 'name'],
    properties: {
      id: { type: 'string', pattern: '^cus_', description: 'Customer identifier.' },
      name: { type: 'string', minLength: 1 },
      email: { type: 'string', format: 'email', nullable: true },
      address: { $ref: 'address#' },
    },
  },
  Address: {
    $id: 'address',
    type: 'object',
    properties: { street: { type: 'string' }, city: { type: 'string' }, country: { type: 'string', example: 'SA' } },
  },
  Paging: {
    type: 'object',
    properties: {
      page: { type: 'integer', minimum: 1, default: 1, description: 'Page number, from 1.' },
      pageSize: { type: 'integer', minimum: 1, maximum: 100, default: 20, description: 'Items per page.' },
    },
  },
} as const;

const listEnvelope = (item: object) => ({
  type: 'object',
  required: ['data', 'total', 'page', 'pageSize'],
  properties: {
    data: { type: 'array', items: item },
    total: { type: 'integer' },
    page: { type: 'integer' },
    pageSize: { type: 'integer' },
  },
});

const idParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', pattern: '^cus_', description: 'The customer id (`cus_…`).' } },
} as const;

const invoiceBody = {
  $id: 'createInvoiceBody',
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  required: ['customerId', 'date', 'dueDate', 'lines'],
  additionalProperties: false,
  definitions: {
    line: {
      $id: 'invoiceLine',
      type: 'object',
      required: ['description', 'quantity', 'unitPrice'],
      properties: {
        description: { type: 'string' },
        quantity: { type: 'number', minimum: 0 },
        unitPrice: { type: 'number' },
        discount: { type: 'number', minimum: 0, maximum: 100, exclusiveMaximum: true },
      },
    },
  },
  properties: {
    customerId: { type: 'string', pattern: '^cus_' },
    date: { type: 'string', format: 'date', example: '2025-01-31' },
    dueDate: { type: 'string', format: 'date' },
    notes: { type: 'string', nullable: true, description: 'Free text on the invoice.' },
    currency: { type: 'string', enum: ['SAR', 'AED', 'USD'], nullable: true },
    billingAddress: { $ref: 'address#', nullable: true, description: 'Defaults to the customer address.' },
    lines: { type: 'array', minItems: 1, items: { $ref: '#/definitions/line' } },
    taxPair: { type: 'array', items: [{ type: 'string' }, { type: 'number' }], additionalItems: false },
  },
  dependencies: { dueDate: ['date'] },
} as const;

const routes: RouteDoc[] = [
  {
    method: 'GET',
    url: '/api/v1/customers',
    operationId: 'invoicing.listCustomers',
    summary: 'List customers',
    tag: 'invoicing',
    permission: 'customers:read',
    schema: {
      querystring: {
        type: 'object',
        properties: {
          page: { type: 'integer', minimum: 1, default: 1, description: 'Page number, from 1.' },
          pageSize: { type: 'integer', minimum: 1, maximum: 100, default: 20, description: 'Items per page.' },
          search: { type: 'string', description: 'Matches name or email.' },
        },
      },
      response: { 200: listEnvelope({ $ref: 'customer#' }) },
    },
  },
  {
    method: 'POST',
    url: '/api/v1/customers',
    operationId: 'invoicing.createCustomer',
    summary: 'Create a customer',
    description: 'Creates a customer in the company named by X-Company-Id.',
    tag: 'invoicing',
    permission: 'customers:create',
    schema: {
      body: {
        type: 'object',
        required: ['name'],
        properties: { name: { type: 'string', minLength: 1 }, email: { type: 'string', format: 'email' } },
      },
      response: { 201: { type: 'object', required: ['data'], properties: { data: { $ref: 'customer#' } } } },
    },
    errors: ['CONFLICT', 'IDEMPOTENCY_KEY_REUSED'],
    headers: [
      {
        name: 'Idempotency-Key',
        description: 'Repeating a request with the same key returns the first answer.',
        required: true,
        schema: { type: 'string', minLength: 8, maxLength: 128 },
      },
    ],
  },
  {
    method: 'GET',
    url: '/api/v1/customers/:id',
    operationId: 'invoicing.getCustomer',
    summary: 'Get a customer',
    tag: 'invoicing',
    permission: 'customers:read',
    schema: {
      params: idParams,
      headers: {
        type: 'object',
        properties: {
          authorization: { type: 'string' },
          'x-company-id': { type: 'string' },
          'accept-language': { type: 'string', enum: ['en', 'ar'], description: 'Language of messages.' },
        },
      },
      response: {
        200: {
          description: 'The customer.',
          type: 'object',
          properties: { data: { $ref: '#/components/schemas/Customer' } },
        },
      },
    },
  },
  {
    method: 'DELETE',
    url: '/api/v1/customers/:id',
    operationId: 'invoicing.deleteCustomer',
    summary: 'Delete a customer',
    tag: 'invoicing',
    permission: 'customers:delete',
    schema: { params: idParams, response: { 204: { type: 'null' } } },
  },
  {
    method: 'GET',
    url: '/api/v1/invoices',
    operationId: 'invoicing.listInvoices',
    summary: 'List the invoices of a customer',
    tag: 'invoicing',
    permission: 'invoices:read',
    schema: {
      querystring: {
        type: 'object',
        required: ['customerId'],
        properties: {
          customerId: { type: 'string', pattern: '^cus_', description: 'Whose invoices.' },
          status: { type: 'string', enum: ['draft', 'issued', 'paid'], nullable: true },
          page: { type: 'integer', minimum: 1 },
        },
      },
      response: { 200: listEnvelope({ type: 'object', properties: { id: { type: 'string' } } }) },
    },
  },
  {
    method: 'POST',
    url: '/api/v1/invoices',
    operationId: 'invoicing.createInvoice',
    summary: 'Create an invoice',
    tag: 'invoicing',
    permission: 'invoices:create',
    schema: {
      body: invoiceBody,
      response: {
        201: {
          $id: 'createInvoiceReply',
          type: 'object',
          properties: {
            data: {
              type: 'object',
              properties: {
                id: { type: 'string', example: 'inv_01' },
                status: { type: 'string', enum: ['draft', 'issued'] },
                customer: { $ref: 'customer#' },
                paidAt: { type: 'string', format: 'date-time', nullable: true },
              },
            },
          },
        },
      },
    },
    errors: ['NOT_FOUND', 'VALIDATION_ERROR'],
  },
  {
    method: 'GET',
    url: '/api/v1/audit/:seq(^\\d+)',
    operationId: 'core.getAuditEntry',
    summary: 'Get one audit entry',
    tag: 'core',
    permission: 'audit:read',
    schema: { response: { 200: { type: 'object', properties: { data: { type: 'object' } } } } },
  },
  {
    method: 'GET',
    url: '/api/v1/openapi.json',
    operationId: 'core.getOpenApi',
    summary: 'This document',
    tag: 'core',
    schema: { response: { 200: { type: 'object', additionalProperties: true } } },
  },
  {
    method: 'GET',
    url: '/api/v1/health',
    operationId: 'core.health',
    summary: 'Liveness',
    tag: 'core',
    schema: {
      querystring: { $ref: 'Paging#' },
      response: { 200: { type: 'object', properties: { ok: { type: 'boolean', const: true } } } },
    },
  },
];

const input: DocumentInput = {
  title: 'Diwan API',
  version: '0.1.0',
  description: 'One REST API for every app of the platform.',
  serverUrl: 'https://diwan.example.com',
  routes,
  errorCodes,
  tags: [
    { name: 'core', description: 'The host.' },
    { name: 'invoicing', description: 'Customers and invoices.' },
  ],
  components,
};

// ---------------------------------------------------------------------------------------
// Helpers

async function validate(doc: unknown) {
  // The validator keeps a reference to what it is given; hand it a copy.
  return new Validator().validate(structuredClone(doc) as Record<string, unknown>);
}

/** The operation with its shared error responses written out. */
function op(doc: OpenApiDocument, path: string, method: 'get' | 'post' | 'put' | 'patch' | 'delete'): OperationObject & { responses: Record<string, ResponseObject> } {
  const o = doc.paths[path]?.[method];
  if (!o) throw new Error(`no ${method} ${path}`);
  return inlineResponses(doc, o) as OperationObject & { responses: Record<string, ResponseObject> };
}

function param(o: OperationObject, location: string, name: string) {
  return o.parameters?.find((p) => p.in === location && p.name === name);
}

function errorCodesAt(o: OperationObject & { responses: Record<string, ResponseObject> }, status: string): unknown {
  const schema = o.responses[status]?.content?.['application/json']?.schema as { allOf: Json[] };
  expect(schema.allOf[0]).toEqual({ $ref: ERROR_ENVELOPE_REF });
  return (schema.allOf[1] as { properties: { error: { properties: { code: { enum: string[] } } } } }).properties.error
    .properties.code.enum;
}

function collect(node: unknown, key: string, out: { path: string; value: unknown }[] = [], at = ''): typeof out {
  if (Array.isArray(node)) node.forEach((n, i) => collect(n, key, out, `${at}/${i}`));
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === key) out.push({ path: `${at}/${k}`, value: v });
      collect(v, key, out, `${at}/${k}`);
    }
  }
  return out;
}

function resolvePointer(doc: unknown, ref: string): unknown {
  expect(ref.startsWith('#/')).toBe(true);
  let node: unknown = doc;
  for (const raw of ref.slice(2).split('/')) {
    const token = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    node = (node as Record<string, unknown> | undefined)?.[token];
  }
  return node;
}

// ---------------------------------------------------------------------------------------

describe('buildOpenApiDocument', () => {
  const doc = buildOpenApiDocument(input);

  it('produces a document the OpenAPI 3.1 schema accepts', async () => {
    const res = await validate(doc);
    expect(res.errors).toBeUndefined();
    expect(res.valid).toBe(true);
  });

  it('reports deliberately broken documents as invalid, so the check above is real', async () => {
    const validator = new Validator();

    // A path parameter that is not required.
    const optionalPathParam = structuredClone(doc);
    op(optionalPathParam, '/api/v1/customers/{id}', 'get').parameters![0].required = false;
    expect((await validator.validate(optionalPathParam as unknown as Record<string, unknown>)).valid).toBe(false);

    // A response without its required description.
    const noDescription = structuredClone(doc) as unknown as OpenApiDocument;
    delete (op(noDescription, '/api/v1/customers', 'get').responses['200'] as { description?: string }).description;
    expect((await validator.validate(noDescription as unknown as Record<string, unknown>)).valid).toBe(false);

    // A parameter in a place that does not exist.
    const badIn = structuredClone(doc);
    (op(badIn, '/api/v1/customers', 'get').parameters![0] as { in: string }).in = 'body';
    const res = await validator.validate(badIn as unknown as Record<string, unknown>);
    expect(res.valid).toBe(false);
    expect(res.errors).toBeDefined();
  });

  it('states version, dialect, info, servers and tags', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.jsonSchemaDialect).toBe(JSON_SCHEMA_DIALECT);
    expect(doc.info).toEqual({
      title: 'Diwan API',
      version: '0.1.0',
      description: 'One REST API for every app of the platform.',
    });
    expect(doc.servers).toEqual([{ url: 'https://diwan.example.com' }]);
    expect(doc.tags).toEqual([
      { name: 'core', description: 'The host.' },
      { name: 'invoicing', description: 'Customers and invoices.' },
    ]);
    expect(op(doc, '/api/v1/customers', 'get').tags).toEqual(['invoicing']);
  });

  it('converts Fastify paths to sorted templates', () => {
    expect(Object.keys(doc.paths)).toEqual([
      '/api/v1/audit/{seq}',
      '/api/v1/customers',
      '/api/v1/customers/{id}',
      '/api/v1/health',
      '/api/v1/invoices',
      '/api/v1/openapi.json',
    ]);
    expect(Object.keys(doc.paths['/api/v1/customers/{id}'])).toEqual(['get', 'delete']);
    expect(toOpenApiPath('/a/:x/b::c/:y(^\\d+)')).toEqual({
      path: '/a/{x}/b:c/{y}',
      params: [{ name: 'x' }, { name: 'y', pattern: '^\\d+' }],
    });
    expect(() => toOpenApiPath('/static/*')).toThrow(/wildcard/);
  });

  it('derives path, query and header parameters from the schemas', () => {
    const list = op(doc, '/api/v1/customers', 'get');
    expect(list.parameters).toEqual([
      {
        name: 'page',
        in: 'query',
        description: 'Page number, from 1.',
        schema: { type: 'integer', minimum: 1, default: 1, description: 'Page number, from 1.' },
      },
      {
        name: 'pageSize',
        in: 'query',
        description: 'Items per page.',
        schema: { type: 'integer', minimum: 1, maximum: 100, default: 20, description: 'Items per page.' },
      },
      {
        name: 'search',
        in: 'query',
        description: 'Matches name or email.',
        schema: { type: 'string', description: 'Matches name or email.' },
      },
    ]);

    const invoices = op(doc, '/api/v1/invoices', 'get');
    expect(param(invoices, 'query', 'customerId')).toMatchObject({ required: true, description: 'Whose invoices.' });
    expect(param(invoices, 'query', 'page')?.required).toBeUndefined();
    expect(param(invoices, 'query', 'status')?.schema).toEqual({
      type: ['string', 'null'],
      enum: ['draft', 'issued', 'paid', null],
    });

    const get = op(doc, '/api/v1/customers/{id}', 'get');
    expect(param(get, 'path', 'id')).toEqual({
      name: 'id',
      in: 'path',
      required: true,
      description: 'The customer id (`cus_…`).',
      schema: { type: 'string', pattern: '^cus_', description: 'The customer id (`cus_…`).' },
    });
    // Authorization is covered by security (and ignored by OAS), X-Company-Id by companyHeader.
    expect(get.parameters!.map((p) => `${p.in}:${p.name}`)).toEqual(['path:id', 'header:accept-language']);

    // A path parameter with no params schema still exists, typed by Fastify's regex.
    expect(op(doc, '/api/v1/audit/{seq}', 'get').parameters).toEqual([
      { name: 'seq', in: 'path', required: true, schema: { type: 'string', pattern: '^\\d+$' } },
    ]);

    // A querystring given as a $ref to a shared component is exploded too.
    expect(op(doc, '/api/v1/health', 'get').parameters!.map((p) => p.name)).toEqual(['page', 'pageSize']);
  });

  it('documents the request body and the Idempotency-Key header of a create route', () => {
    const create = op(doc, '/api/v1/customers', 'post');
    expect(create.description).toBe('Creates a customer in the company named by X-Company-Id.');
    expect(create.requestBody).toEqual({
      required: true,
      content: {
        'application/json': {
          schema: {
            type: 'object',
            required: ['name'],
            properties: { name: { type: 'string', minLength: 1 }, email: { type: 'string', format: 'email' } },
          },
        },
      },
    });
    expect(create.parameters).toEqual([
      {
        name: 'Idempotency-Key',
        in: 'header',
        required: true,
        description: 'Repeating a request with the same key returns the first answer.',
        schema: { type: 'string', minLength: 8, maxLength: 128 },
      },
    ]);
    expect(create.responses['201']).toEqual({
      description: 'Created',
      content: {
        'application/json': {
          schema: { type: 'object', required: ['data'], properties: { data: { $ref: '#/components/schemas/Customer' } } },
        },
      },
    });
    expect(op(doc, '/api/v1/customers', 'get').requestBody).toBeUndefined();
    expect(op(doc, '/api/v1/customers/{id}', 'get').responses['200'].description).toBe('The customer.');
    expect(op(doc, '/api/v1/customers/{id}', 'delete').responses['204']).toEqual({ description: 'No Content' });
  });

  it('requires bearerAuth and companyHeader together on routes with a permission, none on public ones', () => {
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.components.securitySchemes.companyHeader).toMatchObject({
      type: 'apiKey',
      in: 'header',
      name: 'X-Company-Id',
    });
    const create = op(doc, '/api/v1/invoices', 'post');
    expect(create.security).toEqual([{ bearerAuth: [], companyHeader: [] }]);
    expect(create['x-permission']).toBe('invoices:create');
    expect(op(doc, '/api/v1/customers/{id}', 'delete')['x-permission']).toBe('customers:delete');

    const open = op(doc, '/api/v1/openapi.json', 'get');
    expect(open.security).toEqual([]);
    expect(open).not.toHaveProperty('x-permission');
    expect(doc).not.toHaveProperty('security');
  });

  it('answers errors through the shared envelope, narrowed per status to the codes the route may answer', () => {
    const list = op(doc, '/api/v1/customers', 'get');
    // An app route (tag 'invoicing') may also answer APP_NOT_ENABLED; every keyed route RATE_LIMITED and SERVICE_UNAVAILABLE.
    expect(Object.keys(list.responses)).toEqual(['200', '400', '401', '403', '404', '429', '500', '503']);
    expect(errorCodesAt(list, '503')).toEqual(['SERVICE_UNAVAILABLE']);
    expect(errorCodesAt(list, '404')).toEqual(['APP_NOT_ENABLED']);
    expect(errorCodesAt(list, '429')).toEqual(['RATE_LIMITED']);
    expect(errorCodesAt(list, '400')).toEqual(['COMPANY_REQUIRED', 'VALIDATION_ERROR']);
    expect(errorCodesAt(list, '401')).toEqual(['UNAUTHENTICATED']);
    expect(errorCodesAt(list, '403')).toEqual(['FORBIDDEN']);
    expect(errorCodesAt(list, '500')).toEqual(['INTERNAL']);
    expect(list.responses['400'].description).toBe(
      'COMPANY_REQUIRED: The X-Company-Id header is missing. VALIDATION_ERROR: A request value breaks a rule.',
    );
    expect(list.responses['400'].content!['application/json'].examples).toEqual({
      COMPANY_REQUIRED: {
        summary: 'The X-Company-Id header is missing.',
        value: { error: { code: 'COMPANY_REQUIRED', message: 'The X-Company-Id header is missing.', details: [] } },
      },
      VALIDATION_ERROR: {
        summary: 'A request value breaks a rule.',
        value: { error: { code: 'VALIDATION_ERROR', message: 'A request value breaks a rule.', details: [] } },
      },
    });

    // Two declared codes at one status share one response; the :id route may answer NOT_FOUND.
    const create = op(doc, '/api/v1/customers', 'post');
    // A route with a body may also refuse it as unreadable, too large, or not JSON.
    expect(Object.keys(create.responses)).toEqual(['201', '400', '401', '403', '404', '409', '413', '415', '429', '500', '503']);
    expect(errorCodesAt(create, '400')).toEqual(['BAD_REQUEST', 'COMPANY_REQUIRED', 'VALIDATION_ERROR']);
    expect(errorCodesAt(create, '409')).toEqual(['CONFLICT', 'IDEMPOTENCY_KEY_REUSED']);
    expect(errorCodesAt(op(doc, '/api/v1/customers/{id}', 'get'), '404')).toEqual(['APP_NOT_ENABLED', 'NOT_FOUND']);
    // A path parameter sent without percent-encoding ('%', '%ZZ') cannot be read.
    expect(errorCodesAt(op(doc, '/api/v1/audit/{seq}', 'get'), '400')).toEqual(['BAD_REQUEST', 'COMPANY_REQUIRED']);
    expect(op(doc, '/api/v1/customers/{id}', 'delete').responses).toHaveProperty('404');
    // A method that carries a body is read before the route runs, whether the route takes one or not.
    const remove = op(doc, '/api/v1/customers/{id}', 'delete');
    expect(remove).not.toHaveProperty('requestBody');
    expect(errorCodesAt(remove, '413')).toEqual(['PAYLOAD_TOO_LARGE']);
    expect(errorCodesAt(remove, '415')).toEqual(['UNSUPPORTED_MEDIA_TYPE']);
    expect(errorCodesAt(remove, '400')).toContain('BAD_REQUEST');
    expect(op(doc, '/api/v1/customers/{id}', 'get').responses).not.toHaveProperty('415');
    expect(errorCodesAt(op(doc, '/api/v1/invoices', 'post'), '404')).toEqual(['APP_NOT_ENABLED', 'NOT_FOUND']);

    // A public route with no input answers only INTERNAL; one with a querystring may also fail validation.
    expect(Object.keys(op(doc, '/api/v1/openapi.json', 'get').responses)).toEqual(['200', '500']);
    expect(errorCodesAt(op(doc, '/api/v1/health', 'get'), '400')).toEqual(['VALIDATION_ERROR']);
    expect(op(doc, '/api/v1/health', 'get').responses).not.toHaveProperty('401');

    // Public routes are not rate limited: no 429 on them.
    expect(op(doc, '/api/v1/openapi.json', 'get').responses).not.toHaveProperty('429');

    expect(doc.components.schemas.ErrorEnvelope).toEqual({
      type: 'object',
      description: 'The body of every error answer.',
      required: ['error'],
      properties: {
        error: {
          type: 'object',
          required: ['code', 'message', 'details'],
          properties: {
            code: {
              type: 'string',
              description: 'Stable machine-readable code (see x-error-codes).',
              enum: [...errorCodes.map((e) => e.code)].sort(),
            },
            message: {
              type: 'string',
              description: 'Human-readable text in the language asked for by Accept-Language.',
            },
            details: { type: 'array', description: 'Further items, e.g. one per rule broken.', items: { type: 'object' } },
          },
        },
      },
    });
  });

  it('writes each error answer once: operations refer to a shared response per set of codes', () => {
    const raw = doc.paths['/api/v1/customers']!.get!.responses;
    expect(raw['401']).toEqual({ $ref: '#/components/responses/Error.UNAUTHENTICATED' });
    expect(raw['400']).toEqual({ $ref: '#/components/responses/Error.COMPANY_REQUIRED.VALIDATION_ERROR' });
    // Every route with a key shares the one 401 answer, and each code's example is written once.
    expect(doc.paths['/api/v1/customers/{id}']!.get!.responses['401']).toEqual(raw['401']);
    expect(doc.components.responses!['Error.UNAUTHENTICATED']).toMatchObject({
      content: { 'application/json': { examples: { UNAUTHENTICATED: { $ref: '#/components/examples/UNAUTHENTICATED' } } } },
    });
    expect(doc.components.examples!.UNAUTHENTICATED).toMatchObject({ value: { error: { code: 'UNAUTHENTICATED' } } });
  });

  it('moves titled object schemas into components named by tag and title, once per distinct schema', () => {
    const titled = { title: 'Sales order', type: 'object', properties: { id: { type: 'string' } } };
    const other = { title: 'Sales order', type: 'object', properties: { n: { type: 'number' } } };
    const route = (operationId: string, url: string, schema: Json): RouteDoc => ({
      method: 'GET', url, operationId, summary: 's', tag: 'sales', schema: { response: { 200: { type: 'object', properties: { data: schema } } } },
    });
    const built = buildOpenApiDocument({
      ...input,
      routes: [route('sales.a', '/a', titled), route('sales.b', '/b', { type: 'array', items: titled }), route('sales.c', '/c', other)],
    });
    const dataOf = (path: string) => (built.paths[path]!.get!.responses['200'] as ResponseObject).content!['application/json'].schema as Record<string, any>;
    expect(dataOf('/a').properties.data).toEqual({ $ref: '#/components/schemas/sales.SalesOrder' });
    expect(dataOf('/b').properties.data.items).toEqual({ $ref: '#/components/schemas/sales.SalesOrder' });
    expect(dataOf('/c').properties.data).toEqual({ $ref: '#/components/schemas/sales.SalesOrder.2' });
    expect(built.components.schemas['sales.SalesOrder']).toEqual(titled);
    expect(built.components.schemas['sales.SalesOrder.2']).toEqual(other);
  });

  it('publishes the error table as x-error-codes', () => {
    expect(doc['x-error-codes']).toEqual([...errorCodes].sort((a, b) => (a.code < b.code ? -1 : 1)));
  });

  it('normalises Fastify / draft-07 schemas to the 3.1 dialect', () => {
    // No $id or $schema survives anywhere, and no draft-07 keyword either.
    expect(collect(doc, '$id')).toEqual([]);
    expect(collect(doc, '$schema')).toEqual([]);
    for (const kw of ['nullable', 'example', 'definitions', 'dependencies', 'additionalItems']) {
      expect(collect(doc.components, kw)).toEqual([]);
      expect(collect(doc.paths, kw)).toEqual([]);
    }

    // Shared components: `$id` refs become component refs; nullable and example are rewritten.
    expect(doc.components.schemas.Customer).toEqual({
      type: 'object',
      required: ['id', 'name'],
      properties: {
        id: { type: 'string', pattern: '^cus_', description: 'Customer identifier.' },
        name: { type: 'string', minLength: 1 },
        email: { type: ['string', 'null'], format: 'email' },
        address: { $ref: '#/components/schemas/Address' },
      },
    });
    expect(doc.components.schemas.Address).toMatchObject({
      properties: { country: { type: 'string', examples: ['SA'] } },
    });
    const listSchema = op(doc, '/api/v1/customers', 'get').responses['200'].content!['application/json'].schema;
    expect(listSchema).toMatchObject({ properties: { data: { items: { $ref: '#/components/schemas/Customer' } } } });

    // A nested body with local definitions: hoisted into components, references rewritten.
    const body = op(doc, '/api/v1/invoices', 'post').requestBody!.content['application/json'].schema as Record<string, any>;
    expect(body.properties.lines).toEqual({
      type: 'array',
      minItems: 1,
      items: { $ref: '#/components/schemas/invoicing.createInvoice.body.line' },
    });
    expect(doc.components.schemas['invoicing.createInvoice.body.line']).toEqual({
      type: 'object',
      required: ['description', 'quantity', 'unitPrice'],
      properties: {
        description: { type: 'string' },
        quantity: { type: 'number', minimum: 0 },
        unitPrice: { type: 'number' },
        discount: { type: 'number', minimum: 0, exclusiveMaximum: 100 },
      },
    });
    expect(body.properties.date).toEqual({ type: 'string', format: 'date', examples: ['2025-01-31'] });
    expect(body.properties.notes).toEqual({ type: ['string', 'null'], description: 'Free text on the invoice.' });
    expect(body.properties.currency).toEqual({ type: ['string', 'null'], enum: ['SAR', 'AED', 'USD', null] });
    expect(body.properties.billingAddress).toEqual({
      anyOf: [{ $ref: '#/components/schemas/Address' }, { type: 'null' }],
      description: 'Defaults to the customer address.',
    });
    expect(body.properties.taxPair).toEqual({
      type: 'array',
      prefixItems: [{ type: 'string' }, { type: 'number' }],
      items: false,
    });
    expect(body.dependentRequired).toEqual({ dueDate: ['date'] });
    expect(body.additionalProperties).toBe(false);
    expect(body).not.toHaveProperty('$defs');

    const reply = op(doc, '/api/v1/invoices', 'post').responses['201'].content!['application/json'].schema as any;
    expect(reply.properties.data.properties.paidAt).toEqual({ type: ['string', 'null'], format: 'date-time' });
    expect(reply.properties.data.properties.id).toEqual({ type: 'string', examples: ['inv_01'] });
    expect(reply.properties.data.properties.customer).toEqual({ $ref: '#/components/schemas/Customer' });
  });

  it('leaves no dangling $ref', () => {
    const refs = collect(doc, '$ref');
    expect(refs.length).toBeGreaterThan(10);
    for (const { path, value } of refs) {
      expect(typeof value, path).toBe('string');
      expect(resolvePointer(doc, value as string), `${path} → ${value}`).toBeDefined();
    }
  });

  it('is deterministic, plain JSON, and leaves its input untouched', () => {
    const before = JSON.stringify(input);
    const shuffled: DocumentInput = { ...input, routes: [...routes].reverse(), errorCodes: [...errorCodes].reverse() };
    const a = buildOpenApiDocument(input);
    const b = buildOpenApiDocument(shuffled);
    expect(JSON.stringify(b)).toBe(JSON.stringify(a));
    expect(JSON.parse(JSON.stringify(a))).toStrictEqual(a);
    expect(JSON.stringify(input)).toBe(before);
  });

  it('defaults servers to "/" and appends undeclared tags', async () => {
    const minimal = buildOpenApiDocument({
      title: 't',
      version: '1',
      routes: [routes[7], { ...routes[0], tag: 'crm' }],
      errorCodes,
      components,
    });
    expect(minimal.servers).toEqual([{ url: '/' }]);
    expect(minimal.tags).toEqual([{ name: 'core' }, { name: 'crm' }]);
    expect(minimal.info).toEqual({ title: 't', version: '1' });
    expect((await validate(minimal)).valid).toBe(true);
  });

  it('refuses inconsistent input', () => {
    const build = (patch: Partial<DocumentInput>) => () => buildOpenApiDocument({ ...input, ...patch });
    expect(build({ routes: [...routes, { ...routes[0], url: '/api/v1/other' }] })).toThrow(/operationId/);
    expect(build({ routes: [...routes, { ...routes[0], operationId: 'x.dup' }] })).toThrow(/declared twice/);
    expect(build({ routes: [{ ...routes[0], errors: ['NO_SUCH_CODE'] }] })).toThrow(/NO_SUCH_CODE/);
    expect(build({ errorCodes: errorCodes.filter((e) => e.code !== 'INTERNAL') })).toThrow(/INTERNAL/);
    expect(
      build({ routes: [{ ...routes[0], schema: { response: { 200: { $ref: 'nobody#' } } } }] }),
    ).toThrow(/nobody/);
    expect(
      build({ routes: [{ ...routes[2], schema: { ...routes[2].schema, params: { type: 'object', properties: { cid: {} } } } }] }),
    ).toThrow(/cid/);
    expect(build({ components: { ...components, ErrorEnvelope: {} } })).toThrow(/reserved/);
  });
});
