// An app author's whole journey, for real, in a temporary folder outside this repository
// (issue 9): `diwan app new` → `npm install` (diwan as a `file:` dependency on this checkout) →
// `npm test` → `npm run validate` and `npm run pack` → an operator's `diwan apps install` on a
// data folder whose server is already running → the app's route answers within a second, with
// no restart. Every command is a child process with a timeout, on loopback only.
//
// npm runs --offline: a `file:` dependency is a symlink to this checkout, whose node_modules
// already holds diwan's dependencies, so npm fetches nothing (and rebuilds nothing: no
// better-sqlite3 lands in the app's node_modules). This needs the checkout installed, as any
// test run does.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const REPO = path.resolve(import.meta.dirname, '..');
const BIN = path.join(REPO, 'cli/bin.js');
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const ID = 'outside-notes';
const RESOURCE = `/api/v1/${ID}-notes`;

let work: string;
let appDir: string;
let dataDir: string;
let server: ChildProcess | undefined;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  json: any;
  ms: number;
}

/**
 * The environment of an author's shell: none of the variables this test run inherits from
 * npm (an outer `npm test` sets npm_config_*, which a nested npm would obey) or vitest.
 */
function authorEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^(npm_|VITEST|INIT_CWD$|TEST$|NODE_ENV$|FORCE_COLOR$|NO_COLOR$)/i.test(k)) continue;
    env[k] = v;
  }
  // An outer `npm test` also puts this checkout's node_modules/.bin first on PATH.
  if (env.PATH) env.PATH = env.PATH.split(path.delimiter).filter((p) => !p.includes(`node_modules${path.sep}.bin`)).join(path.delimiter);
  // Loopback and a key file of this test's own: never the user's.
  return { ...env, DATA_DIR: dataDir, DIWAN_KEY_FILE: path.join(work, 'secret-keys.json'), DIWAN_LANG: '', NO_COLOR: '1' };
}

function run(file: string, args: string[], opts: { cwd: string; timeout: number }): Promise<Run> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    execFile(file, args, { cwd: opts.cwd, env: authorEnv(), timeout: opts.timeout, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err && typeof err.code !== 'number') return reject(Object.assign(err, { stdout, stderr }));
      let json: unknown;
      try {
        json = JSON.parse(stdout);
      } catch {
        json = undefined;
      }
      resolve({ code: err ? (err.code as number) : 0, stdout, stderr, json, ms: Math.round(performance.now() - started) });
    });
  });
}

const npm = (args: string[], timeout = 120_000) => run(NPM, [...args, '--no-audit', '--no-fund'], { cwd: appDir, timeout });
/** The author's installed diwan: the bin npm linked into the app's node_modules. */
const diwan = (...args: string[]) => run(process.execPath, [path.join(appDir, 'node_modules/.bin/diwan'), ...args], { cwd: appDir, timeout: 60_000 });
/** This checkout's diwan, for the steps before the app folder exists. */
const repoDiwan = (...args: string[]) => run(process.execPath, [BIN, ...args], { cwd: work, timeout: 60_000 });

// Vitest colours its report when it thinks it may; the checks read plain text.
const plain = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, '');

beforeAll(() => {
  work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'diwan-outside-')));
  appDir = path.join(work, ID);
  dataDir = path.join(work, 'data');
});

afterAll(() => {
  server?.kill('SIGKILL');
  fs.rmSync(work, { recursive: true, force: true });
});

