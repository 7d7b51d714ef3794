// Settings are checked at start: a wrong value stops `npm start` with one line naming the
// variable (PORT=abc used to listen on 3000), and a busy port says so in one line instead of
// an EADDRINUSE stack. Exit code non-zero.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../core/kernel/config.ts';
import { SettingError } from '../core/kernel/setting-readers.ts';
import { REPO_ROOT } from '../core/apps/app-source.ts';

describe('loadConfig', () => {
  it('gives the documented defaults for an empty environment', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      port: 3000, host: '127.0.0.1', bodyLimit: 1_048_576, rateLimitPerMinute: 6000, jsonMaxDepth: 32,
      headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, authFailLimit: 30, authFailWindowSeconds: 60, authFailMaxTracked: 50_000,
    });
    expect(c.webhooks).toEqual({ ladder: [60, 300, 1800, 7200, 43200], timeoutMs: 10_000, allowLoopback: false, allowPrivate: false, maxInFlightPerEndpoint: 4, rotationGraceSeconds: 86_400, jitter: 0.1, leaseMs: 30_000 });
  });

  it('listens on loopback unless HOST says otherwise (issue 29: a laptop does not serve its network)', () => {
    expect(loadConfig({}).host).toBe('127.0.0.1');
    expect(loadConfig({ HOST: '0.0.0.0' }).host).toBe('0.0.0.0');
  });

  it('reads the data folder from DIWAN_DATA_DIR, else DATA_DIR (its older name), else ./data', () => {
    expect(loadConfig({}).dataDir).toBe(path.resolve('data'));
    expect(loadConfig({ DATA_DIR: '/srv/old' }).dataDir).toBe('/srv/old');
    expect(loadConfig({ DIWAN_DATA_DIR: '/srv/new', DATA_DIR: '/srv/old' }).dataDir).toBe('/srv/new');
  });

  it('reads the apps a new company gets from DIWAN_DEFAULT_APPS (issue 29), refusing what is not an app id', () => {
    expect(loadConfig({}).defaultApps).toBeUndefined();
    expect(loadConfig({ DIWAN_DEFAULT_APPS: 'invoicing, crm,employees' }).defaultApps).toEqual(['invoicing', 'crm', 'employees']);
    expect(() => loadConfig({ DIWAN_DEFAULT_APPS: 'invoicing,Bad App' })).toThrow(/DIWAN_DEFAULT_APPS.*Bad App/);
  });

  it('reads good values, booleans in their usual spellings', () => {
    const c = loadConfig({ PORT: '8080', DIWAN_BODY_LIMIT: '2048', DIWAN_WEBHOOK_ALLOW_LOOPBACK: 'TRUE', DIWAN_WEBHOOK_ALLOW_PRIVATE: 'off', DIWAN_WEBHOOK_LADDER: '1s,2s', DIWAN_RATE_LIMIT: '0', PORT_UNUSED: 'x' });
    expect([c.port, c.bodyLimit, c.webhooks.allowLoopback, c.webhooks.allowPrivate, c.webhooks.ladder, c.rateLimitPerMinute]).toEqual([8080, 2048, true, false, [1, 2], 0]);
    expect(loadConfig({ PORT: '' }).port, 'empty means the default').toBe(3000);
  });

  it.each([
    ['PORT', 'abc'], ['PORT', '70000'], ['PORT', '-1'], ['PORT', '3000.5'], ['PORT', '0x50'],
    ['HOST', 'two words'],
    ['DIWAN_BODY_LIMIT', '1mb'], ['DIWAN_BODY_LIMIT', '0'],
    ['DIWAN_RATE_LIMIT', '-5'], ['DIWAN_RATE_LIMIT', 'lots'],
    ['DIWAN_JSON_MAX_DEPTH', '0'], ['DIWAN_JSON_MAX_DEPTH', '100000'],
    ['DIWAN_HEADERS_TIMEOUT_MS', '10s'], ['DIWAN_REQUEST_TIMEOUT_MS', '1e9'],
    ['DIWAN_AUTH_FAIL_LIMIT', 'x'], ['DIWAN_AUTH_FAIL_WINDOW', '0'], ['DIWAN_AUTH_FAIL_MAX_TRACKED', '0'],
    ['DIWAN_WEBHOOK_LADDER', '1s,soon'], ['DIWAN_WEBHOOK_LADDER', '-1s'],
    ['DIWAN_WEBHOOK_TIMEOUT_MS', '0'], ['DIWAN_WEBHOOK_ALLOW_LOOPBACK', 'maybe'], ['DIWAN_WEBHOOK_ALLOW_PRIVATE', '2'],
    ['DIWAN_WEBHOOK_MAX_IN_FLIGHT', '0'], ['DIWAN_WEBHOOK_ROTATION_GRACE', '1 day'], ['DIWAN_WEBHOOK_LEASE_MS', '30s'],
  ])('refuses %s=%j with a one-line message naming it', (name, value) => {
    let err: unknown;
    try {
      loadConfig({ [name]: value });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(SettingError);
    const message = (err as Error).message;
    expect(message.startsWith(`${name} `), message).toBe(true);
    expect(message).not.toContain('\n');
    expect(message).toContain(JSON.stringify(value).slice(1, -1));
  });

  it('refuses a headers time-out longer than the whole-request one', () => {
    expect(() => loadConfig({ DIWAN_HEADERS_TIMEOUT_MS: '40000' })).toThrow(/DIWAN_HEADERS_TIMEOUT_MS .*DIWAN_REQUEST_TIMEOUT_MS/);
    expect(loadConfig({ DIWAN_HEADERS_TIMEOUT_MS: '40000', DIWAN_REQUEST_TIMEOUT_MS: '0' }).headersTimeoutMs).toBe(40_000);
  });

  it('refuses a delivery lease that could end while its attempt still runs', () => {
    expect(() => loadConfig({ DIWAN_WEBHOOK_LEASE_MS: '5000' })).toThrow(/^DIWAN_WEBHOOK_LEASE_MS \(5000\) must be at least DIWAN_WEBHOOK_TIMEOUT_MS \+ 1000 \(11000\)$/);
    expect(loadConfig({ DIWAN_WEBHOOK_TIMEOUT_MS: '60000' }).webhooks.leaseMs).toBe(65_000);
    expect(loadConfig({ DIWAN_WEBHOOK_LEASE_MS: '11000' }).webhooks.leaseMs).toBe(11_000);
  });

  it('documents every setting it reads in docs/configuration.md', () => {
    const source = fs.readFileSync(path.join(REPO_ROOT, 'core', 'kernel', 'config.ts'), 'utf8');
    const names = [...source.matchAll(/env, '([A-Z_]+)'/g)].map((m) => m[1]);
    expect(names.length).toBeGreaterThan(15);
    const doc = fs.readFileSync(path.join(REPO_ROOT, 'docs', 'configuration.md'), 'utf8');
    for (const name of names) expect(doc, name).toContain(`| \`${name}\` |`);
  });
});

