// A host in its own process for the crash tests of apps' jobs: it runs the jobs due now and is
// killed by the test while one of them is under way.
//   node --import tsx test/jobs-child.ts <db file or postgres:// URL> <data dir> <jobs config JSON> <app dir>…
// Each app dir holds a manifest.json and its server.ts (test/fixtures.ts writeApp), or is a first-party app's id.
import fs from 'node:fs';
import path from 'node:path';
import { buildHost } from '../core/host.ts';
import { firstPartySources, validManifest } from '../core/apps/app-source.ts';

const [db, dataDir, jobs, ...dirs] = process.argv.slice(2);
const host = await buildHost({
  ...(db.startsWith('postgres') ? { databaseUrl: db } : { dbFile: db }),
  // A folder of a test app, or the id of a first-party app (`invoicing`).
  sources: dirs.map((dir) => fs.existsSync(path.join(dir, 'manifest.json'))
    ? { manifest: validManifest(JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'))), dir, origin: 'package' as const }
    : firstPartySources().find((s) => s.manifest.id === dir)!),
  config: { dataDir, rateLimitPerMinute: 0 },
  jobs: JSON.parse(jobs),
});
process.stdout.write('ready\n');
const ran = await host.jobRunner.runDue();
process.stdout.write(`ran ${ran} ${JSON.stringify([...host.jobRunner.outcomes])}\n`);
for (const r of await host.storage.db.all<{ id: string; last_error: string | null }>("SELECT id, last_error FROM app_jobs WHERE last_error IS NOT NULL")) process.stdout.write(`error ${r.id} ${r.last_error}\n`);
