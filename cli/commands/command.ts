// The shape of a CLI command, shared by the command groups and main.ts. A command declares
// its arguments and options (for parsing and `--help`) and returns its data and, for people,
// a text rendering of it; main.ts does the printing, the exit code and closing what was opened.
//
// A command asks for what it needs, when it needs it, from the one composition root
// (core/services.ts): `services()` (the database and the domain services that need no app: fast,
// enough for every list, keys and people), `services({ apps: true })` (every app loaded) or
// `services({ webhooks: true })`; `host()` is the server itself. Every command module is loaded on every run, so
// they import from core only light values (error class, role names, delivery filters) and types;
// cli.test.ts checks the graph.
import type { Host } from '../../core/host.ts';
import type { Actor } from '../../core/kernel/actor.ts';
import type { Lang } from '../../core/kernel/i18n/i18n.ts';
import type { Company } from '../../core/tenancy/companies.ts';
import type { AppServices, CoreServices, WebhookServices } from '../../core/services.ts';
import { DiwanError } from '../../core/kernel/errors/diwan-error.ts';
import { UsageError, say } from '../output.ts';

export interface OptionSpec {
  type: 'string' | 'boolean';
  description: string;
  /** Shown in help: `--company <id>`. */
  value?: string;
  required?: boolean;
  choices?: readonly string[];
  short?: string;
}

export interface ArgSpec {
  name: string;
  description: string;
  required?: boolean;
}

export interface CommandContext {
  /**
   * The database of `--data-dir` and the domain services that need no app; with `apps`, every app
   * loaded; with `webhooks`, the webhooks domain (which loads the apps only when a topic must be checked against them). Each stage is built once, on first call, and
   * closed by main.ts.
   */
  services(): Promise<CoreServices>;
  services(needs: { apps: true }): Promise<AppServices>;
  services(needs: { webhooks: true }): Promise<WebhookServices>;
  /** The server on `--data-dir`, not listening yet (`diwan start`). */
  host(): Promise<Host>;
  args: Record<string, string | undefined>;
  opts: Record<string, string | boolean | undefined>;
  lang: Lang;
  json: boolean;
  dataDir: string;
  actor: Actor;
}

export interface CommandResult {
  data: unknown;
  /** What a person reads instead of the JSON; defaults to the JSON itself. */
  text?: string;
  /** Long-running commands (`start`) keep the process and the host alive. */
  keepAlive?: boolean;
  /** A command that succeeded in answering may still exit non-zero (`migrate --check` on a schema that is behind). */
  exitCode?: number;
}

export interface Command {
  /** Subcommand name; '' for a group that is itself the command (`diwan start`). */
  name: string;
  summary: string;
  args?: ArgSpec[];
  options?: Record<string, OptionSpec>;
  examples?: string[];
  run(ctx: CommandContext): Promise<CommandResult> | CommandResult;
}

export interface CommandGroup {
  name: string;
  summary: string;
  commands: Command[];
}

export { CLI_ACTOR } from '../../core/kernel/actor.ts';

export const companyOption: OptionSpec = { type: 'string', value: 'id', required: true, description: 'The company (co_…) to act in' };

/** The `--company` value, checked to name an existing company. */
export async function companyOf(ctx: CommandContext, services?: Pick<CoreServices, 'companies'>): Promise<Company> {
  const id = String(ctx.opts.company);
  const company = await (services ?? (await ctx.services())).companies.get(id);
  if (!company) throw new DiwanError('NOT_FOUND', [{ resource: 'companies', id }]);
  return company;
}

/** The write scope of the operator's CLI in a company (writes audit themselves as `cli:operator`). */
export const scopeOf = (ctx: CommandContext, companyId: string) => ({ companyId, actor: ctx.actor, appId: 'core' });

/** A positive integer option, or a usage error. */
export function intOption(ctx: CommandContext, name: string, fallback: number): number {
  const v = ctx.opts[name];
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`--${name}`, 'integer', say(ctx.lang, 'usage.integer', { name: `--${name}` }), { value: v });
  return n;
}

/** `--page` and `--page-size` for a list command; `what` names the items in the help. */
export function pageOptions(what: string, max: number): Record<string, OptionSpec> {
  return {
    page: { type: 'string', value: 'n', description: 'Page number, from 1 (default 1)' },
    'page-size': { type: 'string', value: 'n', description: `${what} per page (default 50, at most ${max})` },
  };
}

/** The page asked for, the size capped at `max`. */
export function pageOf(ctx: CommandContext, max: number): { page: number; pageSize: number } {
  return { page: intOption(ctx, 'page', 1), pageSize: Math.min(max, intOption(ctx, 'page-size', 50)) };
}
