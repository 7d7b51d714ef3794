// `diwan app test [dir]`: runs an app folder's own tests with the vitest that diwan itself
// depends on, so an author's project needs nothing but `diwan`: no vitest, tsx or TypeScript
// versions of its own to keep in step with the host. `diwan/sdk` and `diwan/sdk/testing`
// resolve to this diwan's SDK (the one `app pack` bundles and the test host runs), whatever the
// folder's node_modules hold. No config file is read: the same settings in every app folder.
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Writable } from 'node:stream';

const ROOT = path.resolve(import.meta.dirname, '..');

/** A type alias (not an interface) so it also reads as a plain record, as error details are. */
export type TestFailure = {
  /** The test file, relative to the app folder. */
  file: string;
  /** The test's full name (`suite > test`), or `(file)` when the file itself failed to run. */
  test: string;
  message: string;
};

export interface AppTestResult {
  dir: string;
  /** The app id from manifest.json, else the folder's name. */
  id: string;
  ok: boolean;
  files: string[];
  tests: { total: number; passed: number; failed: number; skipped: number };
  failures: TestFailure[];
  durationMs: number;
}

interface Task {
  type: string;
  name: string;
  mode?: string;
  tasks?: Task[];
  result?: { state?: string; errors?: { message?: string }[] };
}

function appId(dir: string): string {
  try {
    const id = (JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as { id?: unknown }).id;
    if (typeof id === 'string' && id) return id;
  } catch {
    /* no readable manifest: `app validate` is the place to say so */
  }
  return path.basename(dir);
}

/** The start of the first error: enough to name the fault (a transform error's location is on its second line). */
const errorSummary = (errors: { message?: string }[] | undefined) =>
  String(errors?.[0]?.message ?? 'failed')
    .replace(/\x1b\[[0-9;]*m/g, '')
    .split('\n').map((l) => l.trim()).filter(Boolean).slice(0, 3).join(' ').slice(0, 300);

/**
 * Runs every `*.test.{ts,mts,js,mjs}` under `dir` (not node_modules or dist) once. Vitest's
 * report goes to `output` (default stdout); the counts and failures come back as data.
 */
export async function runAppTests(dir: string, opts: { output?: Writable } = {}): Promise<AppTestResult> {
  dir = path.resolve(dir);
  const { startVitest } = await import('vitest/node');
  const started = performance.now();
  const exitCodeBefore = process.exitCode;
  const vitest = await startVitest(
    'test',
    [],
    {
      root: dir,
      config: false,
      run: true,
      watch: false,
      include: ['**/*.test.{ts,mts,js,mjs}'],
      exclude: ['**/node_modules/**', '**/dist/**', '**/.git/**'],
      // Forks, not threads: better-sqlite3 and the host's worker pool stay out of vitest's threads.
      pool: 'forks',
      // A test host boots the real host (a second or two on a slow machine).
      testTimeout: 30_000,
      hookTimeout: 30_000,
    },
    {
      resolve: {
        alias: [
          { find: /^diwan\/sdk\/testing$/, replacement: path.join(ROOT, 'sdk/test-host.ts') },
          { find: /^diwan\/sdk$/, replacement: path.join(ROOT, 'sdk/index.ts') },
        ],
      },
    },
    opts.output ? { stdout: opts.output as NodeJS.WriteStream } : undefined,
  );
  // Vitest marks a failed run on process.exitCode; the CLI decides the exit code itself.
  const vitestFailed = (process.exitCode ?? 0) !== 0;
  process.exitCode = exitCodeBefore;

  const files = vitest.state.getFiles() as unknown as (Task & { filepath: string })[];
  const tests = { total: 0, passed: 0, failed: 0, skipped: 0 };
  const failures: TestFailure[] = [];
  const walk = (t: Task, file: string, names: string[]) => {
    if (t.type === 'test') {
      tests.total++;
      const state = t.result?.state;
      if (state === 'pass') tests.passed++;
      else if (state === 'fail') {
        tests.failed++;
        failures.push({ file, test: [...names, t.name].join(' > '), message: errorSummary(t.result?.errors) });
      } else tests.skipped++;
      return;
    }
    const inner = t.type === 'suite' ? [...names, t.name] : names;
    // A suite whose beforeAll/afterAll threw fails with errors of its own.
    if (t.type === 'suite' && t.result?.state === 'fail' && t.result.errors?.length) failures.push({ file, test: inner.join(' > '), message: errorSummary(t.result.errors) });
    for (const c of t.tasks ?? []) walk(c, file, inner);
  };
  for (const f of files) {
    const rel = path.relative(dir, f.filepath).split(path.sep).join('/');
    for (const t of f.tasks ?? []) walk(t, rel, []);
    // A file that failed to import or to run its hooks has errors of its own.
    if (f.result?.state === 'fail' && f.result.errors?.length) failures.push({ file: rel, test: '(file)', message: errorSummary(f.result.errors) });
  }
  for (const e of vitest.state.getUnhandledErrors()) failures.push({ file: '', test: '(unhandled)', message: errorSummary([e as { message?: string }]) });

  return {
    dir,
    id: appId(dir),
    ok: files.length > 0 && failures.length === 0 && !vitestFailed,
    files: files.map((f) => path.relative(dir, f.filepath).split(path.sep).join('/')).sort(),
    tests,
    failures,
    durationMs: Math.round(performance.now() - started),
  };
}
