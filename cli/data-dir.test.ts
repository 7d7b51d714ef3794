// How a command finds the data folder from any folder (cli/data-dir.ts): the flag, the
// environment, the Diwan checkout it runs in, the diwan package it belongs to; and the refusal
// when the folder found holds no database.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { chooseDataDir, diwanCheckoutOf, requireDatabase } from './data-dir.ts';
import { isUsageError } from './output.ts';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'diwan-data-dir-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

/** A folder with a package.json of that name. */
function project(name: string): string {
  const dir = path.join(root, name);
  fs.mkdirSync(path.join(dir, 'src'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name }));
  return dir;
}

describe('chooseDataDir', () => {
  const checkout = project('diwan');
  const app = project('my-notes');
  const pkg = path.join(root, 'installed-diwan');

  it('takes --data-dir first, then DIWAN_DATA_DIR, then DATA_DIR, each relative to the current folder', () => {
    const env = { DIWAN_DATA_DIR: 'new', DATA_DIR: 'old' };
    expect(chooseDataDir('here', env, app, pkg)).toEqual({ dir: path.join(app, 'here'), source: 'flag' });
    expect(chooseDataDir(undefined, env, app, pkg)).toEqual({ dir: path.join(app, 'new'), source: 'env' });
    expect(chooseDataDir(undefined, { DATA_DIR: '/srv/diwan' }, app, pkg)).toEqual({ dir: '/srv/diwan', source: 'env' });
    expect(chooseDataDir(' ', { DIWAN_DATA_DIR: '' }, app, pkg).source, 'empty means unset').toBe('package');
  });

  it("uses the data/ of the Diwan checkout it runs in (from any folder inside), else the data/ of the diwan package it belongs to", () => {
    expect(chooseDataDir(undefined, {}, path.join(checkout, 'src'), pkg)).toEqual({ dir: path.join(checkout, 'data'), source: 'checkout' });
    expect(diwanCheckoutOf(path.join(checkout, 'src'))).toBe(checkout);
    // An app's own project is the nearest package.json: not a checkout, even inside one.
    expect(diwanCheckoutOf(app)).toBeUndefined();
    expect(chooseDataDir(undefined, {}, path.join(app, 'src'), pkg)).toEqual({ dir: path.join(pkg, 'data'), source: 'package' });
  });
});

describe('requireDatabase', () => {
  const refusal = (f: () => void) => {
    try {
      f();
    } catch (err) {
      return err;
    }
    throw new Error('not refused');
  };

  it('refuses a folder without diwan.db with one line naming --data-dir, as a usage error, and creates nothing', () => {
    const dir = path.join(root, 'nothing-here', 'data');
    const found = refusal(() => requireDatabase({ dir, source: 'package' }, {}, 'en'));
    expect(isUsageError(found)).toBe(true);
    const detail = (found as { details: Record<string, unknown>[] }).details[0];
    expect(detail).toMatchObject({ in: 'argv', pointer: '--data-dir', rule: 'noDatabase', dataDir: dir, source: 'package' });
    expect(String(detail.message)).toContain('--data-dir');
    expect(String(detail.message)).not.toContain('\n');
    expect(fs.existsSync(path.dirname(dir))).toBe(false);

    const named = refusal(() => requireDatabase({ dir, source: 'flag' }, {}, 'ar'));
    expect(String((named as { details: Record<string, unknown>[] }).details[0].message)).toMatch(/^لا توجد قاعدة بيانات ديوان في .*--data-dir/);
  });

  it('accepts a folder holding diwan.db, and any folder when the database is on PostgreSQL', () => {
    const dir = path.join(root, 'with-db');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'diwan.db'), '');
    expect(() => requireDatabase({ dir, source: 'env' }, {}, 'en')).not.toThrow();
    expect(() => requireDatabase({ dir: path.join(root, 'none'), source: 'env' }, { DIWAN_DATABASE_URL: 'postgres://x@127.0.0.1/db' }, 'en')).not.toThrow();
  });
});