describe('bad input to the author commands (no npm needed)', () => {
  it('app new --diwan: a usage error naming the option, exit 2, nothing written', async () => {
    const cases: [string, string][] = [
      ['', 'required'],
      ['latest', 'format'],
      ['./no-such-diwan', 'notFound'],
      [work, 'notDiwan'],
    ];
    for (const [value, rule] of cases) {
      const r = await repoDiwan('app', 'new', 'bad-input', '--diwan', value, '--json');
      expect(r.code, `--diwan "${value}"`).toBe(2);
      expect(r.json.error).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ in: 'argv', pointer: '--diwan', rule }] });
    }
    expect(fs.existsSync(path.join(work, 'bad-input'))).toBe(false);

    const ar = await repoDiwan('app', 'new', 'bad-input', '--diwan', 'latest', '--json', '--lang', 'ar');
    expect(ar.json.error.message).toMatch(/^الطلب غير صالح/);
    const noValue = await repoDiwan('app', 'new', 'bad-input', '--json', '--diwan');
    expect(noValue.code).toBe(2);
    expect(noValue.json.error.details[0]).toMatchObject({ pointer: '--diwan', rule: 'optionValue' });
  });

  it('app test on a folder that does not exist: a usage error on <dir>', async () => {
    const r = await repoDiwan('app', 'test', path.join(work, 'nowhere'), '--json');
    expect(r.code).toBe(2);
    expect(r.json.error).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ pointer: '<dir>', rule: 'notFound' }] });
  });
});

