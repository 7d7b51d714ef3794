// Which data folder a command works on, from whatever folder it is run, chosen as the server
// chooses it: `--data-dir`, else DIWAN_DATA_DIR (or DATA_DIR, its older name), else the `data/`
// of the Diwan checkout the command runs in (`npm start` keeps it there), else the `data/` of
// the diwan package this CLI belongs to (an app author's `npx diwan` links the checkout whose
// server they run). Only the commands that exist to make a database (`start`, `serve`,
// `worker`, `migrate`) may find none there: any other refuses, naming --data-dir, rather than
// create an empty database beside an app's sources and answer NOT_FOUND from it.
import fs from 'node:fs';
import path from 'node:path';
import type { Lang } from '../core/kernel/i18n/i18n.ts';
import { UsageError, say } from './output.ts';

/** How the folder was chosen: said in the refusal, since a folder found by default surprises. */
export type DataDirSource = 'flag' | 'env' | 'checkout' | 'package';

export interface DataDirChoice {
  dir: string;
  source: DataDirSource;
}

/** The command groups that create the database when it is missing; every other one needs it. */
export const CREATES_DATA: ReadonlySet<string> = new Set(['start', 'serve', 'worker', 'migrate']);

/** The diwan package this CLI runs from (symlinks resolved by Node: an `npm link` names the checkout). */
export const PACKAGE_ROOT = path.resolve(import.meta.dirname, '..');

const DATABASE_FILE = 'diwan.db';

/** The nearest folder at or above `from` whose package.json is diwan's own; undefined when none is. */
export function diwanCheckoutOf(from: string): string | undefined {
  for (let dir = path.resolve(from); ; dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) {
      try {
        // The first package.json up the tree decides: an app's own project is not a checkout.
        return (JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: unknown }).name === 'diwan' ? dir : undefined;
      } catch {
        return undefined;
      }
    }
    if (path.dirname(dir) === dir) return undefined;
  }
}

const named = (v: string | undefined) => (v?.trim() ? v.trim() : undefined);

/** The data folder for this run, and how it was found. */
export function chooseDataDir(flag: string | undefined, env: NodeJS.ProcessEnv, cwd = process.cwd(), packageRoot = PACKAGE_ROOT): DataDirChoice {
  if (named(flag)) return { dir: path.resolve(cwd, flag!.trim()), source: 'flag' };
  const fromEnv = named(env.DIWAN_DATA_DIR) ?? named(env.DATA_DIR);
  if (fromEnv) return { dir: path.resolve(cwd, fromEnv), source: 'env' };
  const checkout = diwanCheckoutOf(cwd);
  if (checkout) return { dir: path.join(checkout, 'data'), source: 'checkout' };
  return { dir: path.join(packageRoot, 'data'), source: 'package' };
}

/** Whether the host's database is there: the SQLite file, or a PostgreSQL server named by URL. */
export function hasDatabase(dir: string, env: NodeJS.ProcessEnv): boolean {
  return !!named(env.DIWAN_DATABASE_URL) || fs.existsSync(path.join(dir, DATABASE_FILE));
}

/**
 * Refuses (a usage error, exit 2) when the command needs a database the folder does not hold.
 * One line: the folder looked at and the flag that names another.
 */
export function requireDatabase(choice: DataDirChoice, env: NodeJS.ProcessEnv, lang: Lang): void {
  if (hasDatabase(choice.dir, env)) return;
  const key = choice.source === 'flag' || choice.source === 'env' ? 'data.missingNamed' : 'data.missingFound';
  throw new UsageError('--data-dir', 'noDatabase', say(lang, key, { dir: choice.dir }), { dataDir: choice.dir, source: choice.source }, { brief: true });
}
