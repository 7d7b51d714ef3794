// The `diwan` command: `diwan <group> [<command>] [args] [options]`. Like Frappe's bench, it
// works directly on the host's database (`--data-dir`), one command per run. A command opens
// only what it needs: the database with the small domain services for lists and keys (fast), or
// the whole host with every app (not listening) for what involves apps; main.ts closes what was
// opened. `--json` prints exactly one JSON document on stdout: the data, or
// `{ error: { code, message, details } }` (exit 1; a usage mistake exits 2 with a VALIDATION_ERROR).
//
// Every command module is loaded on every run, so this file and they import nothing heavy: the
// host (fastify, the manifests, the runtime), the storage driver and i18next load on demand.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { Lang, Translator } from '../core/kernel/i18n/i18n.ts';
import type { Host } from '../core/host.ts';
import type { AppServices, CoreServices, ServiceOptions, WebhookServices } from '../core/services.ts';
import { UsageError, envelope, exitCodeOf, isUsageError, json, say, write } from './output.ts';
import { CLI_ACTOR, type Command, type CommandContext, type CommandGroup, type CommandResult, type OptionSpec } from './commands/command.ts';
import { start, serve, worker } from './commands/start.ts';
import { migrate } from './commands/migrate.ts';
import { companies } from './commands/companies.ts';
import { keys } from './commands/keys.ts';
import { apps } from './commands/apps.ts';
import { audit } from './commands/audit.ts';
import { permissions } from './commands/permissions.ts';
import { app } from './commands/app.ts';
import { events } from './commands/events.ts';
import { webhooks } from './commands/webhooks.ts';
import { jobs } from './commands/jobs.ts';
import { listen } from './commands/listen.ts';
import { users } from './commands/users.ts';
import { secrets } from './commands/secrets.ts';
import { loadsTypeScript } from './typescript.ts';
import { CREATES_DATA, chooseDataDir, requireDatabase } from './data-dir.ts';
import { recordedPublicUrl } from './public-url.ts';

/** The languages of core/kernel/i18n (not imported from there: it loads i18next). */
const LANGUAGES = ['en', 'ar'] as const satisfies readonly Lang[];

export const GROUPS: CommandGroup[] = [start, serve, worker, migrate, companies, users, keys, apps, audit, permissions, events, webhooks, jobs, listen, secrets, app];

const GLOBAL_OPTIONS: Record<string, OptionSpec> = {
  'data-dir': {
    type: 'string',
    value: 'dir',
    description: "The host data folder (default: env DIWAN_DATA_DIR or DATA_DIR, else the data/ of the Diwan checkout run in, else of this diwan's own folder)",
  },
  json: { type: 'boolean', description: 'Print exactly one JSON document: the data, or { error }' },
  lang: { type: 'string', value: 'ar|en', choices: LANGUAGES, description: 'Language of messages (default: env DIWAN_LANG or en)' },
  help: { type: 'boolean', short: 'h', description: 'Show help for the command' },
};

type ParseOptions = NonNullable<ParseArgsConfig['options']>;

const toParse = (specs: Record<string, OptionSpec>): ParseOptions =>
  Object.fromEntries(Object.entries(specs).map(([k, o]) => [k, { type: o.type, ...(o.short ? { short: o.short } : {}) }]));

const commandPath = (g: CommandGroup, c: Command) => ['diwan', g.name, c.name].filter(Boolean).join(' ');

function optionUsage(name: string, o: OptionSpec): string {
  const flag = `--${name}${o.type === 'string' ? ` <${o.value ?? 'value'}>` : ''}`;
  return o.required ? flag : `[${flag}]`;
}

function optionLines(specs: Record<string, OptionSpec>): string[] {
  const rows = Object.entries(specs).map(([name, o]) => [`${o.short ? `-${o.short}, ` : '    '}--${name}${o.type === 'string' ? ` <${o.value ?? 'value'}>` : ''}`, `${o.description}${o.required ? ' (required)' : ''}`]);
  const w = Math.max(...rows.map((r) => r[0].length));
  return rows.map(([a, b]) => `  ${a.padEnd(w)}  ${b}`);
}

