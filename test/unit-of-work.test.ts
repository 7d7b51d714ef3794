// Every write of a request is one unit of work (issue 25): an app route that writes a document,
// an audit entry and an event and then throws leaves nothing in any table; without the throw the
// three commit in one transaction; a process killed between two writes of a request leaves all
// of its rows or none, every time.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildHost as buildHostOn, type Host } from '../core/host.ts';
import { REPO_ROOT } from '../core/apps/app-source.ts';
import { docTableName } from '../core/storage/repos/documents.ts';
import { openStorage, type Storage } from '../core/storage/open.ts';
import { buildHost, onPostgres, processDatabase } from './db.ts';
import { authHeaders, createKey, expectError } from './helpers.ts';
import { tempDir } from './fixtures.ts';
import { ledgerSource } from './ledger-app.ts';

const ENTRIES = docTableName('ledger', 'entry');

/** The rows a request left, by kind, for memos starting with `memo`. */
async function left(db: Storage['db'], companyId: string, memo: string) {
  const n = async (sql: string, ...args: unknown[]) => Number((await db.get<{ n: number }>(sql, args))!.n);
  return {
    entries: await n(`SELECT count(*) AS n FROM ${ENTRIES} WHERE company_id = ? AND data LIKE ?`, companyId, `%"memo":"${memo}%`),
    audit: await n("SELECT count(*) AS n FROM audit_log WHERE company_id = ? AND resource IN ('entries') AND after_json LIKE ?", companyId, `%${memo}%`),
    events: await n("SELECT count(*) AS n FROM outbox WHERE company_id = ? AND topic LIKE 'ledger.%' AND data LIKE ?", companyId, `%${memo}%`),
  };
}

/** Counts the transactions the database begins (a nested one is a savepoint, not counted), watching each driver's own connection. */
function countBegins(db: Storage['db']): () => number {
  let n = 0;
  const watch = (target: { exec?: unknown; query?: unknown }, method: 'exec' | 'query') => {
    const original = (target[method] as (...a: unknown[]) => unknown).bind(target);
    target[method] = (...a: unknown[]) => {
      if (typeof a[0] === 'string' && /^BEGIN\b/.test(a[0])) n++;
      return original(...a);
    };
  };
  const internals = db as unknown as { conn?: { exec: unknown }; pool?: { on(e: 'acquire', fn: (c: { query: unknown; watched?: boolean }) => void): void } };
  if (internals.conn) watch(internals.conn, 'exec');
  else internals.pool!.on('acquire', (c) => {
    if (!c.watched) watch(c, 'query');
    c.watched = true;
  });
  return () => n;
}

