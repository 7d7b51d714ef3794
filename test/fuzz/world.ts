// The fuzz's host and its tenants. One in-memory host (the invoicing app, webhooks to loopback
// allowed but never sent: the delivery loop is not started, rate limit off) and, per operation,
// a fresh company with a key per role, a key scoped to nothing, a revoked and an expired key, and
// records made through the API itself so that path parameters can name things that exist.
// What the fuzz learns about the API it learns from the served document and the API's answers.
import { CLI_ACTOR } from '../../core/kernel/actor.ts';
import fc from 'fast-check';
import type { Host } from '../../core/host.ts';
import { invoicingSources, makeHost } from '../helpers.ts';
import { FUZZ_COMPANY_APPS, fuzzAppSources } from './apps.ts';
import { ROLES, type Role } from '../../core/identity/roles.ts';
import { Oracle, operationsOf, type Answer, type OpenApiDoc, type Operation } from './oracle.ts';
import { matching, valueArb, type GenContext, type SchemaObject } from './schema-arbitrary.ts';
import { inlineAllResponses } from '../openapi-refs.ts';

/** A clock the fuzz can move forward (to expire a key). */
export class OffsetClock {
  offset = 0;
  now = () => Date.now() + this.offset;
}

export interface Tenant {
  companyId: string;
  keys: Record<Role, string>;
  /** Owner role, scopes that name no resource. */
  scopedKey: string;
  revokedKey: string;
  expiredKey: string;
  /** Ids of this tenant's fixture keys: never offered as path parameters (revoking them ends the run). */
  protectedKeyIds: Set<string>;
  /** Ids seen in answers, by the concrete path of their collection (`/api/v1/customers`, `/api/v1/webhook-endpoints/whe_…/deliveries`). */
  pools: Map<string, Set<string>>;
}

export interface Injected {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string;
}

const keyIdOf = (key: string) => key.split('_')[1];

/** Where the ids a request answers belong: its concrete path, less a trailing `/{param}` of the operation. */
export function collectionOf(opPath: string, url: string): string {
  const path = url.split('?')[0];
  return /\}$/.test(opPath) ? path.slice(0, path.lastIndexOf('/')) : path;
}

/** The concrete collection a path parameter names a member of: the path before `/{param}`, earlier parameters filled in. */
export function collectionOfParam(opPath: string, param: string, chosen: Record<string, string>): string {
  return opPath.slice(0, opPath.indexOf(`/{${param}}`)).replace(/\{([^}]+)\}/g, (_m, name: string) => encodeURIComponent(chosen[name] ?? ''));
}

export class FuzzWorld {
  oracle!: Oracle;
  operations!: Operation[];
  other!: { companyId: string; ownerKey: string };
  /** permission → lowest role that holds it (from GET /api/v1/permissions). */
  lowestRole = new Map<string, Role>();
  /** Topics and subscription patterns of the catalogue. */
  topics: string[] = [];
  readonly clock = new OffsetClock();

  private constructor(readonly host: Host, readonly doc: OpenApiDoc) {}