describe('an app author outside the repository', { timeout: 150_000 }, () => {
  let companyId: string;
  let key: string;
  let url: string;
  let pkgFile: string;
  const api = (p: string, init: RequestInit = {}) =>
    fetch(`${url}${p}`, {
      ...init,
      headers: { authorization: `Bearer ${key}`, 'x-company-id': companyId, ...(init.body ? { 'content-type': 'application/json' } : {}) },
      signal: AbortSignal.timeout(10_000),
    });

  it('diwan app new scaffolds an npm project that depends on this diwan', async () => {
    const r = await repoDiwan('app', 'new', ID, '--dir', work, '--json');
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toMatchObject({ id: ID, dir: appDir, diwan: `file:${REPO}` });
    expect(r.json.files).toEqual(expect.arrayContaining(['package.json', `${ID}.test.ts`, 'manifest.json', 'server.ts']));
    const pkg = JSON.parse(fs.readFileSync(path.join(appDir, 'package.json'), 'utf8'));
    expect(pkg).toMatchObject({ name: ID, private: true, type: 'module', scripts: { test: 'diwan app test' }, devDependencies: { diwan: `file:${REPO}` } });
  });

  it('npm install links diwan offline: nothing fetched, nothing rebuilt', async () => {
    const r = await npm(['install', '--offline']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.ms).toBeLessThan(60_000);
    const linked = path.join(appDir, 'node_modules/diwan');
    expect(fs.lstatSync(linked).isSymbolicLink()).toBe(true);
    expect(fs.realpathSync(linked)).toBe(fs.realpathSync(REPO));
    expect(fs.existsSync(path.join(appDir, 'node_modules/.bin/diwan'))).toBe(true);
    // diwan's dependencies stay in the checkout: no second better-sqlite3 to build.
    expect(fs.existsSync(path.join(appDir, 'node_modules/better-sqlite3'))).toBe(false);
  });

  it("npm test runs the scaffold's own tests on the SDK's test host, and they pass", async () => {
    const r = await npm(['test']);
    const out = plain(r.stdout + r.stderr);
    expect(r.code, out).toBe(0);
    expect(out).toContain(`${ID}.test.ts (7 tests)`);
    expect(out).toMatch(/Tests\s+7 passed \(7\)/);
    expect(out).toContain(`All 7 tests of ${ID} passed.`);
  });

  it('a failing test fails diwan app test with APP_ERROR naming it', async () => {
    const file = path.join(appDir, `${ID}.test.ts`);
    const original = fs.readFileSync(file, 'utf8');
    fs.writeFileSync(file, original.replace('expect(res.status).toBe(403);', 'expect(res.status).toBe(418);'));
    try {
      const r = await diwan('app', 'test', '--json');
      expect(r.code).toBe(1);
      expect(r.json.error).toMatchObject({
        code: 'APP_ERROR',
        message: `The app "${ID}" failed: 1 of 7 tests failed`,
        details: [{ file: `${ID}.test.ts`, test: `${ID} > keeps viewers to reading`, message: expect.stringContaining('418') }],
      });
    } finally {
      fs.writeFileSync(file, original);
    }
  });

  it('npm run validate and npm run pack make the package there', async () => {
    const v = await npm(['run', 'validate']);
    expect(v.code, v.stderr).toBe(0);
    expect(v.stdout).toContain(`${appDir} is a valid app.`);
    const p = await npm(['run', 'pack']);
    expect(p.code, p.stderr).toBe(0);
    pkgFile = path.join(appDir, 'dist', `${ID}-0.1.0.diwan.tgz`);
    expect(p.stdout).toContain(`Packed ${ID} 0.1.0 into ${pkgFile}`);
    expect(fs.statSync(pkgFile).size).toBeGreaterThan(0);
  });

  it('an operator sets up a data folder and starts the server', async () => {
    // Only migrate (or start) makes a database: any other command refuses where there is none.
    const made = await diwan('migrate', '--json');
    expect(made.code, made.stderr).toBe(0);
    expect(made.json.createdDataDir).toBe(true);
    const co = await diwan('companies', 'create', '--name', 'Outside', '--json');
    expect(co.code, co.stderr).toBe(0);
    companyId = co.json.id;
    const k = await diwan('keys', 'create', '--company', companyId, '--role', 'Owner', '--scopes', '*', '--json');
    expect(k.code, k.stderr).toBe(0);
    key = k.json.key;

    server = spawn(process.execPath, [path.join(appDir, 'node_modules/.bin/diwan'), 'start', '--json', '--port', '0', '--host', '127.0.0.1'], { cwd: appDir, env: authorEnv() });
    const started = server;
    const info = await new Promise<{ url: string }>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`the server did not start within 60 s: ${out}`)), 60_000);
      started.stdout!.on('data', (d) => {
        out += d;
        try {
          resolve(JSON.parse(out));
          clearTimeout(timer);
        } catch {
          /* not complete yet */
        }
      });
      started.on('exit', (code) => reject(new Error(`start exited with ${code}`)));
    });
    expect(info.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    url = info.url;
    expect((await api(RESOURCE)).status).toBe(404);
  });

  it("the package installed with the author's diwan answers on the running server within a second", async () => {
    const r = await diwan('apps', 'install', pkgFile, '--company', companyId, '--json');
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toMatchObject({ package: { id: ID, version: '0.1.0' }, installed: [ID] });
    const installed = performance.now();
    let status = 0;
    let elapsed = 0;
    while (elapsed <= 1000) {
      status = (await api(RESOURCE)).status;
      elapsed = performance.now() - installed;
      if (status === 200) break;
      await new Promise((done) => setTimeout(done, 25));
    }
    expect(status).toBe(200);
    expect(elapsed, `answered ${Math.round(elapsed)} ms after the install returned`).toBeLessThanOrEqual(1000);

    const created = await api(RESOURCE, { method: 'POST', body: JSON.stringify({ title: '  Outside  ', priority: 'high' }) });
    expect(created.status).toBe(201);
    const note = (await created.json()).data;
    expect(note).toMatchObject({ title: 'Outside', priority: 'high', state: 'draft' });
    const reminded = await api(`${RESOURCE}/${note.id}/remind`, { method: 'POST' });
    expect(reminded.status).toBe(200);
    expect((await reminded.json()).data).toEqual({ noteId: note.id, message: 'Reminder sent for “Outside”' });
  });

  it('the server stops on SIGTERM', async () => {
    const running = server!;
    const exited = new Promise<number | null>((resolve) => running.once('exit', (code) => resolve(code)));
    running.kill('SIGTERM');
    const timer = setTimeout(() => running.kill('SIGKILL'), 15_000);
    expect(await exited).toBe(0);
    clearTimeout(timer);
    server = undefined;
  });
});
