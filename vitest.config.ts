import os from 'node:os';
import path from 'node:path';
import { defineConfig } from 'vitest/config';

const root = import.meta.dirname;
// Hosts under test seal webhook secrets with a key file of this run's own, never the user's.
const keyFile = path.join(os.tmpdir(), `diwan-test-keys-${process.pid}-${Date.now()}`, 'secret-keys.json');

// The package's own `diwan/sdk` export, as apps import it.
const resolve = {
  alias: [
    { find: /^diwan\/sdk\/testing$/, replacement: path.join(root, 'sdk/test-host.ts') },
    { find: /^diwan\/sdk$/, replacement: path.join(root, 'sdk/index.ts') },
  ],
};

const common = {
  exclude: ['node_modules/**', 'data/**', '.tmp/**', '.scratch/**'],
  testTimeout: 30_000,
  hookTimeout: 30_000,
  // Forks keep better-sqlite3 and piscina workers out of vitest's own worker threads.
  pool: 'forks' as const,
};

/**
 * The API suite, run a second time with every host on a fresh PostgreSQL database: the hosts
 * these files build come from test/db.ts's `buildHost` (directly, or through `makeHost` in
 * test/helpers.ts and test/webhooks-kit.ts), which DIWAN_TEST_ON=postgres points at PostgreSQL.
 *
 * A host a test restarts, or two hosts on one database, name the same `dbFile`: on PostgreSQL
 * that name stands for one database (test/db.ts).
 *
 * The CLI's files point their child processes at the same database (`processDatabase()`).
 *
 * Not here:
 * - test/openapi.test.ts, test/apps-doc.test.ts: the OpenAPI document and the apps' reference,
 *   built from the manifests (no database in what they check);
 * - sdk/test-host.test.ts: the SDK's in-memory test host for app authors;
 * - test/browser/*: the console in Chromium (its API calls are the suite's own, above);
 * - the files that choose their databases themselves (`databases()`, test/pg-hosts.ts): they run
 *   once, in the `sqlite` project, on both (core/storage/storage.test.ts, test/two-hosts.test.ts,
 *   cli/roles.test.ts, test/app-jobs.test.ts, test/zatca-submission-jobs.test.ts) or on PostgreSQL alone (test/change-feed.test.ts, test/shared-limits.test.ts,
 *   test/scheduler-workers.test.ts, test/webhooks-workers.test.ts, test/multi-process.test.ts);
 * - test/database-busy.test.ts: another connection holding the SQLite file's write lock;
 * - the files without a host (schemas, manifests, docs, strings, signing, app packaging).
 */
const onPostgres = [
  'test/api-*.test.ts',
  'test/app-lifecycle.test.ts',
  'test/catalogue-api.test.ts',
  'test/console-routes.test.ts',
  'test/event-sources.test.ts',
  'test/hardening-auth-throttle.test.ts',
  'test/hardening-client-errors.test.ts',
  'test/hardening-json-depth.test.ts',
  'test/hardening-timeouts.test.ts',
  'test/openapi-fuzz-findings.test.ts',
  'test/openapi-fuzz.test.ts',
  'test/operations.test.ts',
  'test/people.test.ts',
  'test/unit-of-work.test.ts',
  'test/app-context.test.ts',
  'test/app-secrets.test.ts',
  'test/secret-fields.test.ts',
  'test/security.test.ts',
  'test/webhooks-api.test.ts',
  'test/webhooks-cli.test.ts',
  'test/webhooks-consumer.test.ts',
  'test/webhooks-delivery.test.ts',
  'test/webhooks-events-api.test.ts',
  'test/webhooks-health.test.ts',
  'test/webhooks-idle.test.ts',
  'test/webhooks-limits.test.ts',
  'test/webhooks-listen.test.ts',
  'test/webhooks-standard.test.ts',
  'test/webhooks-stream.test.ts',
  'cli/cli.test.ts',
  'cli/users.test.ts',
  'core/apps/packages.test.ts',
  'core/webhooks/dispatcher.test.ts',
];

// An operator's DIWAN_DATABASE_URL never reaches a test: a host built without a database of its
// own (or a CLI child) would write into that database. The postgres project names its own.
const env = { DIWAN_KEY_FILE: process.env.DIWAN_KEY_FILE ?? keyFile, DIWAN_DATABASE_URL: '' };

export default defineConfig({
  resolve,
  test: {
    // Files run three at a time: most of a file's time is spent waiting (on child processes, the
    // browser, timers, the other database), so three keep two cores busy where one left one idle
    // (on 2 cores: 945 s with one, 492 s with two, 447 s with three).
    maxWorkers: Number(process.env.DIWAN_TEST_WORKERS ?? 3),
    // The PostgreSQL server of the tests that run on it (test/db.ts), once for both projects:
    // the root's global setup runs once, and each project sees what it provides.
    globalSetup: ['test/postgres-global-setup.ts'],
    projects: [
      { resolve, test: { ...common, name: 'sqlite', include: ['**/*.test.ts'], env } },
      // DIWAN_TEST_DATABASES=sqlite leaves PostgreSQL out altogether.
      ...(process.env.DIWAN_TEST_DATABASES === 'sqlite'
        ? []
        : [{ resolve, test: { ...common, name: 'postgres', include: onPostgres, env: { ...env, DIWAN_TEST_ON: 'postgres' } } }]),
    ],
  },
});