  static async create(): Promise<FuzzWorld> {
    const clock = new OffsetClock();
    const host = await makeHost({
      clock,
      sources: [...invoicingSources(), ...fuzzAppSources()],
      config: { rateLimitPerMinute: 0, authFailLimit: 0, webhooks: { allowLoopback: true, allowPrivate: false } as Host['config']['webhooks'] },
    });
    const res = await host.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
    if (res.statusCode !== 200) throw new Error(`GET /api/v1/openapi.json answered ${res.statusCode}`);
    // Shared error responses written out: the oracle reads each operation's own.
    const world = new FuzzWorld(host, inlineAllResponses(res.json() as OpenApiDoc));
    (world as { clock: OffsetClock }).clock = clock;
    world.oracle = new Oracle(world.doc);
    world.operations = operationsOf(world.doc);
    const other = await host.createCompany({ name: 'Other Co', currency: 'USD', apps: FUZZ_COMPANY_APPS });
    world.other = { companyId: other.company.id, ownerKey: (await host.keys.create({ companyId: other.company.id, actor: CLI_ACTOR, appId: 'core' }, { role: 'Owner', scopes: ['*'] })).key };

    const owner = { authorization: `Bearer ${world.other.ownerKey}`, 'x-company-id': world.other.companyId };
    const perms = await host.app.inject({ method: 'GET', url: '/api/v1/permissions', headers: owner });
    for (const p of perms.json().data as { permission: string; lowestRole: Role }[]) world.lowestRole.set(p.permission, p.lowestRole);
    const cat = await host.app.inject({ method: 'GET', url: '/api/v1/events/catalogue', headers: owner });
    const families = cat.json().data.families as { prefix: string; topics: { topic: string }[] }[];
    world.topics = ['*', ...families.flatMap((f) => [`${f.prefix}.*`, ...f.topics.map((t) => t.topic)])];
    return world;
  }

  close(): Promise<void> {
    return this.host.close();
  }

  /** Paths answered as a stream (`text/event-stream`): they never end by themselves. */
  private streams?: RegExp[];
  private listening?: Promise<string>;

  async inject(r: Injected): Promise<Answer> {
    this.streams ??= Object.entries(this.doc.paths)
      .filter(([, item]) => Object.values(item).some((op) => op?.responses?.['200']?.content?.['text/event-stream']))
      .map(([path]) => new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/?]+')}(\\?|$)`));
    if (r.method === 'GET' && this.streams.some((re) => re.test(r.url))) return this.openStream(r);
    const res = await this.host.app.inject({ method: r.method as 'GET', url: r.url, headers: r.headers, payload: r.payload });
    return { status: res.statusCode, headers: res.headers, body: res.body };
  }

  /** A stream asked over a real socket: its status and headers, then the connection is dropped. */
  private async openStream(r: Injected): Promise<Answer> {
    this.listening ??= this.host.app.listen({ port: 0, host: '127.0.0.1' });
    const base = await this.listening;
    const abort = new AbortController();
    const res = await fetch(`${base}${r.url}`, { headers: r.headers, signal: abort.signal });
    const headers = Object.fromEntries(res.headers);
    // An error answer is whole; a stream's first bytes are all there is to read.
    const body = res.headers.get('content-type')?.startsWith('text/event-stream') ? '' : await res.text();
    abort.abort();
    return { status: res.status, headers, body };
  }

  /** Roles that do not hold the operation's permission. */
  rolesBelow(op: Operation): Role[] {
    const perm = op.op['x-permission'];
    const lowest = perm ? this.lowestRole.get(perm) : undefined;
    return lowest ? ROLES.slice(0, ROLES.indexOf(lowest)) : [];
  }

  rolesAllowed(op: Operation): Role[] {
    const perm = op.op['x-permission'];
    const lowest = perm ? this.lowestRole.get(perm) : undefined;
    return lowest ? ROLES.slice(ROLES.indexOf(lowest)) : ['Owner'];
  }

