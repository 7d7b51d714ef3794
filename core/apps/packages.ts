// Installing an app package on the host (the operator's `diwan apps install <file>`): the
// archive is read and verified, refused if it would conflict with what is loaded, unpacked to
// `<dataDir>/apps/<id>/` and loaded. A package may replace an app of the same id only with a
// higher version; a failed load puts the previous folder and the previous app back, so the
// host is left exactly as it was. Companies then install or upgrade it through the lifecycle.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import semver from 'semver';
import type { Manifest } from '../../manifests/manifest.schema.ts';
import type { Host } from '../host.ts';
import { DiwanError } from '../errors/diwan-error.ts';
import { HOST_VERSION } from './lifecycle.ts';
import { validManifest } from './app-source.ts';
import { packApp, readPackage, unpackTo } from './app-package.ts';

export interface InstalledPackage {
  manifest: Manifest;
  /** sha256 of the archive, as `readPackage` reports it. */
  hash: string;
  /** Whether a loaded app of the same id (a lower version) was replaced. */
  replaced: boolean;
  /** The version replaced, when `replaced`. */
  previousVersion?: string;
  dir: string;
}

const refuse = (reason: string, details: Record<string, unknown>[]) => new DiwanError('APP_REFUSED', details, { reason });

/** Where packages are unpacked and the previous version is kept until the new one loads. Not under `apps/`, which the host scans at boot. */
const workDir = (dataDir: string) => path.join(dataDir, '.apps-work');

export async function installPackage(host: Host, file: string, opts: { expectedHash?: string } = {}): Promise<InstalledPackage> {
  const pkg = await readPackage(file, opts.expectedHash ? { expectedHash: opts.expectedHash } : {});
  const manifest = validManifest(pkg.manifest);
  const id = manifest.id;
  const existing = host.runtime.get(id);

  if (existing && !semver.gt(manifest.version, existing.manifest.version)) {
    throw refuse('version_not_newer', [{ reason: 'version_not_newer', appId: id, available: existing.manifest.version, offered: manifest.version }]);
  }
  if (!semver.satisfies(HOST_VERSION, manifest.host)) {
    throw refuse('host_version', [{ reason: 'host_version', appId: id, range: manifest.host, host: HOST_VERSION }]);
  }
  const replacing = !!existing;
  const problems = host.runtime.conflicts(manifest, replacing);
  if (problems.length) throw refuse(String(problems[0].reason), problems);

  const target = path.join(host.config.dataDir, 'apps', id);
  const work = workDir(host.config.dataDir);
  fs.mkdirSync(work, { recursive: true });
  fs.mkdirSync(path.dirname(target), { recursive: true });
  const tag = randomBytes(6).toString('hex');
  const staging = path.join(work, `${id}-new-${tag}`);
  try {
    await unpackTo(pkg, staging);
  } catch (e) {
    fs.rmSync(staging, { recursive: true, force: true });
    throw e;
  }

  // Swap folders: the previous one (if any) is kept aside until the new version has loaded.
  const backup = path.join(work, `${id}-old-${tag}`);
  const hadFolder = fs.existsSync(target);
  if (hadFolder) fs.renameSync(target, backup);
  fs.renameSync(staging, target);

  try {
    await host.runtime.load({ manifest, dir: target, origin: 'package' }, { replacing });
  } catch (error) {
    fs.rmSync(target, { recursive: true, force: true });
    if (hadFolder) fs.renameSync(backup, target);
    // The runtime unloads the old app before its last checks; if the new one failed there,
    // load the old one again (its module is still cached under its own version).
    if (existing && !host.runtime.get(id)) await host.runtime.load(existing.source);
    throw error;
  }
  if (hadFolder) fs.rmSync(backup, { recursive: true, force: true });
  return { manifest, hash: pkg.hash, replaced: replacing, ...(existing ? { previousVersion: existing.manifest.version } : {}), dir: target };
}

/**
 * `diwan apps install <path>`: a `.diwan.tgz` package, or an app source folder, which is
 * packed first (into a temporary file) so that it goes through the same checks.
 */
export async function installFromPath(host: Host, p: string): Promise<InstalledPackage & { packedFrom?: string }> {
  const abs = path.resolve(p);
  if (!fs.existsSync(abs)) throw new DiwanError('NOT_FOUND', [{ resource: 'app-packages', path: abs }]);
  if (!fs.statSync(abs).isDirectory()) return installPackage(host, abs);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'diwan-pack-'));
  try {
    const packed = await packApp(abs, path.join(tmp, 'app.diwan.tgz'));
    return { ...(await installPackage(host, packed.file, { expectedHash: packed.hash })), packedFrom: abs };
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}
