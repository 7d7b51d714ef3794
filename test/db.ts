// The databases a test runs on. `testDatabaseUrl()` answers a URL to a fresh, empty PostgreSQL
// database (on DIWAN_TEST_DATABASE_URL's server, or the embedded one test/postgres-global-setup.ts
// started), so test files run in parallel without sharing state. `databases()` lists the
// databases a file runs on, each able to build a host or give a location to open storage on;
// a test file switches to both with one line:
//
//   describe.each(databases())('people ($name)', ({ buildHost }) => { … });
//
// (the callback's `buildHost` shadows the import: the same calls, on that database). The API
// suite instead runs whole files on the database of its vitest project: `buildHost` below.
// Whatever a database entry made is removed when its host (or location) is closed, and anything
// left is dropped at the end of the run. DIWAN_TEST_DATABASES=sqlite runs only the SQLite entry.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { inject } from 'vitest';
import pg from 'pg';
import { buildHost as realBuildHost, type Host, type HostOptions } from '../core/host.ts';
import { openStorage, type Storage } from '../core/storage/open.ts';

let counter = 0;

function server(): { url: string; run: string } {
  const url = process.env.DIWAN_TEST_DATABASE_URL?.trim() || inject('diwanPostgresUrl');
  if (!url) throw new Error('no PostgreSQL for the tests: set DIWAN_TEST_DATABASE_URL, or let test/postgres-global-setup.ts start the embedded one');
  return { url, run: inject('diwanTestRun') ?? `diwan_t_${process.pid}` };
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

/** Connects to the server, waiting (up to a minute) for an embedded one still starting. */
async function connect(url: string): Promise<pg.Client> {
  const failure = inject('diwanPostgresFailure');
  const until = Date.now() + 60_000;
  for (;;) {
    const c = new pg.Client({ connectionString: url });
    try {
      await c.connect();
      return c;
    } catch (err) {
      await c.end().catch(() => {});
      if (failure && fs.existsSync(failure)) throw new Error(fs.readFileSync(failure, 'utf8'));
      const starting = (err as { code?: string }).code === 'ECONNREFUSED' || /starting up/.test(String(err));
      if (!failure || !starting || Date.now() > until) throw err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = await connect(server().url);
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** A fresh, empty PostgreSQL database of this run; its URL. */
export async function testDatabaseUrl(): Promise<string> {
  const { url, run } = server();
  const name = `${run}_${process.pid}_${++counter}`;
  // template0: nothing another test put in template1 comes along.
  await admin((c) => c.query(`CREATE DATABASE "${name}" TEMPLATE template0 ENCODING 'UTF8'`));
  return withDatabase(url, name);
}

/** Drops a database `testDatabaseUrl()` made (its connections are closed first). */
export async function dropTestDatabase(url: string): Promise<void> {
  const name = decodeURIComponent(new URL(url).pathname.slice(1));
  if (!name.startsWith(server().run)) throw new Error(`not a test database: ${name}`);
  await admin((c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
}

/** Where a storage can be opened, several times over (two processes on one database): open, then drop. */
export interface Location {
  /** For `openStorage`. */
  file: string;
  url?: string;
  open(): Promise<Storage>;
  drop(): Promise<void>;
}

export interface TestDatabase {
  name: 'sqlite' | 'postgres';
  /**
   * `buildHost` on this database: an in-memory SQLite, or a fresh PostgreSQL database with a
   * temporary data folder, removed on close. A named `dbFile` (a restart test) stays a file on
   * SQLite, and on PostgreSQL is one database per name, kept across closes (dropped with the run).
   */
  buildHost(opts?: HostOptions): Promise<Host>;
  /** A fresh location: a SQLite file in a temporary folder, or a fresh PostgreSQL database. */
  location(): Promise<Location>;
}

const sqlite: TestDatabase = {
  name: 'sqlite',
  buildHost: (opts = {}) => realBuildHost({ dbFile: ':memory:', ...opts }),
  async location() {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'diwan-db-'));
    const file = path.join(dir, 'diwan.db');
    return { file, open: () => openStorage({ file }), drop: async () => fs.rmSync(dir, { recursive: true, force: true }) };
  },
};

/** A test's named SQLite file (`dbFile: '<path>'`, for restarts) → the PostgreSQL database standing for it in this process. */
const named = new Map<string, Promise<{ url: string; dataDir: string }>>();

const postgres: TestDatabase = {
  name: 'postgres',
  async buildHost(opts = {}) {
    const { dbFile, ...rest } = opts;
    // A named file is a database that outlives its host: a second host on the same name is a
    // restart and finds the first one's data. It is dropped with the run.
    if (dbFile && dbFile !== ':memory:') {
      let entry = named.get(dbFile);
      if (!entry) named.set(dbFile, (entry = testDatabaseUrl().then((url) => ({ url, dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'diwan-host-')) }))));
      const { url, dataDir } = await entry;
      return realBuildHost({ ...rest, databaseUrl: url, config: { dataDir, ...opts.config } });
    }
    const url = await testDatabaseUrl();
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'diwan-host-'));
    let host: Host;
    try {
      host = await realBuildHost({ ...rest, databaseUrl: url, config: { dataDir, ...opts.config } });
    } catch (err) {
      await dropTestDatabase(url).catch(() => {});
      fs.rmSync(dataDir, { recursive: true, force: true });
      throw err;
    }
    const close = host.close.bind(host);
    host.close = async () => {
      try {
        await close();
      } finally {
        await dropTestDatabase(url).catch(() => {});
        fs.rmSync(dataDir, { recursive: true, force: true });
      }
    };
    return host;
  },
  async location() {
    const url = await testDatabaseUrl();
    return { file: '', url, open: () => openStorage({ file: '', url }), drop: () => dropTestDatabase(url) };
  },
};

/** The databases a test file runs on: SQLite, then PostgreSQL (unless DIWAN_TEST_DATABASES=sqlite). */
export function databases(): TestDatabase[] {
  return process.env.DIWAN_TEST_DATABASES === 'sqlite' ? [sqlite] : [sqlite, postgres];
}

/**
 * The database of this vitest project (vitest.config.ts): the `postgres` project sets
 * DIWAN_TEST_ON=postgres and runs the API suite again on PostgreSQL; otherwise SQLite.
 */
export function projectDatabase(): TestDatabase {
  return process.env.DIWAN_TEST_ON === 'postgres' ? postgres : sqlite;
}

/**
 * `buildHost` on this project's database: what the API suite's files and helpers call instead of
 * core/host.ts's, so that one file runs on either database unchanged.
 */
export function buildHost(opts: HostOptions = {}): Promise<Host> {
  return projectDatabase().buildHost(opts);
}

/**
 * The database for hosts in other processes (the CLI, `diwan start`), as the environment they
 * get: nothing on SQLite (the file in their DATA_DIR), or DIWAN_DATABASE_URL naming a fresh
 * PostgreSQL database, which `drop()` removes. `hostOptions` opens the same in this process.
 */
export async function processDatabase(): Promise<{ env: Record<string, string>; hostOptions: HostOptions; drop(): Promise<void> }> {
  if (projectDatabase().name === 'sqlite') return { env: {}, hostOptions: {}, drop: async () => {} };
  const url = await testDatabaseUrl();
  return { env: { DIWAN_DATABASE_URL: url }, hostOptions: { databaseUrl: url }, drop: () => dropTestDatabase(url) };
}

/** Whether this project runs on PostgreSQL (for the few assertions about the SQLite file itself). */
export const onPostgres = (): boolean => projectDatabase().name === 'postgres';
