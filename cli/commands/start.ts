// `diwan start`: the server, as `npm start` runs it (core/main.ts: PORT, DATA_DIR, logs on
// stdout). With `--json` the CLI prints one JSON document once listening — where, and with
// which data — and nothing else on stdout.
import { say } from '../output.ts';
import { intOption, type CommandGroup } from './command.ts';

export const start: CommandGroup = {
  name: 'start',
  summary: 'Run the server (PORT, DATA_DIR; stop with Ctrl-C)',
  commands: [
    {
      name: '',
      summary: 'Run the server (PORT, DATA_DIR; stop with Ctrl-C)',
      options: {
        port: { type: 'string', value: 'n', description: 'Port to listen on (default env PORT or 3000; 0 picks a free one)' },
        host: { type: 'string', value: 'address', description: 'Address to bind (default env HOST or 0.0.0.0)' },
      },
      async run(ctx) {
        const port = ctx.opts.port === '0' ? 0 : ctx.opts.port === undefined ? undefined : intOption(ctx, 'port', 3000);
        process.env.DATA_DIR = ctx.dataDir;
        if (port !== undefined) process.env.PORT = String(port);
        if (ctx.opts.host) process.env.HOST = String(ctx.opts.host);
        if (!ctx.json) {
          await import('../../core/main.ts');
          return { data: null, text: '', keepAlive: true };
        }
        // Built by main.ts (after PORT and HOST are set above), and kept open: the command keeps running.
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
        const data = { url: `http://${local}:${actual}`, port: actual, host: host.config.host, dataDir: host.config.dataDir, pid: process.pid };
        return { data, text: say(ctx.lang, 'start.listening', data), keepAlive: true };
      },
    },
  ],
};
