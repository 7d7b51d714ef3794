// JSON nested deeper than DIWAN_JSON_MAX_DEPTH is refused at parse time, on every route, with
// 400 BAD_REQUEST; it used to reach the handlers and die in a recursive walk (a 500).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Host } from '../core/host.ts';
import { loadConfig } from '../core/kernel/config.ts';
import { nestsDeeperThan } from '../core/http/json-body.ts';
import { ARABIC, createCompany, createCustomer, expectError, invoiceBody, makeHost, type TestCompany } from './helpers.ts';

const nested = (depth: number, leaf = '1') => '{"a":'.repeat(depth) + leaf + '}'.repeat(depth);
const nestedArrays = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

describe('nestsDeeperThan', () => {
  it('counts objects and arrays, not brackets inside strings', () => {
    expect(nestsDeeperThan('{}', 1)).toBe(false);
    expect(nestsDeeperThan('{"a":{}}', 1)).toBe(true);
    expect(nestsDeeperThan(nestedArrays(32), 32)).toBe(false);
    expect(nestsDeeperThan(nestedArrays(33), 32)).toBe(true);
    expect(nestsDeeperThan('[{"a":[1,{"b":[]}]}]', 5)).toBe(false);
    expect(nestsDeeperThan('[{"a":[1,{"b":[]}]}]', 4)).toBe(true);
    expect(nestsDeeperThan(JSON.stringify({ s: '[[[[[[[[{{{{{{' }), 2)).toBe(false);
    expect(nestsDeeperThan(JSON.stringify({ s: 'a\\"[[[[[[', t: '\\' }), 1)).toBe(false);
    expect(nestsDeeperThan('1', 1)).toBe(false);
  });

  it('handles a million levels without recursion', () => {
    expect(nestsDeeperThan(nestedArrays(1_000_000), 32)).toBe(true);
  });
});

describe('JSON depth limit on every route', () => {
  let host: Host;
  let co: TestCompany;

  beforeAll(async () => {
    host = await makeHost();
    co = await createCompany(host);
  });
  afterAll(() => host.close());

  const post = (url: string, payload: string, lang = 'en') => co.as().raw({ method: 'POST', url, payload, headers: { 'content-type': 'application/json', 'accept-language': lang } });

  it('answers data nested 10,000 deep on /api/v1/events/test with 400 BAD_REQUEST, not 500', async () => {
    const res = await post('/api/v1/events/test', `{"topic":"invoice.created","data":${nested(10_000)}}`);
    const err = expectError(res, 400, 'BAD_REQUEST');
    expect(err.details).toEqual([{ reason: 'json_too_deep', limit: 32 }]);
    expect(err.message).toContain('32');
    const ar = expectError(await post('/api/v1/events/test', nested(10_000), 'ar'), 400, 'BAD_REQUEST');
    expect(ar.message).toMatch(ARABIC);
  });

  it('refuses deep bodies on core and app routes alike, before validation', async () => {
    for (const url of ['/api/v1/customers', '/api/v1/invoices', '/api/v1/api-keys', '/api/v1/webhook-endpoints']) {
      for (const body of [nested(33), nestedArrays(5000), `{"name":"x","extra":${nestedArrays(40)}}`]) {
        const err = expectError(await post(url, body), 400, 'BAD_REQUEST');
        expect(err.details, url).toEqual([{ reason: 'json_too_deep', limit: 32 }]);
      }
    }
  });

  it('accepts a body exactly at the limit and judges it on its content', async () => {
    // topic + data: the body itself is level 1, data's own object level 2.
    const data = nested(30);
    expect(nestsDeeperThan(`{"topic":"invoice.created","data":${data}}`, 32)).toBe(false);
    const res = await post('/api/v1/events/test', `{"topic":"invoice.created","data":${data}}`);
    expect(res.statusCode, res.body).toBe(202);
  });

  it('keeps refusing prototype poisoning and malformed JSON as before', async () => {
    for (const body of ['{"__proto__": {"x": 1}}', '{"constructor": {"prototype": {"x": 1}}}', '{"a": ']) {
      const err = expectError(await post('/api/v1/customers', body), 400, 'BAD_REQUEST');
      expect(err.details).toEqual([{ reason: 'malformed_json' }]);
    }
    expect(expectError(await post('/api/v1/customers', ''), 400, 'BAD_REQUEST').details).toEqual([{ reason: 'empty_json' }]);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
    // And ordinary JSON, any charset parameter, still works.
    const customer = await createCustomer(co.as());
    const ok = await co.as().raw({ method: 'POST', url: '/api/v1/invoices', payload: JSON.stringify(invoiceBody(customer.id)), headers: { 'content-type': 'application/json; charset=utf-8' } });
    expect(ok.statusCode, ok.body).toBe(201);
  });

  it('takes its limit from DIWAN_JSON_MAX_DEPTH (default 32)', async () => {
    expect(loadConfig({}).jsonMaxDepth).toBe(32);
    expect(loadConfig({ DIWAN_JSON_MAX_DEPTH: '4' }).jsonMaxDepth).toBe(4);
    const small = await makeHost({ config: { jsonMaxDepth: 4 } });
    try {
      const c = await createCompany(small);
      const send = (payload: string) => c.as().raw({ method: 'POST', url: '/api/v1/events/test', payload, headers: { 'content-type': 'application/json' } });
      expect((await send(`{"topic":"invoice.created","data":${nested(3)}}`)).statusCode).toBe(202);
      expect(expectError(await send(`{"topic":"invoice.created","data":${nested(4)}}`), 400, 'BAD_REQUEST').details).toEqual([{ reason: 'json_too_deep', limit: 4 }]);
    } finally {
      await small.close();
    }
  });
});
