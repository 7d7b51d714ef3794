// The `diwan` command as an operator runs it: `node cli/bin.js … --json` in a child process on
// a temporary DATA_DIR. Commands that involve apps boot the host (seconds, with every
// first-party app); the others open the database only. The steps share one data folder and
// run in order.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres, processDatabase } from '../test/db.ts';
import { CLI_BIN as BIN, runCli, type CliRun } from '../test/cli-run.ts';

let dataDir: string;
let work: string;
/** The SQLite file in DATA_DIR, or (the postgres project) a PostgreSQL database every run is pointed at. */
let db: Awaited<ReturnType<typeof processDatabase>>;

function diwan(...args: string[]): Promise<CliRun> {
  return diwanWith({}, ...args);
}

function diwanWith(env: Record<string, string>, ...args: string[]): Promise<CliRun> {
  return runCli(args, { env: { ...process.env, DATA_DIR: dataDir, DIWAN_LANG: '', ...db.env, ...env }, cwd: work });
}

beforeAll(async () => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'diwan-cli-'));
  dataDir = path.join(work, 'data');
  db = await processDatabase();
});

afterAll(async () => {
  fs.rmSync(work, { recursive: true, force: true });
  await db.drop();
});

describe('diwan (no host needed)', () => {
  it('prints help, as text and as one JSON document', async () => {
    const text = await diwan('--help');
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('Usage: diwan <command>');
    for (const g of ['start', 'companies', 'keys', 'apps', 'audit', 'permissions', 'app']) expect(text.stdout).toContain(`  ${g}`);

    const help = await diwan('keys', 'create', '--help', '--json');
    expect(help.code).toBe(0);
    expect(help.json.usage).toContain('diwan keys create');
    expect(help.json.options.map((o: { name: string }) => o.name)).toEqual(expect.arrayContaining(['--company', '--role', '--scopes', '--expires', '--json', '--data-dir', '--lang']));
  });

  it('answers a usage mistake with a VALIDATION_ERROR envelope and exit code 2', async () => {
    const missing = await diwan('keys', 'list', '--json');
    expect(missing.code).toBe(2);
    expect(missing.json).toEqual({
      error: { code: 'VALIDATION_ERROR', message: 'The request is not valid: --company is required', details: [{ in: 'argv', pointer: '--company', rule: 'required', message: '--company is required' }] },
    });

    const unknown = await diwan('companies', 'list', '--bogus', '--json', '--lang', 'ar');
    expect(unknown.code).toBe(2);
    expect(unknown.json.error).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ pointer: '--bogus', rule: 'unknownOption' }] });
    expect(unknown.json.error.message).toMatch(/^الطلب غير صالح/);

    const badCommand = await diwan('companies', 'rename');
    expect(badCommand.code).toBe(2);
    expect(badCommand.stdout).toBe('');
    expect(badCommand.stderr).toContain('error VALIDATION_ERROR');
    expect(fs.existsSync(dataDir)).toBe(false);
  });
});

/** The modules a file loads before it runs (static imports and re-exports, not `import type`, not `import()`), followed through relative paths. */
function staticGraph(entry: string): { files: string[]; packages: string[] } {
  const IMPORT = /^\s*(?:import|export)\s+(?!type\b)(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]/gm;
  const files = new Set<string>();
  const packages = new Set<string>();
  const todo = [path.resolve(entry)];
  while (todo.length) {
    const f = todo.pop()!;
    if (files.has(f)) continue;
    files.add(f);
    for (const m of fs.readFileSync(f, 'utf8').matchAll(IMPORT)) {
      if (m[1].startsWith('.')) todo.push(path.resolve(path.dirname(f), m[1]));
      else if (!m[1].startsWith('node:')) packages.add(m[1]);
    }
  }
  const root = path.resolve(import.meta.dirname, '..');
  return { files: [...files].map((f) => path.relative(root, f).split(path.sep).join('/')).sort(), packages: [...packages].sort() };
}

