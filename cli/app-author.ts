// App-author tooling behind `diwan app new|validate|pack`: scaffold an app folder from
// `cli/templates/app/`, check it the way the host will (manifest plus what the server code
// references), and pack it into a verified `.diwan.tgz`.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Manifest } from '../manifests/manifest.schema.ts';
import type { AppDefinition } from '../sdk/define-app.ts';
import { DiwanError, fieldError } from '../core/kernel/errors/diwan-error.ts';
import { checkManifest, docTypePermissions, type Problem } from '../core/apps/manifest-check.ts';
import { firstPartyManifests } from '../core/apps/app-source.ts';
import { bundleServer, importDefinition, packApp, sourceEntries, SERVER_BUNDLE, type PackResult } from '../core/apps/app-package.ts';
import { CORE_PERMISSIONS } from '../core/identity/permissions.ts';
import semver from 'semver';
import * as tar from 'tar';
import type { Lang } from '../core/kernel/i18n/i18n.ts';
import { UsageError, say } from './output.ts';

export const TEMPLATE_DIR = path.resolve(import.meta.dirname, 'templates/app');
const REPO_ROOT = path.resolve(import.meta.dirname, '..');

const APP_ID = /^[a-z][a-z0-9-]{1,39}$/;
/** Ids whose event prefix, route tag or audit owner the host keeps for itself. */
const RESERVED_IDS = new Set(['app', 'apps', 'audit', 'core']);
const PERMISSION = /^[a-z][a-z0-9-]*:[a-z][a-zA-Z0-9-]*$/;

export interface NewAppOptions {
  /** English name; defaults to the id in title case (`field-notes` → `Field Notes`). */
  nameEn?: string;
  /** Arabic name; defaults to `تطبيق <English name>`. */
  nameAr?: string;
  /** The `diwan` dev dependency of the scaffold's package.json (see `diwanDependency`); default: this diwan's folder. */
  diwan?: string;
}

export interface NewAppResult {
  dir: string;
  /** The files written, relative to `dir`, `/`-separated, sorted. */
  files: string[];
}

/** The package.json of the diwan that runs this code. */
function ownPackage(): { name: string; version: string } {
  return JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { name: string; version: string };
}

function hostRange(): string {
  return `^${ownPackage().version}`;
}

/** The `name` in a packed npm tarball's package.json, or undefined when it has none (or is no tarball). */
function tarballPackageName(file: string): string | undefined {
  let name: string | undefined;
  try {
    tar.t({
      file,
      sync: true,
      filter: (p) => p === 'package/package.json',
      onReadEntry: (e) => {
        const chunks: Buffer[] = [];
        e.on('data', (c: Buffer) => chunks.push(c));
        e.on('end', () => {
          name = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { name?: string }).name;
        });
      },
    });
  } catch {
    return undefined;
  }
  return name;
}

/**
 * Turns `diwan app new --diwan <value>` into the dependency spec written in the scaffold's
 * package.json. A path (a diwan checkout folder or an `npm pack` tarball of one, relative to
 * `cwd`, `file:` optional) becomes an absolute `file:` spec, so the app folder can move; a
 * semver range is kept as written (for a registry that has diwan). Without a value: this diwan's
 * own folder, the one that runs the command. Anything else is a usage error naming `--diwan`.
 */
export function diwanDependency(value: string | undefined, cwd: string, lang: Lang = 'en'): string {
  if (value === undefined) return `file:${REPO_ROOT}`;
  const v = value.trim();
  const refuse = (rule: string, key: Parameters<typeof say>[1], params: Record<string, unknown> = {}) => {
    throw new UsageError('--diwan', rule, say(lang, key, { name: '--diwan', value: v, ...params }), { value });
  };
  if (!v) refuse('required', 'usage.required');
  const raw = v.startsWith('file:') ? v.slice('file:'.length) : v;
  const pathLike = v.startsWith('file:') || raw.startsWith('.') || path.isAbsolute(raw) || /[\\/]/.test(raw) || /\.(tgz|tar\.gz)$/.test(raw) || fs.existsSync(path.resolve(cwd, raw));
  if (!pathLike) {
    if (semver.validRange(v)) return v;
    return refuse('format', 'author.diwanFormat');
  }
  const abs = path.resolve(cwd, raw);
  const stat = fs.statSync(abs, { throwIfNoEntry: false });
  if (!stat) return refuse('notFound', 'author.diwanMissing', { path: abs });
  let name: string | undefined;
  if (stat.isDirectory()) {
    try {
      name = (JSON.parse(fs.readFileSync(path.join(abs, 'package.json'), 'utf8')) as { name?: string }).name;
    } catch {
      name = undefined;
    }
  } else if (/\.(tgz|tar\.gz)$/.test(abs)) {
    name = tarballPackageName(abs);
  }
  if (name !== ownPackage().name) return refuse('notDiwan', 'author.diwanNotDiwan', { path: abs });
  return `file:${abs}`;
}