interface Run {
  code: number | null;
  stderr: string;
  stdout: string;
}

/** `node --import tsx core/main.ts` with `env`, stopped after `timeoutMs` if still running. */
function start(env: Record<string, string>, timeoutMs = 20_000): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'core/main.ts'], { cwd: REPO_ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr, stdout });
    });
  });
}

describe('npm start with wrong settings', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'diwan-settings-'));
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it.each([
    [{ PORT: 'abc' }, 'diwan: invalid setting: PORT must be a whole number from 0 to 65535, got "abc"'],
    [{ DIWAN_WEBHOOK_ALLOW_LOOPBACK: 'maybe' }, 'diwan: invalid setting: DIWAN_WEBHOOK_ALLOW_LOOPBACK must be one of'],
    [{ DIWAN_WEBHOOK_LADDER: '1m,later' }, 'diwan: invalid setting: DIWAN_WEBHOOK_LADDER is not valid: invalid retry step "later"'],
  ])('stops on %j with one line and a non-zero exit', async (env, line) => {
    const run = await start({ ...env, DATA_DIR: dataDir });
    expect(run.code, run.stderr).not.toBe(0);
    expect(run.code).not.toBeNull();
    expect(run.stderr.trim().split('\n'), run.stderr).toHaveLength(1);
    expect(run.stderr.trim().startsWith(line), run.stderr).toBe(true);
    expect(run.stdout).not.toContain('listening');
  });

  it('says in one line that a busy port is in use', async () => {
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      const run = await start({ PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir });
      expect(run.code, run.stderr).toBe(1);
      expect(run.stderr.trim(), run.stderr).toBe(`diwan: port ${port} is already in use; set PORT to another`);
    } finally {
      await new Promise((r) => blocker.close(r));
    }
  });
});
