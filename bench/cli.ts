// How long the `diwan` CLI's read commands take, as an operator runs them: each is its own child
// process on a seeded data folder, against two baselines measured in the same run, the same way:
// `node -e ''` (Node starting) and `node --import tsx -e ''` (Node with the TypeScript loader the
// CLI runs under). Each light read is measured three ways: `node cli/bin.js …`, `diwan …` as the
// README tells people to type it (found on the PATH through a symlink to cli/bin.js, which is
// what `npm link` makes), and `npx diwan …` (which the README used to show), with the ratio of
// each to `node cli/bin.js`. Rounds alternate the order of the cases; medians are reported, as
// wall time and as the child's CPU time (user + system, which other processes on a busy machine
// disturb far less than wall time).
//
// `--compare <repo root>` runs another checkout's CLI (e.g. a worktree of `main`) in the same
// rounds, on its own data folder seeded by its own CLI: before and after, side by side.
//
//   npx tsx bench/cli.ts [--rounds 15] [--compare /tmp/cli-main]
import { execFileSync, spawnSync } from 'node:child_process';
import fs, { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO_ROOT, arg, fmtMs, machineLine, median, otherLoadMeter } from './lib/util.ts';

/** A read command, as arguments after `diwan`; `{company}` and `{endpoint}` are filled from the seed. */
interface ReadCase {
  name: string;
  args: string[];
  /** Whether the command needs the apps (and so the whole host): not held to the light budget. */
  needsApps?: boolean;
}

const READS: ReadCase[] = [
  { name: 'companies list', args: ['companies', 'list'] },
  { name: 'keys list', args: ['keys', 'list', '--company', '{company}'] },
  { name: 'audit list', args: ['audit', 'list', '--company', '{company}'] },
  { name: 'webhooks list', args: ['webhooks', 'list', '--company', '{company}'] },
  { name: 'webhooks log', args: ['webhooks', 'log', '{endpoint}', '--company', '{company}'] },
  { name: 'apps list (needs apps)', args: ['apps', 'list', '--company', '{company}'], needsApps: true },
];

/** What the light read commands must stay under (issue 8, item 14). */
const BUDGET_MS = 300;

/** CPU seconds of this process's reaped children (Linux /proc/self/stat: cutime + cstime). */
function childrenCpuSeconds(): number {
  try {
    const f = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
    return (Number(f[13]) + Number(f[14])) / 100;
  } catch {
    return NaN;
  }
}

interface Sample {
  wallMs: number;
  cpuMs: number;
}