/** The document type's resource: unique to the app so that two scaffolded apps never share a route. */
export function scaffoldResource(id: string): string {
  const r = `${id}-notes`;
  return r.length <= 40 ? r : id;
}

const escapeFor: Record<string, (s: string) => string> = {
  '.json': (s) => JSON.stringify(s).slice(1, -1),
  '.html': (s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;'),
  '.ts': (s) => s.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/`/g, '\\`').replace(/\$\{/g, '\\${'),
};

function render(text: string, values: Record<string, string>, escape: (s: string) => string): string {
  return text.replace(/__([A-Z_]+?)__/g, (m, key: string) => (key in values ? escape(values[key]) : m));
}

function templateFiles(dir: string, prefix = ''): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? templateFiles(path.join(dir, e.name), `${prefix}${e.name}/`) : [`${prefix}${e.name}`]))
    .sort();
}

/**
 * Scaffolds `<parentDir>/<id>/` from `cli/templates/app/`: a complete npm project (package.json
 * whose `npm test` runs `diwan app test`, .gitignore, tsconfig.json) holding manifest.json,
 * server.ts, web/index.html and `<id>.test.ts`. Refuses an id the manifest schema would refuse
 * (or one the host reserves) and an existing folder.
 */
export function newApp(id: string, parentDir: string, opts: NewAppOptions = {}): NewAppResult {
  if (typeof id !== 'string' || !APP_ID.test(id)) {
    throw fieldError('/id', 'pattern', `app id "${id}" must match ${APP_ID.source}: lower-case letters, digits and dashes, 2–40 characters`);
  }
  if (RESERVED_IDS.has(id)) throw fieldError('/id', 'reserved', `app id "${id}" is reserved by the host`);
  const dir = path.resolve(parentDir, id);
  if (fs.existsSync(dir)) {
    throw new DiwanError('CONFLICT', [{ reason: 'exists', path: dir }], { reason: `${dir} already exists` });
  }

  const nameEn = opts.nameEn ?? id.split('-').filter(Boolean).map((w) => w[0].toUpperCase() + w.slice(1)).join(' ');
  const values: Record<string, string> = {
    APP_ID: id,
    APP_NAME_EN: nameEn,
    APP_NAME_AR: opts.nameAr ?? `تطبيق ${nameEn}`,
    APP_FAMILY: nameEn.toLowerCase(),
    RESOURCE: scaffoldResource(id),
    HOST_RANGE: hostRange(),
    DIWAN_SPEC: opts.diwan ?? diwanDependency(undefined, parentDir),
  };

  // Render everything in memory first, so a refusal leaves nothing behind.
  const out = new Map<string, string>();
  for (const rel of templateFiles(TEMPLATE_DIR)) {
    // `dot-x` stands for `.x`: npm pack would drop a .gitignore from diwan's own tarball.
    const target = render(rel.replace(/\.tmpl$/, '').replace(/(^|\/)dot-/, '$1.'), values, (s) => s);
    const text = fs.readFileSync(path.join(TEMPLATE_DIR, rel), 'utf8');
    out.set(target, render(text, values, escapeFor[path.extname(target)] ?? ((s) => s)));
  }
  const { problems } = checkManifest(JSON.parse(out.get('manifest.json') ?? 'null'));
  if (problems.length) throw new DiwanError('MANIFEST_INVALID', problems as never, { count: problems.length });

  fs.mkdirSync(path.dirname(dir), { recursive: true });
  fs.mkdirSync(dir);
  for (const [rel, text] of out) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), text);
  }
  return { dir, files: [...out.keys()].sort() };
}

/** A problem as `{ pointer, rule, message }`; a type alias (not an interface) so it also reads as a plain record. */
export type AuthorProblem = { pointer: string; rule: string; message: string };

export interface ValidateResult {
  ok: boolean;
  problems: AuthorProblem[];
  /** The checked manifest, when `ok`. */
  manifest?: Manifest;
}

/** Routes the host generates for the document types, as `METHOD url` with parameter names blanked. */
function generatedRoutes(m: Manifest): Set<string> {
  const out = new Set<string>();
  for (const dt of m.documentTypes ?? []) {
    const base = `/${dt.resource}`;
    for (const r of [`GET ${base}`, `POST ${base}`, `GET ${base}/:`, `PATCH ${base}/:`, `DELETE ${base}/:`]) out.add(r);
    for (const t of dt.transitions ?? []) out.add(`POST ${base}/:/${t.name}`);
  }
  return out;
}

const routeKey = (method: string, url: string) => `${method.toUpperCase()} ${url.replace(/:[^/]+/g, ':')}`;