describe('what a command loads (issue 8, item 14: read commands answer fast)', () => {
  it('every run loads only the command table: no host, no apps, no driver, no i18next', () => {
    const { files, packages } = staticGraph(path.join(import.meta.dirname, 'main.ts'));
    expect(packages).toEqual([]);
    expect(files.filter((f) => !f.startsWith('cli/'))).not.toContainEqual(expect.stringMatching(/^core\/(host|apps|http|openapi|storage\/(open|sqlite))|^manifests\/|^sdk\//));
  });

  it('the light commands open the database and the small domain services only', () => {
    const { files, packages } = staticGraph(path.join(import.meta.dirname, '../core/services.ts'));
    expect(packages).toEqual(['better-sqlite3']);
    expect(files).toContain('core/storage/open.ts');
    // The webhooks domain (address guard, ipaddr.js, topic patterns) loads only for the webhooks commands.
    expect(files).not.toContain('core/webhooks/endpoints.ts');
    expect(files).not.toContainEqual(expect.stringMatching(/^core\/(host|apps|http|openapi)|^manifests\/|^sdk\//));
  });
});

describe('diwan on a data folder', { timeout: 90_000 }, () => {
  let companyId: string;
  let key: string;
  let keyId: string;

  it('refuses a command on a folder with no database, naming --data-dir, and creates nothing; migrate creates it and says so (issue 29)', async () => {
    const sqlite = { DIWAN_DATABASE_URL: '' };
    const refused = await diwanWith(sqlite, 'companies', 'list', '--json');
    expect(refused.code).toBe(2);
    expect(refused.json.error).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ in: 'argv', pointer: '--data-dir', rule: 'noDatabase', dataDir, source: 'env' }] });
    const text = await diwanWith(sqlite, 'companies', 'create', '--name', 'Nowhere');
    expect(text.code).toBe(2);
    expect(text.stderr.trim().split('\n')).toEqual([expect.stringMatching(new RegExp(`^error VALIDATION_ERROR: .*no Diwan database in ${dataDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}.*--data-dir <dir>`))]);
    expect(fs.existsSync(dataDir)).toBe(false);

    const made = await diwan('migrate', '--json');
    expect(made.code, made.stderr).toBe(0);
    // On PostgreSQL the database is the server's: no folder is made for it.
    expect(made.json.createdDataDir).toBe(!onPostgres());
  });

  it('creates a company with the apps asked for', async () => {
    const r = await diwan('companies', 'create', '--name', 'Acme', '--currency', 'SAR', '--apps', 'invoicing', '--json');
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({ name: 'Acme', currency: 'SAR', apps: ['invoicing'] });
    expect(r.json.id).toMatch(/^co_[0-9a-z]+$/);
    companyId = r.json.id;
    // On PostgreSQL, no SQLite file beside it.
    expect(fs.existsSync(path.join(dataDir, 'diwan.db'))).toBe(!onPostgres());
  });

  it('creates a key (shown once) and lists keys without their secret', async () => {
    const created = await diwan('keys', 'create', '--company', companyId, '--role', 'Admin', '--scopes', '*', '--name', 'ci', '--json');
    expect(created.code).toBe(0);
    expect(created.json).toMatchObject({ companyId, role: 'Admin', scopes: ['*'], name: 'ci', revokedAt: null });
    expect(created.json.key).toMatch(/^dwk_[0-9a-z]{16}_[0-9a-z]{32}$/);
    key = created.json.key;
    keyId = created.json.id;

    const list = await diwan('keys', 'list', '--company', companyId, '--json');
    expect(list.code).toBe(0);
    expect(list.json).toHaveLength(1);
    expect(list.json[0]).toMatchObject({ id: keyId, hint: `dwk_${keyId}_…` });
    expect(list.json[0]).not.toHaveProperty('key');
    expect(list.stdout).not.toContain(key.split('_')[2]);
  });

  it('heads its tables in the language asked: --lang ar translates the headers too (issue 29)', async () => {
    const ar = await diwan('keys', 'list', '--company', companyId, '--lang', 'ar');
    expect(ar.code, ar.stderr).toBe(0);
    expect(ar.stdout.split('\n')[0]).toMatch(/^المعرّف\s+الاسم\s+الدور\s+النطاقات\s+المفتاح\s+أُنشئ\s+ينتهي\s+أُلغي\s+آخر استخدام$/);
    const companiesAr = await diwan('companies', 'list', '--lang', 'ar');
    expect(companiesAr.stdout.split('\n')[0]).toMatch(/^المعرّف\s+الاسم\s+العملة\s+التطبيقات\s+أُنشئ$/);
    const en = await diwan('companies', 'list');
    expect(en.stdout.split('\n')[0]).toMatch(/^ID\s+NAME\s+CURRENCY\s+APPS\s+CREATED$/);
  });

  it('permissions heads the owning app APP, not OWNER beside the Owner role, in either language (issue 29)', async () => {
    const en = await diwan('permissions');
    expect(en.code, en.stderr).toBe(0);
    expect(en.stdout.split('\n')[0]).toMatch(/^PERMISSION\s+APP\s+Viewer\s+Member\s+Manager\s+Admin\s+Owner$/);
    const ar = await diwan('permissions', '--lang', 'ar');
    expect(ar.stdout.split('\n')[0]).toMatch(/^الصلاحية\s+التطبيق\s+مشاهد\s+عضو\s+مدير\s+مسؤول\s+مالك$/);
  });

  it('disables and enables an app in the company', async () => {
    const off = await diwan('apps', 'disable', 'invoicing', '--company', companyId, '--json');
    expect(off.code).toBe(0);
    expect(off.json).toMatchObject({ appId: 'invoicing', state: 'disabled' });

    const list = await diwan('apps', 'list', '--company', companyId, '--installed', '--json');
    expect(list.json).toEqual([expect.objectContaining({ id: 'invoicing', state: 'disabled', installedVersion: list.json[0].version })]);

    const on = await diwan('apps', 'enable', 'invoicing', '--company', companyId, '--json');
    expect(on.json).toMatchObject({ appId: 'invoicing', state: 'enabled' });
  });

  it('prints a failure as the error envelope with exit code 1', async () => {
    const r = await diwan('keys', 'revoke', 'nosuchkey', '--company', companyId, '--json', '--lang', 'ar');
    expect(r.code).toBe(1);
    expect(r.json).toEqual({ error: { code: 'NOT_FOUND', message: 'غير موجود.', details: [{ resource: 'api-keys', id: 'nosuchkey' }] } });
  });

  /** An app source folder with one document type; `fields` beyond `label` make a later version. */
  function appFolder(id: string, version: string, resource: string, extraFields: Record<string, unknown>[] = []): string {
    const src = path.join(work, 'src', `${id}-${version}`);
    fs.mkdirSync(src, { recursive: true });
    fs.writeFileSync(path.join(src, 'manifest.json'), JSON.stringify({
      id, version, host: '^0.1.0',
      name: { en: 'Tally', ar: 'العدّاد' }, description: { en: 'Counts things.', ar: 'يعدّ الأشياء.' },
      strings: { en: {}, ar: {} },
      documentTypes: [{ name: 'count', resource, idPrefix: 'cnt', label: { en: 'Count', ar: 'عدد' }, fields: [{ name: 'label', type: 'string', required: true, label: { en: 'Label', ar: 'الوصف' } }, ...extraFields] }],
      eventFamilies: [{ family: id, prefix: id, label: { en: 'Tally', ar: 'العدّاد' }, topics: [] }],
    }));
    return src;
  }

  it('installs an app folder as a package, and audits every step as the CLI operator', async () => {
    const r = await diwan('apps', 'install', appFolder('tally', '1.0.0', 'tally-counts'), '--company', companyId, '--json');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({ package: { id: 'tally', version: '1.0.0', replaced: false }, installed: ['tally'], app: { appId: 'tally', state: 'enabled' } });
    // Stored in the database and unpacked per content hash (issue 9: every process loads the same bytes).
    expect(r.json.package.dir).toBe(path.join(dataDir, 'apps', `tally-${r.json.package.hash.slice(0, 16)}`));
    expect(fs.existsSync(path.join(r.json.package.dir, 'manifest.json'))).toBe(true);

    const audit = await diwan('audit', 'list', '--company', companyId, '--json');
    expect(audit.code).toBe(0);
    const steps = audit.json.data.map((e: { resource: string; action: string; resourceId: string }) => `${e.resource}:${e.action}:${e.resourceId}`);
    expect(steps).toEqual([
      'apps:install:tally', 'apps:enable:invoicing', 'apps:disable:invoicing', `api-keys:create:${keyId}`, 'apps:install:invoicing', `companies:create:${companyId}`,
    ]);
    expect(new Set(audit.json.data.map((e: { actor: unknown }) => JSON.stringify(e.actor)))).toEqual(new Set([JSON.stringify({ type: 'cli', id: 'operator' })]));
  });

  it("apps install from an app author's folder: refused without the data folder (one line naming --data-dir, nothing created), works with DIWAN_DATA_DIR or --data-dir (issue 29)", async () => {
    const appDir = path.join(work, 'my-notes');
    fs.mkdirSync(appDir, { recursive: true });
    fs.writeFileSync(path.join(appDir, 'package.json'), JSON.stringify({ name: 'my-notes', private: true }));
    const source = appFolder('notes', '1.0.0', 'notes-items');
    const from = (env: Record<string, string>, ...args: string[]) =>
      runCli(args, { env: { ...process.env, DIWAN_LANG: '', DATA_DIR: '', DIWAN_DATA_DIR: '', DIWAN_DATABASE_URL: '', ...env }, cwd: appDir });

    const named = await from({}, 'apps', 'install', source, '--company', companyId, '--data-dir', 'data', '--json');
    expect(named.code).toBe(2);
    expect(named.json.error.details).toEqual([expect.objectContaining({ pointer: '--data-dir', rule: 'noDatabase', dataDir: path.join(appDir, 'data'), source: 'flag' })]);
    const text = await from({}, 'apps', 'install', source, '--company', companyId, '--data-dir', 'data');
    expect(text.stderr.trim().split('\n')).toHaveLength(1);
    expect(text.stderr).toContain('--data-dir');
    expect(fs.readdirSync(appDir)).toEqual(['package.json']);

    // Named by neither: the diwan package's own data/ (this checkout's). Only run where the checkout has no database of a developer's own to touch.
    const checkoutDb = path.resolve(import.meta.dirname, '..', 'data', 'diwan.db');
    if (!fs.existsSync(checkoutDb)) {
      const found = await from({}, 'apps', 'install', source, '--company', companyId, '--json');
      expect(found.code).toBe(2);
      expect(found.json.error.details).toEqual([expect.objectContaining({ pointer: '--data-dir', source: 'package', dataDir: path.dirname(checkoutDb) })]);
      expect(fs.existsSync(checkoutDb)).toBe(false);
      expect(fs.readdirSync(appDir)).toEqual(['package.json']);
    }

    const installed = await from({ DIWAN_DATA_DIR: dataDir, ...db.env }, 'apps', 'install', source, '--company', companyId, '--json');
    expect(installed.code, installed.stderr).toBe(0);
    expect(installed.json).toMatchObject({ package: { id: 'notes', version: '1.0.0' }, installed: ['notes'] });
    const listed = await from(db.env, 'apps', 'list', '--company', companyId, '--installed', '--data-dir', dataDir, '--json');
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.json.map((a: { id: string }) => a.id)).toContain('notes');
    expect(fs.readdirSync(appDir)).toEqual(['package.json']);
    await diwan('apps', 'uninstall', 'notes', '--company', companyId, '--json');
  });

  it('revokes a key once: a second revoke says so and records nothing (issue 8, item 16)', async () => {
    const other = await diwan('keys', 'create', '--company', companyId, '--role', 'Viewer', '--scopes', 'invoices', '--json');
    const first = await diwan('keys', 'revoke', other.json.id, '--company', companyId, '--json');
    expect(first.code).toBe(0);
    expect(first.json).toMatchObject({ id: other.json.id, alreadyRevoked: false });
    expect(first.json.revokedAt).toEqual(expect.any(String));

    const again = await diwan('keys', 'revoke', other.json.id, '--company', companyId);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('already revoked');
    const json = await diwan('keys', 'revoke', other.json.id, '--company', companyId, '--json');
    expect(json.json).toMatchObject({ id: other.json.id, revokedAt: first.json.revokedAt, alreadyRevoked: true });

    const audit = await diwan('audit', 'list', '--company', companyId, '--resource', 'api-keys', '--action', 'revoke', '--json');
    expect(audit.json.data.map((e: { resourceId: string }) => e.resourceId)).toEqual([other.json.id]);
  });

  it('disables and enables a webhook endpoint by hand, and rotates the key that seals signing secrets', async () => {
    // A key file of this test's own: the rotation must not touch the run's shared one.
    const keyFile = path.join(work, 'secret-keys.json');
    const env = { DIWAN_KEY_FILE: keyFile, DIWAN_WEBHOOK_ALLOW_LOOPBACK: '1' };
    const added = await diwanWith(env, 'webhooks', 'add', '--company', companyId, '--url', 'http://127.0.0.1:9/hook', '--topics', 'invoice.*', '--json');
    expect(added.code, added.stderr).toBe(0);
    const id = added.json.id;

    const off = await diwanWith(env, 'webhooks', 'disable', id, '--company', companyId, '--json');
    expect(off.json).toMatchObject({ id, enabled: false, disabledReason: 'manual' });
    const on = await diwanWith(env, 'webhooks', 'enable', id, '--company', companyId, '--json');
    expect(on.json).toMatchObject({ id, enabled: true, disabledReason: null });

    const before = JSON.parse(fs.readFileSync(keyFile, 'utf8'));
    expect(before.keys).toHaveLength(1);
    const rotated = await diwanWith(env, 'secrets', 'rotate-key', '--json');
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(rotated.json).toMatchObject({ keyFile, resealed: 1, keyIds: [before.keys[0].id, rotated.json.keyId] });
    const after = JSON.parse(fs.readFileSync(keyFile, 'utf8'));
    expect(after.current).toBe(rotated.json.keyId);
    // The re-sealed secret opens with the new ring: rotating the endpoint's secret reads it (the previous one keeps signing).
    const secret = await diwanWith(env, 'webhooks', 'rotate', id, '--company', companyId, '--json');
    expect(secret.code, secret.stderr).toBe(0);
    expect(secret.json.secret).toMatch(/^whsec_/);
    expect(secret.json.previousSecretValidUntil).toEqual(expect.any(String));
    // Keys given in the environment are rotated there, not by the CLI: a clear refusal.
    const refused = await diwanWith({ DIWAN_SECRET_KEY: before.keys[0].key }, 'secrets', 'rotate-key', '--json');
    expect(refused.code).toBe(1);
    expect(refused.json.error).toMatchObject({ code: 'CONFLICT', details: [{ reason: 'no_key_file' }] });
    expect(refused.json.error.message).toContain('DIWAN_SECRET_KEY');
    await diwanWith(env, 'webhooks', 'remove', id, '--company', companyId, '--json');
  });

  describe('with the server running on the same data', { timeout: 90_000 }, () => {
    let child: ChildProcess | undefined;
    let url: string;
    afterAll(() => {
      child?.kill('SIGKILL');
    });
    const api = (p: string) => fetch(`${url}${p}`, { headers: { authorization: `Bearer ${key}`, 'x-company-id': companyId }, signal: AbortSignal.timeout(10_000) });

    it('starts the server on the same data, on loopback when HOST is unset, where the key works', async () => {
      child = spawn(process.execPath, [BIN, 'start', '--json', '--port', '0'], { env: { ...process.env, DATA_DIR: dataDir, HOST: '', DIWAN_PUBLIC_URL: '', ...db.env }, cwd: work });
      const started = child;
      const info = await new Promise<{ url: string; host: string; dataDir: string }>((resolve, reject) => {
        let out = '';
        started.stdout!.on('data', (d) => {
          out += d;
          try {
            resolve(JSON.parse(out));
          } catch {
            /* not complete yet */
          }
        });
        started.on('exit', (code) => reject(new Error(`start exited with ${code}`)));
      });
      expect(info.dataDir).toBe(dataDir);
      expect(info.host).toBe('127.0.0.1');
      expect(info.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      url = info.url;
      const res = await api('/api/v1/company');
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ data: { id: companyId, name: 'Acme', currency: 'SAR' } });
    });

    it('an app the CLI installs answers on the running server within a second, no restart (issue 9)', async () => {
      expect((await api('/api/v1/memo-counts')).status).toBe(404);
      const r = await diwan('apps', 'install', appFolder('memo', '1.0.0', 'memo-counts'), '--company', companyId);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('loads it within a second');
      const deadline = performance.now() + 1000;
      let status = 0;
      while (performance.now() < deadline) {
        status = (await api('/api/v1/memo-counts')).status;
        if (status === 200) break;
        await new Promise((done) => setTimeout(done, 50));
      }
      expect(status).toBe(200);
      const openapi = await (await fetch(`${url}/api/v1/openapi.json`)).json();
      expect(Object.keys(openapi.paths)).toContain('/api/v1/memo-counts');
    });

    it('apps upgrade shows the fields a new version adds, then applies it (issue 8, item 16)', async () => {
      const offered = await diwan('apps', 'install', appFolder('tally', '1.1.0', 'tally-counts', [{ name: 'note', type: 'string', label: { en: 'Note', ar: 'ملاحظة' } }]), '--company', companyId, '--json');
      expect(offered.code).toBe(0);
      expect(offered.json).toMatchObject({ package: { id: 'tally', version: '1.1.0', replaced: true, previousVersion: '1.0.0' }, installed: [], app: { appId: 'tally', version: '1.0.0' }, upgradeAvailable: true });

      const plan = await diwan('apps', 'upgrade', 'tally', '--company', companyId);
      expect(plan.code).toBe(0);
      expect(plan.stdout).toContain('1.0.0 → 1.1.0');
      expect(plan.stdout).toContain('fields:');
      expect(plan.stdout).toContain('+ count.note');
      expect(plan.stdout).not.toContain('(no changes)');

      const applied = await diwan('apps', 'upgrade', 'tally', '--company', companyId, '--yes', '--json');
      expect(applied.code).toBe(0);
      expect(applied.json).toMatchObject({ applied: true, plan: { from: '1.0.0', to: '1.1.0', fields: { added: ['count.note'], removed: [], changed: [] } }, app: { appId: 'tally', version: '1.1.0' } });

      // At the available version: nothing to apply, and --yes is not offered (issue 29).
      const none = await diwan('apps', 'upgrade', 'tally', '--company', companyId);
      expect(none.code).toBe(0);
      expect(none.stdout.trim()).toBe('Nothing to apply: tally is installed at the available version.');
    });

    it("users create prints a sign-in link to the running server's port, which it recorded in the data folder (issue 29)", async () => {
      // On loopback, as localhost: the default DIWAN_PUBLIC_URL's form, one origin for the session cookie.
      const port = new URL(url).port;
      expect(port).not.toBe('3000');
      expect(JSON.parse(fs.readFileSync(path.join(dataDir, 'server.json'), 'utf8'))).toMatchObject({ publicUrl: `http://localhost:${port}`, pid: child!.pid });
      const r = await diwanWith({ DIWAN_PUBLIC_URL: '' }, 'users', 'create', '--email', 'noura@example.com', '--name', 'Noura', '--company', companyId, '--json');
      expect(r.code, r.stderr).toBe(0);
      expect(r.json.link).toMatch(new RegExp(`^http://localhost:${port}/signin#[0-9a-z]{40}$`));
      // DIWAN_PUBLIC_URL, when set, is where people reach the console.
      const named = await diwanWith({ DIWAN_PUBLIC_URL: 'https://diwan.example.com/' }, 'users', 'create', '--email', 'sara@example.com', '--name', 'Sara', '--company', companyId, '--json');
      expect(named.json.link).toMatch(/^https:\/\/diwan\.example\.com\/signin#/);
    });

    it('stops on SIGTERM with exit code 0, and forgets where it listened', async () => {
      const running = child!;
      const exited = new Promise<number | null>((resolve) => running.once('exit', (code) => resolve(code)));
      running.kill('SIGTERM');
      expect(await exited).toBe(0);
      child = undefined;
      expect(fs.existsSync(path.join(dataDir, 'server.json'))).toBe(false);
      const r = await diwanWith({ DIWAN_PUBLIC_URL: '', PORT: '' }, 'users', 'create', '--email', 'noura@example.com', '--name', 'Noura', '--company', companyId, '--json');
      expect(r.json.link).toMatch(/^http:\/\/localhost:3000\/signin#/);
    });
  });
});
