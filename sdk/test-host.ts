// `diwan/sdk/testing`: a throwaway host for an app's own tests. It loads the app folders
// given (and any first-party apps named, e.g. dependencies), creates one company with them
// installed, mints a key per role on first use, and answers requests in-process
// (`fastify.inject`): no port, an in-memory database, a temporary data folder.
//
// Each app folder runs as its package would: the server entry is bundled (esbuild) into the
// temporary folder with the app's own imports inlined, so TypeScript and sibling modules load
// under vitest and tsx alike. The SDK and the host stay shared modules rather than copies, and
// an inline source map keeps stack traces pointing at the author's files.
//
//   const t = await createTestHost({ apps: [import.meta.dirname] });
//   const r = await t.request('POST', '/api/v1/notes', { body: { title: 'x' } });
//   expect(r.status).toBe(201);
//   await t.close();
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildHost, type Host } from '../core/host.ts';
import * as esbuild from 'esbuild';
import { firstPartySources, validManifest, type AppSource } from '../core/apps/app-source.ts';
import { SDK_ENTRY, SERVER_BUNDLE, WEB_DIR, sourceEntries } from '../core/apps/app-package.ts';
import type { Manifest } from '../manifests/manifest.schema.ts';
import { DiwanError } from '../core/errors/diwan-error.ts';
import type { Company } from '../core/tenancy/companies.ts';
import type { Role } from '../core/identity/roles.ts';

export type { Host, Company, Role };

export interface TestHostOptions {
  /** App source folders (each with a manifest.json), loaded as packages and installed. */
  apps: string[];
  /** Ids of first-party apps to make available and install too, e.g. dependencies. */
  installFirstParty?: string[];
  /** The company's currency (default USD). */
  currency?: string;
  /** The company's name (default "Test Company"). */
  companyName?: string;
}

export interface TestRequestOptions {
  /** The role of the key the request is made with (default Owner). */
  role?: Role;
  /** Sent as JSON. */
  body?: unknown;
  /** Extra headers; they override the defaults (`authorization`, `x-company-id`). */
  headers?: Record<string, string>;
  query?: Record<string, string | number | boolean>;
}

export interface TestResponse<T = any> {
  status: number;
  /** Parsed JSON when the reply is JSON, else the text. */
  body: T;
  headers: Record<string, string | string[] | number | undefined>;
}

export interface TestHost {
  host: Host;
  company: Company;
  /** The apps installed in the company (dependencies first). */
  installed: string[];
  /** A full API key of this company with the role and scopes `*`, minted once per role. */
  keyFor(role: Role): string;
  request<T = any>(method: string, url: string, opts?: TestRequestOptions): Promise<TestResponse<T>>;
  close(): Promise<void>;
}

function readManifest(dir: string): Manifest {
  const file = path.join(dir, 'manifest.json');
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    throw new DiwanError('MANIFEST_INVALID', [{ pointer: '', rule: 'json', message: `${file}: ${(e as Error).message}` }], { count: 1 });
  }
  return validManifest(raw);
}

const SDK_DIR = path.dirname(SDK_ENTRY);
const CORE_DIR = path.resolve(SDK_DIR, '../core');

/** The SDK and the host's own modules stay imports (by absolute path) rather than copies in the bundle. */
const hostModulesExternal: esbuild.Plugin = {
  name: 'diwan-host-external',
  setup(build) {
    build.onResolve({ filter: /^diwan\/sdk$/ }, () => ({ path: SDK_ENTRY, external: true }));
    build.onResolve({ filter: /^\.\.?\// }, (a) => {
      const abs = path.resolve(a.resolveDir, a.path);
      return abs.startsWith(SDK_DIR + path.sep) || abs.startsWith(CORE_DIR + path.sep) ? { path: abs, external: true } : undefined;
    });
  },
};

/**
 * An app folder as the host will run it once packed: the server entry (as `pack` finds it)
 * bundled into one ESM file with its own imports inlined, the web folder beside it — written
 * under `outDir`, never into the author's folder.
 */
