// App packages: an app's source folder (manifest.json, server.ts, web/) turned into one
// `.diwan.tgz` that the host can trust byte for byte.
//
// A package holds `manifest.json` (with `server: "server.mjs"` and `web: "web"`), the server
// bundle `server.mjs` (one self-contained ESM file: the SDK is inlined, only node builtins stay
// imports), the web folder, and `diwan-package.json`:
//
//   { format: 1, id, version, files: { <path>: <sha256 hex> }, hash }
//
// `hash` is the sha256 of the lines `<sha256>  <path>\n` over every listed file, sorted by
// path (the `sha256sum` line shape), so one value names the whole content. Reading a package
// refuses anything the listing does not vouch for: unsafe paths, links, unlisted or missing
// files, a changed byte, a changed hash, more than the size cap — every problem at once, as
// MANIFEST_INVALID with `{ pointer, rule, message }` details like a manifest's.
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';
import * as tar from 'tar';
import type { Manifest } from '../../manifests/manifest.schema.ts';
import type { AppDefinition } from '../../sdk/define-app.ts';
import { DiwanError } from '../kernel/errors/diwan-error.ts';
import { checkManifest, type Problem } from './manifest-check.ts';

export const PACKAGE_FORMAT = 1;
export const PACKAGE_META = 'diwan-package.json';
export const SERVER_BUNDLE = 'server.mjs';
export const WEB_DIR = 'web';
/** Cap on the package file and on its unpacked content. */
export const MAX_PACKAGE_BYTES = 20 * 1024 * 1024;
export const MAX_PACKAGE_FILES = 2000;

/** The SDK entry that `diwan/sdk` is bundled from. */
export const SDK_ENTRY = path.resolve(import.meta.dirname, '../../sdk/index.ts');

export interface PackageMeta {
  format: number;
  id: string;
  version: string;
  files: Record<string, string>;
  hash: string;
}

export interface AppPackage {
  manifest: Manifest;
  hash: string;
  /** Every listed file, by package path (`/`-separated); `diwan-package.json` is not among them. */
  files: Map<string, Buffer>;
  meta: PackageMeta;
}

export interface PackResult {
  file: string;
  hash: string;
  manifest: Manifest;
}

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

