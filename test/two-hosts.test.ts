// Two hosts on one database, as the CLI and a running server are, or two API processes on one
// PostgreSQL database: what one writes (an app package, an endpoint, a revoked key, a disabled
// app), the other notices within a second, with no restart, through the change feed (SQLite's
// data_version; PostgreSQL's LISTEN/NOTIFY). Each host has its own data folder: a package
// reaches the second one from the database, not from a shared folder.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildHost, type Host, type HostOptions } from '../core/host.ts';
import { CLI_ACTOR } from '../core/kernel/actor.ts';
import { databases, dropTestDatabase, testDatabaseUrl } from './db.ts';
import { client, cliScope, createCompany, createKey, expectError, invoicingSources, scalar, waitFor, type TestCompany } from './webhook-helpers.ts';

/** What "within a second" allows. */
const WITHIN = 1000;

function writeTally(dir: string, version: string): void {
  const manifest = {
    id: 'tally',
    version,
    host: '^0.1.0',
    name: { en: 'Tally', ar: 'العدّاد' },
    description: { en: 'Counts things.', ar: 'يعدّ الأشياء.' },
    strings: { en: { version: 'Version {{v}}' }, ar: { version: 'الإصدار {{v}}' } },
    permissions: [{ resource: 'tally-counts', action: 'about', role: 'Viewer' }],
    documentTypes: [
      {
        name: 'count',
        resource: 'tally-counts',
        idPrefix: 'cnt',
        label: { en: 'Count', ar: 'عدد' },
        fields: [{ name: 'label', type: 'string', required: true, label: { en: 'Label', ar: 'الوصف' } }],
      },
    ],
    eventFamilies: [
      {
        family: 'tally',
        prefix: 'tally',
        label: { en: 'Tally', ar: 'العدّاد' },
        topics: [{ topic: 'tally.count.created', description: { en: 'A count was made', ar: 'أُنشئ عدد' }, source: { type: 'count', on: 'create' } }],
      },
    ],
  };
  const server = `import { defineApp, route } from 'diwan/sdk';
export default defineApp({
  id: 'tally',
  routes: [
    route({
      method: 'GET', url: '/tally-counts/about', permission: 'tally-counts:about', summary: 'Which version answers',
      schema: { response: { 200: { type: 'object', properties: { data: { type: 'object', properties: { version: { type: 'string' }, counts: { type: 'integer' } } } } } } },
      async handler(_req, ctx) {
        return { body: { data: { version: '${version}', counts: (await ctx.docs('count').list()).total } } };
      },
    }),
  ],
});
`;
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2));
  fs.writeFileSync(path.join(dir, 'server.ts'), server);
}

/** Where both hosts' database is: hosts built on it share it; `drop` removes it once they are closed. */
interface Shared {
  name: string;
  open(root: string): Promise<{ build(opts: HostOptions): Promise<Host>; drop(): Promise<void> }>;
}

const places: Shared[] = [
  {
    name: 'one SQLite file',
    async open(root) {
      const dbFile = path.join(root, 'diwan.db');
      return { build: (opts) => buildHost({ ...opts, dbFile }), drop: async () => {} };
    },
  },
  {
    name: 'one PostgreSQL database',
    async open() {
      const url = await testDatabaseUrl();
      return { build: (opts) => buildHost({ ...opts, databaseUrl: url }), drop: () => dropTestDatabase(url) };
    },
  },
];
const onDatabases = places.filter((p) => databases().some((d) => p.name.includes(d.name === 'sqlite' ? 'SQLite' : 'PostgreSQL')));

