// A second host on the same SQLite file (or PostgreSQL database), in its own process, for
// test/event-sources.test.ts:
//   node --import tsx test/schedule-host-child.ts <db file or postgres:// URL> <data dir> <clock ms>
// Serves only the invoicing app. Answers over IPC: `{ ready }` once built, `{ fired }` for each
// `{ tickAt }` message (the scheduler's tick at the given clock, run at that wall-clock instant),
// and exits on `close`.
import fs from 'node:fs';
import path from 'node:path';
import { buildHost } from '../core/host.ts';
import { ManualClock } from '../core/kernel/clock.ts';
import { REPO_ROOT, validManifest } from '../core/apps/app-source.ts';

const [file, dataDir, nowMs] = process.argv.slice(2);
const manifest = validManifest(JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'manifests/invoicing.json'), 'utf8')));
const host = await buildHost({
  ...(file.startsWith('postgres') ? { databaseUrl: file } : { dbFile: file }),
  clock: new ManualClock(Number(nowMs)),
  sources: [{ manifest, dir: path.join(REPO_ROOT, 'apps-installed', 'invoicing'), origin: 'first-party' }],
  config: { dataDir },
});
process.on('message', (m: { tickAt?: number; close?: boolean }) => {
  if (m.tickAt) {
    // At the agreed instant, so that both hosts tick at once.
    setTimeout(() => {
      host.scheduler.tick().then(
        (fired) => process.send!({ fired }),
        (err: Error) => process.send!({ error: err.message }),
      );
    }, Math.max(0, m.tickAt - Date.now()));
  }
  if (m.close) void host.close().then(() => process.exit(0));
});
process.send!({ ready: true });
