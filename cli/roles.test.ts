// Process roles and the schema from the command line (issue 13, item 2): `diwan serve` (the API
// only), `diwan worker` (fan-out, delivery, scheduler; health and metrics on its port) and
// `diwan migrate [--check]`, run as an operator runs them (`node cli/bin.js … --json` in a
// child process), on a SQLite data folder and on a fresh PostgreSQL database.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropTestDatabase, testDatabaseUrl } from '../test/db.ts';
import { redactUrl } from '../core/storage/open.ts';
import { CLI_BIN as BIN, runCli, type CliRun } from '../test/cli-run.ts';

let work: string;
const children: ChildProcess[] = [];

function diwan(env: Record<string, string>, ...args: string[]): Promise<CliRun> {
  return runCli(args, { env: { ...process.env, DIWAN_LANG: '', DIWAN_DATABASE_URL: '', ...env }, cwd: work });
}

/** Starts a long-running command with `--json --port 0`; resolves with the document it prints once listening. */
function running(env: Record<string, string>, command: string): Promise<{ child: ChildProcess; info: { url: string; roles: string[]; database: string } }> {
  const child = spawn(process.execPath, [BIN, command, '--json', '--port', '0', '--host', '127.0.0.1'], { env: { ...process.env, DIWAN_DATABASE_URL: '', ...env }, cwd: work });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stdout!.on('data', (d) => {
      out += d;
      try {
        resolve({ child, info: JSON.parse(out) });
      } catch {
        /* not complete yet */
      }
    });
    child.stderr!.on('data', (d) => (err += d));
    child.on('exit', (code) => reject(new Error(`diwan ${command} exited with ${code}: ${err}`)));
  });
}

async function stop(child: ChildProcess): Promise<number | null> {
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  return exited;
}

const get = (url: string) => fetch(url, { signal: AbortSignal.timeout(10_000) });

beforeAll(() => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'diwan-roles-'));
});

afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  fs.rmSync(work, { recursive: true, force: true });
});

describe('diwan serve, worker and migrate', () => {
  it('are listed in the help', async () => {
    const help = await diwan({}, '--help', '--json');
    expect(help.code).toBe(0);
    expect(help.json.commands.map((c: { name: string }) => c.name).slice(0, 4)).toEqual(['start', 'serve', 'worker', 'migrate']);
    const migrate = await diwan({}, 'migrate', '--help', '--json');
    expect(migrate.json.options.map((o: { name: string }) => o.name)).toEqual(expect.arrayContaining(['--check', '--json', '--data-dir']));
  });
});

describe('diwan migrate on a SQLite data folder', { timeout: 60_000 }, () => {
  it('--check writes nothing and exits 1 on a folder with no database; migrate applies, then there is nothing to apply', async () => {
    const dataDir = path.join(work, 'sqlite-data');
    const env = { DATA_DIR: dataDir };
    const check = await diwan(env, 'migrate', '--check', '--json');
    expect(check.code).toBe(1);
    expect(check.json).toMatchObject({ dialect: 'sqlite', database: path.join(dataDir, 'diwan.db'), current: false });
    expect(check.json.missing.tables).toEqual(expect.arrayContaining(['companies', 'webhook_deliveries', 'schema_migrations']));
    expect(fs.existsSync(dataDir)).toBe(false);

    const applied = await diwan(env, 'migrate', '--json');
    expect(applied.code).toBe(0);
    expect(applied.json).toMatchObject({ dialect: 'sqlite', current: true });
    expect(applied.json.applied.tables).toEqual(check.json.missing.tables);
    expect(applied.json.applied.steps).toEqual(check.json.missing.steps);

    const again = await diwan(env, 'migrate', '--json');
    expect(again.json).toMatchObject({ current: true, applied: { tables: [], columns: [], indexes: [], steps: [] } });
    const text = await diwan(env, 'migrate', '--lang', 'ar');
    expect(text.stdout).toContain('لا شيء لتطبيقه');

    const current = await diwan(env, 'migrate', '--check', '--json');
    expect(current.code).toBe(0);
    expect(current.json).toMatchObject({ current: true, missing: { tables: [], columns: [], indexes: [], steps: [] } });
  });

  it('diwan worker runs on the same folder and answers /readyz', async () => {
    const dataDir = path.join(work, 'sqlite-data');
    const { child, info } = await running({ DATA_DIR: dataDir }, 'worker');
    expect(info).toMatchObject({ roles: ['worker'], database: path.join(dataDir, 'diwan.db') });
    expect((await get(`${info.url}/readyz`)).status).toBe(200);
    expect((await get(`${info.url}/api/v1/openapi.json`)).status).toBe(404);
    expect(await stop(child)).toBe(0);
  });
});

