// The app platform, per company: install (with dependencies), generated document-type routes,
// enable/disable, uninstall/purge, upgrade plans, and every refusal leaving the company as it was.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Host } from '../core/host.ts';
import { buildHost } from './db.ts';
import type { Actor } from '../core/kernel/actor.ts';
import { count as countRows, createKey } from './helpers.ts';
import { libraryManifest, loansManifest, tempDir, writeApp } from './fixtures.ts';

const OPERATOR: Actor = { type: 'cli', id: 'operator' };
let host: Host;
let root: string;

async function start(sources = [writeApp(root, libraryManifest()), writeApp(root, loansManifest())]) {
  host = await buildHost({ dbFile: ':memory:', sources, config: { rateLimitPerMinute: 0 } });
  return host;
}

async function company(apps: string[] = []) {
  const { company } = await host.createCompany({ name: 'Acme', apps });
  const keys: Record<'Viewer' | 'Member' | 'Manager' | 'Admin' | 'Owner', string> = { Viewer: '', Member: '', Manager: '', Admin: '', Owner: '' };
  for (const r of Object.keys(keys) as (keyof typeof keys)[]) keys[r] = (await createKey(host, company.id, { role: r, scopes: ['*'] })).key;
  const call = async (method: string, url: string, opts: { role?: keyof typeof keys; body?: unknown; lang?: string } = {}) => {
    const r = await host.app.inject({
      method: method as 'GET', url, payload: opts.body as object,
      headers: { authorization: `Bearer ${keys[opts.role ?? 'Owner']}`, 'x-company-id': company.id, ...(opts.lang ? { 'accept-language': opts.lang } : {}) },
    });
    return { status: r.statusCode, body: r.json(), headers: r.headers };
  };
  return { id: company.id, call };
}

const topics = async (companyId: string) =>
  (await host.storage.db.all<{ topic: string }>('SELECT topic FROM outbox WHERE company_id = ? ORDER BY seq', [companyId])).map((r) => r.topic).filter((t) => !t.startsWith('audit.'));
const count = (sql: string, ...args: unknown[]) => countRows(host, sql, ...args);

beforeEach(() => {
  root = tempDir();
});
afterEach(async () => {
  await host?.close();
});

