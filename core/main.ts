// The server as `npm start` and `diwan start` run it (cli/commands/start.ts): the host on PORT
// (default 3000) of HOST (default 127.0.0.1, loopback) with its database under DIWAN_DATA_DIR
// (default ./data), created and migrated on first start; where it listens is recorded in the
// data folder (`server.json`) for the CLI's links, and removed on a clean stop. A start that cannot succeed (a wrong setting, a busy port) stops with one line saying
// why and a non-zero exit code.
import type { AddressInfo } from 'node:net';
import { buildHost, type Host } from './host.ts';
import { loadConfig, type HostConfig } from './kernel/config.ts';
import { startFailureLine } from './start-failure.ts';
import { consoleBundle } from './http/console-bundle.ts';
import { redactUrl } from './storage/open.ts';
import { localUrl, removeServerRecord, writeServerRecord } from './kernel/server-record.ts';

function fail(err: unknown, config?: HostConfig): never {
  const line = startFailureLine(err, config);
  console.error(line ? `diwan: ${line}` : err);
  process.exit(1);
}

let config: HostConfig;
let host: Host;
try {
  config = loadConfig();
} catch (err) {
  fail(err);
}
try {
  host = await buildHost({ logger: true, config });
} catch (err) {
  fail(err, config);
}
try {
  await host.app.listen({ port: config.port, host: config.host });
} catch (err) {
  await host.close().catch(() => {});
  fail(err, config);
}
// The port actually bound, which differs from PORT when PORT=0 asks for any free one.
const { port } = host.app.server.address() as AddressInfo;
if (config.roles.api) {
  // The web console is bundled on first need; start now so the first visitor does not wait.
  consoleBundle().then(
    (b) => host.app.log.info(`console bundled in ${b.buildMs} ms`),
    (err) => host.app.log.error({ err }, 'the console could not be bundled'),
  );
}
// The CLI on this data folder prints links to this server (`diwan users create`): say where it is.
// A worker serves no pages; DIWAN_PUBLIC_URL, when set, is where people reach it.
const recorded = config.roles.api && writeServerRecord(config.dataDir, process.env.DIWAN_PUBLIC_URL?.trim() ? config.publicUrl : localUrl(config.host, port));
const roles = Object.entries(config.roles).filter(([, on]) => on).map(([r]) => r).join(', ');
const data = config.databaseUrl ? `database ${redactUrl(config.databaseUrl)}, ` : '';
// A worker alone serves no API, only its health and metrics.
const served = config.roles.api ? 'console at /, API at /api/v1, OpenAPI at /api/v1/openapi.json' : 'health at /healthz and /readyz, metrics at /metrics';
host.app.log.info(`Diwan is listening on ${localUrl(config.host, port)} (${data}data in ${config.dataDir}, roles ${roles}); ${served}`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, async () => {
    host.app.log.info(`${signal}: finishing in-flight work`);
    if (recorded) removeServerRecord(config.dataDir);
    await host.close();
    process.exit(0);
  });
}
