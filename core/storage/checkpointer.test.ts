// The write-ahead log is checkpointed by the worker connection, not inside the writer's COMMIT;
// a worker that cannot run hands checkpoints back to the writer.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { BACKSTOP_PAGES, Checkpointer, LOG_LIMIT_BYTES, logFilePages } from './checkpointer.ts';
import { SqliteDb } from './sqlite.ts';
import { sleep, until } from '../../test/webhooks-kit.ts';

const dirs: string[] = [];
const tmpFile = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'diwan-ckpt-'));
  dirs.push(dir);
  return path.join(dir, 'db.sqlite');
};
afterEach(() => dirs.splice(0).forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

describe('Checkpointer', () => {
  it('copies the log into the database on its worker once the log file reaches the threshold, then after later commits', async () => {
    const file = tmpFile();
    const conn = new Database(file);
    conn.pragma('journal_mode = WAL');
    conn.pragma('wal_autocheckpoint = 0');
    conn.exec('CREATE TABLE t (v TEXT)');
    const onFailure = () => expect.fail('the worker should run');
    const cp = new Checkpointer(file, { onFailure, pages: 16 });
    // Frames in the log now (a PASSIVE checkpoint that finds the worker's work done copies nothing).
    const frames = () => (conn.pragma('wal_checkpoint(PASSIVE)') as { log: number }[])[0].log;
    try {
      conn.prepare('INSERT INTO t VALUES (?)').run('small');
      cp.committed();
      await sleep(250);
      expect(cp.count).toBe(0);

      const insert = conn.prepare('INSERT INTO t VALUES (?)');
      conn.transaction(() => {
        for (let i = 0; i < 200; i++) insert.run('x'.repeat(1000));
      })();
      const size = logFilePages(file);
      expect(size).toBeGreaterThan(16);
      cp.committed();
      await until(() => cp.count === 1, 5000, 'a checkpoint');
      // All copied: the next write starts the log over, in the same file, which keeps its size.
      insert.run('after');
      expect(frames()).toBeLessThan(16);
      expect(logFilePages(file)).toBe(size);
      // The file is large now: a small commit is checkpointed too.
      insert.run('later');
      cp.committed();
      await until(() => cp.count === 2, 5000, 'a second checkpoint');
    } finally {
      await cp.close();
      conn.close();
    }
    const again = new Database(file, { readonly: true });
    expect(again.prepare('SELECT count(*) FROM t').pluck().get()).toBe(203);
    again.close();
  });

  it('tells its owner when the worker cannot open the file, and stops asking it', async () => {
    // A log of 10 pages beside a "database" that is a folder: the worker's connection cannot open it.
    const file = tmpFile();
    fs.mkdirSync(file);
    fs.writeFileSync(`${file}-wal`, Buffer.alloc(10 * 4096));
    expect(logFilePages(file)).toBe(10);
    let failures = 0;
    const cp = new Checkpointer(file, { onFailure: () => failures++, pages: 1 });
    try {
      cp.committed();
      await until(() => failures === 1, 5000, 'the failure reported');
      cp.committed();
      await sleep(250);
      expect(failures).toBe(1);
      expect(cp.count).toBe(0);
    } finally {
      await cp.close();
    }
  });

  it('SqliteDb: another process that opens and closes the file leaves the live log and its index alone', async () => {
    // The checkpointer looks at the log after a commit, by a stat only (see logFilePages). This
    // passed with the earlier descriptor-based look too: the race it lost (SIGBUS) is narrow.
    const file = tmpFile();
    const db = new SqliteDb(file);
    try {
      await db.exec('CREATE TABLE t (v TEXT)');
      await db.run('INSERT INTO t VALUES (?)', ['before']);
      await sleep(250);
      const other = spawnSync(process.execPath, ['-e', `const D = require('better-sqlite3'); const c = new D(${JSON.stringify(file)}); c.prepare("INSERT INTO t VALUES ('other')").run(); c.close();`], { encoding: 'utf8' });
      expect(other.status, other.stderr).toBe(0);
      expect(fs.existsSync(`${file}-wal`) && fs.existsSync(`${file}-shm`)).toBe(true);
      await db.run('INSERT INTO t VALUES (?)', ['after']);
      expect(await db.all('SELECT v FROM t ORDER BY rowid')).toEqual([{ v: 'before' }, { v: 'other' }, { v: 'after' }]);
    } finally {
      await db.close();
    }
  });

  it('SqliteDb: a file database leaves checkpoints to the worker up to the backstop and keeps its log file below the limit; an in-memory one has no log', async () => {
    const file = tmpFile();
    const db = new SqliteDb(file);
    try {
      expect(await db.get<{ wal_autocheckpoint: number }>('PRAGMA wal_autocheckpoint')).toEqual({ wal_autocheckpoint: BACKSTOP_PAGES });
      expect(await db.get<{ journal_size_limit: number }>('PRAGMA journal_size_limit')).toEqual({ journal_size_limit: LOG_LIMIT_BYTES });
    } finally {
      await db.close();
    }
    // Closed last, the writer's connection still tidies the log away.
    expect(fs.existsSync(`${file}-wal`)).toBe(false);
    const mem = new SqliteDb(':memory:');
    expect(await mem.get<{ wal_autocheckpoint: number }>('PRAGMA wal_autocheckpoint')).toEqual({ wal_autocheckpoint: 1000 });
    await mem.close();
  });
});
