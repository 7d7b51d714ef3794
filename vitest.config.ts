import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['**/*.test.ts'],
    exclude: ['node_modules/**', 'data/**'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Forks keep better-sqlite3 and piscina workers out of vitest's own worker threads.
    pool: 'forks',
  },
});
