// `diwan/sdk/testing`: a throwaway host for an app's own tests. It loads the app folders given
// (and any first-party apps named, e.g. dependencies) the way their packages would run,
// creates one company with them installed, mints a key per role on first use, and answers
// requests in-process: no port, an in-memory database, a temporary data folder, a clock the
// test moves. It gives the test what an API client and a webhook consumer see, never the host.
//
//   const t = await createTestHost({ apps: [import.meta.dirname] });
//   const r = await t.request('POST', '/api/v1/notes', { body: { title: 'x' } });
//   expect(r.status).toBe(201);
//   expect((await t.events()).map((e) => e.topic)).toContain('notes.note.created');
//   await t.close();
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildHost, type Host } from '../core/host.ts';
import { ManualClock } from '../core/kernel/clock.ts';
import { firstPartySources, readManifestFile, validManifest, type AppSource } from '../core/apps/app-source.ts';
import { SERVER_BUNDLE, WEB_DIR, bundleServer, sourceEntries } from '../core/apps/app-package.ts';
import { DiwanError } from '../core/kernel/errors/diwan-error.ts';
import type { Manifest, Role } from '../manifests/manifest.schema.ts';

export type { Role };

export interface TestHostOptions {
  /** App source folders (each with a manifest.json), loaded as packages and installed. */
  apps: string[];
  /** Ids of first-party apps to make available and install too, e.g. dependencies. */
  installFirstParty?: string[];
  /** The company's currency (default USD). */
  currency?: string;
  /** The company's name (default "Test Company"). */
  companyName?: string;
  /** Where the test clock starts (ms since the epoch; default 2026-01-01). */
  now?: number;
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

export interface TestEvent {
  id: string;
  topic: string;
  data: any;
  test: boolean;
  createdAt: string;
}

export interface TestHost {
  company: { id: string; name: string; currency: string };
  /** The apps installed in the company (dependencies first). */
  installed: string[];
  /** A full API key of this company with the role and scopes `*`, minted once per role. */
  keyFor(role: Role): Promise<string>;
  request<T = any>(method: string, url: string, opts?: TestRequestOptions): Promise<TestResponse<T>>;
  /** The company's events, oldest first (documents' events, the audit trail, the app's own). */
  events(opts?: { topic?: string }): Promise<TestEvent[]>;
  /** The host's clock: move it, then `runSchedules()` to fire what falls due. */
  clock: { now(): number; advance(ms: number): void; set(ms: number): void };
  /** Fires the schedules due at the clock's time; returns how many events were written. */
  runSchedules(): Promise<number>;
  /** Runs the app's jobs due at the clock's time (retries once the clock reaches them); returns the attempts made. */
  runJobs(): Promise<number>;
  close(): Promise<void>;
}

/**
 * An app folder as the host will run it once packed: the server entry bundled into one ESM file
 * (with an inline source map), the web folder beside it — written under `outDir`, never into
 * the author's folder.
 */
async function prepareSource(srcDir: string, outDir: string): Promise<AppSource> {
  const dir = path.resolve(srcDir);
  const source = validManifest(readManifestFile(path.join(dir, 'manifest.json')));
  const entries = sourceEntries(dir, source);
  if (entries.problems.length) throw new DiwanError('MANIFEST_INVALID', entries.problems as never, { count: entries.problems.length });
  const appDir = path.join(outDir, source.id);
  fs.mkdirSync(appDir, { recursive: true });
  const manifest = { ...source } as Manifest;
  delete manifest.server;
  delete manifest.web;
  if (entries.server) {
    fs.writeFileSync(path.join(appDir, SERVER_BUNDLE), await bundleServer(entries.server, { sourcemap: true }));
    manifest.server = SERVER_BUNDLE;
  }
  if (entries.web) {
    fs.cpSync(entries.web, path.join(appDir, WEB_DIR), { recursive: true });
    manifest.web = WEB_DIR;
  }
  return { manifest, dir: appDir, origin: 'package', hash: `${Date.now()}` };
}

export async function createTestHost(opts: TestHostOptions): Promise<TestHost> {
  const wanted = opts.installFirstParty ?? [];
  const firstParty = wanted.length ? firstPartySources().filter((s) => wanted.includes(s.manifest.id)) : [];
  const unknown = wanted.filter((id) => !firstParty.some((s) => s.manifest.id === id));
  if (unknown.length) throw new DiwanError('NOT_FOUND', unknown.map((id) => ({ resource: 'apps', id, reason: 'unknown_app' })));

  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'diwan-test-host-'));
  const clock = new ManualClock(opts.now);
  let host: Host | undefined;
  try {
    const own: AppSource[] = [];
    for (const dir of opts.apps) own.push(await prepareSource(dir, path.join(dataDir, 'sources')));
    const sources = [...firstParty, ...own];
    host = await buildHost({ config: { dataDir }, dbFile: ':memory:', sources, defaultApps: [], logger: false, clock });
    // The host only logs an app it refuses at boot; a test wants the reason, so load it again to throw it.
    for (const src of sources) if (!host.runtime.get(src.manifest.id)) await host.runtime.load(src);
    const { company, installed } = await host.createCompany({
      name: opts.companyName ?? 'Test Company',
      currency: opts.currency,
      apps: sources.map((s) => s.manifest.id),
    });
    const keys = new Map<Role, string>();
    const h = host;
    const scope = { companyId: company.id, actor: { type: 'cli' as const, id: 'test-host' }, appId: 'core' };
    const keyFor = async (role: Role) => {
      let key = keys.get(role);
      if (!key) {
        key = (await h.keys.create(scope, { role, scopes: ['*'], name: `test ${role}` })).key;
        keys.set(role, key);
      }
      return key;
    };
    let closed = false;
    return {
      company: { id: company.id, name: company.name, currency: company.currency },
      installed,
      keyFor,
      clock,
      // The host's scheduler logs a failed firing and goes on; an app's test wants to see it.
      async runSchedules() {
        const fired = await h.scheduler.tick();
        if (h.scheduler.lastTickErrors.length) throw h.scheduler.lastTickErrors[0];
        return fired;
      },
      runJobs: () => h.jobRunner.runDue(),
      async events(q = {}) {
        const rows = (await h.storage.outbox.recent(company.id, 10_000)).reverse();
        return rows.filter((r) => !q.topic || r.topic === q.topic).map((r) => ({ id: r.id, topic: r.topic, data: JSON.parse(r.data), test: r.test, createdAt: r.createdAt }));
      },
      async request(method, url, r = {}) {
        const res = await h.app.inject({
          method: method.toUpperCase() as 'GET',
          url,
          query: r.query ? Object.fromEntries(Object.entries(r.query).map(([k, v]) => [k, String(v)])) : undefined,
          headers: { authorization: `Bearer ${await keyFor(r.role ?? 'Owner')}`, 'x-company-id': company.id, ...r.headers },
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
