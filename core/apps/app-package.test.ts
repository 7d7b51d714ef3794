import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { pathToFileURL } from 'node:url';
import * as tar from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DiwanError } from '../kernel/errors/diwan-error.ts';
import { contentHash, packApp, readPackage, unpackTo, type PackageMeta } from './app-package.ts';

const manifest = {
  id: 'sample-notes',
  version: '1.2.3',
  host: '^0.1.0',
  name: { en: 'Sample notes', ar: 'ملاحظات تجريبية' },
  description: { en: 'A sample app for the packaging tests.', ar: 'تطبيق تجريبي لاختبارات الحزم.' },
  strings: { en: { hello: 'Hello' }, ar: { hello: 'مرحبا' } },
  permissions: [{ resource: 'sample-notes', action: 'stats', role: 'Viewer' }],
  documentTypes: [
    {
      name: 'note',
      resource: 'sample-notes',
      idPrefix: 'snote',
      label: { en: 'Note', ar: 'ملاحظة' },
      fields: [{ name: 'title', type: 'string', required: true, label: { en: 'Title', ar: 'العنوان' } }],
    },
  ],
  eventFamilies: [{ family: 'sample notes', prefix: 'sample-notes', label: { en: 'Sample notes', ar: 'ملاحظات تجريبية' }, topics: [] }],
  server: 'server.ts',
  web: 'web',
};

const server = `
import { defineApp, route } from 'diwan/sdk';
import { helper } from './lib/helper.ts';

export default defineApp({
  id: 'sample-notes',
  hooks: { note: { beforeCreate(doc) { doc.title = String(doc.title).trim(); } } },
  routes: [
    route({
      method: 'GET',
      url: '/sample-notes/stats',
      permission: 'sample-notes:stats',
      summary: 'How many notes there are',
      schema: { response: { 200: { type: 'object', properties: { data: { type: 'object' } } } } },
      handler(_req, ctx) {
        return { body: { data: { total: ctx.docs('note').list().total, label: helper() } } };
      },
    }),
  ],
});
`;

let root: string;
let src: string;
let pkgFile: string;

function writeApp(dir: string, files: Record<string, string>) {
  for (const [p, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, p)), { recursive: true });
    fs.writeFileSync(path.join(dir, p), text);
  }
}

interface RawEntry {
  path: string;
  data?: Buffer;
  type?: string;
  linkpath?: string;
}

/** Every entry of a package, without any checks. */
async function rawEntries(file: string): Promise<RawEntry[]> {
  const out: RawEntry[] = [];
  await new Promise<void>((resolve, reject) => {
    const p = new tar.Parser({
      onReadEntry(e) {
        const chunks: Buffer[] = [];
        e.on('data', (c: Buffer) => chunks.push(c));
        e.on('end', () => out.push({ path: e.path, type: e.type, data: Buffer.concat(chunks) }));
      },
    });
    p.on('error', reject);
    p.on('end', resolve);
    p.end(fs.readFileSync(file));
  });
  return out;
}

/** A gzipped tar written header by header, so that any path or entry type can be forged. */
function forgeTar(entries: RawEntry[]): Buffer {
  const blocks: Buffer[] = [];
  for (const e of entries) {
    const size = e.type === 'SymbolicLink' ? 0 : (e.data?.length ?? 0);
    const h = new tar.Header({ path: e.path, mode: 0o644, uid: 0, gid: 0, size, mtime: new Date(0), type: (e.type ?? 'File') as never, linkpath: e.linkpath });
    h.encode();
    blocks.push(h.block!);
    if (size) {
      blocks.push(e.data!);
      if (size % 512) blocks.push(Buffer.alloc(512 - (size % 512)));
    }
  }
  blocks.push(Buffer.alloc(1024));
  return zlib.gzipSync(Buffer.concat(blocks));
}

