// The subject of bench/http.ts: the real host (buildHost) over the seeded data folder, serving
// invoicing and the manifest-only bench app, listening on 127.0.0.1 on a free port. Reports
// `{ port }` over IPC once listening; closes on SIGTERM.
//   DATA_DIR=<seeded dir> node --import tsx bench/lib/host-server.ts <apps dir>
import { buildHost } from '../../core/host.ts';
import { httpBenchSources } from './http-data.ts';

const dataDir = process.env.DATA_DIR;
const appsDir = process.argv[2];
if (!dataDir || !appsDir) throw new Error('usage: DATA_DIR=<dir> host-server.ts <apps dir>');

const host = await buildHost({ config: { dataDir, rateLimitPerMinute: 0 }, sources: httpBenchSources(appsDir), logger: false });
await host.app.listen({ port: 0, host: '127.0.0.1' });
const address = host.app.server.address();
const port = typeof address === 'object' && address ? address.port : 0;
process.send?.({ port, pid: process.pid });

process.once('SIGTERM', async () => {
  await host.close();
  process.exit(0);
});