function commandHelp(g: CommandGroup, c: Command) {
  const args = (c.args ?? []).map((a) => (a.required ? `<${a.name}>` : `[<${a.name}>]`));
  const opts = Object.entries(c.options ?? {}).map(([n, o]) => optionUsage(n, o));
  const usage = [commandPath(g, c), ...args, ...opts, '[--json]'].join(' ');
  const lines = [`Usage: ${usage}`, '', c.summary];
  if (c.args?.length) {
    const w = Math.max(...c.args.map((a) => a.name.length + 2));
    lines.push('', 'Arguments:', ...c.args.map((a) => `  ${`<${a.name}>`.padEnd(w)}  ${a.description}`));
  }
  if (c.options && Object.keys(c.options).length) lines.push('', 'Options:', ...optionLines(c.options));
  lines.push('', 'Global options:', ...optionLines(GLOBAL_OPTIONS));
  if (c.examples?.length) lines.push('', 'Examples:', ...c.examples.map((e) => `  ${e}`));
  const data = {
    usage,
    summary: c.summary,
    args: c.args ?? [],
    options: Object.entries({ ...c.options, ...GLOBAL_OPTIONS }).map(([name, o]) => ({ name: `--${name}`, ...o })),
  };
  return { data, text: lines.join('\n') };
}

function groupHelp(g: CommandGroup) {
  const w = Math.max(...g.commands.map((c) => c.name.length));
  const text = [`Usage: diwan ${g.name} <command> [options]`, '', g.summary, '', 'Commands:', ...g.commands.map((c) => `  ${c.name.padEnd(w)}  ${c.summary}`), '', `Run "diwan ${g.name} <command> --help" for a command's options.`].join('\n');
  return { data: { usage: `diwan ${g.name} <command>`, summary: g.summary, commands: g.commands.map((c) => ({ name: c.name, summary: c.summary })) }, text };
}

function mainHelp() {
  const w = Math.max(...GROUPS.map((g) => g.name.length));
  const text = [
    'Usage: diwan <command> [options]',
    '',
    'Diwan: a multi-tenant business-platform host. The CLI works directly on the host data folder.',
    '',
    'Commands:',
    ...GROUPS.map((g) => `  ${g.name.padEnd(w)}  ${g.summary}${g.commands.length > 1 || g.commands[0].name ? ` (${g.commands.map((c) => c.name).join(', ')})` : ''}`),
    '',
    'Global options:',
    ...optionLines(GLOBAL_OPTIONS),
    '',
    'Run "diwan <command> --help" for more.',
  ].join('\n');
  return { data: { usage: 'diwan <command> [options]', commands: GROUPS.map((g) => ({ name: g.name, summary: g.summary, commands: g.commands.map((c) => c.name).filter(Boolean) })) }, text };
}

/** Every option any command knows, so that the first pass reads option values as values. */
function allOptions(): ParseOptions {
  const out: ParseOptions = toParse(GLOBAL_OPTIONS);
  for (const g of GROUPS) for (const c of g.commands) Object.assign(out, toParse(c.options ?? {}));
  return out;
}

function parseError(e: unknown, lang: Lang): UsageError {
  const err = e as Error & { code?: string };
  const option = /'(-[^']+)'/.exec(err.message)?.[1]?.split(/[ =,]/)[0] ?? '';
  const message = err.message.split('\n')[0];
  switch (err.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return new UsageError(option, 'unknownOption', say(lang, 'usage.unknownOption', { name: option }), { reason: message });
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      return new UsageError(option, 'optionValue', say(lang, 'usage.optionValue', { name: option }), { reason: message });
    default:
      return new UsageError(option, 'argv', say(lang, 'usage.parse', { message }));
  }
}