describe('install', () => {
  it('installs the missing dependency first, audits both steps and emits app.installed for each', async () => {
    await start();
    const c = await company();
    const r = await c.call('POST', '/api/v1/apps', { body: { appId: 'loans' } });
    expect(r.status).toBe(201);
    expect(r.body.data.installed).toEqual(['library', 'loans']);
    expect(await topics(c.id)).toEqual(['app.installed', 'app.installed']);
    expect(await count("SELECT count(*) FROM audit_log WHERE company_id = ? AND resource = 'apps' AND action = 'install'", c.id)).toBe(2);
    const apps = await c.call('GET', '/api/v1/apps?installed=true');
    expect(apps.body.data.map((a: { id: string; state: string }) => `${a.id}:${a.state}`)).toEqual(['library:enabled', 'loans:enabled']);
  });

  it('refuses with the missing list when asked not to install dependencies, leaving nothing behind', async () => {
    await start();
    const c = await company();
    const r = await c.call('POST', '/api/v1/apps', { body: { appId: 'loans', withDependencies: false } });
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe('APP_REFUSED');
    expect(r.body.error.details).toEqual([{ reason: 'dependency_missing', appId: 'library' }]);
    expect(await count('SELECT count(*) FROM company_apps WHERE company_id = ?', c.id)).toBe(0);
  });

  it('refuses an unknown app (404), a second install (409), a dependency outside its range, and a host range it does not fit', async () => {
    await start([writeApp(root, libraryManifest('2.0.0')), writeApp(root, { ...loansManifest('^1.0.0'), id: 'loans' }), writeApp(root, { ...libraryManifest('1.0.0'), id: 'future', host: '>=9.0.0', documentTypes: [], eventFamilies: [], menu: [], permissions: [] })]);
    const c = await company();
    expect((await c.call('POST', '/api/v1/apps', { body: { appId: 'nope' } })).body.error.code).toBe('NOT_FOUND');
    const future = await c.call('POST', '/api/v1/apps', { body: { appId: 'future' } });
    expect(future.body.error.details[0]).toMatchObject({ reason: 'host_version', range: '>=9.0.0' });
    expect((await c.call('POST', '/api/v1/apps', { body: { appId: 'library' } })).status).toBe(201);
    expect((await c.call('POST', '/api/v1/apps', { body: { appId: 'library' } })).body.error.details[0].reason).toBe('already_installed');
    expect(host.runtime.get('loans')).toBeUndefined(); // refused at load: library 2.0.0 is outside ^1.0.0
  });

  it('a migration that throws rolls the whole install back', async () => {
    const failing = writeApp(root, { ...libraryManifest(), id: 'broken', documentTypes: [], eventFamilies: [], menu: [], permissions: [] }, `
      import { defineApp } from 'diwan/sdk';
      export default defineApp({ id: 'broken', migrations: [{ id: '001', up() { throw new Error('migration failed'); } }] });
    `);
    await start([failing]);
    const c = await company();
    const before = await count('SELECT count(*) FROM audit_log WHERE company_id = ?', c.id);
    const r = await c.call('POST', '/api/v1/apps', { body: { appId: 'broken' } });
    expect(r.status).toBe(409);
    expect(r.body.error.details).toEqual([{ reason: 'migration_failed', appId: 'broken', migration: '001', message: 'migration failed' }]);
    expect(await count('SELECT count(*) FROM company_apps WHERE company_id = ?', c.id)).toBe(0);
    expect(await count('SELECT count(*) FROM audit_log WHERE company_id = ?', c.id)).toBe(before);
    expect(await topics(c.id)).toEqual([]);
  });

  it("a migration that meets a busy database answers 503 with Retry-After (try again), not the app's refusal, and leaves nothing", async () => {
    const busy = writeApp(root, { ...libraryManifest(), id: 'busy', documentTypes: [], eventFamilies: [], menu: [], permissions: [] }, `
      import { defineApp } from 'diwan/sdk';
      export default defineApp({ id: 'busy', migrations: [{ id: '001', up() { throw Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' }); } }] });
    `);
    await start([busy]);
    const c = await company();
    const r = await c.call('POST', '/api/v1/apps', { body: { appId: 'busy' } });
    expect(r.status).toBe(503);
    expect(r.body.error.code).toBe('SERVICE_UNAVAILABLE');
    expect(r.headers['retry-after']).toBeDefined();
    expect(await count('SELECT count(*) FROM company_apps WHERE company_id = ?', c.id)).toBe(0);
  });

  it('refuses at load an app claiming an event prefix another app owns, and a dependency cycle', async () => {
    const thief = writeApp(root, { ...loansManifest(), id: 'thief', dependencies: {}, documentTypes: [], eventFamilies: [{ family: 'x', prefix: 'library', label: { en: 'x', ar: 'س' }, topics: [] }] });
    const a = writeApp(root, { ...loansManifest(), id: 'aaa', dependencies: { bbb: '*' }, documentTypes: [], eventFamilies: [] });
    const b = writeApp(root, { ...loansManifest(), id: 'bbb', dependencies: { aaa: '*' }, documentTypes: [], eventFamilies: [] });
    await start([writeApp(root, libraryManifest()), thief, a, b]);
    expect(host.runtime.get('thief')).toBeUndefined();
    expect(host.runtime.get('aaa')).toBeUndefined();
    expect(host.runtime.get('bbb')).toBeUndefined();
    await expect(host.runtime.load(thief)).rejects.toMatchObject({ code: 'APP_REFUSED', details: [{ reason: 'event_prefix_taken', prefix: 'library', owner: 'library' }] });
  });
});

