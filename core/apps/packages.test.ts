import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as tar from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Host } from '../host.ts';
import { buildHost } from '../../test/db.ts';
import { CLI_ACTOR } from '../kernel/actor.ts';
import { packApp } from './app-package.ts';
import { installPackage, installFromPath, type PackageDeps } from './packages.ts';

interface Variant {
  id?: string;
  version: string;
  prefix?: string;
  /** Adds a `tally:export` permission and a topic (what 1.1.0 brings). */
  more?: boolean;
  /** A custom route needing a permission nobody declares: the runtime refuses it before touching the old version. */
  broken?: boolean;
}

function writeApp(dir: string, v: Variant) {
  const id = v.id ?? 'tally';
  const prefix = v.prefix ?? 'tally';
  const manifest = {
    id,
    version: v.version,
    host: '^0.1.0',
    name: { en: 'Tally', ar: 'العدّاد' },
    description: { en: 'Counts things.', ar: 'يعدّ الأشياء.' },
    strings: { en: { hi: 'Hi' }, ar: { hi: 'مرحبا' } },
    permissions: v.more ? [{ resource: `${id}-counts`, action: 'export', role: 'Admin' }] : [],
    documentTypes: [
      {
        name: 'count',
        resource: `${id}-counts`,
        idPrefix: 'cnt',
        label: { en: 'Count', ar: 'عدد' },
        fields: [{ name: 'label', type: 'string', required: true, label: { en: 'Label', ar: 'الوصف' } }],
      },
    ],
    eventFamilies: [
      {
        family: 'tally',
        prefix,
        label: { en: 'Tally', ar: 'العدّاد' },
        topics: v.more
          ? [{ topic: `${prefix}.export.ready`, description: { en: 'An export is ready', ar: 'التصدير جاهز' }, source: { on: 'operation', operation: 'the export job' }, payload: { type: 'object' }, example: {} }]
          : [],
      },
    ],
    server: 'server.ts',
  };
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2));
  const route = v.broken
    ? `routes: [route({ method: 'GET', url: '/${id}-counts/secret', permission: '${id}-counts:peek', summary: 'x', schema: { response: { 200: { type: 'object' } } }, handler: () => ({ body: {} }) })],`
    : '';
  fs.writeFileSync(
    path.join(dir, 'server.ts'),
    `import { defineApp, route } from 'diwan/sdk';\nexport const VERSION: string = '${v.version}';\nexport default defineApp({ id: '${id}', ${route} });\n`,
  );
}

let root: string;
let host: Host;
let companyId: string;
let ownerKey: string;

async function pack(name: string, v: Variant): Promise<string> {
  const src = path.join(root, 'src', name);
  writeApp(src, v);
  return (await packApp(src, path.join(root, 'pkgs', `${name}.diwan.tgz`))).file;
}

