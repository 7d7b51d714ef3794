// `diwan start`, `diwan serve`, `diwan worker`: the server, as `npm start` runs it (core/main.ts:
// PORT, HOST, DIWAN_DATA_DIR, DIWAN_DATABASE_URL, logs on stdout), with the process roles of
// core/kernel/config.ts: `start` both (or DIWAN_ROLES), `serve` the API only, `worker` fan-out,
// delivery and the scheduler only (it still answers /healthz, /readyz and /metrics on its port).
// Any number of each run against one database. With `--json` the CLI prints one JSON document
// once listening — where, with which data and roles — and nothing else on stdout. These
// commands create the data folder and its database when missing, and say so; an API process
// records where it listens in the folder (core/kernel/server-record.ts) for the CLI's links.
import path from 'node:path';
import { DEFAULT_HOST } from '../../core/kernel/config.ts';
import { listenUrl, localUrl, removeServerRecord, writeServerRecord } from '../../core/kernel/server-record.ts';
import { hasDatabase } from '../data-dir.ts';
import { say, write, type CliString } from '../output.ts';
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
          host: { type: 'string', value: 'address', description: `Address to bind (default env HOST or ${DEFAULT_HOST}, loopback only; 0.0.0.0 for every interface, as in a container)` },
        },
        examples: kind.examples,
        async run(ctx) {
          const port = ctx.opts.port === '0' ? 0 : ctx.opts.port === undefined ? undefined : intOption(ctx, 'port', 3000);
          // Both names: the host reads DIWAN_DATA_DIR first, which may hold another folder than --data-dir.
          process.env.DIWAN_DATA_DIR = process.env.DATA_DIR = ctx.dataDir;
          const created = !hasDatabase(ctx.dataDir, process.env);
          if (port !== undefined) process.env.PORT = String(port);
          if (ctx.opts.host) process.env.HOST = String(ctx.opts.host);
          if (kind.roles) process.env.DIWAN_ROLES = kind.roles;
          if (!ctx.json) {
            if (created) await write(process.stdout, say(ctx.lang, 'data.created', { dir: ctx.dataDir }));
            await loadsTypeScript();
            await import('../../core/main.ts');
            return { data: null, text: '', keepAlive: true };
          }
          // Built by main.ts (after PORT, HOST and the roles are set above), and kept open: the command keeps running.
          const host = await ctx.host();
          await host.app.listen({ port: host.config.port, host: host.config.host });
          const addr = host.app.server.address();
          const actual = typeof addr === 'object' && addr ? addr.port : host.config.port;
          const url = listenUrl(host.config.host, actual);
          const recorded = host.config.roles.api && writeServerRecord(host.config.dataDir, process.env.DIWAN_PUBLIC_URL?.trim() ? host.config.publicUrl : localUrl(host.config.host, actual));
          for (const signal of ['SIGINT', 'SIGTERM'] as const) {
            process.once(signal, async () => {
              if (recorded) removeServerRecord(host.config.dataDir);
              await host.close();
              process.exit(0);
            });
          }
          const { redactUrl } = await import('../../core/storage/open.ts');
          const roles = (['api', 'worker'] as const).filter((r) => host.config.roles[r]);
          // As `diwan migrate` names it: the URL without its password, or the SQLite file.
          const database = host.config.databaseUrl ? redactUrl(host.config.databaseUrl) : path.join(host.config.dataDir, 'diwan.db');
          const data = { url, port: actual, host: host.config.host, dataDir: host.config.dataDir, createdDataDir: created, database, roles, pid: process.pid };
          return { data, text: say(ctx.lang, kind.listening, data), keepAlive: true };
        },
      },
    ],
  };
}

export const start = serverCommand({
  name: 'start',
  summary: 'Run the server: the API and the worker in one process (PORT, HOST, DIWAN_DATA_DIR; stop with Ctrl-C); creates the data folder when missing',
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
