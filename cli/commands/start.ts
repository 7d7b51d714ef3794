// `diwan start`, `diwan serve`, `diwan worker`: the server, as `npm start` runs it (core/main.ts:
// PORT, DATA_DIR, DIWAN_DATABASE_URL, logs on stdout), with the process roles of
// core/kernel/config.ts: `start` both (or DIWAN_ROLES), `serve` the API only, `worker` fan-out,
// delivery and the scheduler only (it still answers /healthz, /readyz and /metrics on its port).
// Any number of each run against one database. With `--json` the CLI prints one JSON document
// once listening — where, with which data and roles — and nothing else on stdout.
import path from 'node:path';
import { say, type CliString } from '../output.ts';
import { intOption, type CommandGroup } from './command.ts';
import { loadsTypeScript } from '../typescript.ts';

interface ServerKind {
  name: string;
  summary: string;
  /** DIWAN_ROLES for this command; undefined keeps the environment's (default both). */
  roles?: 'api' | 'worker';
  listening: CliString;
  examples: string[];
}

function serverCommand(kind: ServerKind): CommandGroup {
  return {
    name: kind.name,
    summary: kind.summary,
    commands: [
      {
        name: '',
        summary: kind.summary,
        options: {
          port: { type: 'string', value: 'n', description: 'Port to listen on (default env PORT or 3000; 0 picks a free one)' },
          host: { type: 'string', value: 'address', description: 'Address to bind (default env HOST or 0.0.0.0)' },
        },
        examples: kind.examples,
        async run(ctx) {
          const port = ctx.opts.port === '0' ? 0 : ctx.opts.port === undefined ? undefined : intOption(ctx, 'port', 3000);
          process.env.DATA_DIR = ctx.dataDir;
          if (port !== undefined) process.env.PORT = String(port);
          if (ctx.opts.host) process.env.HOST = String(ctx.opts.host);
          if (kind.roles) process.env.DIWAN_ROLES = kind.roles;
          if (!ctx.json) {
            await loadsTypeScript();
            await import('../../core/main.ts');
            return { data: null, text: '', keepAlive: true };
          }
          // Built by main.ts (after PORT, HOST and the roles are set above), and kept open: the command keeps running.
          const host = await ctx.host();
          await host.app.listen({ port: host.config.port, host: host.config.host });
          const addr = host.app.server.address();
          const actual = typeof addr === 'object' && addr ? addr.port : host.config.port;
          const local = ['0.0.0.0', '::'].includes(host.config.host) ? 'localhost' : host.config.host;
          for (const signal of ['SIGINT', 'SIGTERM'] as const) {
            process.once(signal, async () => {
              await host.close();
              process.exit(0);
            });
          }
          const { redactUrl } = await import('../../core/storage/open.ts');
          const roles = (['api', 'worker'] as const).filter((r) => host.config.roles[r]);
          // As `diwan migrate` names it: the URL without its password, or the SQLite file.
          const database = host.config.databaseUrl ? redactUrl(host.config.databaseUrl) : path.join(host.config.dataDir, 'diwan.db');
          const data = { url: `http://${local}:${actual}`, port: actual, host: host.config.host, dataDir: host.config.dataDir, database, roles, pid: process.pid };
          return { data, text: say(ctx.lang, kind.listening, data), keepAlive: true };
        },
      },
    ],
  };
}

export const start = serverCommand({
  name: 'start',
  summary: 'Run the server: the API and the worker in one process (PORT, DATA_DIR; stop with Ctrl-C)',
  listening: 'start.listening',
  examples: ['diwan start', 'PORT=8080 diwan start'],
});

export const serve = serverCommand({
  name: 'serve',
  summary: 'Run the API only; run any number behind a load balancer, with workers beside them',
  roles: 'api',
  listening: 'serve.listening',
  examples: ['PORT=3001 diwan serve', 'DIWAN_DATABASE_URL=postgres://diwan@127.0.0.1/diwan diwan serve --port 3002'],
});

export const worker = serverCommand({
  name: 'worker',
  summary: 'Run the worker only: event fan-out, webhook delivery, the scheduler (health and metrics on PORT)',
  roles: 'worker',
  listening: 'worker.listening',
  examples: ['PORT=3009 diwan worker'],
});
