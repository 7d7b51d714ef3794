// A host in its own process for the crash test of test/unit-of-work.test.ts, serving only the
// ledger app (test/ledger-app.ts) on a free loopback port:
//   node --import tsx test/unit-of-work-child.ts <db file or postgres:// URL> <data dir> <ledger app dir>
// Prints `port <n>` once listening; the test kills it with SIGKILL while a request runs.
import { buildHost } from '../core/host.ts';
import { validManifest } from '../core/apps/app-source.ts';
import { ledgerManifest } from './ledger-app.ts';

const [db, dataDir, appDir] = process.argv.slice(2);
const host = await buildHost({
  ...(db.startsWith('postgres') ? { databaseUrl: db } : { dbFile: db }),
  sources: [{ manifest: validManifest({ ...ledgerManifest(), server: 'server.ts' }), dir: appDir, origin: 'package' }],
  config: { dataDir, rateLimitPerMinute: 0 },
});
await host.app.listen({ port: 0, host: '127.0.0.1' });
const address = host.app.server.address();
process.stdout.write(`port ${typeof address === 'object' && address ? address.port : 0}\n`);