export interface Outcome {
  exitCode: number;
  keepAlive: boolean;
}

/** Runs one command line; prints its output; returns the exit code. */
export async function run(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<Outcome> {
  const first = parseArgs({ args: argv, options: allOptions(), strict: false, allowPositionals: true });
  const v = first.values as Record<string, string | boolean | undefined>;
  const asJson = v.json === true;
  const langValue = typeof v.lang === 'string' ? v.lang : env.DIWAN_LANG;
  const lang: Lang = LANGUAGES.includes(langValue as Lang) ? (langValue as Lang) : 'en';
  let tr: Translator | undefined;
  let host: Promise<Host> | undefined;
  let core: Promise<CoreServices> | undefined;
  let withApps: Promise<AppServices> | undefined;
  let withWebhooks: Promise<WebhookServices> | undefined;
  let keepAlive = false;

  const print = async (r: { data: unknown; text?: string }) => {
    await write(process.stdout, asJson ? json(r.data) : (r.text ?? json(r.data)));
  };

  try {
    if (typeof v.lang === 'string' && !LANGUAGES.includes(v.lang as Lang)) {
      throw new UsageError('--lang', 'enum', say(lang, 'usage.choice', { name: '--lang', values: LANGUAGES.join(', ') }), { allowed: [...LANGUAGES] });
    }
    const [groupName, subName, ...rest] = first.positionals;
    if (!groupName) {
      await print(mainHelp());
      return { exitCode: 0, keepAlive: false };
    }
    const group = GROUPS.find((g) => g.name === groupName);
    if (!group) throw new UsageError('command', 'unknownCommand', say(lang, 'usage.unknownCommand', { name: groupName }), { allowed: GROUPS.map((g) => g.name) });

    const single = group.commands.find((c) => c.name === '');
    let cmd: Command | undefined = single;
    let positionals = [subName, ...rest].filter((x) => x !== undefined);
    if (!single) {
      if (!subName) {
        if (v.help) {
          await print(groupHelp(group));
          return { exitCode: 0, keepAlive: false };
        }
        if (!asJson) await write(process.stderr, groupHelp(group).text);
        throw new UsageError('command', 'required', say(lang, 'usage.argument', { name: 'command' }), { allowed: group.commands.map((c) => c.name) });
      }
      cmd = group.commands.find((c) => c.name === subName);
      if (!cmd) throw new UsageError('command', 'unknownCommand', say(lang, 'usage.unknownCommand', { name: `${group.name} ${subName}` }), { allowed: group.commands.map((c) => c.name) });
      positionals = rest;
    }
    if (v.help) {
      await print(commandHelp(group, cmd!));
      return { exitCode: 0, keepAlive: false };
    }

    // Second pass: only this command's options, strictly.
    let values: Record<string, string | boolean | undefined>;
    try {
      values = parseArgs({ args: argv, options: { ...toParse(GLOBAL_OPTIONS), ...toParse(cmd!.options ?? {}) }, strict: true, allowPositionals: true }).values as typeof values;
    } catch (e) {
      throw parseError(e, lang);
    }
    const args: Record<string, string | undefined> = {};
    (cmd!.args ?? []).forEach((a, i) => {
      args[a.name] = positionals[i];
      if (a.required && positionals[i] === undefined) throw new UsageError(`<${a.name}>`, 'required', say(lang, 'usage.argument', { name: a.name }));
    });
    const extra = positionals[(cmd!.args ?? []).length];
    if (extra !== undefined) throw new UsageError(extra, 'unexpectedArgument', say(lang, 'usage.extra', { name: extra }));
    for (const [name, o] of Object.entries(cmd!.options ?? {})) {
      const val = values[name];
      if (o.required && (val === undefined || val === '')) throw new UsageError(`--${name}`, 'required', say(lang, 'usage.required', { name: `--${name}` }));
      if (o.choices && typeof val === 'string' && !o.choices.includes(val)) {
        throw new UsageError(`--${name}`, 'enum', say(lang, 'usage.choice', { name: `--${name}`, values: o.choices.join(', ') }), { allowed: [...o.choices], value: val });
      }
    }

    const where = chooseDataDir(values['data-dir'] as string | undefined, env);
    const dataDir = where.dir;
    // Checked when a command opens the data, so commands that need none (help, app, listen) run anywhere.
    const needsDatabase = () => {
      if (!CREATES_DATA.has(group.name)) requireDatabase(where, env, lang);
    };
    // The links the CLI prints (`users create`) name the running server, not the default port; a
    // server being started (start --json) keeps its own, and DIWAN_PUBLIC_URL wins over both.
    const recorded = (env.DIWAN_PUBLIC_URL?.trim() || CREATES_DATA.has(group.name)) ? undefined : recordedPublicUrl(dataDir);
    const config = { dataDir, ...(recorded ? { publicUrl: recorded } : {}) };
    const ctx: CommandContext = {
      services: ((needs: { apps?: boolean; webhooks?: boolean } = {}) => {
        if (host) return host;
        needsDatabase();
        const opts: ServiceOptions = { config };
        const root = import('../core/services.ts');
        core ??= root.then((m) => m.coreServices(opts));
        if (!needs.apps && !needs.webhooks) return core;
        const apps = () => (withApps ??= loadsTypeScript().then(async () => (await root).withApps(await core!, opts)));
        if (!needs.webhooks) return apps();
        // Webhooks on the database alone: the apps load only when a topic is first checked (add, update).
        withWebhooks ??= core.then(async (c) => (await root).withWebhooks(c, opts, apps));
        return withWebhooks;
      }) as CommandContext['services'],
      host: () => {
        needsDatabase();
        return (host ??= loadsTypeScript().then(() => import('../core/host.ts')).then(async ({ buildHost }) => {
          const h = await buildHost({ config, logger: false });
          tr = h.tr;
          return h;
        }));
      },
      args, opts: values, lang, json: asJson, dataDir, actor: CLI_ACTOR,
    };
    const result: CommandResult = await cmd!.run(ctx);
    keepAlive = !!result.keepAlive;
    if (result.data !== null || result.text) await print(result);
    return { exitCode: result.exitCode ?? 0, keepAlive };
  } catch (err) {
    tr ??= (await import('../core/kernel/i18n/i18n.ts')).createTranslator();
    const env_ = envelope(err, lang, tr);
    if (asJson) await write(process.stdout, json(env_));
    else {
      const details = (isUsageError(err) && err.brief ? [] : env_.error.details).map((d) => `  - ${Object.entries(d).map(([k, x]) => `${k}: ${typeof x === 'object' ? JSON.stringify(x) : String(x)}`).join(', ')}`);
      await write(process.stderr, [`error ${env_.error.code}: ${env_.error.message}`, ...details].join('\n'));
      if (env_.error.code === 'INTERNAL' && err instanceof Error && env.DIWAN_DEBUG) await write(process.stderr, err.stack ?? '');
    }
    return { exitCode: exitCodeOf(err), keepAlive: false };
  } finally {
    // A host or database that failed to open has nothing to close.
    const opened = await Promise.allSettled([core, keepAlive ? undefined : host]);
    for (const o of opened) if (o.status === 'fulfilled' && o.value) await o.value.close();
  }
}

/** The process entry (cli/bin.js): runs the command line, then exits unless the command keeps running. */
export async function main(argv = process.argv.slice(2)): Promise<void> {
  // `diwan permissions | head`: the reader left; stop quietly rather than with an EPIPE stack.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(0);
    throw err;
  });
  const outcome = await run(argv);
  if (!outcome.keepAlive) process.exit(outcome.exitCode);
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) await main();
