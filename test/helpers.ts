// Shared by the end-to-end API tests: a throwaway host with only the invoicing app, companies
// with one key per role, and small request helpers over `host.app.inject`.
//
// The invoicing source is read straight from `manifests/invoicing.json` rather than through
// `firstPartySources()`, which reads and validates every manifest in the folder: these tests
// must not depend on (or break because of) the other first-party apps being added beside it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import type { Host, HostOptions } from '../core/host.ts';
import { buildHost } from './db.ts';
import { REPO_ROOT, firstPartySources, validManifest, type AppSource } from '../core/apps/app-source.ts';
import { ROLES, type Role } from '../core/identity/roles.ts';
import type { Company } from '../core/tenancy/companies.ts';
import type { ApiKeyRecord } from '../core/identity/api-keys.ts';
import type { WriteScope } from '../core/audit/unit-of-work.ts';
import { CLI_ACTOR } from '../core/kernel/actor.ts';

export type Res = LightMyRequestResponse;

/** The invoicing app as an app source, independent of every other manifest. */
export function invoicingSources(): AppSource[] {
  const file = path.join(REPO_ROOT, 'manifests', 'invoicing.json');
  const manifest = validManifest(JSON.parse(fs.readFileSync(file, 'utf8')));
  return [{ manifest, dir: path.join(REPO_ROOT, 'apps-installed', manifest.id), origin: 'first-party' }];
}

/** A host (in memory, or a fresh PostgreSQL database in the `postgres` project) serving only the invoicing app; close it when done. Fails loudly if the app was refused. */
export async function makeHost(opts: HostOptions = {}): Promise<Host> {
  const host = await buildHost({ dbFile: ':memory:', sources: invoicingSources(), ...opts });
  if (!host.runtime.get('invoicing')) {
    await host.close();
    throw new Error('the invoicing app was refused at boot');
  }
  return host;
}

export interface TestCompany {
  company: Company;
  /** A full-scope (`*`) key per role. */
  keys: Record<Role, string>;
  /** Request helpers acting as `role` (default Owner) in this company. */
  as(role?: Role): Client;
}

export interface Client {
  get(url: string, headers?: Record<string, string>): Promise<Res>;
  post(url: string, body?: unknown, headers?: Record<string, string>): Promise<Res>;
  patch(url: string, body?: unknown, headers?: Record<string, string>): Promise<Res>;
  delete(url: string, headers?: Record<string, string>): Promise<Res>;
  /** Any request, with the auth headers added. */
  raw(opts: InjectOptions): Promise<Res>;
}

export function authHeaders(key: string, companyId: string): Record<string, string> {
  return { authorization: `Bearer ${key}`, 'x-company-id': companyId };
}

export function client(host: Host, key: string, companyId: string): Client {
  const send = (opts: InjectOptions) =>
    host.app.inject({ ...opts, headers: { ...authHeaders(key, companyId), ...(opts.headers as Record<string, string> | undefined) } });
  return {
    get: (url, headers) => send({ method: 'GET', url, headers }),
    post: (url, body, headers) => send({ method: 'POST', url, payload: body as InjectOptions['payload'], headers }),
    patch: (url, body, headers) => send({ method: 'PATCH', url, payload: body as InjectOptions['payload'], headers }),
    delete: (url, headers) => send({ method: 'DELETE', url, headers }),
    raw: send,
  };
}

/** The write scope of the operator (the CLI) acting in `companyId`, for calls such as `host.keys.create`. */
export function cliScope(companyId: string): WriteScope {
  return { companyId, actor: CLI_ACTOR, appId: 'core' };
}

/** Creates a key as the operator; answers the full key and its record. */
export function createKey(
  host: Host,
  companyId: string,
  input: { role: Role | string; scopes?: string[]; name?: string; expiresAt?: string | null },
): Promise<{ record: ApiKeyRecord; key: string }> {
  return host.keys.create(cliScope(companyId), { role: input.role, scopes: input.scopes ?? ['*'], name: input.name, expiresAt: input.expiresAt });
}

/** Creates a company with the invoicing app (or `apps`) and one `*`-scoped key per role. */
export async function createCompany(host: Host, input: { name?: string; currency?: string; apps?: string[] } = {}): Promise<TestCompany> {
  const { company } = await host.createCompany({ name: input.name ?? 'Test Co', currency: input.currency ?? 'SAR', apps: input.apps ?? ['invoicing'] });
  const keys = {} as Record<Role, string>;
  for (const role of ROLES) keys[role] = (await createKey(host, company.id, { role, scopes: ['*'], name: `${role} key` })).key;
  return { company, keys, as: (role: Role = 'Owner') => client(host, keys[role], company.id) };
}

