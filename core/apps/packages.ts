// App packages on the host (the operator's `diwan apps install <file>`): the archive is read and
// verified, refused if it would conflict with what is loaded, loaded here, and only then stored
// in the database, from where every other process serving the host loads it too (`syncPackages`,
// on the `packages` change). A package replaces an app of the same id only with a higher
// version; a refused or failed load leaves the host as it was. Companies then install or
// upgrade it through the lifecycle.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fsp from 'node:fs/promises';
import semver from 'semver';
import type { Manifest } from '../../manifests/manifest.schema.ts';
import type { Storage } from '../storage/open.ts';
import type { Clock } from '../kernel/clock.ts';
import { DiwanError } from '../kernel/errors/diwan-error.ts';
import { isoNow } from '../kernel/ids.ts';
import { HOST_VERSION } from './lifecycle.ts';
import { validManifest, packageSource } from './app-source.ts';
import { packApp, readPackage, unpackTo } from './app-package.ts';
import type { AppRuntime } from './runtime.ts';

export interface InstalledPackage {
  manifest: Manifest;
  /** The package's content hash. */
  hash: string;
  /** Whether a loaded app of the same id (a lower version) was replaced. */
  replaced: boolean;
  /** The version replaced, when `replaced`. */
  previousVersion?: string;
}

export interface PackageDeps {
  runtime: AppRuntime;
  storage: Storage;
  clock: Clock;
  dataDir: string;
}

const refuse = (reason: string, details: Record<string, unknown>[]) => new DiwanError('APP_REFUSED', details, { reason });

export async function installPackage(deps: PackageDeps, file: string, opts: { expectedHash?: string } = {}): Promise<InstalledPackage> {
  const { runtime, storage } = deps;
  const pkg = await readPackage(file, opts.expectedHash ? { expectedHash: opts.expectedHash } : {});
  const manifest = validManifest(pkg.manifest);
  const id = manifest.id;
  const existing = runtime.get(id);
  if (existing && !semver.gt(manifest.version, existing.manifest.version)) {
    throw refuse('version_not_newer', [{ reason: 'version_not_newer', appId: id, available: existing.manifest.version, offered: manifest.version }]);
  }
  if (!semver.satisfies(HOST_VERSION, manifest.host)) throw refuse('host_version', [{ reason: 'host_version', appId: id, range: manifest.host, host: HOST_VERSION }]);
  const problems = runtime.conflicts(manifest, !!existing);
  if (problems.length) throw refuse(String(problems[0].reason), problems);

  const dir = path.join(deps.dataDir, 'apps', `${id}-${pkg.hash.slice(0, 16)}`);
  await unpackTo(pkg, dir);
  try {
    await runtime.load({ manifest, dir, origin: 'package', hash: pkg.hash }, { replacing: !!existing });
  } catch (err) {
    // Refused: leave nothing of it behind.
    fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  try {
    await storage.db.transaction(async () => {
      await storage.packages.put({ appId: id, version: manifest.version, hash: pkg.hash, manifest: JSON.stringify(manifest), bytes: await fsp.readFile(file), createdAt: isoNow(deps.clock.now()) });
      await storage.changes.bump('packages');
    });
  } catch (err) {
    // Not stored: put the host back as it was.
    if (existing) await runtime.load(existing.source, { replacing: true });
    else runtime.unload(id);
    throw err;
  }
  return { manifest, hash: pkg.hash, replaced: !!existing, ...(existing ? { previousVersion: existing.manifest.version } : {}) };
}

/**
 * `diwan apps install <path>`: a `.diwan.tgz` package, or an app source folder, which is packed
 * first (into a temporary file) so that it goes through the same checks.
 */
export async function installFromPath(deps: PackageDeps, p: string): Promise<InstalledPackage & { packedFrom?: string }> {
  const abs = path.resolve(p);
  if (!fs.existsSync(abs)) throw new DiwanError('NOT_FOUND', [{ resource: 'app-packages', path: abs }]);
  if (!fs.statSync(abs).isDirectory()) return installPackage(deps, abs);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'diwan-pack-'));
  try {
    const packed = await packApp(abs, path.join(tmp, 'app.diwan.tgz'));
    return { ...(await installPackage(deps, packed.file, { expectedHash: packed.hash })), packedFrom: abs };
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * Loads what another process stored: every package whose content this process has not loaded.
 * Returns the ids (re)loaded; a package that fails to load here is reported and left out.
 */
export async function syncPackages(deps: PackageDeps): Promise<{ loaded: string[]; failed: { appId: string; error: Error }[] }> {
  const { runtime, storage } = deps;
  const loaded: string[] = [];
  const failed: { appId: string; error: Error }[] = [];
  for (const p of await storage.packages.list()) {
    const current = runtime.get(p.appId);
    if (current?.source.hash === p.hash) continue;
    try {
      const src = await packageSource(storage.packages, deps.dataDir, p.appId, p.hash);
      await runtime.load(src, { replacing: !!current });
      loaded.push(p.appId);
    } catch (error) {
      failed.push({ appId: p.appId, error: error as Error });
    }
  }
  return { loaded, failed };
}