async function prepareSource(srcDir: string, outDir: string): Promise<AppSource> {
  const dir = path.resolve(srcDir);
  const source = readManifest(dir);
  const entries = sourceEntries(dir, source);
  if (entries.problems.length) throw new DiwanError('MANIFEST_INVALID', entries.problems as never, { count: entries.problems.length });
  const appDir = path.join(outDir, source.id);
  fs.mkdirSync(appDir, { recursive: true });
  const manifest = { ...source } as Manifest;
  delete manifest.server;
  delete manifest.web;
  if (entries.server) {
    try {
      await esbuild.build({
        entryPoints: [entries.server],
        absWorkingDir: dir,
        bundle: true,
        platform: 'node',
        format: 'esm',
        target: 'node20',
        outfile: path.join(appDir, SERVER_BUNDLE),
        sourcemap: 'inline',
        logLevel: 'silent',
        plugins: [hostModulesExternal],
        banner: { js: "import { createRequire as __diwanCreateRequire } from 'node:module';\nconst require = __diwanCreateRequire(import.meta.url);" },
      });
    } catch (e) {
      const errors = (e as { errors?: esbuild.Message[] }).errors ?? [];
      const problems = errors.length
        ? errors.map((m) => ({ pointer: '/server', rule: 'bundle', message: `${m.location ? `${m.location.file}:${m.location.line}:${m.location.column}: ` : ''}${m.text}` }))
        : [{ pointer: '/server', rule: 'bundle', message: (e as Error).message }];
      throw new DiwanError('MANIFEST_INVALID', problems, { count: problems.length });
    }
    manifest.server = SERVER_BUNDLE;
  }
  if (entries.web) {
    fs.cpSync(entries.web, path.join(appDir, WEB_DIR), { recursive: true });
    manifest.web = WEB_DIR;
  }
  return { manifest, dir: appDir, origin: 'package' };
}

export async function createTestHost(opts: TestHostOptions): Promise<TestHost> {
  const wanted = opts.installFirstParty ?? [];
  const firstParty = wanted.length ? firstPartySources().filter((s) => wanted.includes(s.manifest.id)) : [];
  const unknown = wanted.filter((id) => !firstParty.some((s) => s.manifest.id === id));
  if (unknown.length) throw new DiwanError('NOT_FOUND', unknown.map((id) => ({ resource: 'apps', id, reason: 'unknown_app' })));

  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'diwan-test-host-'));
  let host: Host | undefined;
  try {
    const own: AppSource[] = [];
    for (const dir of opts.apps) own.push(await prepareSource(dir, path.join(dataDir, 'apps')));
    const sources = [...firstParty, ...own];
    host = await buildHost({ config: { dataDir }, dbFile: ':memory:', sources, defaultApps: [], logger: false });
    // The host only logs an app it refuses at boot; a test wants the reason, so load it again to throw it.
    for (const src of sources) if (!host.runtime.get(src.manifest.id)) await host.runtime.load(src);
    const { company, installed } = host.createCompany({
      name: opts.companyName ?? 'Test Company',
      currency: opts.currency,
      apps: sources.map((s) => s.manifest.id),
    });
    const keys = new Map<Role, string>();
    const h = host;
    const keyFor = (role: Role) => {
      let key = keys.get(role);
      if (!key) {
        key = h.keys.create({ companyId: company.id, role, scopes: ['*'], name: `test ${role}` }).key;
        keys.set(role, key);
      }
      return key;
    };
    let closed = false;
    return {
      host: h,
      company,
      installed,
      keyFor,
      async request(method, url, r = {}) {
        const res = await h.app.inject({
          method: method.toUpperCase() as 'GET',
          url,
          query: r.query ? Object.fromEntries(Object.entries(r.query).map(([k, v]) => [k, String(v)])) : undefined,
          headers: { authorization: `Bearer ${keyFor(r.role ?? 'Owner')}`, 'x-company-id': company.id, ...r.headers },
          ...(r.body === undefined ? {} : { payload: r.body as object }),
        });
        const type = String(res.headers['content-type'] ?? '');
        let body: unknown = res.body;
        if (type.includes('json') && res.body.length) body = JSON.parse(res.body);
        return { status: res.statusCode, body: body as never, headers: res.headers };
      },
      async close() {
        if (closed) return;
        closed = true;
        try {
          await h.close();
        } finally {
          fs.rmSync(dataDir, { recursive: true, force: true });
        }
      },
    };
  } catch (e) {
    await host?.close().catch(() => {});
    fs.rmSync(dataDir, { recursive: true, force: true });
    throw e;
  }
}
