// `diwan migrate`: brings the database (the SQLite file in DATA_DIR, or DIWAN_DATABASE_URL) to
// the host's schema and says what it applied; `--check` only says whether it is current, writes
// nothing, and exits 1 when it is not (a deploy step runs it before starting new processes).
// Servers migrate on start as well; processes starting together take turns (core/storage/migrate.ts).
// On SQLite it creates the data folder's database when there is none, and says so.
import path from 'node:path';
import type { Lang } from '../../core/kernel/i18n/i18n.ts';
import type { SchemaGap } from '../../core/storage/migrate.ts';
import { hasDatabase } from '../data-dir.ts';
import { say } from '../output.ts';
import type { CommandGroup } from './command.ts';

const PARTS = ['tables', 'columns', 'indexes', 'steps'] as const;

/** "tables a, b; indexes x" in the language asked, or '' when the gap is empty. */
function describeGap(lang: Lang, gap: SchemaGap): string {
  return PARTS.filter((p) => gap[p].length)
    .map((p) => say(lang, `migrate.${p}`, { names: gap[p].join(', ') }))
    .join(lang === 'ar' ? '؛ ' : '; ');
}

export const migrate: CommandGroup = {
  name: 'migrate',
  summary: 'Bring the database to the current schema (or, with --check, say whether it is); creates it when missing',
  commands: [
    {
      name: '',
      summary: 'Bring the database to the current schema (or, with --check, say whether it is); creates it when missing',
      options: {
        check: { type: 'boolean', description: 'Write nothing; exit 1 when the schema is not current' },
      },
      examples: ['diwan migrate', 'diwan migrate --check --json', 'DIWAN_DATABASE_URL=postgres://diwan@127.0.0.1/diwan diwan migrate'],
      async run(ctx) {
        const [{ loadConfig }, { checkSchema, applySchema }] = await Promise.all([import('../../core/kernel/config.ts'), import('../../core/storage/schema-admin.ts')]);
        const where = { file: path.join(ctx.dataDir, 'diwan.db'), url: loadConfig().databaseUrl };
        if (ctx.opts.check) {
          const r = await checkSchema(where);
          const data = { dialect: r.dialect, database: r.database, current: r.current, missing: r.gap };
          const text = r.current ? say(ctx.lang, 'migrate.current', { ...r }) : say(ctx.lang, 'migrate.behind', { ...r, what: describeGap(ctx.lang, r.gap) });
          return { data, text, exitCode: r.current ? 0 : 1 };
        }
        const created = !hasDatabase(ctx.dataDir, process.env);
        const r = await applySchema(where);
        const what = describeGap(ctx.lang, r.gap);
        const data = { dialect: r.dialect, database: r.database, current: r.current, applied: r.gap, createdDataDir: created };
        const text = what ? say(ctx.lang, 'migrate.applied', { ...r, what }) : say(ctx.lang, 'migrate.nothing', { ...r });
        return { data, text: created ? `${say(ctx.lang, 'data.created', { dir: ctx.dataDir })}\n${text}` : text };
      },
    },
  ],
};
