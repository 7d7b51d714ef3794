// The `diwan` command as an operator runs it: `node cli/bin.js … --json` in a child process on
// a temporary DATA_DIR. Each command that touches the database boots the host (about two
// seconds with every first-party app), so the steps share one data folder and run in order.
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const BIN = path.resolve(import.meta.dirname, 'bin.js');
let dataDir: string;
let work: string;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON: it must be exactly one document. */
  json: any;
}

function diwan(...args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: { ...process.env, DATA_DIR: dataDir, DIWAN_LANG: '' }, timeout: 60_000, cwd: work, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err && typeof err.code !== 'number') return reject(err);
        let json: unknown;
        try {
          json = JSON.parse(stdout);
        } catch {
          json = undefined;
        }
        resolve({ code: err ? (err.code as number) : 0, stdout, stderr, json });
      },
    );
  });
}

beforeAll(() => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'diwan-cli-'));
  dataDir = path.join(work, 'data');
});

afterAll(() => {
  fs.rmSync(work, { recursive: true, force: true });
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

describe('diwan on a data folder', { timeout: 90_000 }, () => {
  let companyId: string;
  let key: string;
  let keyId: string;

  it('creates a company with the apps asked for', async () => {
    const r = await diwan('companies', 'create', '--name', 'Acme', '--currency', 'SAR', '--apps', 'invoicing', '--json');
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({ name: 'Acme', currency: 'SAR', apps: ['invoicing'] });
    expect(r.json.id).toMatch(/^co_[0-9a-z]+$/);
    companyId = r.json.id;
    expect(fs.existsSync(path.join(dataDir, 'diwan.db'))).toBe(true);
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

  it('installs an app folder as a package, and audits every step as the CLI operator', async () => {
    const src = path.join(work, 'src', 'tally');
    fs.mkdirSync(src, { recursive: true });
    fs.writeFileSync(path.join(src, 'manifest.json'), JSON.stringify({
      id: 'tally', version: '1.0.0', host: '^0.1.0',
      name: { en: 'Tally', ar: 'العدّاد' }, description: { en: 'Counts things.', ar: 'يعدّ الأشياء.' },
      strings: { en: {}, ar: {} },
      documentTypes: [{ name: 'count', resource: 'tally-counts', idPrefix: 'cnt', label: { en: 'Count', ar: 'عدد' }, fields: [{ name: 'label', type: 'string', required: true }] }],
      eventFamilies: [{ family: 'tally', prefix: 'tally', label: { en: 'Tally', ar: 'العدّاد' }, topics: [] }],
    }));
    const r = await diwan('apps', 'install', src, '--company', companyId, '--json');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({ package: { id: 'tally', version: '1.0.0', replaced: false }, installed: ['tally'], app: { appId: 'tally', state: 'enabled' } });
    expect(fs.existsSync(path.join(dataDir, 'apps', 'tally', 'manifest.json'))).toBe(true);

    const audit = await diwan('audit', 'list', '--company', companyId, '--json');
    expect(audit.code).toBe(0);
    const steps = audit.json.data.map((e: { resource: string; action: string; resourceId: string }) => `${e.resource}:${e.action}:${e.resourceId}`);
    expect(steps).toEqual([
      'apps:install:tally', 'apps:enable:invoicing', 'apps:disable:invoicing', `api-keys:create:${keyId}`, 'apps:install:invoicing', `companies:create:${companyId}`,
    ]);
    expect(new Set(audit.json.data.map((e: { actor: unknown }) => JSON.stringify(e.actor)))).toEqual(new Set([JSON.stringify({ type: 'cli', id: 'operator' })]));
  });

  it('starts the server on the same data, where the key works', async () => {
    const child = spawn(process.execPath, [BIN, 'start', '--json', '--port', '0', '--host', '127.0.0.1'], { env: { ...process.env, DATA_DIR: dataDir }, cwd: work });
    const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    try {
      const info = await new Promise<{ url: string; dataDir: string }>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (d) => {
          out += d;
          try {
            resolve(JSON.parse(out));
          } catch {
            /* not complete yet */
          }
        });
        child.on('exit', (code) => reject(new Error(`start exited with ${code}`)));
      });
      expect(info.dataDir).toBe(dataDir);
      expect(info.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const res = await fetch(`${info.url}/api/v1/company`, { headers: { authorization: `Bearer ${key}`, 'x-company-id': companyId }, signal: AbortSignal.timeout(10_000) });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ data: { id: companyId, name: 'Acme', currency: 'SAR' } });
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      clearTimeout(killer);
      child.kill('SIGKILL');
    }
  });
});