  /** Learns ids from a success answer of an operation. */
  harvest(t: Tenant, op: Operation, url: string, ans: Answer): void {
    // Large answers (the document, the catalogue) carry no ids worth learning.
    if (ans.status < 200 || ans.status >= 300 || ans.body === '' || ans.body.length > 200_000) return;
    if (op.method === 'DELETE' && /\}$/.test(op.path)) {
      // Gone: no longer offered as a path parameter or a reference.
      const path = url.split('?')[0];
      const id = decodeURIComponent(path.slice(path.lastIndexOf('/') + 1));
      t.pools.get(collectionOf(op.path, url))?.delete(id);
      return;
    }
    let data: unknown;
    try {
      data = JSON.parse(ans.body).data;
    } catch {
      return;
    }
    const ids = (Array.isArray(data) ? data : [data])
      .map((d) => (d && typeof d === 'object' ? (d as { id?: unknown }).id : undefined))
      .filter((id): id is string => typeof id === 'string' && !t.protectedKeyIds.has(id));
    if (ids.length === 0) return;
    const key = collectionOf(op.path, url);
    const pool = t.pools.get(key) ?? new Set<string>();
    for (const id of ids) pool.add(id);
    t.pools.set(key, pool);
  }

  poolFor(t: Tenant, path: string, param: string, chosen: Record<string, string> = {}): string[] {
    return [...(t.pools.get(collectionOfParam(path, param, chosen)) ?? [])];
  }

  /** Domain knowledge for the value generator: existing ids, acceptable URLs, catalogue topics. */
  genContext(t: Tenant): GenContext {
    const doc = this.doc;
    return {
      resolve: (ref) => {
        const parts = ref.replace(/^#\//, '').split('/').map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
        return parts.reduce<unknown>((n, p) => (n as Record<string, unknown>)[p], doc) as SchemaObject;
      },
      hint: (s: SchemaObject, path) => {
        const name = path[path.length - 1];
        const parent = path[path.length - 2];
        if (s.type === 'string' && typeof s.pattern === 'string') {
          const m = /^\^([a-z]+)_\[0-9a-z\]\+\$$/.exec(s.pattern);
          if (m) {
            const generated = matching(s.pattern);
            // Read when a value is drawn: records made during the run are offered too.
            return fc.constant(null).chain(() => {
              const ids = [...new Set([...t.pools.values()].flatMap((p) => [...p]))].filter((id) => id.startsWith(`${m[1]}_`));
              return ids.length ? fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...ids) }, { weight: 1, arbitrary: generated }) : generated;
            });
          }
        }
        if (name === 'url' && s.type === 'string') {
          return fc.oneof(
            { weight: 4, arbitrary: fc.constantFrom('http://127.0.0.1:9/hook', 'https://127.0.0.1:9/h?x=1', 'http://[::1]:9/', 'http://93.184.215.14/hook') },
            { weight: 1, arbitrary: fc.constantFrom('http://10.0.0.1/x', 'http://169.254.169.254/latest', 'ftp://127.0.0.1/x', 'not a url', 'http://u:p@127.0.0.1/') },
          );
        }
        if ((name === 'topic' || (name === '*' && parent === 'topics')) && s.type === 'string') {
          const exact = this.topics.filter((x) => !x.endsWith('*'));
          return fc.oneof(
            { weight: 5, arbitrary: fc.constantFrom(...(name === 'topic' ? exact : this.topics)) },
            { weight: 1, arbitrary: fc.constantFrom('nope.created', 'invoice.', '**', 'audit.*', 'apps.*') },
          );
        }
        if (name === 'scopes' || (name === '*' && parent === 'scopes')) {
          return name === '*' ? fc.constantFrom('*', 'invoices', 'customers', 'webhooks', 'nothing') : undefined;
        }
        if (name === 'appId' || (name === 'id' && s.pattern === '^[a-z][a-z0-9-]{1,39}$')) {
          return fc.constantFrom(...[...(t.pools.get('/api/v1/apps') ?? [])], 'no-such-app');
        }
        if (name === 'family' && path.length === 1) {
          const prefixes = [...new Set(this.topics.map((x) => x.split('.')[0]).filter((x) => x !== '*'))];
          return fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...prefixes) }, { weight: 1, arbitrary: fc.constantFrom('point of sale', 'Invoicing', 'nope', '') });
        }
        if (name === 'pattern' && path.length === 1) return fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...this.topics) }, { weight: 1, arbitrary: fc.constantFrom('invoice.**', '.', 'a.b.c', '') });
        if (name === 'version' && parent === undefined) return fc.constantFrom('1.0.0', '2.0.0', '0.0.1');
        if (name === 'since') return fc.constantFrom('2020-01-01T00:00:00Z', new Date(this.clock.now() - 3600_000).toISOString(), 'yesterday', '2026-13-45');
        return undefined;
      },
    };
  }

  /** A fresh company with fixture keys and some records made through the API. */
  async freshTenant(seed: number): Promise<Tenant> {
    const { host } = this;
    const { company } = await host.createCompany({ name: 'Fuzz Co', currency: 'SAR', apps: FUZZ_COMPANY_APPS });
    const scope = { companyId: company.id, actor: CLI_ACTOR, appId: 'core' };
    const mk = (role: Role, scopes = ['*'], expiresAt?: string) => host.keys.create(scope, { role, scopes, name: `fuzz ${role}`, expiresAt });
    const keys = Object.fromEntries(await Promise.all(ROLES.map(async (r) => [r, (await mk(r)).key]))) as Record<Role, string>;
    const scopedKey = (await mk('Owner', ['nothing'])).key;
    const revoked = await mk('Owner');
    await host.keys.revoke(scope, revoked.record.id);
    const expired = await mk('Owner', ['*'], new Date(this.clock.now() + 1000).toISOString());
    this.clock.offset += 2000;
    const t: Tenant = {
      companyId: company.id,
      keys,
      scopedKey,
      revokedKey: revoked.key,
      expiredKey: expired.key,
      protectedKeyIds: new Set([...Object.values(keys), scopedKey, revoked.key, expired.key].map(keyIdOf)),
      pools: new Map(),
    };
    await this.seed(t, seed);
    return t;
  }

  /**
   * Makes records with the document's own create operations (POST on a path without parameters),
   * valid bodies drawn from their schemas, a few tries each, twice over (invoices need customers);
   * then fans events out into deliveries and lists every collection to learn ids.
   */
  private async seed(t: Tenant, seed: number): Promise<void> {
    const headers = { authorization: `Bearer ${t.keys.Owner}`, 'x-company-id': t.companyId, 'content-type': 'application/json' };
    const creates = this.operations.filter((o) => o.method === 'POST' && !o.path.includes('{') && o.op.requestBody && o.path !== '/api/v1/apps');
    // Lists: GETs whose answer's `data` is an array of records.
    const isList = (o: Operation) => {
      const schema = o.op.responses['200']?.content?.['application/json']?.schema as { properties?: { data?: { type?: unknown } } } | undefined;
      return schema?.properties?.data?.type === 'array';
    };
    const lists = () => this.operations.filter((o) => o.method === 'GET' && o.op.security?.length && isList(o));
    let n = seed;
    // Every list of the document, for every combination of known ids (a few per parameter).
    const listAll = async () => {
      for (const op of lists()) {
        const params = (op.op.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name);
        const fill = async (i: number, chosen: Record<string, string>): Promise<void> => {
          if (i === params.length) {
            const url = op.path.replace(/\{([^}]+)\}/g, (_m, name: string) => encodeURIComponent(chosen[name]));
            this.harvest(t, op, url, await this.inject({ method: 'GET', url, headers }));
            return;
          }
          for (const id of this.poolFor(t, op.path, params[i], chosen).slice(0, 3)) await fill(i + 1, { ...chosen, [params[i]]: id });
        };
        await fill(0, {});
      }
    };
    // Creates answer their own ids, so references made in the first round are there for the second.
    for (let round = 0; round < 2; round++) {
      for (const op of creates) {
        const schema = op.op.requestBody!.content['application/json'].schema as SchemaObject;
        const arb = valueArb(schema, this.genContext(t));
        for (const body of fc.sample(arb, { seed: n++, numRuns: 6 })) {
          const ans = await this.inject({ method: 'POST', url: op.path, headers, payload: JSON.stringify(body) });
          this.harvest(t, op, op.path, ans);
          // Made one; or the app is not in this company: no body would do.
          if (ans.status < 300 || ans.status === 404) break;
        }
      }
    }
    this.host.webhooks.dispatcher.fanOut();
    await listAll();
  }
}