export function invoiceBody(customerId: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    customerId,
    date: '2026-01-15',
    dueDate: '2026-02-14',
    lines: [{ description: 'Consulting', quantity: 2, unitPrice: 100 }],
    ...overrides,
  };
}

export async function createCustomer(c: Client, name = 'Acme'): Promise<{ id: string } & Record<string, unknown>> {
  const res = await c.post('/api/v1/customers', { name });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data;
}

/**
 * Asserts the one error shape: exactly `{ error: { code, message, details } }`, message a
 * non-empty string, details an array of plain objects, and the status the code belongs to.
 * Returns the error object for further checks.
 */
export function expectError(res: Res, status: number, code: string): { code: string; message: string; details: Record<string, unknown>[] } {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  const body = res.json();
  expect(Object.keys(body)).toEqual(['error']);
  expect(Object.keys(body.error).sort()).toEqual(['code', 'details', 'message']);
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe('string');
  expect(body.error.message.length).toBeGreaterThan(0);
  expect(Array.isArray(body.error.details)).toBe(true);
  for (const d of body.error.details) {
    expect(typeof d === 'object' && d !== null && !Array.isArray(d), JSON.stringify(d)).toBe(true);
  }
  return body.error;
}

/** The first column of the first row of a query (typically a `count(*)`), straight from the database. */
export async function count(host: Host, sql: string, ...args: unknown[]): Promise<number> {
  const row = await host.storage.db.get(sql, args);
  return (row ? Object.values(row)[0] : undefined) as number;
}

export const ARABIC = /[\u0600-\u06FF]/;

/** The id part of a full key `dwk_<id>_<secret>`. */
export const keyIdOf = (key: string): string => key.split('_')[1];

/**
 * Writes a small app into a fresh temporary folder: one document type `gadget` (resource
 * `gadgets`, ids `gad_…`, a required `name`), the `gadget` event family (with `topics`, none by
 * default), and optionally a server bundle (plain ESM text). Returns the source to hand to
 * `host.runtime.load`.
 */
export function writeTempApp(opts: { id?: string; resource?: string; server?: string; topics?: Record<string, unknown>[] } = {}): AppSource & { cleanup(): void } {
  const id = opts.id ?? 'gadgets';
  const resource = opts.resource ?? 'gadgets';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `diwan-${id}-`));
  const manifest = {
    id,
    version: '1.0.0',
    host: '^0.1.0',
    name: { en: 'Gadgets', ar: 'الأدوات' },
    description: { en: 'A test app with one document type.', ar: 'تطبيق اختبار بنوع مستند واحد.' },
    strings: { en: { title: 'Gadgets' }, ar: { title: 'الأدوات' } },
    documentTypes: [
      {
        name: 'gadget',
        resource,
        idPrefix: 'gad',
        label: { en: 'Gadget', ar: 'أداة' },
        labelPlural: { en: 'Gadgets', ar: 'الأدوات' },
        fields: [{ name: 'name', type: 'string', required: true, minLength: 1, maxLength: 100, label: { en: 'Name', ar: 'الاسم' } }],
      },
    ],
    eventFamilies: [{ family: 'gadgets', prefix: 'gadget', label: { en: 'Gadgets', ar: 'الأدوات' }, topics: opts.topics ?? [] }],
    ...(opts.server ? { server: 'server.mjs' } : {}),
  };
  fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2));
  if (opts.server) fs.writeFileSync(path.join(dir, 'server.mjs'), opts.server);
  return { manifest: validManifest(manifest), dir, origin: 'package', cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/** A document as an API answer carries it (tests read its fields freely). */
export type Data = Record<string, any> & { id: string; state?: string };

/** The document a create answered with 201; otherwise the test fails showing the body. */
export async function created(res: Promise<Res>): Promise<Data> {
  const r = await res;
  expect(r.statusCode, r.body).toBe(201);
  return r.json().data;
}

/** The document a request answered with 200; otherwise the test fails showing the body. */
export async function ok(res: Promise<Res>): Promise<Data> {
  const r = await res;
  expect(r.statusCode, r.body).toBe(200);
  return r.json().data;
}

/** A host serving first-party `apps` and the apps they depend on, and a SAR company with all of them installed. */
export async function appsHost(apps: readonly string[]): Promise<{ host: Host; co: TestCompany }> {
  const sources = firstPartySources();
  const wanted = new Set(apps);
  for (let grew = true; grew; ) {
    grew = false;
    for (const s of sources) if (wanted.has(s.manifest.id)) for (const d of Object.keys(s.manifest.dependencies ?? {})) if (!wanted.has(d)) { wanted.add(d); grew = true; }
  }
  const host = await buildHost({ sources: sources.filter((s) => wanted.has(s.manifest.id)), config: { rateLimitPerMinute: 0 } });
  return { host, co: await createCompany(host, { currency: 'SAR', apps: [...wanted] }) };
}
