// A process that opens (and so migrates) the host's storage and closes it: several of these at
// once against one empty database are the concurrent starts core/storage/storage.test.ts checks.
// Usage: node --import tsx test/open-storage-process.ts <sqlite file> [postgres url]
import { openStorage } from '../core/storage/open.ts';
import { isCurrent, schemaGap } from '../core/storage/migrate.ts';

const [file, url] = process.argv.slice(2);
const storage = await openStorage({ file, url: url || undefined });
try {
  process.stdout.write(JSON.stringify({ current: isCurrent(await schemaGap(storage.db)) }));
} finally {
  await storage.close();
}
