// One boot, measured from inside: run as a child process by bench/boot.ts.
//   DATA_DIR=<dir> node --import tsx bench/lib/boot-child.ts host   the host with every app available
//   node --import tsx bench/lib/boot-child.ts bare                  bare Fastify, one route
// Reports over IPC, once listening on 127.0.0.1: milliseconds since the process started
// (performance.now() counts from the process's time origin) at each step, and memory.
export interface BootReport {
  mode: 'host' | 'bare';
  port: number;
  /** Entry script starting (after node and the tsx loader came up). */
  scriptMs: number;
  /** Modules imported (host: core/host.ts and all it pulls in; bare: fastify). */
  importedMs: number;
  /** buildHost resolved / Fastify instance ready. */
  builtMs: number;
  listeningMs: number;
  rss: number;
  heapUsed: number;
  external: number;
  apps?: number;
  companies?: number;
  refused?: number;
}

const scriptMs = performance.now();
const mode = process.argv[2] as 'host' | 'bare';
let report: BootReport;

if (mode === 'host') {
  const { buildHost } = await import('../../core/host.ts');
  const importedMs = performance.now();
  const host = await buildHost({ logger: false });
  const builtMs = performance.now();
  await host.app.listen({ port: 0, host: '127.0.0.1' });
  const listeningMs = performance.now();
  const address = host.app.server.address();
  const mem = process.memoryUsage();
  report = {
    mode, port: typeof address === 'object' && address ? address.port : 0,
    scriptMs, importedMs, builtMs, listeningMs, rss: mem.rss, heapUsed: mem.heapUsed, external: mem.external,
    apps: host.runtime.list().length,
    companies: (await host.companies.list()).length,
  };
  process.once('SIGTERM', async () => {
    await host.close();
    process.exit(0);
  });
} else if (mode === 'bare') {
  const { default: Fastify } = await import('fastify');
  const importedMs = performance.now();
  const app = Fastify({ logger: false });
  app.get('/', async () => ({ ok: true }));
  await app.ready();
  const builtMs = performance.now();
  await app.listen({ port: 0, host: '127.0.0.1' });
  const listeningMs = performance.now();
  const address = app.server.address();
  const mem = process.memoryUsage();
  report = {
    mode, port: typeof address === 'object' && address ? address.port : 0,
    scriptMs, importedMs, builtMs, listeningMs, rss: mem.rss, heapUsed: mem.heapUsed, external: mem.external,
  };
  process.once('SIGTERM', async () => {
    await app.close();
    process.exit(0);
  });
} else {
  throw new Error('usage: boot-child.ts host|bare');
}
process.send?.(report);