describe('document types', () => {
  it('generated CRUD routes validate, page, filter, transition, audit and emit', async () => {
    await start();
    const c = await company(['library']);
    const made = await c.call('POST', '/api/v1/books', { body: { title: 'Season of Migration', pages: 169, genre: 'novel', published: '1966-01-01', available: true } });
    expect(made.status).toBe(201);
    expect(made.body.data).toMatchObject({ id: expect.stringMatching(/^bk_/), state: 'shelved', title: 'Season of Migration' });
    await c.call('POST', '/api/v1/books', { body: { title: 'Diwan', genre: 'poetry', available: false } });

    const bad = await c.call('POST', '/api/v1/books', { body: { title: 'x', pages: 0, genre: 'comics', published: '2026-13-01', colour: 'red' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.map((d: { pointer: string; rule: string }) => `${d.pointer} ${d.rule}`).sort()).toEqual(
      ['/colour additionalProperties', '/genre enum', '/pages minimum', '/published format'],
    );

    const novels = await c.call('GET', '/api/v1/books?genre=novel');
    expect(novels.body).toMatchObject({ total: 1, page: 1, pageSize: 20 });
    expect((await c.call('GET', '/api/v1/books?available=false')).body.data.map((b: { title: string }) => b.title)).toEqual(['Diwan']);
    expect((await c.call('GET', '/api/v1/books?genre=comics')).body.error.code).toBe('VALIDATION_ERROR');
    expect((await c.call('GET', '/api/v1/books?shelf=3')).body.error.details[0].rule).toBe('additionalProperties');

    const id = made.body.data.id;
    expect((await c.call('PATCH', `/api/v1/books/${id}`, { body: { pages: 170 } })).body.data.pages).toBe(170);
    expect((await c.call('POST', `/api/v1/books/${id}/lend`)).body.data.state).toBe('lent');
    const again = await c.call('POST', `/api/v1/books/${id}/lend`);
    expect(again.status).toBe(409);
    expect(again.body.error.details[0]).toMatchObject({ reason: 'transition', state: 'lent', allowedFrom: ['shelved'] });
    expect((await c.call('POST', `/api/v1/books/${id}/giveBack`)).body.data.state).toBe('shelved');
    expect((await c.call('GET', '/api/v1/books?state=shelved')).body.total).toBe(2);

    expect((await c.call('DELETE', `/api/v1/books/${id}`, { role: 'Manager' })).status).toBe(403); // declared: Admin
    expect((await c.call('DELETE', `/api/v1/books/${id}`, { role: 'Admin' })).status).toBe(200);
    expect((await c.call('GET', `/api/v1/books/${id}`)).status).toBe(404);

    expect((await topics(c.id)).filter((t) => t.startsWith('library.'))).toEqual([
      'library.book.created', 'library.book.created', 'library.book.updated', 'library.book.lent', 'library.book.returned', 'library.book.deleted',
    ]);
    const audited = (await host.storage.db.all<{ action: string }>("SELECT action FROM audit_log WHERE company_id = ? AND resource = 'books' ORDER BY seq", [c.id])).map((r) => r.action);
    expect(audited).toEqual(['create', 'create', 'update', 'lend', 'giveBack', 'delete']);
  });

  it("a beforeTransition hook's changes are stored with the new state, checked as any write's; a value the schema refuses writes nothing", async () => {
    await start([writeApp(root, libraryManifest(), `
      import { defineApp } from 'diwan/sdk';
      export default defineApp({
        id: 'library',
        hooks: {
          book: {
            beforeTransition(doc, transition) {
              doc.available = transition === 'giveBack';
              if (doc.title === 'odd') doc.pages = 0;
            },
          },
        },
      });
    `)]);
    const c = await company(['library']);
    const id = (await c.call('POST', '/api/v1/books', { body: { title: 'Mawsim al-Hijra', available: true } })).body.data.id;
    const lent = await c.call('POST', `/api/v1/books/${id}/lend`, { body: {} });
    expect(lent.status).toBe(200);
    expect(lent.body.data).toMatchObject({ state: 'lent', available: false });
    expect((await c.call('GET', `/api/v1/books/${id}`)).body.data).toMatchObject({ state: 'lent', available: false });
    expect((await c.call('POST', `/api/v1/books/${id}/giveBack`, { body: {} })).body.data).toMatchObject({ state: 'shelved', available: true });
    // pages 0 is below the field's minimum: refused as a client's write would be, the book left as it was.
    const odd = (await c.call('POST', '/api/v1/books', { body: { title: 'odd', pages: 10 } })).body.data.id;
    const refused = await c.call('POST', `/api/v1/books/${odd}/lend`, { body: {} });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details).toEqual([expect.objectContaining({ pointer: '/pages', rule: 'minimum' })]);
    expect((await c.call('GET', `/api/v1/books/${odd}`)).body.data).toMatchObject({ state: 'shelved', pages: 10 });
  });

  it("a plain Error thrown by an app's hook answers APP_ERROR naming the app and the hook, and writes nothing", async () => {
    await start([writeApp(root, libraryManifest(), `
      import { defineApp } from 'diwan/sdk';
      export default defineApp({
        id: 'library',
        hooks: {
          book: {
            async beforeCreate(doc) { if (doc.title === 'boom') throw new Error('secret hook detail: db password is hunter2'); },
            afterUpdate() { throw new TypeError('secret hook detail after the write'); },
          },
        },
      });
    `)]);
    const c = await company(['library']);
    const snapshot = async () => [
      await count('SELECT count(*) FROM doc_library_book WHERE company_id = ?', c.id),
      await count('SELECT count(*) FROM audit_log WHERE company_id = ?', c.id),
      await count('SELECT count(*) FROM outbox WHERE company_id = ?', c.id),
    ];
    const made = await c.call('POST', '/api/v1/books', { body: { title: 'fine' } });
    expect(made.status).toBe(201);
    const s0 = await snapshot();

    const before = await c.call('POST', '/api/v1/books', { body: { title: 'boom' } });
    expect(before.status).toBe(500);
    expect(before.body.error.code).toBe('APP_ERROR');
    expect(before.body.error.details).toEqual([{ app: 'library', rule: 'hook', hook: 'book.beforeCreate' }]);
    expect(before.body.error.message).toContain('library');
    expect(JSON.stringify(before.body)).not.toContain('secret hook detail');

    // After the write, inside its transaction: the update is undone with its audit row and event.
    const after = await c.call('PATCH', `/api/v1/books/${made.body.data.id}`, { body: { title: 'changed' }, lang: 'ar' });
    expect(after.status).toBe(500);
    expect(after.body.error.code).toBe('APP_ERROR');
    expect(after.body.error.details).toEqual([{ app: 'library', rule: 'hook', hook: 'book.afterUpdate' }]);
    expect(after.body.error.message).toMatch(/[\u0600-\u06FF]/);
    expect(after.body.error.message).toContain('library');
    expect(JSON.stringify(after.body)).not.toContain('secret hook detail');
    expect(await snapshot()).toEqual(s0);
    expect((await c.call('GET', `/api/v1/books/${made.body.data.id}`)).body.data.title).toBe('fine');
  });

  it("references reach only the referencing company's documents of a dependency", async () => {
    await start();
    const a = await company(['loans']);
    const b = await company(['loans']);
    const book = (await a.call('POST', '/api/v1/books', { body: { title: 'Cities of Salt' } })).body.data.id;
    expect((await a.call('POST', '/api/v1/loans', { body: { bookId: book, borrower: 'Huda' } })).status).toBe(201);
    const cross = await b.call('POST', '/api/v1/loans', { body: { bookId: book, borrower: 'Sami' } });
    expect(cross.body.error.details[0]).toMatchObject({ pointer: '/bookId', rule: 'exists' });
    expect((await b.call('GET', `/api/v1/books/${book}`)).status).toBe(404);
  });

  it('appear in the OpenAPI document and in the event catalogue', async () => {
    await start();
    const doc = (await host.app.inject({ url: '/api/v1/openapi.json' })).json();
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/api/v1/books', '/api/v1/books/{id}', '/api/v1/books/{id}/lend', '/api/v1/loans']));
    const c = await company(['library']);
    const cat = await c.call('GET', '/api/v1/events/catalogue?family=library', { lang: 'ar' });
    const fam = cat.body.data.families[0];
    expect(fam).toMatchObject({ prefix: 'library', installed: true, label: 'المكتبة' });
    expect(fam.topics.map((t: { topic: string }) => t.topic)).toEqual(['library.book.created', 'library.book.deleted', 'library.book.lent', 'library.book.returned', 'library.book.updated']);
  });
});

describe('enable, disable, uninstall, purge', () => {
  it("a disabled app answers APP_NOT_ENABLED in that company while another company keeps using it", async () => {
    await start();
    const a = await company(['library']);
    const b = await company(['library']);
    expect((await a.call('POST', '/api/v1/apps/library/disable')).body.data.state).toBe('disabled');
    const off = await a.call('GET', '/api/v1/books', { lang: 'ar' });
    expect(off.status).toBe(404);
    expect(off.body.error).toMatchObject({ code: 'APP_NOT_ENABLED', details: [{ app: 'library', state: 'disabled' }] });
    expect(off.body.error.message).toContain('غير مفعّل');
    expect((await b.call('GET', '/api/v1/books')).status).toBe(200);
    expect((await a.call('POST', '/api/v1/apps/library/enable')).body.data.state).toBe('enabled');
    expect((await a.call('GET', '/api/v1/books')).status).toBe(200);
    expect(await topics(a.id)).toEqual(['app.installed', 'app.disabled', 'app.enabled']);
  });

  it('only an Owner manages apps', async () => {
    await start();
    const c = await company(['library']);
    const r = await c.call('POST', '/api/v1/apps/library/disable', { role: 'Admin' });
    expect(r.status).toBe(403);
    expect(r.body.error.details[0]).toMatchObject({ permission: 'apps:manage', requiredRole: 'Owner' });
  });

  it('uninstall is refused while a dependent is installed, keeps data until purge, and a reinstall finds it again', async () => {
    await start();
    const c = await company(['loans']);
    await c.call('POST', '/api/v1/books', { body: { title: 'Men in the Sun' } });
    const refused = await c.call('POST', '/api/v1/apps/library/uninstall');
    expect(refused.body.error.details[0]).toMatchObject({ reason: 'app_in_use', dependents: ['loans'] });
    expect((await c.call('POST', '/api/v1/apps/loans/uninstall')).body.data).toMatchObject({ state: 'uninstalled', dataKept: true });
    expect((await c.call('POST', '/api/v1/apps/library/uninstall')).status).toBe(200);
    expect((await c.call('GET', '/api/v1/books')).body.error.code).toBe('APP_NOT_ENABLED');
    expect(await count(`SELECT count(*) FROM doc_library_book WHERE company_id = ?`, c.id)).toBe(1);

    expect((await c.call('POST', '/api/v1/apps', { body: { appId: 'library' } })).status).toBe(201);
    expect((await c.call('GET', '/api/v1/books')).body.total).toBe(1);

    await c.call('POST', '/api/v1/apps/library/uninstall');
    const purged = await c.call('POST', '/api/v1/apps/library/purge');
    expect(purged.body.data).toMatchObject({ purged: true, documentsRemoved: 1 });
    expect(await count(`SELECT count(*) FROM doc_library_book WHERE company_id = ?`, c.id)).toBe(0);
    expect(await count('SELECT count(*) FROM company_apps WHERE company_id = ? AND app_id = ?', c.id, 'library')).toBe(0);
    expect(await topics(c.id)).toEqual(expect.arrayContaining(['app.uninstalled']));
  });

  it('purge is refused for an app that is still installed', async () => {
    await start();
    const c = await company(['library']);
    const r = await c.call('POST', '/api/v1/apps/library/purge');
    expect(r.status).toBe(409);
    expect(r.body.error.details[0].reason).toBe('not_uninstalled');
  });
});

describe('upgrade', () => {
  it('shows a dry-run plan, applies it only when confirmed with its version, and runs pending migrations once', async () => {
    await start();
    const c = await company(['library']);
    const [book] = libraryManifest().documentTypes!;
    const v2 = libraryManifest('1.1.0', {
      permissions: [{ resource: 'books', action: 'archive', role: 'Manager' }],
      documentTypes: [
        // A new field, and one whose bounds change; `price` is dropped.
        { ...book, fields: [...book.fields.filter((f) => f.name !== 'price').map((f) => (f.name === 'pages' ? { ...f, minimum: 2 } : f)), { name: 'isbn', type: 'string', maxLength: 17, label: { en: 'ISBN', ar: 'الرقم الدولي' } }] },
        { name: 'shelf', resource: 'shelves', idPrefix: 'sh', label: { en: 'Shelf', ar: 'رف' }, fields: [{ name: 'code', type: 'string', required: true, label: { en: 'Code', ar: 'الرمز' } }] },
      ],
    });
    await host.runtime.load(writeApp(root, v2, `
      import { defineApp } from 'diwan/sdk';
      export default defineApp({ id: 'library', migrations: [{ id: '2026-11-shelves', async up(ctx) { await ctx.docs('shelf').create({ code: 'A1' }); } }] });
    `), { replacing: true });

    const plan = await c.call('GET', '/api/v1/apps/library/upgrade');
    expect(plan.body.data).toMatchObject({
      from: '1.0.0', to: '1.1.0',
      documentTypes: { added: ['shelf'], removed: [] },
      migrations: ['2026-11-shelves'],
    });
    expect(plan.body.data.permissions.added).toEqual(expect.arrayContaining(['books:archive', 'shelves:read']));
    expect(plan.body.data.permissions.removed).toEqual([]);
    expect(plan.body.data.permissions.changed).toEqual([{ permission: 'books:delete', from: 'Admin', to: 'Manager' }]);
    expect(plan.body.data.routes.added).toContain('GET /api/v1/shelves');
    expect(plan.body.data.fields).toEqual({ added: ['book.isbn', 'shelf.code'], removed: ['book.price'], changed: ['book.pages'] });
    expect((await c.call('GET', '/api/v1/apps')).body.data[0]).toMatchObject({ installedVersion: '1.0.0', upgradeAvailable: true });

    const wrong = await c.call('POST', '/api/v1/apps/library/upgrade', { body: { confirm: true, version: '9.9.9' } });
    expect(wrong.body.error.details[0].reason).toBe('plan_changed');
    const done = await c.call('POST', '/api/v1/apps/library/upgrade', { body: { confirm: true, version: '1.1.0' } });
    expect(done.body.data.app).toMatchObject({ version: '1.1.0' });
    expect((await c.call('GET', '/api/v1/shelves')).body.total).toBe(1);
    expect((await c.call('POST', '/api/v1/books', { body: { title: 'Baghdad Diaries', isbn: '978-0-00-000000-0' } })).status).toBe(201);
    expect((await c.call('GET', '/api/v1/apps/library/upgrade')).body.data.migrations).toEqual([]);
  });
});

describe('menu', () => {
  it("merges enabled apps' menus, filtered by the caller's permissions, in the caller's language", async () => {
    await start();
    const c = await company(['library']);
    const owner = await c.call('GET', '/api/v1/menu', { lang: 'ar' });
    expect(owner.body).toMatchObject({ lang: 'ar', dir: 'rtl' });
    expect(owner.body.data.map((m: { label: string }) => m.label)).toEqual(['الكتب', 'كتاب جديد']);
    const viewer = await c.call('GET', '/api/v1/menu', { role: 'Viewer' });
    expect(viewer.body.data.map((m: { id: string }) => m.id)).toEqual(['books']);
    expect(viewer.body.dir).toBe('ltr');
  });
});
