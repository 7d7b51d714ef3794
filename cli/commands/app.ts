// `diwan app new|validate|pack`: the app author's tooling (cli/app-author.ts), which works on
// folders and files only — no host, no database.
import path from 'node:path';
import { DiwanError } from '../../core/errors/diwan-error.ts';
import { say } from '../output.ts';
import type { CommandGroup } from './command.ts';

/** Loaded when used, so the rest of the CLI does not depend on the author tooling. */
const author = () => import('../app-author.ts');

const dirArg = [{ name: 'dir', required: true, description: 'The app source folder' }];

export const app: CommandGroup = {
  name: 'app',
  summary: 'App author tooling: scaffold, validate and pack an app',
  commands: [
    {
      name: 'new',
      summary: 'Scaffold a new app folder <dir>/<id>',
      host: false,
      args: [{ name: 'id', required: true, description: 'The new app id (lowercase, digits, dashes)' }],
      options: { dir: { type: 'string', value: 'parent', description: 'Folder to create it in (default: the current folder)' } },
      async run({ args, opts, lang }) {
        const parent = path.resolve(String(opts.dir ?? '.'));
        const out = (await author()).newApp(String(args.id), parent);
        const data = { id: args.id, ...out };
        return { data, text: `${say(lang, 'author.created', { id: args.id, dir: out.dir })}\n${out.files.map((f) => `  ${f}`).join('\n')}` };
      },
    },
    {
      name: 'validate',
      summary: "Check an app folder: manifest, strings, server bundle",
      host: false,
      args: dirArg,
      async run({ args, lang }) {
        const dir = path.resolve(String(args.dir));
        const r = await (await author()).validateApp(dir);
        if (!r.ok) throw new DiwanError('MANIFEST_INVALID', r.problems as never, { count: r.problems.length });
        return { data: { dir, ok: true, problems: r.problems }, text: say(lang, 'author.valid', { dir }) };
      },
    },
    {
      name: 'pack',
      summary: 'Pack an app folder into a .diwan.tgz package',
      host: false,
      args: dirArg,
      options: { out: { type: 'string', value: 'file', description: 'The package file (default: <id>-<version>.diwan.tgz beside the folder)' } },
      async run({ args, opts, lang }) {
        const dir = path.resolve(String(args.dir));
        const out = opts.out === undefined ? undefined : path.resolve(String(opts.out));
        const r = await (await author()).packAppCommand(dir, out);
        const data = { file: r.file, hash: r.hash, bytes: r.bytes, id: r.manifest.id, version: r.manifest.version };
        return { data, text: say(lang, 'author.packed', data) };
      },
    },
  ],
};
