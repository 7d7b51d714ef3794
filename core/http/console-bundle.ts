// The web console's bundle: web/console/ compiled by esbuild in memory, once per process, on
// first need (there is no separate build command). Output files get content-hashed names;
// each is precompressed once and kept in memory.
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import * as esbuild from 'esbuild';
import { IMMUTABLE, makeAsset, type StaticAsset } from './static-assets.ts';

export const CONSOLE_SOURCE = path.resolve(import.meta.dirname, '../../web/console');
export const ASSET_PREFIX = '/assets/';

export interface ConsoleBundle {
  /** By URL path, e.g. `/assets/console-3f9a0c1b2d.js`. */
  assets: Map<string, StaticAsset>;
  script: string;
  style: string | undefined;
  /** Milliseconds spent bundling and compressing. */
  buildMs: number;
}

const TYPES: Record<string, string> = { '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8' };

export async function buildConsole(source = CONSOLE_SOURCE): Promise<ConsoleBundle> {
  const started = performance.now();
  const outdir = path.join(source, '.out');
  const result = await esbuild.build({
    absWorkingDir: path.resolve(source, '../..'),
    entryPoints: { console: path.join(source, 'main.tsx') },
    outdir,
    entryNames: '[name]-[hash]',
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    target: ['es2022', 'chrome111', 'firefox115', 'safari16'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    minify: true,
    legalComments: 'none',
    charset: 'utf8',
    define: { 'process.env.NODE_ENV': '"production"' },
    logLevel: 'silent',
  });
  const assets = new Map<string, StaticAsset>();
  let script = '';
  let style: string | undefined;
  for (const f of result.outputFiles) {
    const name = path.relative(outdir, f.path).split(path.sep).join('/');
    const ext = path.extname(name);
    const type = TYPES[ext];
    if (!type) continue;
    const url = `${ASSET_PREFIX}${name}`;
    assets.set(url, makeAsset(Buffer.from(f.contents), type, IMMUTABLE));
    if (ext === '.js' && name.startsWith('console-')) script = url;
    if (ext === '.css' && name.startsWith('console-')) style = url;
  }
  if (!script) throw new Error('the console bundle produced no script');
  return { assets, script, style, buildMs: Math.round(performance.now() - started) };
}

let shared: Promise<ConsoleBundle> | undefined;

/** The process's one console bundle, built on first call; a failed build is retried on the next call. */
export function consoleBundle(): Promise<ConsoleBundle> {
  if (!shared) {
    shared = buildConsole();
    shared.catch(() => {
      shared = undefined;
    });
  }
  return shared;
}