describe.each(onDatabases)('two hosts on $name', (place) => {
  let root: string;
  let db: Awaited<ReturnType<Shared['open']>>;
  /** The operator's side (the CLI). */
  let cli: Host;
  /** The running server. */
  let server: Host;
  let co: TestCompany;
  /** The same company's keys, used against the server. */
  let atServer: (role?: 'Owner' | 'Viewer') => ReturnType<typeof client>;

  beforeAll(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'diwan-two-hosts-'));
    db = await place.open(root);
    const webhooks = { ladder: [1], timeoutMs: 1000, allowLoopback: true, allowPrivate: false, maxInFlightPerEndpoint: 2, rotationGraceSeconds: 0, jitter: 0 };
    cli = await db.build({ config: { dataDir: path.join(root, 'cli-data'), webhooks }, sources: invoicingSources() });
    server = await db.build({ config: { dataDir: path.join(root, 'server-data'), webhooks }, sources: invoicingSources() });
    co = await createCompany(cli, { name: 'Shared Co' });
    atServer = (role = 'Owner') => client(server, co.keys[role], co.company.id);
  });

  afterAll(async () => {
    await server?.close();
    await cli?.close();
    await db?.drop();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('serves a company the other host created', async () => {
    const res = await atServer().get('/api/v1/customers');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ total: 0 });
  });

  it('loads a package the other host installed (as the CLI does) within a second, with no restart, and its upgrade too', async () => {
    const paths = async () => Object.keys(JSON.parse((await server.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).body).paths ?? {});
    // The server has never heard of the app: the route is unknown and undocumented.
    expect(await paths()).not.toContain('/api/v1/tally-counts');
    expectError(await atServer().get('/api/v1/tally-counts'), 404, 'NOT_FOUND');

    const src = path.join(root, 'src', 'tally');
    writeTally(src, '1.0.0');
    const installed = await cli.installPackage(src);
    expect(installed).toMatchObject({ replaced: false, manifest: { id: 'tally', version: '1.0.0' } });
    await cli.lifecycle.install(co.company.id, 'tally', CLI_ACTOR);

    // Probed lightly: the server loads the package on this same thread.
    const answered = await waitFor('the app route answering on the server', async () => (await atServer().get('/api/v1/tally-counts/about')).statusCode === 200, WITHIN, 25);
    expect(answered.elapsed).toBeLessThanOrEqual(WITHIN);
    expect(await paths()).toEqual(expect.arrayContaining(['/api/v1/tally-counts', '/api/v1/tally-counts/{id}', '/api/v1/tally-counts/about']));
    // The server runs the stored bytes, unpacked into its own data folder.
    expect(server.runtime.get('tally')?.source).toMatchObject({ origin: 'package', hash: installed.hash, dir: path.join(root, 'server-data', 'apps', `tally-${installed.hash.slice(0, 16)}`) });
    expect((await atServer().get('/api/v1/tally-counts/about')).json().data).toEqual({ version: '1.0.0', counts: 0 });

    // Written on the server, read by the CLI: one database.
    const made = await atServer().post('/api/v1/tally-counts', { label: 'pallets' });
    expect(made.statusCode, made.body).toBe(201);
    expect(await scalar(cli, "SELECT count(*) AS n FROM outbox WHERE topic = 'tally.count.created' AND company_id = ?", co.company.id)).toBe(1);
    expect((await client(cli, co.keys.Owner, co.company.id).get('/api/v1/tally-counts/about')).json().data).toEqual({ version: '1.0.0', counts: 1 });

    // A newer version replaces the running one on the server as well.
    writeTally(src, '1.1.0');
    expect(await cli.installPackage(src)).toMatchObject({ replaced: true, previousVersion: '1.0.0' });
    const upgraded = await waitFor(
      'the new version running on the server',
      async () => (await atServer().get('/api/v1/tally-counts/about')).json().data?.version === '1.1.0',
      WITHIN,
      25,
    );
    expect(upgraded.elapsed).toBeLessThanOrEqual(WITHIN);
    const apps = (await atServer().get('/api/v1/apps')).json().data;
    expect(apps).toContainEqual(expect.objectContaining({ id: 'tally', version: '1.1.0', installedVersion: '1.0.0', upgradeAvailable: true }));
  });

  it('loads the stored packages at boot: a host opened later, with an empty data folder, serves the app', async () => {
    const later = await db.build({ config: { dataDir: path.join(root, 'later-data') }, sources: invoicingSources() });
    try {
      expect(later.runtime.get('tally')?.manifest.version).toBe('1.1.0');
      const about = await client(later, co.keys.Viewer, co.company.id).get('/api/v1/tally-counts/about');
      expect(about.statusCode, about.body).toBe(200);
      expect(about.json().data).toEqual({ version: '1.1.0', counts: 1 });
    } finally {
      await later.close();
    }
  });

  it('refuses a key the other host revoked within a second', async () => {
    const { record, key } = await createKey(cli, co.company.id, { role: 'Manager', name: 'soon revoked' });
    const use = () => client(server, key, co.company.id).get('/api/v1/customers');
    // The server has used (and cached) the key.
    expect((await use()).statusCode).toBe(200);
    expect((await use()).statusCode).toBe(200);

    await cli.keys.revoke(cliScope(co.company.id), record.id);
    const refused = await waitFor('the revoked key refused by the server', async () => (await use()).statusCode === 401, WITHIN);
    expect(refused.elapsed).toBeLessThanOrEqual(WITHIN);
    expectError(await use(), 401, 'UNAUTHENTICATED');
    // Other keys of the company are untouched.
    expect((await atServer().get('/api/v1/customers')).statusCode).toBe(200);
  });

  it('refuses the routes of an app the other host disabled, then uninstalled, in the company within a second', async () => {
    const about = () => atServer().get('/api/v1/tally-counts/about');
    // The server has read (and cached) the company's installs.
    expect((await about()).statusCode).toBe(200);
    await cli.lifecycle.disable(co.company.id, 'tally', CLI_ACTOR);
    const disabled = await waitFor('the disabled app refused by the server', async () => (await about()).statusCode === 404, WITHIN, 25);
    expect(disabled.elapsed).toBeLessThanOrEqual(WITHIN);
    expect(expectError(await about(), 404, 'APP_NOT_ENABLED').details).toEqual([{ app: 'tally', state: 'disabled' }]);
    await cli.lifecycle.enable(co.company.id, 'tally', CLI_ACTOR);
    const enabled = await waitFor('the app enabled again on the server', async () => (await about()).statusCode === 200, WITHIN, 25);
    expect(enabled.elapsed).toBeLessThanOrEqual(WITHIN);

    await cli.lifecycle.uninstall(co.company.id, 'tally', CLI_ACTOR);
    const refused = await waitFor('the app refused by the server', async () => (await about()).statusCode === 404, WITHIN, 25);
    expect(refused.elapsed).toBeLessThanOrEqual(WITHIN);
    expect(expectError(await about(), 404, 'APP_NOT_ENABLED').details).toEqual([{ app: 'tally', state: 'uninstalled' }]);
    // And serves them again once it is back.
    await cli.lifecycle.install(co.company.id, 'tally', CLI_ACTOR);
    const back = await waitFor('the app served again', async () => (await about()).statusCode === 200, WITHIN, 25);
    expect(back.elapsed).toBeLessThanOrEqual(WITHIN);
  });

  it("holds a signed-in person to a role the other host changed, and refuses one it removed, within a second", async () => {
    const { person, token } = await cli.people.createWithLink(cliScope(co.company.id), { email: `clerk-${place.name.length}@example.com`, name: 'Clerk', role: 'Manager' });
    const signed = await server.app.inject({ method: 'POST', url: '/api/v1/session/link', payload: { token, password: 'correct horse battery' } });
    expect(signed.statusCode, signed.body).toBe(201);
    const cookie = String(signed.headers['set-cookie']).split(';')[0];
    const csrf = signed.json().data.csrfToken as string;
    const headers = { cookie, 'x-company-id': co.company.id, 'x-csrf-token': csrf };
    const create = () => server.app.inject({ method: 'POST', url: '/api/v1/customers', headers, payload: { name: 'By the clerk' } });
    const read = () => server.app.inject({ method: 'GET', url: '/api/v1/customers', headers });
    // The server has cached the person's role.
    expect((await create()).statusCode).toBe(201);

    await cli.people.setRole(cliScope(co.company.id), person.id, 'Viewer', undefined);
    const demoted = await waitFor('the demoted person refused a write by the server', async () => (await create()).statusCode === 403, WITHIN, 25);
    expect(demoted.elapsed).toBeLessThanOrEqual(WITHIN);
    expect((await read()).statusCode).toBe(200);

    await cli.people.remove(cliScope(co.company.id), person.id, undefined);
    const removed = await waitFor('the removed person refused by the server', async () => (await read()).statusCode === 403, WITHIN, 25);
    expect(removed.elapsed).toBeLessThanOrEqual(WITHIN);
    expect(expectError(await read(), 403, 'FORBIDDEN').details).toEqual([{ reason: 'company', header: 'X-Company-Id' }]);
  });

  it("delivers to an endpoint the other host created, and stops for one it removed, within a second (the server's dispatcher)", async () => {
    const got: string[] = [];
    const receiver = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        got.push(JSON.parse(Buffer.concat(chunks).toString('utf8')).id);
        res.end('ok');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
    const pending = () => scalar<number>(server, 'SELECT count(*) AS n FROM outbox WHERE dispatched_at IS NULL');
    try {
      // The server runs its loops (change feed, delivery, scheduler), as when it listens.
      server.start();
      // The server fans out an event of the company while it has no endpoint: it now holds the company's index, empty.
      await server.catalogue.trigger(co.company.id, 'invoice.overdue', CLI_ACTOR);
      await waitFor('the server fanning out', async () => (await pending()) === 0, 3000);

      const ep = await cli.webhooks.endpoints.create(cliScope(co.company.id), { url, topics: ['invoice.overdue'] });
      // No request reaches the server: only its change feed can tell its dispatcher.
      await new Promise((r) => setTimeout(r, WITHIN));
      const first = await server.catalogue.trigger(co.company.id, 'invoice.overdue', CLI_ACTOR);
      await waitFor('the delivery to the new endpoint', async () => got.includes(first.id), 3000);
      expect(await scalar(server, 'SELECT count(*) AS n FROM webhook_deliveries WHERE endpoint_id = ? AND event_id = ?', ep.id, first.id)).toBe(1);

      await cli.webhooks.endpoints.remove(cliScope(co.company.id), ep.id);
      await new Promise((r) => setTimeout(r, WITHIN));
      const second = await server.catalogue.trigger(co.company.id, 'invoice.overdue', CLI_ACTOR);
      await waitFor('the server fanning out', async () => (await pending()) === 0, 3000);
      await new Promise((r) => setTimeout(r, 200));
      expect(got).not.toContain(second.id);
      expect(got).toEqual([first.id]);
    } finally {
      receiver.closeAllConnections();
      await new Promise((r) => receiver.close(r));
    }
  });
});
