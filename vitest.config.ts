import path from 'node:path';
import { defineConfig } from 'vitest/config';

const root = import.meta.dirname;

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
    exclude: ['node_modules/**', 'data/**', '.tmp/**'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Forks keep better-sqlite3 and piscina workers out of vitest's own worker threads.
    pool: 'forks',
  },
});