describe('one unit of work per request', () => {
  let host: Host;
  let root: string;
  let companyId: string;
  let headers: Record<string, string>;
  let begins: () => number;

  beforeAll(async () => {
    root = tempDir();
    host = await buildHost({ sources: [ledgerSource(root)], config: { rateLimitPerMinute: 0 } });
    companyId = (await host.createCompany({ name: 'Ledger Co', apps: ['ledger'] })).company.id;
    headers = { ...authHeaders((await createKey(host, companyId, { role: 'Member' })).key, companyId), 'content-type': 'application/json' };
    begins = countBegins(host.storage.db);
  });

  afterAll(async () => {
    await host.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  const post = (body: object) => host.app.inject({ method: 'POST', url: '/api/v1/ledger/post', headers, payload: body });

  it('a route that writes a document, an audit entry and an event and then throws leaves nothing in any table', async () => {
    const res = await post({ memo: 'thrown-away', fail: true });
    expectError(res, 409, 'CONFLICT');
    expect(await left(host.storage.db, companyId, 'thrown-away')).toEqual({ entries: 0, audit: 0, events: 0 });
  });

  it('the same route without the throw commits all three, in one transaction', async () => {
    const before = begins();
    const res = await post({ memo: 'kept' });
    expect(res.statusCode).toBe(200);
    // The entry, its create audit row and the route's own; the route's event and the audit trail's.
    expect(await left(host.storage.db, companyId, 'kept')).toEqual({ entries: 1, audit: 2, events: 1 });
    expect(begins() - before).toBe(1);
  });
});

describe('a process killed between two writes of a request', { timeout: 240_000 }, () => {
  const ROUNDS = 20;
  let root: string;
  let db: Awaited<ReturnType<typeof processDatabase>>;
  let target: string;
  let companyId: string;
  let headers: Record<string, string>;
  let appDir: string;

  beforeAll(async () => {
    // Inside the repository, so that the app's `diwan/sdk` import resolves in the child process
    // (the package's own export) as it does for a packed app.
    fs.mkdirSync(path.join(REPO_ROOT, '.tmp'), { recursive: true });
    root = fs.mkdtempSync(path.join(REPO_ROOT, '.tmp', 'uow-'));
    db = await processDatabase();
    const file = path.join(root, 'diwan.db');
    target = onPostgres() ? db.env.DIWAN_DATABASE_URL : file;
    const source = ledgerSource(root);
    appDir = source.dir;
    // On the very database the child opens (test/db.ts's buildHost would make a fresh one).
    const setup = await buildHostOn({ ...(onPostgres() ? db.hostOptions : { dbFile: file }), sources: [source], config: { dataDir: root, rateLimitPerMinute: 0 } });
    companyId = (await setup.createCompany({ name: 'Crash Co', apps: ['ledger'] })).company.id;
    headers = { ...authHeaders((await createKey(setup, companyId, { role: 'Member' })).key, companyId), 'content-type': 'application/json' };
    await setup.close();
  });

  afterAll(async () => {
    await db.drop();
    fs.rmSync(root, { recursive: true, force: true });
  });

  /** Starts the child host; resolves with it and its port once it listens. */
  function child(): Promise<{ proc: ChildProcess; port: number; lines: string[] }> {
    const proc = spawn(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'test/unit-of-work-child.ts'), target, root, appDir], {
      cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...db.env },
    });
    const lines: string[] = [];
    return new Promise((resolve, reject) => {
      let buf = '';
      proc.stdout!.on('data', (d: Buffer) => {
        buf += d.toString();
        for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
          const line = buf.slice(0, i);
          buf = buf.slice(i + 1);
          lines.push(line);
          const port = /^port (\d+)$/.exec(line);
          if (port) resolve({ proc, port: Number(port[1]), lines });
        }
      });
      proc.once('exit', (code) => reject(new Error(`the child host exited (${code}) before listening`)));
    });
  }

  it(`leaves all of its rows or none, ${ROUNDS} times out of ${ROUNDS}`, async () => {
    const outcomes: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const { proc, port, lines } = await child();
      const memo = `crash-${round}-`;
      const exited = new Promise((r) => proc.once('exit', r));
      // The request waits 40 ms between its two entries; the kill lands 0–80 ms after the first.
      let answer = '';
      void fetch(`http://127.0.0.1:${port}/api/v1/ledger/post`, { method: 'POST', headers, body: JSON.stringify({ memo, pauseMs: 40 }) })
        .then(async (r) => (answer = `${r.status} ${await r.text()}`))
        .catch(() => {});
      const until = Date.now() + 20_000;
      await new Promise<void>((resolve, reject) => {
        const seen = () =>
          lines.includes(`between ${memo}`) ? resolve()
          : Date.now() > until ? (proc.kill('SIGKILL'), reject(new Error(`the request never reached its first write: ${answer} ${lines.join(' | ')}`)))
          : setTimeout(seen, 1);
        seen();
      });
      await new Promise((r) => setTimeout(r, (round * 37) % 81));
      proc.kill('SIGKILL');
      await exited;
      const storage = await openStorage(onPostgres() ? { file: '', url: target } : { file: target });
      try {
        const rows = await left(storage.db, companyId, memo);
        outcomes.push(rows.entries === 0 ? 'none' : 'all');
        expect([{ entries: 0, audit: 0, events: 0 }, { entries: 2, audit: 3, events: 1 }], `round ${round}`).toContainEqual(rows);
      } finally {
        await storage.close();
      }
    }
    console.log(`killed ${ROUNDS} times: ${outcomes.filter((o) => o === 'none').length} left nothing, ${outcomes.filter((o) => o === 'all').length} left everything`);
  });
});