// DIWAN_TEST_DATABASES=sqlite leaves PostgreSQL out (test/db.ts).
describe.skipIf(process.env.DIWAN_TEST_DATABASES === 'sqlite')('on PostgreSQL (DIWAN_DATABASE_URL)', { timeout: 90_000 }, () => {
  let url: string;
  let env: Record<string, string>;
  beforeAll(async () => {
    url = await testDatabaseUrl();
    env = { DIWAN_DATABASE_URL: url, DATA_DIR: path.join(work, 'pg-data') };
  });
  afterAll(async () => {
    await Promise.all(children.filter((c) => c.exitCode === null && c.signalCode === null).map(stop));
    await dropTestDatabase(url);
  });

  it('migrate --check exits 1 on the fresh database and writes nothing; after migrate it exits 0', async () => {
    const check = await diwan(env, 'migrate', '--check', '--json');
    expect(check.code).toBe(1);
    expect(check.json).toMatchObject({ dialect: 'postgres', current: false });
    expect(check.json.database).toMatch(/^postgres:\/\//);
    expect(check.json.missing.tables).toEqual(expect.arrayContaining(['companies', 'outbox', 'webhook_deliveries']));
    // Nothing was written: the same gap a second time.
    expect((await diwan(env, 'migrate', '--check', '--json')).json).toEqual(check.json);

    const text = await diwan(env, 'migrate', '--check');
    expect(text.code).toBe(1);
    expect(text.stdout).toContain('Apply it with: diwan migrate');

    const applied = await diwan(env, 'migrate', '--json');
    expect(applied.code).toBe(0);
    expect(applied.json).toMatchObject({ dialect: 'postgres', current: true });
    expect(applied.json.applied).toEqual(check.json.missing);

    const after = await diwan(env, 'migrate', '--check', '--json');
    expect(after.code).toBe(0);
    expect(after.json.current).toBe(true);
  });

  it('the light commands work on the same database (a company made by the CLI)', async () => {
    const made = await diwan(env, 'companies', 'create', '--name', 'Roles Co', '--apps', 'none', '--json');
    expect(made.code).toBe(0);
    const list = await diwan(env, 'companies', 'list', '--json');
    expect(list.json.map((c: { name: string }) => c.name)).toContain('Roles Co');
  });

  it('diwan worker answers /healthz, /readyz and /metrics, and serves no API', async () => {
    const { child, info } = await running(env, 'worker');
    expect(info.roles).toEqual(['worker']);
    // The URL without its password (the embedded server's has one; the machine's may not).
    expect(info.database).toBe(redactUrl(url));
    expect((await get(`${info.url}/healthz`)).status).toBe(200);
    const ready = await get(`${info.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready', checks: { database: 'ok', migrations: 'ok', draining: 'no' } });
    const metrics = await get(`${info.url}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain('diwan_webhook_deliveries{state="pending"}');
    expect((await get(`${info.url}/api/v1/openapi.json`)).status).toBe(404);
    expect(await stop(child)).toBe(0);
  });

  it('diwan serve answers the API and /readyz', async () => {
    const { child, info } = await running(env, 'serve');
    expect(info.roles).toEqual(['api']);
    expect((await get(`${info.url}/readyz`)).status).toBe(200);
    expect((await get(`${info.url}/api/v1/openapi.json`)).status).toBe(200);
    expect(await stop(child)).toBe(0);
  });
});