async function forged(name: string, mutate: (entries: RawEntry[]) => RawEntry[]): Promise<string> {
  const file = path.join(root, `${name}.diwan.tgz`);
  fs.writeFileSync(file, forgeTar(mutate(await rawEntries(pkgFile))));
  return file;
}

async function refusal(p: Promise<unknown>): Promise<DiwanError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DiwanError);
  expect((err as DiwanError).code).toBe('MANIFEST_INVALID');
  return err as DiwanError;
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const rules = (e: DiwanError) => e.details.map((d) => d.rule);
const meta = (entries: RawEntry[]) => JSON.parse(entries.find((e) => e.path === 'diwan-package.json')!.data!.toString()) as PackageMeta;
const withMeta = (entries: RawEntry[], m: PackageMeta) =>
  entries.map((e) => (e.path === 'diwan-package.json' ? { ...e, data: Buffer.from(JSON.stringify(m)) } : e));

beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'diwan-package-test-'));
  src = path.join(root, 'sample-notes');
  writeApp(src, {
    'manifest.json': JSON.stringify(manifest, null, 2),
    'server.ts': server,
    'lib/helper.ts': `export const helper = (): string => 'notes';\n`,
    'web/index.html': '<!doctype html><title>Sample notes</title>\n',
    'web/assets/app.js': 'console.log("sample");\n',
    'sample-notes.test.ts': '// not packed\n',
  });
  pkgFile = (await packApp(src)).file;
});

afterAll(() => {
  fs.rmSync(root, { recursive: true, force: true });
});

describe('packApp', () => {
  it('writes <id>-<version>.diwan.tgz beside the source folder with the listed files', async () => {
    expect(pkgFile).toBe(path.join(root, 'sample-notes-1.2.3.diwan.tgz'));
    const entries = await rawEntries(pkgFile);
    expect(entries.map((e) => e.path).sort()).toEqual(
      ['diwan-package.json', 'manifest.json', 'server.mjs', 'web/assets/app.js', 'web/index.html'].sort(),
    );
    const m = meta(entries);
    expect(m).toMatchObject({ format: 1, id: 'sample-notes', version: '1.2.3' });
    expect(Object.keys(m.files).sort()).toEqual(['manifest.json', 'server.mjs', 'web/assets/app.js', 'web/index.html']);
    expect(m.hash).toBe(contentHash(m.files));
  });

  it('gives the same hash and bytes when packed twice', async () => {
    const again = await packApp(src, path.join(root, 'again', 'copy.diwan.tgz'));
    const first = await readPackage(pkgFile);
    expect(again.hash).toBe(first.hash);
    expect(fs.readFileSync(again.file).equals(fs.readFileSync(pkgFile))).toBe(true);
  });

  it('refuses an invalid manifest with every problem and writes nothing', async () => {
    const bad = path.join(root, 'bad-app');
    writeApp(bad, {
      'manifest.json': JSON.stringify({ ...manifest, id: 'bad-app', version: 'one', strings: { en: { a: 'A' }, ar: {} } }),
      'server.ts': server,
    });
    const err = await refusal(packApp(bad));
    expect(err.details).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ pointer: '/version', rule: 'semver' }),
        expect.objectContaining({ pointer: '/strings/ar/a', rule: 'missingTranslation' }),
      ]),
    );
    expect(err.params).toEqual({ count: err.details.length });
    expect(fs.readdirSync(root).filter((f) => f.startsWith('bad-app'))).toEqual(['bad-app']);
  });

  it('refuses a server that does not compile or exports another id', async () => {
    const broken = path.join(root, 'broken');
    writeApp(broken, { 'manifest.json': JSON.stringify({ ...manifest, web: undefined }), 'server.ts': 'import { nothing } from "./missing.ts";\nexport default nothing;\n' });
    expect(rules(await refusal(packApp(broken)))).toEqual(['bundle']);
    writeApp(broken, { 'server.ts': `import { defineApp } from 'diwan/sdk';\nexport default defineApp({ id: 'other-app' });\n` });
    const err = await refusal(packApp(broken));
    expect(err.details).toEqual([expect.objectContaining({ pointer: '/server', rule: 'defineApp' })]);
  });
});

