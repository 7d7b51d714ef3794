// `npm start`: the host on PORT (default 3000) with its database under DATA_DIR (default
// ./data), created and migrated on first start.
import { buildHost } from './host.ts';

const host = await buildHost({ logger: true });
const { port, host: address, dataDir } = host.config;
await host.app.listen({ port, host: address });
host.app.log.info(`Diwan is listening on http://localhost:${port} (data in ${dataDir}); API at /api/v1, OpenAPI at /api/v1/openapi.json`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, async () => {
    host.app.log.info(`${signal}: finishing in-flight work`);
    await host.close();
    process.exit(0);
  });
}