/** JSON pointer token escaping (RFC 6901). */
const ptr = (...tokens: string[]) => tokens.map((t) => '/' + t.replace(/~/g, '~0').replace(/\//g, '~1')).join('');

function invalid(problems: Problem[]): DiwanError {
  return new DiwanError('MANIFEST_INVALID', problems as never, { count: problems.length });
}

/** The content hash over `(path, sha256)` pairs, sorted by path. */
export function contentHash(files: Record<string, string>): string {
  const paths = Object.keys(files).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return sha256(paths.map((p) => `${files[p]}  ${p}\n`).join(''));
}

/** Whether a package path is a plain relative path: no `..`, no absolute or drive prefix, no odd characters. */
export function isSafePackagePath(p: string): boolean {
  if (!p || p.length > 255 || p.includes('\\') || p.includes('\0') || p.startsWith('/') || /^[a-zA-Z]:/.test(p)) return false;
  return p.split('/').every((seg) => seg !== '' && seg !== '.' && seg !== '..' && !/[\x00-\x1f:*?"<>|]/.test(seg));
}

// ---------------------------------------------------------------------------------------------
// Bundling

/** Resolves `diwan/sdk` to the SDK source so it is inlined into the bundle. */
const sdkAlias: esbuild.Plugin = {
  name: 'diwan-sdk-alias',
  setup(build) {
    build.onResolve({ filter: /^diwan\/sdk$/ }, () => ({ path: SDK_ENTRY }));
  },
};

/**
 * Bundles an app's server entry into one self-contained ESM text. Bundled CommonJS
 * dependencies get a real `require` for node builtins through `createRequire`.
 */
export async function bundleServer(entry: string, opts: { sourcemap?: boolean } = {}): Promise<string> {
  let result: esbuild.BuildResult & { outputFiles: esbuild.OutputFile[] };
  try {
    result = await esbuild.build({
      entryPoints: [entry],
      absWorkingDir: path.dirname(entry),
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      outfile: SERVER_BUNDLE,
      write: false,
      legalComments: 'none',
      logLevel: 'silent',
      // The test host keeps stack traces pointing at the author's files; packages stay lean.
      ...(opts.sourcemap ? { sourcemap: 'inline' as const } : {}),
      plugins: [sdkAlias],
      banner: { js: "import { createRequire as __diwanCreateRequire } from 'node:module';\nconst require = __diwanCreateRequire(import.meta.url);" },
    });
  } catch (e) {
    const errors = (e as { errors?: esbuild.Message[] }).errors;
    const problems: Problem[] = errors?.length
      ? errors.map((m) => ({
          pointer: '/server',
          rule: 'bundle',
          message: `${m.location ? `${m.location.file}:${m.location.line}:${m.location.column}: ` : ''}${m.text}`,
        }))
      : [{ pointer: '/server', rule: 'bundle', message: (e as Error).message }];
    throw invalid(problems);
  }
  const out = result.outputFiles.find((f) => f.path.endsWith('.mjs')) ?? result.outputFiles[0];
  return out.text;
}

/** Imports a bundled server file afresh and checks it default-exports `defineApp({ id })`. */
export async function importDefinition(file: string, id: string): Promise<AppDefinition> {
  let mod: { default?: AppDefinition };
  try {
    mod = (await import(`${pathToFileURL(file).href}?t=${Date.now()}-${randomBytes(4).toString('hex')}`)) as { default?: AppDefinition };
  } catch (e) {
    throw invalid([{ pointer: '/server', rule: 'load', message: `the server bundle failed to load: ${(e as Error).message}` }]);
  }
  const def = mod.default;
  if (!def || typeof def !== 'object' || def.id !== id) {
    throw invalid([{ pointer: '/server', rule: 'defineApp', message: `the server entry must default-export defineApp({ id: "${id}" })` }]);
  }
  return def;
}

// ---------------------------------------------------------------------------------------------
// Packing

function readManifestFile(dir: string): unknown {
  const file = path.join(dir, 'manifest.json');
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    throw invalid([{ pointer: '', rule: 'json', message: `manifest.json: ${(e as Error).message}` }]);
  }
}

/** Where the source's server entry and web folder are: as declared, else `server.ts` and `web/` (with an index.html) if present. */
export function sourceEntries(srcDir: string, m: Manifest): { server?: string; web?: string; problems: Problem[] } {
  const problems: Problem[] = [];
  const inside = (rel: string, pointer: string): string | undefined => {
    const abs = path.resolve(srcDir, rel);
    if (!abs.startsWith(path.resolve(srcDir) + path.sep)) {
      problems.push({ pointer, rule: 'path', message: `${rel} must lie inside the app folder` });
      return undefined;
    }
    return abs;
  };
  let server: string | undefined;
  if (m.server) {
    server = inside(m.server, '/server');
    if (server && !fs.statSync(server, { throwIfNoEntry: false })?.isFile()) {
      problems.push({ pointer: '/server', rule: 'missing', message: `server entry ${m.server} does not exist` });
      server = undefined;
    }
  } else if (fs.existsSync(path.join(srcDir, 'server.ts'))) {
    server = path.join(srcDir, 'server.ts');
  }
  let web: string | undefined;
  if (m.web) {
    web = inside(m.web, '/web');
    if (web && !fs.statSync(web, { throwIfNoEntry: false })?.isDirectory()) {
      problems.push({ pointer: '/web', rule: 'missing', message: `web folder ${m.web} does not exist` });
      web = undefined;
    } else if (web && !fs.existsSync(path.join(web, 'index.html'))) {
      problems.push({ pointer: '/web', rule: 'missing', message: `web folder ${m.web} has no index.html` });
    }
  } else if (fs.statSync(path.join(srcDir, WEB_DIR, 'index.html'), { throwIfNoEntry: false })?.isFile()) {
    web = path.join(srcDir, WEB_DIR);
  }
  return { server, web, problems };
}

/** Regular files under `dir`, as `/`-separated relative paths; links and other kinds are refused. */
function listFiles(dir: string, prefix: string): string[] {
  const out: string[] = [];
  for (const ent of fs.readdirSync(dir, { withFileTypes: true })) {
    const rel = `${prefix}/${ent.name}`;
    if (ent.isDirectory()) out.push(...listFiles(path.join(dir, ent.name), rel));
    else if (ent.isFile()) out.push(rel);
    else throw invalid([{ pointer: '/web', rule: 'link', message: `${rel} is not a regular file (links are not packed)` }]);
  }
  return out;
}

async function writeAtomically(file: string, write: (tmp: string) => Promise<void>): Promise<void> {
  const tmp = `${file}.tmp-${randomBytes(6).toString('hex')}`;
  try {
    await write(tmp);
    await fsp.rename(tmp, file);
  } finally {
    await fsp.rm(tmp, { force: true });
  }
}

/**
 * Validates, bundles and packs the app in `srcDir` into `outFile`
 * (default `<srcDir>/../<id>-<version>.diwan.tgz`).
 */
export async function packApp(srcDir: string, outFile?: string): Promise<PackResult> {
  srcDir = path.resolve(srcDir);
  const { manifest: source, problems } = checkManifest(readManifestFile(srcDir));
  if (!source) throw invalid(problems);
  const entries = sourceEntries(srcDir, source);
  if (entries.problems.length) throw invalid(entries.problems);

  const manifest = structuredClone(source) as Manifest & { $schema?: string };
  delete manifest.$schema;
  delete manifest.server;
  delete manifest.web;
  if (entries.server) manifest.server = SERVER_BUNDLE;
  if (entries.web) manifest.web = WEB_DIR;
  // The packaged manifest must itself be valid (it is what readPackage checks).
  const repacked = checkManifest(manifest);
  if (!repacked.manifest) throw invalid(repacked.problems);

  const stage = await fsp.mkdtemp(path.join(os.tmpdir(), 'diwan-pack-'));
  try {
    const files: string[] = ['manifest.json'];
    await fsp.writeFile(path.join(stage, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
    if (entries.server) {
      const code = await bundleServer(entries.server);
      await fsp.writeFile(path.join(stage, SERVER_BUNDLE), code);
      await importDefinition(path.join(stage, SERVER_BUNDLE), manifest.id);
      files.push(SERVER_BUNDLE);
    }
    if (entries.web) {
      const webFiles = listFiles(entries.web, WEB_DIR);
      await fsp.cp(entries.web, path.join(stage, WEB_DIR), { recursive: true });
      files.push(...webFiles);
    }
    if (files.length > MAX_PACKAGE_FILES) throw invalid([{ pointer: '', rule: 'size', message: `more than ${MAX_PACKAGE_FILES} files` }]);
    const sums: Record<string, string> = {};
    let total = 0;
    for (const f of files.sort()) {
      if (!isSafePackagePath(f)) throw invalid([{ pointer: ptr('files', f), rule: 'path', message: `${f} is not a portable path` }]);
      const data = await fsp.readFile(path.join(stage, f));
      total += data.length;
      sums[f] = sha256(data);
    }
    if (total > MAX_PACKAGE_BYTES) throw invalid([{ pointer: '', rule: 'size', message: `the package content (${total} bytes) is over ${MAX_PACKAGE_BYTES} bytes` }]);
    const hash = contentHash(sums);
    const meta: PackageMeta = { format: PACKAGE_FORMAT, id: manifest.id, version: manifest.version, files: sums, hash };
    await fsp.writeFile(path.join(stage, PACKAGE_META), JSON.stringify(meta, null, 2) + '\n');

    const file = path.resolve(outFile ?? path.join(srcDir, '..', `${manifest.id}-${manifest.version}.diwan.tgz`));
    await fsp.mkdir(path.dirname(file), { recursive: true });
    // Metadata first so a reader meets the listing before the files; fixed mtime, no owner: same content, same bytes.
    await writeAtomically(file, (tmp) =>
      tar.create({ gzip: true, file: tmp, cwd: stage, portable: true, mtime: new Date(0), strict: true }, [PACKAGE_META, ...files]),
    );
    return { file, hash, manifest: repacked.manifest };
  } finally {
    await fsp.rm(stage, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// Reading

const FILE_TYPES = new Set(['File', 'OldFile', 'ContiguousFile']);

interface RawEntry {
  path: string;
  data: Buffer;
}

/** Parses a (gzipped) tar in memory, collecting problems instead of writing anything. */
async function parseTar(buf: Buffer, cap: number): Promise<{ entries: RawEntry[]; problems: Problem[] }> {
  const entries: RawEntry[] = [];
  const problems: Problem[] = [];
  let total = 0;
  let count = 0;
  let over = false;
  await new Promise<void>((resolve, reject) => {
    const parser = new tar.Parser({
      strict: true,
      onReadEntry(entry) {
        const p = entry.path;
        count++;
        if (count > MAX_PACKAGE_FILES + 1) {
          if (!over) problems.push({ pointer: '', rule: 'size', message: `more than ${MAX_PACKAGE_FILES} entries` });
          over = true;
          entry.resume();
          return;
        }
        if (!isSafePackagePath(p.replace(/\/$/, ''))) {
          problems.push({ pointer: ptr('files', p), rule: 'path', message: `entry "${p}" is not a plain relative path` });
          entry.resume();
          return;
        }
        if (entry.type === 'Directory') {
          entry.resume();
          return;
        }
        if (!FILE_TYPES.has(entry.type)) {
          const rule = entry.type === 'SymbolicLink' || entry.type === 'Link' ? 'link' : 'type';
          problems.push({ pointer: ptr('files', p), rule, message: `entry "${p}" is a ${entry.type}, not a regular file` });
          entry.resume();
          return;
        }
        const size = entry.size ?? 0;
        if (total + size > cap) {
          if (!over) problems.push({ pointer: ptr('files', p), rule: 'size', message: `the package content is over ${cap} bytes` });
          over = true;
          entry.resume();
          return;
        }
        total += size;
        const chunks: Buffer[] = [];
        entry.on('data', (c: Buffer) => chunks.push(c));
        entry.on('end', () => entries.push({ path: p, data: Buffer.concat(chunks) }));
      },
    });
    parser.on('error', (e: Error) => reject(e));
    parser.on('end', () => resolve());
    parser.end(buf);
  }).catch((e: Error) => {
    problems.push({ pointer: '', rule: 'archive', message: `not a readable package archive: ${e.message}` });
  });
  return { entries, problems };
}

export interface ReadPackageOptions {
  /** The content hash the caller expects (from a registry, an upgrade plan, …). */
  expectedHash?: string;
  /** Size cap in bytes for the file and its content; default 20 MiB. */
  maxBytes?: number;
}

/** Reads and verifies a package file; throws MANIFEST_INVALID listing every problem. */
export async function readPackage(file: string, opts: ReadPackageOptions = {}): Promise<AppPackage> {
  const cap = opts.maxBytes ?? MAX_PACKAGE_BYTES;
  const stat = await fsp.stat(file);
  if (stat.size > cap) throw invalid([{ pointer: '', rule: 'size', message: `the package file (${stat.size} bytes) is over ${cap} bytes` }]);
  return parsePackage(await fsp.readFile(file), opts);
}

/** Verifies a package's bytes (as stored by the host); throws MANIFEST_INVALID listing every problem. */
export async function parsePackage(bytes: Buffer, opts: ReadPackageOptions = {}): Promise<AppPackage> {
  const cap = opts.maxBytes ?? MAX_PACKAGE_BYTES;
  if (bytes.length > cap) throw invalid([{ pointer: '', rule: 'size', message: `the package (${bytes.length} bytes) is over ${cap} bytes` }]);
  const { entries, problems } = await parseTar(bytes, cap);

  const files = new Map<string, Buffer>();
  let metaBuf: Buffer | undefined;
  for (const e of entries) {
    if (e.path === PACKAGE_META) {
      if (metaBuf) problems.push({ pointer: ptr('files', e.path), rule: 'duplicate', message: `${PACKAGE_META} appears twice` });
      metaBuf = e.data;
    } else if (files.has(e.path)) {
      problems.push({ pointer: ptr('files', e.path), rule: 'duplicate', message: `entry "${e.path}" appears twice` });
    } else {
      files.set(e.path, e.data);
    }
  }
  if (problems.length) throw invalid(problems);
  if (!metaBuf) throw invalid([{ pointer: '', rule: 'missing', message: `the package has no ${PACKAGE_META}` }]);

  let meta: PackageMeta;
  try {
    meta = JSON.parse(metaBuf.toString('utf8')) as PackageMeta;
  } catch (e) {
    throw invalid([{ pointer: '', rule: 'json', message: `${PACKAGE_META}: ${(e as Error).message}` }]);
  }
  const shapeOk =
    meta && typeof meta === 'object' && meta.format === PACKAGE_FORMAT && typeof meta.id === 'string' && typeof meta.version === 'string' &&
    typeof meta.hash === 'string' && meta.files && typeof meta.files === 'object' && !Array.isArray(meta.files) &&
    Object.values(meta.files).every((v) => typeof v === 'string' && /^[0-9a-f]{64}$/.test(v));
  if (!shapeOk) {
    throw invalid([{ pointer: '', rule: 'format', message: `${PACKAGE_META} must be { format: ${PACKAGE_FORMAT}, id, version, files: { path: sha256 }, hash }` }]);
  }

  for (const listed of Object.keys(meta.files)) {
    if (!isSafePackagePath(listed) || listed === PACKAGE_META) {
      problems.push({ pointer: ptr('files', listed), rule: 'path', message: `listed path "${listed}" is not allowed` });
    } else if (!files.has(listed)) {
      problems.push({ pointer: ptr('files', listed), rule: 'missing', message: `listed file ${listed} is not in the package` });
    } else if (sha256(files.get(listed)!) !== meta.files[listed]) {
      problems.push({ pointer: ptr('files', listed), rule: 'tampered', message: `${listed} does not match its sha256` });
    }
  }
  for (const p of files.keys()) {
    if (!(p in meta.files)) problems.push({ pointer: ptr('files', p), rule: 'unlisted', message: `${p} is in the package but not listed in ${PACKAGE_META}` });
  }
  const computed = contentHash(meta.files);
  if (computed !== meta.hash) problems.push({ pointer: '/hash', rule: 'tampered', message: 'the content hash does not match the listed files' });
  if (opts.expectedHash && opts.expectedHash !== computed) {
    problems.push({ pointer: '/hash', rule: 'expectedHash', message: `the package hash ${computed} is not the expected ${opts.expectedHash}` });
  }
  if (problems.length) throw invalid(problems);

  const manifestBuf = files.get('manifest.json');
  if (!manifestBuf) throw invalid([{ pointer: ptr('files', 'manifest.json'), rule: 'missing', message: 'the package has no manifest.json' }]);
  let raw: unknown;
  try {
    raw = JSON.parse(manifestBuf.toString('utf8'));
  } catch (e) {
    throw invalid([{ pointer: '', rule: 'json', message: `manifest.json: ${(e as Error).message}` }]);
  }
  const { manifest, problems: mp } = checkManifest(raw);
  if (!manifest) throw invalid(mp);
  if (manifest.id !== meta.id || manifest.version !== meta.version) {
    problems.push({ pointer: '/id', rule: 'mismatch', message: `manifest ${manifest.id}@${manifest.version} does not match ${PACKAGE_META} ${meta.id}@${meta.version}` });
  }
  if (manifest.server !== undefined) {
    if (!isSafePackagePath(manifest.server)) problems.push({ pointer: '/server', rule: 'path', message: 'server must be a plain relative path' });
    else if (!files.has(manifest.server)) problems.push({ pointer: '/server', rule: 'missing', message: `server entry ${manifest.server} is not in the package` });
  }
  if (manifest.web !== undefined) {
    if (!isSafePackagePath(manifest.web)) problems.push({ pointer: '/web', rule: 'path', message: 'web must be a plain relative path' });
    else if (![...files.keys()].some((p) => p.startsWith(`${manifest.web}/`))) {
      problems.push({ pointer: '/web', rule: 'missing', message: `web folder ${manifest.web} is not in the package` });
    }
  }
  if (problems.length) throw invalid(problems);
  return { manifest, hash: computed, files, meta };
}

// ---------------------------------------------------------------------------------------------
// Unpacking

/**
 * Writes a verified package into `dir`: into a fresh sibling temp folder first, then swapped in
 * by rename, so `dir` is always either the whole old version or the whole new one (a reader
 * may find it missing only between the two renames). Also writes `diwan-package.json`.
 */
export async function unpackTo(pkg: AppPackage, dir: string): Promise<string> {
  dir = path.resolve(dir);
  const parent = path.dirname(dir);
  await fsp.mkdir(parent, { recursive: true });
  const tag = randomBytes(6).toString('hex');
  const tmp = path.join(parent, `.${path.basename(dir)}.new-${tag}`);
  const old = path.join(parent, `.${path.basename(dir)}.old-${tag}`);
  await fsp.mkdir(tmp);
  try {
    for (const [p, data] of pkg.files) {
      const target = path.resolve(tmp, p);
      if (!isSafePackagePath(p) || !target.startsWith(tmp + path.sep)) {
        throw invalid([{ pointer: ptr('files', p), rule: 'path', message: `entry "${p}" is not a plain relative path` }]);
      }
      await fsp.mkdir(path.dirname(target), { recursive: true });
      await fsp.writeFile(target, data);
    }
    await fsp.writeFile(path.join(tmp, PACKAGE_META), JSON.stringify(pkg.meta, null, 2) + '\n');
    const hadOld = fs.existsSync(dir);
    if (hadOld) await fsp.rename(dir, old);
    try {
      await fsp.rename(tmp, dir);
    } catch (e) {
      if (hadOld) await fsp.rename(old, dir);
      throw e;
    }
    if (hadOld) await fsp.rm(old, { recursive: true, force: true });
    return dir;
  } finally {
    await fsp.rm(tmp, { recursive: true, force: true });
  }
}