describe('readPackage and unpackTo', () => {
  it('reads the package back and the unpacked server.mjs default-exports the definition', async () => {
    const pkg = await readPackage(pkgFile);
    expect(pkg.manifest).toMatchObject({ id: 'sample-notes', version: '1.2.3', server: 'server.mjs', web: 'web' });
    expect(pkg.manifest.documentTypes?.[0].name).toBe('note');
    expect([...pkg.files.keys()].sort()).toEqual(['manifest.json', 'server.mjs', 'web/assets/app.js', 'web/index.html']);

    const code = pkg.files.get('server.mjs')!.toString('utf8');
    expect(code).not.toMatch(/["']diwan\/sdk["']/);
    expect(code).not.toMatch(/from\s+["']\.\/lib\/helper/);
    // The only imports left are node builtins.
    for (const m of code.matchAll(/^\s*import\s[^'"]*['"]([^'"]+)['"]/gm)) expect(m[1]).toMatch(/^node:/);

    const dir = path.join(root, 'installed', 'sample-notes');
    await unpackTo(pkg, dir);
    expect(fs.readFileSync(path.join(dir, 'web/assets/app.js'), 'utf8')).toBe('console.log("sample");\n');
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'diwan-package.json'), 'utf8')).hash).toBe(pkg.hash);
    const mod = await import(pathToFileURL(path.join(dir, 'server.mjs')).href);
    expect(mod.default.id).toBe('sample-notes');
    expect(mod.default.routes.map((r: { url: string; permission: string }) => [r.url, r.permission])).toEqual([['/sample-notes/stats', 'sample-notes:stats']]);
    const doc: Record<string, unknown> = { title: '  hi  ' };
    mod.default.hooks.note.beforeCreate(doc);
    expect(doc.title).toBe('hi');
    const reply = mod.default.routes[0].handler({}, { docs: () => ({ list: () => ({ total: 4 }) }) });
    expect(reply).toEqual({ body: { data: { total: 4, label: 'notes' } } });
  });

  it('replaces an older version in place and leaves no temp folders', async () => {
    const parent = path.join(root, 'replace');
    const dir = path.join(parent, 'sample-notes');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'stale.txt'), 'old version');
    await unpackTo(await readPackage(pkgFile), dir);
    expect(fs.existsSync(path.join(dir, 'stale.txt'))).toBe(false);
    expect(fs.existsSync(path.join(dir, 'server.mjs'))).toBe(true);
    expect(fs.readdirSync(parent)).toEqual(['sample-notes']);
  });

  it('checks the expected hash', async () => {
    const { hash } = await readPackage(pkgFile);
    await expect(readPackage(pkgFile, { expectedHash: hash })).resolves.toMatchObject({ hash });
    const err = await refusal(readPackage(pkgFile, { expectedHash: 'f'.repeat(64) }));
    expect(err.details).toEqual([expect.objectContaining({ pointer: '/hash', rule: 'expectedHash' })]);
  });

  it('refuses one byte changed in server.mjs', async () => {
    const file = await forged('byte', (entries) =>
      entries.map((e) => {
        if (e.path !== 'server.mjs') return e;
        const data = Buffer.from(e.data!);
        data[data.length - 2] ^= 1;
        return { ...e, data };
      }),
    );
    const err = await refusal(readPackage(file));
    expect(err.details).toEqual([expect.objectContaining({ pointer: '/files/server.mjs', rule: 'tampered' })]);
  });

  it('refuses an extra file', async () => {
    const file = await forged('extra', (entries) => [...entries, { path: 'web/extra.js', data: Buffer.from('alert(1)') }]);
    const err = await refusal(readPackage(file));
    expect(err.details).toEqual([expect.objectContaining({ pointer: '/files/web~1extra.js', rule: 'unlisted' })]);
  });

  it('refuses a missing file', async () => {
    const file = await forged('missing', (entries) => entries.filter((e) => e.path !== 'web/index.html'));
    const err = await refusal(readPackage(file));
    expect(err.details).toEqual([expect.objectContaining({ pointer: '/files/web~1index.html', rule: 'missing' })]);
  });

  it('refuses a ../evil entry, an absolute path and a symlink', async () => {
    const file = await forged('evil', (entries) => [
      ...entries,
      { path: '../evil', data: Buffer.from('x') },
      { path: '/etc/evil', data: Buffer.from('x') },
      { path: 'web/link', type: 'SymbolicLink', linkpath: '/etc/passwd' },
    ]);
    const err = await refusal(readPackage(file));
    expect(err.details.map((d) => [d.pointer, d.rule])).toEqual([
      ['/files/..~1evil', 'path'],
      ['/files/~1etc~1evil', 'path'],
      ['/files/web~1link', 'link'],
    ]);
  });

  it('refuses a changed hash in diwan-package.json', async () => {
    const file = await forged('hash', (entries) => withMeta(entries, { ...meta(entries), hash: 'a'.repeat(64) }));
    const err = await refusal(readPackage(file));
    expect(err.details).toEqual([expect.objectContaining({ pointer: '/hash', rule: 'tampered' })]);
  });

  it('refuses a listing rewritten to vouch for a changed file when the caller expects the original hash', async () => {
    const original = (await readPackage(pkgFile)).hash;
    const evil = Buffer.from('export default { id: "sample-notes" };\n');
    const file = await forged('relisted', (entries) => {
      const m = meta(entries);
      const files = { ...m.files, 'server.mjs': sha(evil) };
      const changed = entries.map((e) => (e.path === 'server.mjs' ? { ...e, data: evil } : e));
      return withMeta(changed, { ...m, files, hash: contentHash(files) });
    });
    await expect(readPackage(file)).resolves.toBeTruthy(); // self-consistent…
    const err = await refusal(readPackage(file, { expectedHash: original })); // …but not what was approved
    expect(rules(err)).toEqual(['expectedHash']);
  });

  it('refuses a package over the size cap, a duplicate entry and a file that is not a tar', async () => {
    expect(rules(await refusal(readPackage(pkgFile, { maxBytes: 100 })))).toEqual(['size']);
    const dup = await forged('dup', (entries) => [...entries, entries.find((e) => e.path === 'manifest.json')!]);
    expect(rules(await refusal(readPackage(dup)))).toEqual(['duplicate']);
    const junk = path.join(root, 'junk.diwan.tgz');
    fs.writeFileSync(junk, zlib.gzipSync(Buffer.from('not a tar at all')));
    expect(rules(await refusal(readPackage(junk)))).toEqual(['archive']);
  });

  it('refuses unpacked content over the cap even when the file is under it', async () => {
    const big = Buffer.from(randomBytes(100_000).toString('hex')); // 200 kB that gzip only halves
    const file = await forged('big', (entries) => [...entries, { path: 'web/big.txt', data: big }]);
    expect(fs.statSync(file).size).toBeLessThan(150_000);
    const err = await refusal(readPackage(file, { maxBytes: 150_000 }));
    expect(err.details).toEqual([expect.objectContaining({ pointer: '/files/web~1big.txt', rule: 'size' })]);
  });

  it('refuses a package whose manifest breaks the schema', async () => {
    const file = await forged('manifest', (entries) => {
      const bad = Buffer.from(JSON.stringify({ ...manifest, server: 'server.mjs', web: 'web', version: 'x' }));
      const m = meta(entries);
      const files = { ...m.files, 'manifest.json': sha(bad) };
      return withMeta(entries.map((e) => (e.path === 'manifest.json' ? { ...e, data: bad } : e)), { ...m, files, hash: contentHash(files) });
    });
    const err = await refusal(readPackage(file));
    expect(err.details).toEqual([expect.objectContaining({ pointer: '/version', rule: 'semver' })]);
  });
});
