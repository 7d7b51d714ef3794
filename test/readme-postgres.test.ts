// The README's "Running on PostgreSQL" commands, run as written in bash against a fresh
// database of the tests' PostgreSQL server: the only changes are that database's URL for the
// README's example one and free ports for 3001–3003 (another test may hold those). The block
// that installs PostgreSQL itself (apt-get or docker) is not run: the test brings its own server.
// Then both API processes serve the same data and the worker answers its health, and every
// process started is stopped with its process group.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../core/apps/app-source.ts';
import { dropTestDatabase, testDatabaseUrl } from './db.ts';

const README = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');

/** The section's shell blocks, in order. */
function sectionBlocks(heading: string): string[] {
  const start = README.indexOf(`### ${heading}`);
  if (start < 0) throw new Error(`README.md has no section "${heading}"`);
  const next = README.slice(start + 4).search(/\n#{2,3} /);
  const section = README.slice(start, next < 0 ? undefined : start + 4 + next);
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]);
}

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as net.AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

const cleanups: (() => unknown)[] = [];
afterAll(async () => {
  for (const fn of cleanups.reverse()) await fn();
});

describe('README: Running on PostgreSQL', () => {
  it('starts two API processes and a worker on one database with the commands as written', async () => {
    const blocks = sectionBlocks('Running on PostgreSQL');
    expect(blocks).toHaveLength(2);
    expect(blocks[0]).toMatch(/apt-get install -y postgresql/);
    const url = await testDatabaseUrl();
    cleanups.push(() => dropTestDatabase(url));
    const example = blocks[1].match(/export DIWAN_DATABASE_URL=(\S+)/)![1];
    const ports = new Map<string, string>();
    for (const p of ['3001', '3002', '3003']) ports.set(p, String(await freePort()));
    const script = blocks[1].replace(example, url).replace(/\b300[123]\b/g, (p) => ports.get(p)!);

    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'diwan-readme-pg-'));
    cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }));
    // `diwan` resolves to this checkout's CLI, first on the PATH as after the README's `npm link`.
    fs.mkdirSync(path.join(root, 'node_modules', '.bin'), { recursive: true });
    fs.symlinkSync(path.join(REPO_ROOT, 'cli', 'bin.js'), path.join(root, 'node_modules', '.bin', 'diwan'));
    const env = {
      PATH: `${path.join(root, 'node_modules', '.bin')}${path.delimiter}${process.env.PATH ?? ''}`,
      HOME: root,
      DATA_DIR: path.join(root, 'data'),
      DIWAN_KEY_FILE: path.join(root, 'secret-keys.json'),
      npm_config_offline: 'true',
      npm_config_update_notifier: 'false',
    };
    // The background processes outlive the script: its process group is stopped at the end.
    const shell = spawn('bash', ['-euo', 'pipefail', '-c', script], { cwd: root, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    cleanups.push(() => {
      try {
        process.kill(-shell.pid!, 'SIGTERM');
      } catch {
        // already gone
      }
    });
    let out = '';
    shell.stdout.on('data', (d: Buffer) => (out += d));
    shell.stderr.on('data', (d: Buffer) => (out += d));
    const code = await new Promise<number | null>((resolve) => {
      const t = setTimeout(() => resolve(null), 150_000);
      shell.on('exit', (c) => {
        clearTimeout(t);
        resolve(c);
      });
    });
    expect(code, out.slice(-3000)).toBe(0);
    // Both /readyz answers printed ready, as the comments in the README say.
    expect(out.match(/"status":"ready"/g), out.slice(-3000)).toHaveLength(2);

    const get = async (port: string, p: string) => {
      const res = await fetch(`http://127.0.0.1:${port}${p}`);
      return { status: res.status, body: await res.text() };
    };
    expect((await get(ports.get('3001')!, '/readyz')).status).toBe(200);
    expect((await get(ports.get('3002')!, '/readyz')).status).toBe(200);
    // The worker serves its health and metrics, and no API.
    expect((await get(ports.get('3003')!, '/metrics')).body).toContain('diwan_');
    expect((await get(ports.get('3003')!, '/api/v1/openapi.json')).status).toBe(404);
    // The two API processes share one database: the tables `migrate` created.
    expect((await get(ports.get('3002')!, '/api/v1/openapi.json')).status).toBe(200);
  }, 180_000);
});
