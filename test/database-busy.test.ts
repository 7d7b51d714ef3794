// A database that cannot take a write at that moment answers 503 SERVICE_UNAVAILABLE with
// Retry-After, in the caller's language, never a 500: here another connection holds the SQLite
// file's write lock past the host's busy timeout (as the CLI or a second server can). Nothing is
// written, and the same request succeeds once the lock is gone.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Host } from '../core/host.ts';
import { isTransientDbError } from '../core/storage/transient.ts';
import { createCompany, expectError, makeHost, type TestCompany } from './webhooks-kit.ts';

describe('a busy database', () => {
  let dir: string;
  let host: Host;
  let co: TestCompany;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'diwan-busy-'));
    host = await makeHost({ dbFile: path.join(dir, 'diwan.db'), config: { dataDir: dir } });
    co = await createCompany(host);
  });
  afterAll(async () => {
    await host?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('answers a write 503 SERVICE_UNAVAILABLE with Retry-After while another connection holds the write lock, and 201 after', async () => {
    const other = new Database(path.join(dir, 'diwan.db'));
    other.exec('BEGIN IMMEDIATE');
    let res;
    try {
      // Waits the busy timeout (5 s), then gives up.
      res = await co.as().post('/api/v1/customers', { name: 'Waits' }, { 'accept-language': 'ar' });
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    const err = expectError(res, 503, 'SERVICE_UNAVAILABLE');
    expect(res.headers['retry-after']).toBe('1');
    expect(res.headers['content-language']).toBe('ar');
    expect(err.message).toBe('الخدمة مشغولة؛ أعد المحاولة بعد 1 ثانية.');
    expect(err.details).toEqual([{ reason: 'database_busy' }]);
    expect((await co.as().get('/api/v1/customers')).json().total).toBe(0);

    const again = await co.as().post('/api/v1/customers', { name: 'Waits' });
    expect(again.statusCode, again.body).toBe(201);
  }, 20_000);

  it("knows each database's 'not now' from its faults", () => {
    for (const code of ['SQLITE_BUSY', 'SQLITE_BUSY_SNAPSHOT', '40001', '40P01', '55P03', '53300']) expect(isTransientDbError(Object.assign(new Error('x'), { code }))).toBe(true);
    expect(isTransientDbError(new Error('timeout exceeded when trying to connect'))).toBe(true);
    for (const code of ['SQLITE_CONSTRAINT_UNIQUE', '23505', '42P01', undefined]) expect(isTransientDbError(Object.assign(new Error('x'), { code }))).toBe(false);
  });
});
