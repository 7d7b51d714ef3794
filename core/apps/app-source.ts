// Where apps come from: first-party manifests in `manifests/` with bundles in
// `apps-installed/<id>/`, and uploaded packages unpacked under `<dataDir>/apps/<id>/`.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Manifest } from '../../manifests/manifest.schema.ts';
import type { AppDefinition } from '../../sdk/define-app.ts';
import { DiwanError } from '../errors/diwan-error.ts';
import { checkManifest } from './manifest-check.ts';

export interface AppSource {
  manifest: Manifest;
  /** Folder the manifest's `server` and `web` entries are relative to. */
  dir: string;
  origin: 'first-party' | 'package';
}

export const REPO_ROOT = path.resolve(import.meta.dirname, '../..');

function readJson(file: string): unknown {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    throw new DiwanError('MANIFEST_INVALID', [{ pointer: '', rule: 'json', message: `${path.basename(file)}: ${(e as Error).message}` }], { count: 1 });
  }
}

/** Validates a manifest, throwing MANIFEST_INVALID with every problem. */
export function validManifest(raw: unknown): Manifest {
  const { manifest, problems } = checkManifest(raw);
  if (!manifest) throw new DiwanError('MANIFEST_INVALID', problems as never, { count: problems.length });
  return manifest;
}

export function firstPartySources(manifestsDir = path.join(REPO_ROOT, 'manifests'), bundlesDir = path.join(REPO_ROOT, 'apps-installed')): AppSource[] {
  return fs
    .readdirSync(manifestsDir)
    .filter((f) => f.endsWith('.json') && f !== 'manifest.schema.json')
    .sort()
    .map((f) => {
      const manifest = validManifest(readJson(path.join(manifestsDir, f)));
      return { manifest, dir: path.join(bundlesDir, manifest.id), origin: 'first-party' as const };
    });
}

export function packageSources(dataDir: string): AppSource[] {
  const root = path.join(dataDir, 'apps');
  if (!fs.existsSync(root)) return [];
  return fs
    .readdirSync(root)
    .filter((d) => fs.existsSync(path.join(root, d, 'manifest.json')))
    .sort()
    .map((d) => ({ manifest: validManifest(readJson(path.join(root, d, 'manifest.json'))), dir: path.join(root, d), origin: 'package' as const }));
}

/** Imports the server bundle, only after the manifest has been accepted. */
export async function loadDefinition(src: AppSource): Promise<AppDefinition> {
  if (!src.manifest.server) return { id: src.manifest.id };
  const entry = path.resolve(src.dir, src.manifest.server);
  if (!entry.startsWith(src.dir + path.sep)) {
    throw new DiwanError('MANIFEST_INVALID', [{ pointer: '/server', rule: 'path', message: 'server must lie inside the app folder' }], { count: 1 });
  }
  // A query string per version so an upgraded bundle is imported afresh rather than from the
  // module cache; no dots in it, or Vite would read `.0` as the file's extension.
  const mod = (await import(`${pathToFileURL(entry).href}?v=${src.manifest.version.replace(/[^0-9A-Za-z]/g, '_')}`)) as { default?: AppDefinition };
  const def = mod.default;
  if (!def || def.id !== src.manifest.id) {
    throw new DiwanError('MANIFEST_INVALID', [{ pointer: '/server', rule: 'defineApp', message: `the server bundle must default-export defineApp({ id: "${src.manifest.id}" })` }], { count: 1 });
  }
  return def;
}