/** Runs one child (`node`, unless `file` names another command) to completion; throws unless it exits 0 and prints exactly one JSON document (when `json`). */
function runChild(argv: string[], env: NodeJS.ProcessEnv, cwd: string, json: boolean, file = process.execPath): Sample {
  const cpu0 = childrenCpuSeconds();
  const t0 = performance.now();
  const r = spawnSync(file, argv, { cwd, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const wallMs = performance.now() - t0;
  const cpuMs = (childrenCpuSeconds() - cpu0) * 1000;
  if (r.status !== 0) throw new Error(`${file} ${argv.join(' ')} exited ${r.status}: ${r.error?.message ?? (r.stderr || r.stdout)}`);
  if (json) JSON.parse(r.stdout);
  return { wallMs, cpuMs };
}

interface Target {
  label: string;
  root: string;
  dataDir: string;
  company: string;
  endpoint: string;
}

const ENV = { ...process.env, DIWAN_WEBHOOK_ALLOW_LOOPBACK: '1', DIWAN_LANG: '' };

/** Seeds a data folder with the target's own CLI: the schema, a company with invoicing, keys (one revoked), an endpoint, a test event. */
function seed(label: string, root: string, dataDir: string): Target {
  const diwan = (...args: string[]) => {
    const out = execFileSync(process.execPath, [path.join(root, 'cli', 'bin.js'), ...args, '--json', '--data-dir', dataDir], { cwd: root, env: ENV, encoding: 'utf8' });
    return JSON.parse(out);
  };
  // The CLI creates no database as a side effect: migrate makes it (an older checkout's migrate does too).
  diwan('migrate');
  const company = diwan('companies', 'create', '--name', 'Bench', '--currency', 'SAR', '--apps', 'invoicing').id as string;
  for (const role of ['Owner', 'Admin', 'Viewer']) diwan('keys', 'create', '--company', company, '--role', role, '--scopes', '*', '--name', `bench ${role}`);
  const extra = diwan('keys', 'create', '--company', company, '--role', 'Member', '--scopes', 'invoices', '--name', 'revoked');
  diwan('keys', 'revoke', extra.id, '--company', company);
  const endpoint = diwan('webhooks', 'add', '--company', company, '--url', 'http://127.0.0.1:9/hook', '--topics', 'invoice.*').id as string;
  diwan('events', 'trigger', 'invoice.created', '--company', company);
  return { label, root, dataDir, company, endpoint };
}

/** How a read is started: `node cli/bin.js`, `diwan` from the PATH, or `npx diwan`. */
type Launch = 'node' | 'typed' | 'npx';

interface CaseRun {
  id: string;
  label: string;
  target?: Target;
  read?: ReadCase;
  launch?: Launch;
  run: () => Sample;
}

/**
 * A folder with `bin/diwan` (on the PATH, as `npm link` makes it) and `node_modules/.bin/diwan`
 * (what `npx diwan` finds in a checkout), both symlinks to the target's cli/bin.js.
 */
function launchers(work: string, root: string): { binDir: string; npxDir: string } {
  const binDir = path.join(work, 'path-bin');
  const npxDir = path.join(work, 'npx-project');
  fs.mkdirSync(binDir, { recursive: true });
  fs.mkdirSync(path.join(npxDir, 'node_modules', '.bin'), { recursive: true });
  fs.symlinkSync(path.join(root, 'cli', 'bin.js'), path.join(binDir, 'diwan'));
  fs.symlinkSync(path.join(root, 'cli', 'bin.js'), path.join(npxDir, 'node_modules', '.bin', 'diwan'));
  return { binDir, npxDir };
}

function caseRuns(targets: Target[], work: string): CaseRun[] {
  const cases: CaseRun[] = [
    { id: 'node', label: "node -e ''", run: () => runChild(['-e', ''], ENV, REPO_ROOT, false) },
    { id: 'tsx', label: "node --import tsx -e ''", run: () => runChild(['--import', 'tsx', '-e', ''], ENV, REPO_ROOT, false) },
  ];
  const { binDir, npxDir } = launchers(work, REPO_ROOT);
  const typedEnv = { ...ENV, PATH: `${binDir}${path.delimiter}${process.env.PATH ?? ''}` };
  const npxEnv = { ...ENV, npm_config_offline: 'true', npm_config_update_notifier: 'false' };
  for (const t of targets) {
    for (const read of READS) {
      const args = [...read.args.map((a) => a.replace('{company}', t.company).replace('{endpoint}', t.endpoint)), '--json', '--data-dir', t.dataDir];
      cases.push({
        id: `${t.label}:${read.name}`,
        label: `${t.label}: node cli/bin.js ${read.name}`,
        target: t,
        read,
        launch: 'node',
        run: () => runChild([path.join(t.root, 'cli', 'bin.js'), ...args], ENV, t.root, true),
      });
      // As typed, for this checkout's light reads: the README's `diwan …` and the `npx diwan …` it replaced.
      if (t.label !== 'this' || read.needsApps) continue;
      cases.push(
        { id: `typed:${read.name}`, label: `this: diwan ${read.name} (as typed)`, target: t, read, launch: 'typed', run: () => runChild(args, typedEnv, t.root, true, 'diwan') },
        { id: `npx:${read.name}`, label: `this: npx diwan ${read.name}`, target: t, read, launch: 'npx', run: () => runChild(['diwan', ...args], npxEnv, npxDir, true, 'npx') },
      );
    }
  }
  return cases;
}

export interface CliBenchResult {
  rows: {
    label: string; wallMs: number; minWallMs: number; cpuMs: number; overTsxMs: number; ratioNode: number; ratioTsx: number; needsApps: boolean; target?: string;
    launch?: Launch; read?: string;
    /** This case's median over the same read's `node cli/bin.js` median in the same run. */
    ratioBin?: number;
  }[];
  others: string;
}

export function runCliBench(opts: { rounds?: number; compare?: string; log?: (s: string) => void } = {}): CliBenchResult {
  const rounds = opts.rounds ?? 15;
  const log = opts.log ?? ((s: string) => console.log(s));
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'diwan-bench-cli-'));
  try {
    const targets = [seed('this', REPO_ROOT, path.join(work, 'this'))];
    if (opts.compare) targets.push(seed(path.basename(opts.compare), path.resolve(opts.compare), path.join(work, 'compare')));
    log(`seeded ${targets.length} data folder(s): a company with invoicing, 4 keys (1 revoked), 1 webhook endpoint, 1 test event`);
    const cases = caseRuns(targets, work);
    // Warm-up: tsx's transform cache and the OS file cache, for every case alike (and a check that each prints one JSON document).
    for (const c of cases) c.run();
    const samples = new Map<string, Sample[]>(cases.map((c) => [c.id, []]));
    const meter = otherLoadMeter();
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? cases : [...cases].reverse();
      for (const c of order) samples.get(c.id)!.push(c.run());
      if ((r + 1) % 5 === 0 || r + 1 === rounds) log(`  round ${r + 1}/${rounds}`);
    }
    const med = (id: string, k: keyof Sample) => median(samples.get(id)!.map((s) => s[k]));
    const nodeMs = med('node', 'wallMs');
    const tsxMs = med('tsx', 'wallMs');
    const binMs = (c: CaseRun) => (c.read && c.target ? med(`${c.target.label}:${c.read.name}`, 'wallMs') : NaN);
    const rows = cases.map((c) => ({
      label: c.label,
      launch: c.launch,
      read: c.read?.name,
      ratioBin: c.launch && c.launch !== 'node' ? med(c.id, 'wallMs') / binMs(c) : undefined,
      wallMs: med(c.id, 'wallMs'),
      minWallMs: Math.min(...samples.get(c.id)!.map((x) => x.wallMs)),
      cpuMs: med(c.id, 'cpuMs'),
      overTsxMs: med(c.id, 'wallMs') - tsxMs,
      ratioNode: med(c.id, 'wallMs') / nodeMs,
      ratioTsx: med(c.id, 'wallMs') / tsxMs,
      needsApps: !!c.read?.needsApps,
      target: c.target?.label,
    }));
    return { rows, others: meter.report() };
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

function report(res: CliBenchResult, rounds: number): string {
  const w = Math.max(...res.rows.map((r) => r.label.length));
  const lines = [
    `${'case'.padEnd(w)}  ${'wall ms'.padStart(8)}  ${'min'.padStart(6)}  ${'CPU ms'.padStart(7)}  ${'− tsx'.padStart(7)}  ${'× node'.padStart(7)}  ${'× tsx'.padStart(6)}`,
    ...res.rows.map((r) =>
      `${r.label.padEnd(w)}  ${fmtMs(r.wallMs).padStart(8)}  ${fmtMs(r.minWallMs).padStart(6)}  ${fmtMs(r.cpuMs).padStart(7)}  ${(r.label.startsWith('node') ? '' : fmtMs(r.overTsxMs)).padStart(7)}  ${r.ratioNode.toFixed(2).padStart(6)}×  ${r.ratioTsx.toFixed(2).padStart(5)}×`,
    ),
    '',
    `medians of ${rounds} rounds (min: the least disturbed run); "− tsx": median wall time above the tsx loader's own start, i.e. what the CLI itself costs`,
  ];
  for (const launch of ['typed', 'node'] as const) {
    const light = res.rows.filter((r) => r.target === 'this' && !r.needsApps && r.launch === launch);
    if (!light.length) continue;
    const worst = light.reduce((a, b) => (b.wallMs > a.wallMs ? b : a));
    lines.push(
      `light read commands ${launch === 'typed' ? 'as the README has them typed (diwan on the PATH)' : 'as node cli/bin.js'}: slowest ${worst.label.replace(/^this: /, '')} at ${fmtMs(worst.wallMs)} ms wall ` +
        `(min ${fmtMs(worst.minWallMs)}; ${worst.ratioTsx.toFixed(2)}× the tsx start); budget ${BUDGET_MS} ms — ${worst.wallMs < BUDGET_MS ? 'met' : 'NOT met in this run'} (node itself started in ${fmtMs(res.rows[0].wallMs)} ms here)`,
    );
  }
  for (const launch of ['typed', 'npx'] as const) {
    const ratios = res.rows.filter((r) => r.launch === launch && r.ratioBin !== undefined).map((r) => `${r.read} ${r.ratioBin!.toFixed(2)}×`);
    if (ratios.length) lines.push(`${launch === 'typed' ? 'diwan (as typed)' : 'npx diwan'} over node cli/bin.js, same run: ${ratios.join(', ')}`);
  }
  if (res.others) lines.push(res.others);
  return lines.join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const rounds = arg('rounds', 15);
  const i = process.argv.indexOf('--compare');
  const compare = i > 0 ? process.argv[i + 1] : undefined;
  console.log(`bench/cli.ts — ${machineLine()} — ${new Date().toISOString()}`);
  const res = runCliBench({ rounds, compare });
  console.log('\n== summary');
  console.log(report(res, rounds));
}
