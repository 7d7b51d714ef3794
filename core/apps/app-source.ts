// Where apps come from: first-party manifests in `manifests/` with bundles in
// `apps-installed/<id>/`, and packages the operator added, stored in the database (so every
// process serving the host loads the same bytes) and unpacked once per content hash under
// `<dataDir>/apps/<id>-<hash>/`.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Manifest } from '../../manifests/manifest.schema.ts';
import type { AppDefinition } from '../../sdk/define-app.ts';
import type { AppPackagesRepo } from '../storage/repos/app-packages.ts';
import { DiwanError } from '../kernel/errors/diwan-error.ts';
import { checkManifest, type CheckContext } from './manifest-check.ts';
import { parsePackage, unpackTo } from './app-package.ts';

export interface AppSource {
  manifest: Manifest;
  /** Folder the manifest's `server` and `web` entries are relative to. */
  dir: string;
  origin: 'first-party' | 'package';
  /** A package's content hash: what tells one upload from another. */
  hash?: string;
}

export const REPO_ROOT = path.resolve(import.meta.dirname, '../..');

/** Reads a manifest file, or MANIFEST_INVALID naming the file. */
export function readManifestFile(file: string): unknown {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    throw new DiwanError('MANIFEST_INVALID', [{ pointer: '', rule: 'json', message: `${path.basename(file)}: ${(e as Error).message}` }], { count: 1 });
  }
}

/** Validates a manifest, throwing MANIFEST_INVALID with every problem. */
export function validManifest(raw: unknown, ctx?: CheckContext): Manifest {
  const { manifest, problems } = checkManifest(raw, ctx);
  if (!manifest) throw new DiwanError('MANIFEST_INVALID', problems as never, { count: problems.length });
  return manifest;
}

/** The first-party catalogue's manifests as read (unchecked), by app id: what effects on a dependency are typed against. */
export function firstPartyManifests(manifestsDir = path.join(REPO_ROOT, 'manifests')): Map<string, Manifest> {
  const out = new Map<string, Manifest>();
  for (const f of fs.readdirSync(manifestsDir).filter((f) => f.endsWith('.json') && f !== 'manifest.schema.json').sort()) {
    const raw = readManifestFile(path.join(manifestsDir, f)) as Manifest;
    if (raw && typeof raw.id === 'string') out.set(raw.id, raw);
  }
  return out;
}

export function firstPartySources(manifestsDir = path.join(REPO_ROOT, 'manifests'), bundlesDir = path.join(REPO_ROOT, 'apps-installed')): AppSource[] {
  const catalogue = firstPartyManifests(manifestsDir);
  return [...catalogue.values()].map((raw) => {
    const manifest = validManifest(raw, { manifestOf: (id) => catalogue.get(id) });
    return { manifest, dir: path.join(bundlesDir, manifest.id), origin: 'first-party' as const };
  });
}

/** The packages stored in the database, each unpacked (once per content hash) under `<dataDir>/apps`. */
export async function packageSources(packages: AppPackagesRepo, dataDir: string): Promise<AppSource[]> {
  const out: AppSource[] = [];
  for (const p of await packages.list()) out.push(await packageSource(packages, dataDir, p.appId, p.hash));
  return out;
}

export async function packageSource(packages: AppPackagesRepo, dataDir: string, appId: string, hash: string): Promise<AppSource> {
  const dir = path.join(dataDir, 'apps', `${appId}-${hash.slice(0, 16)}`);
  if (!fs.existsSync(path.join(dir, 'manifest.json'))) {
    const row = await packages.get(appId);
    if (!row) throw new DiwanError('NOT_FOUND', [{ resource: 'app-packages', id: appId }]);
    await unpackTo(await parsePackage(row.bytes, { expectedHash: hash }), dir);
  }
  return { manifest: validManifest(readManifestFile(path.join(dir, 'manifest.json'))), dir, origin: 'package', hash };
}

/** Imports the server bundle, only after the manifest has been accepted. */
export async function loadDefinition(src: AppSource): Promise<AppDefinition> {
  if (!src.manifest.server) return { id: src.manifest.id };
  const entry = path.resolve(src.dir, src.manifest.server);
  if (!entry.startsWith(src.dir + path.sep)) {
    throw new DiwanError('MANIFEST_INVALID', [{ pointer: '/server', rule: 'path', message: 'server must lie inside the app folder' }], { count: 1 });
  }
  // A query string per version (or package hash) so a new bundle is imported afresh rather than
  // from the module cache; no dots in it, or Vite would read `.0` as the file's extension.
  const tag = (src.hash ?? src.manifest.version).replace(/[^0-9A-Za-z]/g, '_');
  const mod = (await import(`${pathToFileURL(entry).href}?v=${tag}`)) as { default?: AppDefinition };
  const def = mod.default;
  if (!def || def.id !== src.manifest.id) {
    throw new DiwanError('MANIFEST_INVALID', [{ pointer: '/server', rule: 'defineApp', message: `the server bundle must default-export defineApp({ id: "${src.manifest.id}" })` }], { count: 1 });
  }
  return def;
}
