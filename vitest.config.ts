import os from 'node:os';
import path from 'node:path';
import { defineConfig } from 'vitest/config';

const root = import.meta.dirname;
// Hosts under test seal webhook secrets with a key file of this run's own, never the user's.
const keyFile = path.join(os.tmpdir(), `diwan-test-keys-${process.pid}-${Date.now()}`, 'secret-keys.json');

export default defineConfig({
  resolve: {
    // The package's own `diwan/sdk` export, as apps import it.
    alias: [
      { find: /^diwan\/sdk\/testing$/, replacement: path.join(root, 'sdk/test-host.ts') },
      { find: /^diwan\/sdk$/, replacement: path.join(root, 'sdk/index.ts') },
    ],
  },
  test: {
    include: ['**/*.test.ts'],
    exclude: ['node_modules/**', 'data/**', '.tmp/**', '.scratch/**'],
    env: { DIWAN_KEY_FILE: process.env.DIWAN_KEY_FILE ?? keyFile },
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Forks keep better-sqlite3 and piscina workers out of vitest's own worker threads.
    pool: 'forks',
    // The PostgreSQL server of the tests that run on both databases (test/db.ts).
    globalSetup: ['test/postgres-global-setup.ts'],
  },
});