const deps = (): PackageDeps => ({ runtime: host.runtime, storage: host.storage, clock: host.clock, dataDir: host.config.dataDir });
const appsDir = () => path.join(host.config.dataDir, 'apps');
/** A package is unpacked once per content hash, under `<dataDir>/apps/<id>-<hash16>/`. */
const dirOf = (id: string, hash: string) => path.join(appsDir(), `${id}-${hash.slice(0, 16)}`);
/** The folder of the tally version the host runs. */
const appDir = () => host.runtime.get('tally')!.source.dir;
const onDisk = () => JSON.parse(fs.readFileSync(path.join(appDir(), 'manifest.json'), 'utf8')).version as string;
/** Half-written unpack folders (`.<name>.new-…`, `.<name>.old-…`) left behind. */
const leftovers = () => (fs.existsSync(appsDir()) ? fs.readdirSync(appsDir()).filter((f) => f.startsWith('.')) : []);
/** What the database holds for an app: what every other process loads. */
const stored = async (id: string) => (await host.storage.packages.list()).find((p) => p.appId === id);
const get = (url: string) => host.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${ownerKey}`, 'x-company-id': companyId } });

beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'diwan-packages-'));
  host = await buildHost({ config: { dataDir: path.join(root, 'data') }, dbFile: ':memory:', sources: [], defaultApps: [] });
  companyId = (await host.createCompany({ name: 'Acme', apps: [] })).company.id;
  ownerKey = (await host.keys.create({ companyId, actor: CLI_ACTOR, appId: 'core' }, { role: 'Owner', scopes: ['*'] })).key;
});

afterAll(async () => {
  await host?.close();
  fs.rmSync(root, { recursive: true, force: true });
});

describe('installPackage', () => {
  it('verifies, unpacks under <dataDir>/apps/<id>-<hash16>/, loads and stores a package', async () => {
    const file = await pack('tally-1.0.0', { version: '1.0.0' });
    const r = await installPackage(deps(), file);
    expect(r).toMatchObject({ replaced: false });
    expect(r.manifest.version).toBe('1.0.0');
    expect(r.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(host.runtime.get('tally')?.source).toMatchObject({ origin: 'package', dir: dirOf('tally', r.hash), hash: r.hash });
    expect(fs.readdirSync(appDir()).sort()).toEqual(['diwan-package.json', 'manifest.json', 'server.mjs']);
    expect(leftovers()).toEqual([]);
    // Stored in the database, byte for byte, for every other process serving the host.
    expect(await stored('tally')).toEqual({ appId: 'tally', version: '1.0.0', hash: r.hash });
    expect((await host.storage.packages.get('tally'))!.bytes.equals(fs.readFileSync(file))).toBe(true);

    await host.lifecycle.install(companyId, 'tally', { type: 'cli', id: 'test' });
    const list = await get('/api/v1/tally-counts');
    expect(list.statusCode).toBe(200);
    expect(list.json()).toMatchObject({ data: [], total: 0 });
  });

  it('replaces it with a higher version, and the company sees the upgrade plan', async () => {
    const r = await installPackage(deps(), await pack('tally-1.1.0', { version: '1.1.0', more: true }));
    expect(r).toMatchObject({ replaced: true, previousVersion: '1.0.0' });
    expect(host.runtime.get('tally')?.manifest.version).toBe('1.1.0');
    expect(appDir()).toBe(dirOf('tally', r.hash));
    expect(onDisk()).toBe('1.1.0');
    expect(leftovers()).toEqual([]);
    expect(await stored('tally')).toEqual({ appId: 'tally', version: '1.1.0', hash: r.hash });

    const plan = await host.lifecycle.upgradePlan(companyId, 'tally');
    expect(plan).toMatchObject({ appId: 'tally', from: '1.0.0', to: '1.1.0' });
    expect(plan.permissions).toMatchObject({ added: ['tally-counts:export'], removed: [] });
    expect(plan.topics).toMatchObject({ added: ['tally.export.ready'], removed: [] });
    expect(plan.fields).toEqual({ added: [], removed: [], changed: [] });
    await host.lifecycle.upgrade(companyId, 'tally', { type: 'cli', id: 'test' }, { expectTo: '1.1.0' });
    expect((await host.runtime.install(companyId, 'tally'))?.version).toBe('1.1.0');
  });

  it('refuses the same or a lower version', async () => {
    for (const version of ['1.1.0', '1.0.5']) {
      const err = await installPackage(deps(), await pack(`tally-${version}-again`, { version })).catch((e) => e);
      expect(err).toMatchObject({ code: 'APP_REFUSED', params: { reason: 'version_not_newer' } });
      expect(err.details).toEqual([{ reason: 'version_not_newer', appId: 'tally', available: '1.1.0', offered: version }]);
    }
    expect(host.runtime.get('tally')?.manifest.version).toBe('1.1.0');
    expect(onDisk()).toBe('1.1.0');
    expect((await stored('tally'))?.version).toBe('1.1.0');
  });

  it('refuses a tampered archive before touching anything', async () => {
    const file = await pack('tally-1.3.0', { version: '1.3.0' });
    const x = path.join(root, 'tamper');
    fs.mkdirSync(x, { recursive: true });
    await tar.x({ file, cwd: x });
    fs.appendFileSync(path.join(x, 'server.mjs'), '\n// one more line\n');
    const tampered = path.join(root, 'pkgs', 'tampered.diwan.tgz');
    await tar.c({ gzip: true, file: tampered, cwd: x, portable: true }, fs.readdirSync(x));

    const err = await installPackage(deps(), tampered).catch((e) => e);
    expect(err.code).toBe('MANIFEST_INVALID');
    expect(err.details).toContainEqual(expect.objectContaining({ pointer: '/files/server.mjs', rule: 'tampered' }));
    // The untouched package is fine, but not if the caller expected another hash.
    const wrongHash = await installPackage(deps(), file, { expectedHash: '0'.repeat(64) }).catch((e) => e);
    expect(wrongHash.details).toContainEqual(expect.objectContaining({ rule: 'expectedHash' }));
    expect(host.runtime.get('tally')?.manifest.version).toBe('1.1.0');
    expect(onDisk()).toBe('1.1.0');
    expect((await stored('tally'))?.version).toBe('1.1.0');
  });

  it('refuses a second app claiming an event prefix another app owns', async () => {
    const err = await installPackage(deps(), await pack('copycat', { id: 'copycat', version: '1.0.0', prefix: 'tally' })).catch((e) => e);
    expect(err).toMatchObject({ code: 'APP_REFUSED', params: { reason: 'event_prefix_taken' } });
    expect(err.details).toContainEqual({ reason: 'event_prefix_taken', prefix: 'tally', owner: 'tally' });
    expect(host.runtime.get('copycat')).toBeUndefined();
    expect(fs.readdirSync(appsDir()).filter((f) => f.startsWith('copycat'))).toEqual([]);
    expect(await stored('copycat')).toBeUndefined();
  });

  it('puts the previous version back when the new one fails to load', async () => {
    const versionBefore = host.runtime.version;
    const err = await installPackage(deps(), await pack('tally-1.2.0-broken', { version: '1.2.0', broken: true })).catch((e) => e);
    expect(err).toMatchObject({ code: 'MANIFEST_INVALID' });
    expect(err.details[0]).toMatchObject({ rule: 'undeclaredPermission' });
    expect(host.runtime.get('tally')?.manifest.version).toBe('1.1.0');
    // Refused before the running version was touched: the app set never changed.
    expect(host.runtime.version).toBe(versionBefore);
    expect((await stored('tally'))?.version).toBe('1.1.0');
    expect(host.permissions.get('tally-counts:export')?.owner).toBe('tally');
    expect(host.families.ownerOf('tally')).toBe('tally');
    expect(onDisk()).toBe('1.1.0');
    expect(leftovers()).toEqual([]);
    const list = await get('/api/v1/tally-counts');
    expect(list.statusCode).toBe(200);
  });

  it('installs from a source folder by packing it first', async () => {
    const src = path.join(root, 'src', 'tally-1.4.0');
    writeApp(src, { version: '1.4.0', more: true });
    const r = await installFromPath(deps(), src);
    expect(r).toMatchObject({ replaced: true, previousVersion: '1.1.0', packedFrom: src });
    expect(onDisk()).toBe('1.4.0');
    expect(await stored('tally')).toEqual({ appId: 'tally', version: '1.4.0', hash: r.hash });
    expect(fs.readdirSync(src).sort()).toEqual(['manifest.json', 'server.ts']);
    await expect(installFromPath(deps(), path.join(root, 'nope'))).rejects.toMatchObject({ code: 'NOT_FOUND' });
    // `host.installPackage` is the same step (what the CLI calls).
    writeApp(src, { version: '1.5.0', more: true });
    expect(await host.installPackage(src)).toMatchObject({ replaced: true, previousVersion: '1.4.0', packedFrom: src });
    expect(onDisk()).toBe('1.5.0');
  });
});
