// `npm run bench`: every bench script in sequence, each in its own child process (so one's
// servers, workers and heap never touch the next one's numbers), streaming their output, then
// their summaries together at the end.
//
//   npx tsx bench/run-all.ts [--only http,boot,matcher,signing,sender,webhooks,openapi,rules,rule-programs,cli,scaling,console,issuing]
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { BENCH_DIR, REPO_ROOT, machineLine } from './lib/util.ts';

interface Script {
  name: string;
  file: string;
  args: string[];
}

const SCRIPTS: Script[] = [
  { name: 'http', file: 'http.ts', args: [] },
  { name: 'boot', file: 'boot.ts', args: [] },
  { name: 'matcher', file: 'matcher.ts', args: [] },
  { name: 'signing', file: 'signing.ts', args: [] },
  { name: 'sender', file: 'webhook-sender.ts', args: [] },
  { name: 'webhooks', file: 'webhooks-e2e.ts', args: [] },
  { name: 'openapi', file: 'openapi.ts', args: [] },
  { name: 'rules', file: 'rules.ts', args: [] },
  { name: 'rule-programs', file: 'rule-programs.ts', args: [] },
  { name: 'cli', file: 'cli.ts', args: [] },
  { name: 'scaling', file: 'scaling.ts', args: [] },
  { name: 'console', file: 'console.ts', args: [] },
  { name: 'issuing', file: 'issuing.ts', args: [] },
];

function only(): Set<string> | undefined {
  const i = process.argv.indexOf('--only');
  return i > 0 ? new Set(process.argv[i + 1].split(',').map((s) => s.trim())) : undefined;
}

function run(s: Script): Promise<{ code: number | null; output: string; seconds: number }> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(BENCH_DIR, s.file), ...s.args], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (b: Buffer) => {
      output += b;
      process.stdout.write(b);
    });
    child.stderr.on('data', (b: Buffer) => {
      output += b;
      process.stderr.write(b);
    });
    child.on('close', (code) => resolve({ code, output, seconds: (performance.now() - t0) / 1000 }));
  });
}

/** From a `== summary` line to the end if the script prints one, else its last lines. */
function summaryOf(output: string): string {
  const lines = output.trimEnd().split('\n');
  const at = lines.findIndex((l) => l.startsWith('== summary'));
  if (at >= 0) return lines.slice(at + 1).join('\n');
  const pooled = lines.findIndex((l) => l.startsWith('pooled / inline'));
  if (pooled >= 0) return lines.slice(pooled).join('\n');
  const matcher = lines.findIndex((l) => l.startsWith('matcher:'));
  if (matcher >= 0) return lines.slice(matcher).join('\n');
  return lines.slice(-4).join('\n');
}

const wanted = only();
console.log(`bench/run-all.ts — ${machineLine()} — ${new Date().toISOString()}`);
const results: { name: string; code: number | null; seconds: number; summary: string }[] = [];
for (const s of SCRIPTS) {
  if (wanted && !wanted.has(s.name)) continue;
  if (!fs.existsSync(path.join(BENCH_DIR, s.file))) {
    console.log(`\n### ${s.name}: bench/${s.file} does not exist, skipped`);
    continue;
  }
  console.log(`\n### ${s.name}: npx tsx bench/${s.file} ${s.args.join(' ')}`.trimEnd());
  const r = await run(s);
  results.push({ name: s.name, code: r.code, seconds: r.seconds, summary: summaryOf(r.output) });
}

console.log('\n==================== summaries ====================');
for (const r of results) {
  console.log(`\n## ${r.name} (${r.seconds.toFixed(0)} s${r.code === 0 ? '' : `, exit code ${r.code}`})`);
  console.log(r.summary);
}
if (results.some((r) => r.code !== 0)) process.exitCode = 1;
