// `diwan app new|test|validate|pack`: the app author's tooling (cli/app-author.ts,
// cli/app-test.ts), which works on folders and files only — no data folder, no database. The
// folder argument defaults to the current folder, so `npm test` and friends work in an app's own
// project.
import fs from 'node:fs';
import path from 'node:path';
import { DiwanError } from '../../core/kernel/errors/diwan-error.ts';
import { UsageError, say } from '../output.ts';
import type { CommandGroup } from './command.ts';
import { loadsTypeScript } from '../typescript.ts';

/** Loaded when used, so the rest of the CLI does not depend on the author tooling. */
const author = () => loadsTypeScript().then(() => import('../app-author.ts'));

const dirArg = [{ name: 'dir', description: 'The app source folder (default: the current folder)' }];
const dirOf = (args: Record<string, string | undefined>) => path.resolve(args.dir ?? '.');

export const app: CommandGroup = {
  name: 'app',
  summary: 'App author tooling: scaffold, test, validate and pack an app',
  commands: [
    {
      name: 'new',
      summary: 'Scaffold a new app folder <dir>/<id>',
      args: [{ name: 'id', required: true, description: 'The new app id (lowercase, digits, dashes)' }],
      options: {
        dir: { type: 'string', value: 'parent', description: 'Folder to create it in (default: the current folder)' },
        diwan: {
          type: 'string',
          value: 'path|tgz|range',
          description: "Where the app's package.json gets diwan: a diwan folder, a packed diwan .tgz, or a version range (default: this diwan's folder)",
        },
      },
      examples: ['diwan app new my-notes', 'diwan app new my-notes --dir ~/code --diwan ~/downloads/diwan-0.1.0.tgz'],
      async run({ args, opts, lang }) {
        const parent = path.resolve(String(opts.dir ?? '.'));
        const a = await author();
        const diwan = a.diwanDependency(opts.diwan === undefined ? undefined : String(opts.diwan), process.cwd(), lang);
        const out = a.newApp(String(args.id), parent, { diwan });
        const data = { id: args.id, ...out, diwan };
        const rel = path.relative(process.cwd(), out.dir) || '.';
        const text = [say(lang, 'author.created', { id: args.id, dir: out.dir }), ...out.files.map((f) => `  ${f}`), say(lang, 'author.next', { dir: rel })];
        return { data, text: text.join('\n') };
      },
    },
    {
      name: 'test',
      summary: "Run an app folder's tests (*.test.ts) on the SDK's test host, with diwan's own vitest",
      args: dirArg,
      async run({ args, lang, json }) {
        const dir = dirOf(args);
        if (!fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory()) {
          throw new UsageError('<dir>', 'notFound', say(lang, 'author.noFolder', { path: dir }));
        }
        // With --json, stdout carries only the one JSON document: vitest's report goes to stderr.
        const r = await (await import('../app-test.ts')).runAppTests(dir, json ? { output: process.stderr } : {});
        if (!r.ok) {
          if (!r.files.length) throw new DiwanError('APP_ERROR', [{ reason: 'no_tests', dir }], { app: r.id, reason: say(lang, 'author.noTests', { dir }) });
          // Failed tests are listed; a run that failed otherwise (a setup error) is told by vitest's report.
          const reason = r.tests.failed ? say(lang, 'author.testsFailed', r.tests) : say(lang, 'author.runFailed');
          throw new DiwanError('APP_ERROR', r.failures.length ? r.failures : [{ reason: 'run_failed', dir }], { app: r.id, reason });
        }
        return { data: r, text: say(lang, 'author.tested', { ...r.tests, id: r.id, files: r.files.length }) };
      },
    },
    {
      name: 'validate',
      summary: "Check an app folder: manifest, strings, server bundle",
      args: dirArg,
      async run({ args, lang }) {
        const dir = dirOf(args);
        const r = await (await author()).validateApp(dir);
        if (!r.ok) throw new DiwanError('MANIFEST_INVALID', r.problems as never, { count: r.problems.length });
        return { data: { dir, ok: true, problems: r.problems }, text: say(lang, 'author.valid', { dir }) };
      },
    },
    {
      name: 'pack',
      summary: 'Pack an app folder into a .diwan.tgz package',
      args: dirArg,
      options: {
        out: {
          type: 'string',
          value: 'file|folder/',
          description: 'The package file, or a folder (ending in /, or existing) for <id>-<version>.diwan.tgz (default: beside the app folder)',
        },
      },
      async run({ args, opts, lang }) {
        const dir = dirOf(args);
        const out = opts.out === undefined ? undefined : String(opts.out);
        const r = await (await author()).packAppCommand(dir, out);
        const data = { file: r.file, hash: r.hash, bytes: r.bytes, id: r.manifest.id, version: r.manifest.version };
        return { data, text: say(lang, 'author.packed', data) };
      },
    },
  ],
};
