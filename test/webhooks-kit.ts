// Shared by the issue-12 webhook tests (health, limits, the events API, retention, the stream
// and `diwan listen`): a throwaway host on the asynchronous core with only the invoicing app, a
// company with one key per role, request helpers over `inject`, and loopback receivers.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { expect } from 'vitest';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import type { Host, HostOptions } from '../core/host.ts';
import { buildHost } from './db.ts';
import { REPO_ROOT, validManifest, type AppSource } from '../core/apps/app-source.ts';
import { CLI_ACTOR } from '../core/kernel/actor.ts';
import { ROLES, type Role } from '../core/identity/roles.ts';
import type { HostConfig } from '../core/kernel/config.ts';
import type { Company } from '../core/tenancy/companies.ts';

export type Res = LightMyRequestResponse;

export const WEBHOOKS: HostConfig['webhooks'] = {
  ladder: [1, 2, 3], timeoutMs: 1000, allowLoopback: true, allowPrivate: false, maxInFlightPerEndpoint: 4, rotationGraceSeconds: 60,
  // Exact retry times: the ladder tests step the clock to them (jitter has its own tests).
  jitter: 0,
};

export function invoicingSources(): AppSource[] {
  const file = path.join(REPO_ROOT, 'manifests', 'invoicing.json');
  const manifest = validManifest(JSON.parse(fs.readFileSync(file, 'utf8')));
  return [{ manifest, dir: path.join(REPO_ROOT, 'apps-installed', manifest.id), origin: 'first-party' }];
}

/** A host (in memory, or a fresh PostgreSQL database in the `postgres` project) with only the invoicing app and loopback deliveries allowed. */
export async function makeHost(opts: HostOptions & { webhooks?: Partial<HostConfig['webhooks']> } = {}): Promise<Host> {
  const { webhooks, ...rest } = opts;
  const host = await buildHost({
    dbFile: ':memory:', sources: invoicingSources(), ...rest,
    config: { ...rest.config, webhooks: { ...WEBHOOKS, ...webhooks } },
  });
  if (!host.runtime.get('invoicing')) {
    await host.close();
    throw new Error('the invoicing app was refused at boot');
  }
  return host;
}

export interface Client {
  get(url: string, headers?: Record<string, string>): Promise<Res>;
  post(url: string, body?: unknown, headers?: Record<string, string>): Promise<Res>;
  patch(url: string, body?: unknown): Promise<Res>;
  delete(url: string): Promise<Res>;
}

export interface TestCompany {
  company: Company;
  keys: Record<Role, string>;
  as(role?: Role): Client;
}

export const authHeaders = (key: string, companyId: string) => ({ authorization: `Bearer ${key}`, 'x-company-id': companyId });

export function client(host: Host, key: string, companyId: string): Client {
  const send = (opts: InjectOptions) => host.app.inject({ ...opts, headers: { ...authHeaders(key, companyId), ...(opts.headers as Record<string, string> | undefined) } });
  return {
    get: (url, headers) => send({ method: 'GET', url, headers }),
    post: (url, body, headers) => send({ method: 'POST', url, payload: body as InjectOptions['payload'], headers }),
    patch: (url, body) => send({ method: 'PATCH', url, payload: body as InjectOptions['payload'] }),
    delete: (url) => send({ method: 'DELETE', url }),
  };
}

export async function createCompany(host: Host, name = 'Test Co'): Promise<TestCompany> {
  const { company } = await host.createCompany({ name, currency: 'SAR', apps: ['invoicing'] });
  const keys = {} as Record<Role, string>;
  for (const role of ROLES) {
    keys[role] = (await host.keys.create({ companyId: company.id, actor: CLI_ACTOR, appId: 'core' }, { role, scopes: ['*'], name: `${role} key` })).key;
  }
  return { company, keys, as: (role: Role = 'Owner') => client(host, keys[role], company.id) };
}

/** Registers an endpoint through the API; answers its data (with the secret). */
export async function addEndpoint(c: Client, body: Record<string, unknown>): Promise<{ id: string; secret: string } & Record<string, any>> {
  const res = await c.post('/api/v1/webhook-endpoints', body);
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data;
}

export async function createCustomer(c: Client, name = 'Acme'): Promise<{ id: string }> {
  const res = await c.post('/api/v1/customers', { name });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data;
}

export function expectError(res: Res, status: number, code: string): { code: string; message: string; details: Record<string, any>[] } {
  expect(res.statusCode, res.body).toBe(status);
  const body = res.json();
  expect(Object.keys(body)).toEqual(['error']);
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe('string');
  expect(Array.isArray(body.error.details)).toBe(true);
  return body.error;
}

export type Behaviour = (req: http.IncomingMessage, res: http.ServerResponse, raw: string) => void;

export interface Received {
  headers: http.IncomingHttpHeaders;
  raw: string;
  body: { id: string; type: string; createdAt: string; companyId: string; data: any; test?: boolean };
  /** performance.now() when the request had arrived whole. */
  at: number;
}

export interface Receiver {
  url: string;
  got: Received[];
  behave(b: Behaviour): void;
  waitFor(n: number, ms?: number): Promise<Received[]>;
  close(): Promise<void>;
}

export const ok200: Behaviour = (_req, res) => {
  res.writeHead(200, { 'content-type': 'text/plain' });
  res.end('thanks');
};

export const status = (code: number): Behaviour => (_req, res) => {
  res.writeHead(code, { 'content-type': 'text/plain' });
  res.end(`status ${code}`);
};

export async function receiver(behaviour: Behaviour = ok200): Promise<Receiver> {
  let b = behaviour;
  const got: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      got.push({ headers: req.headers, raw, body: JSON.parse(raw), at: performance.now() });
      b(req, res, raw);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    got,
    behave: (nb) => (b = nb),
    async waitFor(n, ms = 5000) {
      const until = Date.now() + ms;
      while (got.length < n) {
        if (Date.now() > until) throw new Error(`receiver got ${got.length} of ${n} requests within ${ms} ms`);
        await new Promise((r) => setTimeout(r, 10));
      }
      return got;
    },
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` until it holds (or fails after `ms`). */
export async function until(check: () => boolean | Promise<boolean>, ms = 5000, what = 'condition'): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`${what} did not hold within ${ms} ms`);
    await sleep(10);
  }
}