/** What the server definition references, checked against the manifest. */
function checkDefinition(def: AppDefinition, m: Manifest, file: string): Problem[] {
  const problems: Problem[] = [];
  const at = (p: string) => `${file}#${p}`;
  const declared = new Set<string>([
    ...(m.permissions ?? []).map((p) => `${p.resource}:${p.action}`),
    ...(m.documentTypes ?? []).flatMap(docTypePermissions).map((p) => `${p.resource}:${p.action}`),
    ...CORE_PERMISSIONS.map((p) => p.permission),
  ]);
  const taken = generatedRoutes(m);
  const seen = new Set<string>();
  (def.routes ?? []).forEach((r, i) => {
    const name = `${r?.method} ${r?.url}`;
    if (typeof r?.url !== 'string' || !r.url.startsWith('/')) {
      problems.push({ pointer: at(`/routes/${i}/url`), rule: 'url', message: `route ${i} needs a url starting with "/"` });
    } else {
      const key = routeKey(String(r.method), r.url);
      if (taken.has(key)) problems.push({ pointer: at(`/routes/${i}/url`), rule: 'duplicate', message: `${name} is already a generated document-type route` });
      if (seen.has(key)) problems.push({ pointer: at(`/routes/${i}/url`), rule: 'duplicate', message: `${name} is declared twice` });
      seen.add(key);
    }
    if (typeof r?.permission !== 'string' || !PERMISSION.test(r.permission)) {
      problems.push({ pointer: at(`/routes/${i}/permission`), rule: 'pattern', message: `route ${name} needs a permission "resource:action"` });
    } else if (!declared.has(r.permission)) {
      problems.push({
        pointer: at(`/routes/${i}/permission`),
        rule: 'undeclared',
        message: `route ${name} needs ${r.permission}, which the manifest does not declare (nor does a document type)`,
      });
    }
  });
  const types = new Set((m.documentTypes ?? []).map((d) => d.name));
  for (const t of Object.keys(def.hooks ?? {})) {
    if (!types.has(t)) problems.push({ pointer: at(`/hooks/${t}`), rule: 'hooks', message: `hooks for "${t}", which is not a document type of the manifest` });
  }
  const migrations = new Set<string>();
  (def.migrations ?? []).forEach((mg, i) => {
    if (migrations.has(mg.id)) problems.push({ pointer: at(`/migrations/${i}/id`), rule: 'duplicate', message: `migration ${mg.id} is declared twice` });
    migrations.add(mg.id);
  });
  return problems;
}

/**
 * Checks an app source folder the way installing its package would, plus what only the code
 * says: the manifest (schema, semver, string parity, menu permissions, …), the server and web
 * entries, and every permission a custom route requires. The server is bundled exactly as
 * `pack` does (so `diwan/sdk` resolves wherever the folder is) and imported to read its definition.
 */
export async function validateApp(dir: string): Promise<ValidateResult> {
  dir = path.resolve(dir);
  let raw: unknown;
  try {
    raw = JSON.parse(await fsp.readFile(path.join(dir, 'manifest.json'), 'utf8'));
  } catch (e) {
    return { ok: false, problems: [{ pointer: '', rule: 'json', message: `manifest.json: ${(e as Error).message}` }] };
  }
  // A dependency in the first-party catalogue types the effects on it; another app's are typed at install.
  const catalogue = firstPartyManifests();
  const checked = checkManifest(raw, { manifestOf: (id) => catalogue.get(id) });
  const manifest = checked.manifest;
  const problems: AuthorProblem[] = [...checked.problems];
  if (!manifest) return { ok: false, problems };

  const entries = sourceEntries(dir, manifest);
  problems.push(...entries.problems);
  if (entries.server) {
    const tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'diwan-validate-'));
    try {
      const file = path.join(tmp, SERVER_BUNDLE);
      await fsp.writeFile(file, await bundleServer(entries.server));
      const def = await importDefinition(file, manifest.id);
      problems.push(...checkDefinition(def, manifest, path.relative(dir, entries.server).split(path.sep).join('/')));
    } catch (e) {
      if (!(e instanceof DiwanError)) throw e;
      problems.push(...(e.details as AuthorProblem[]));
    } finally {
      await fsp.rm(tmp, { recursive: true, force: true });
    }
  }
  return problems.length ? { ok: false, problems } : { ok: true, problems, manifest };
}

export interface PackCommandResult extends PackResult {
  bytes: number;
}

/**
 * `diwan app pack [dir] [--out file|folder/]`: validates (refusing with every problem), then
 * packs. An `out` ending in a separator, or naming an existing folder, gets the default file
 * name `<id>-<version>.diwan.tgz` inside it (so an app's `npm run pack` can write to `dist/`).
 */
export async function packAppCommand(dir: string, out?: string): Promise<PackCommandResult> {
  const { ok, problems, manifest } = await validateApp(dir);
  if (!ok || !manifest) throw new DiwanError('MANIFEST_INVALID', problems as never, { count: problems.length });
  let outFile = out === undefined ? undefined : path.resolve(out);
  if (outFile && (/[\\/]$/.test(out!) || fs.statSync(outFile, { throwIfNoEntry: false })?.isDirectory())) {
    outFile = path.join(outFile, `${manifest.id}-${manifest.version}.diwan.tgz`);
  }
  const res = await packApp(dir, outFile);
  return { ...res, bytes: (await fsp.stat(res.file)).size };
}
