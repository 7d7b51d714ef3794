// Boot of the host with every first-party app installed in 100 companies, against a bare
// Fastify boot (one route) in the same run: time from process start to listening, and RSS
// once listening. Each boot is its own child process (`node --import tsx`, the same way for
// both), rounds alternate the order, medians are reported. A third case boots the host on an
// empty data folder, to show what the 100 companies themselves cost.
//
//   npx tsx bench/boot.ts [--rounds 7] [--companies 100]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { seedBootData, type BootData } from './lib/boot-data.ts';
import type { BootReport } from './lib/boot-child.ts';
import { BENCH_DIR, arg, firstMessage, fmtMiB, fmtMs, forkTs, machineLine, median, otherLoadMeter, stopChild } from './lib/util.ts';

type CaseId = 'bare' | 'host' | 'hostEmpty';

export interface BootCaseSummary {
  label: string;
  /** Child-reported milliseconds from process start to listening. */
  listeningMs: number;
  /** Parent-measured milliseconds from spawn to the child's report. */
  spawnToReadyMs: number;
  /** Node and the tsx loader, before the entry script's first line. */
  scriptMs: number;
  importedMs: number;
  builtMs: number;
  rss: number;
  heapUsed: number;
  perRound: number[];
}

export interface BootBenchResult {
  data: BootData;
  cases: Record<CaseId, BootCaseSummary>;
  timeRatio: number;
  rssRatio: number;
  others: string;
}

async function bootOnce(mode: 'host' | 'bare', dataDir?: string): Promise<{ report: BootReport; wallMs: number }> {
  const t0 = performance.now();
  const child = forkTs(path.join(BENCH_DIR, 'lib', 'boot-child.ts'), [mode], { env: dataDir ? { DATA_DIR: dataDir } : {} });
  try {
    const report = await firstMessage<BootReport>(child, 300_000);
    const wallMs = performance.now() - t0;
    // It must actually answer HTTP: the host's public OpenAPI document, the bare root route.
    const res = await fetch(`http://127.0.0.1:${report.port}${mode === 'host' ? '/api/v1/openapi.json' : '/'}`);
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${mode} answered ${res.status} once listening`);
    return { report, wallMs };
  } finally {
    await stopChild(child);
  }
}

export async function runBootBench(opts: { rounds?: number; companies?: number; log?: (s: string) => void } = {}): Promise<BootBenchResult> {
  const rounds = opts.rounds ?? 7;
  const companies = opts.companies ?? 100;
  const log = opts.log ?? ((s: string) => console.log(s));
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'diwan-bench-boot-'));
  try {
    const fullDir = path.join(root, 'full');
    const emptyDir = path.join(root, 'empty');
    const data = await seedBootData(fullDir, companies, (n) => n % 25 === 0 && log(`  seeded ${n} companies`));
    log(`seeded ${data.companies} companies × ${data.installsPerCompany} apps (of ${data.apps} first-party apps available) in ${data.seconds.toFixed(1)} s; database ${fmtMiB(data.dbBytes)}`);
    fs.mkdirSync(emptyDir, { recursive: true });

    const cases: { id: CaseId; label: string; run: () => ReturnType<typeof bootOnce> }[] = [
      { id: 'bare', label: 'bare Fastify, one route', run: () => bootOnce('bare') },
      { id: 'host', label: `host, ${data.apps} apps, ${data.companies} companies`, run: () => bootOnce('host', fullDir) },
      { id: 'hostEmpty', label: `host, ${data.apps} apps, no companies`, run: () => bootOnce('host', emptyDir) },
    ];
    // Warm-up: tsx's transform cache and the OS file cache, for every case alike.
    for (const c of cases) await c.run();
    const out = new Map<CaseId, Awaited<ReturnType<typeof bootOnce>>[]>(cases.map((c) => [c.id, []]));
    const meter = otherLoadMeter();
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? cases : [...cases].reverse();
      const line: string[] = [];
      for (const c of order) {
        const x = await c.run();
        out.get(c.id)!.push(x);
        line.push(`${c.id} ${fmtMs(x.report.listeningMs)} ms ${fmtMiB(x.report.rss)}`);
      }
      log(`  round ${r + 1}: ${line.join(', ')}`);
    }
    const others = meter.report();
    const summary = {} as Record<CaseId, BootCaseSummary>;
    for (const c of cases) {
      const xs = out.get(c.id)!;
      summary[c.id] = {
        label: c.label,
        listeningMs: median(xs.map((x) => x.report.listeningMs)),
        spawnToReadyMs: median(xs.map((x) => x.wallMs)),
        scriptMs: median(xs.map((x) => x.report.scriptMs)),
        importedMs: median(xs.map((x) => x.report.importedMs - x.report.scriptMs)),
        builtMs: median(xs.map((x) => x.report.builtMs - x.report.importedMs)),
        rss: median(xs.map((x) => x.report.rss)),
        heapUsed: median(xs.map((x) => x.report.heapUsed)),
        perRound: xs.map((x) => x.report.listeningMs),
      };
    }
    return { data, cases: summary, timeRatio: summary.host.listeningMs / summary.bare.listeningMs, rssRatio: summary.host.rss / summary.bare.rss, others };
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

export function printBootSummary(r: BootBenchResult, log: (s: string) => void = console.log): void {
  log('\ncase                                   start→listening   spawn→ready   node+tsx   imports   build     RSS          heap used    per round (ms)');
  for (const c of Object.values(r.cases)) {
    log(
      `${c.label.padEnd(38)} ${`${fmtMs(c.listeningMs)} ms`.padStart(12)} ${`${fmtMs(c.spawnToReadyMs)} ms`.padStart(13)} ${`${fmtMs(c.scriptMs)} ms`.padStart(10)} ${`${fmtMs(c.importedMs)} ms`.padStart(9)} ${`${fmtMs(c.builtMs)} ms`.padStart(8)}   ${fmtMiB(c.rss).padEnd(12)} ${fmtMiB(c.heapUsed).padEnd(12)} ${c.perRound.map((x) => fmtMs(x)).join(' ')}`,
    );
  }
  log('\n== summary: boot ==');
  log(`host (${r.data.apps} apps in ${r.data.companies} companies) / bare Fastify: start→listening ${fmtMs(r.cases.host.listeningMs)} vs ${fmtMs(r.cases.bare.listeningMs)} ms = ${r.timeRatio.toFixed(1)}×; RSS ${fmtMiB(r.cases.host.rss)} vs ${fmtMiB(r.cases.bare.rss)} = ${r.rssRatio.toFixed(1)}×`);
  log(`${r.data.companies} companies vs an empty data folder, same host: ${r.cases.host.listeningMs >= r.cases.hostEmpty.listeningMs ? '+' : ''}${fmtMs(r.cases.host.listeningMs - r.cases.hostEmpty.listeningMs)} ms, ${r.cases.host.rss >= r.cases.hostEmpty.rss ? '+' : ''}${fmtMiB(r.cases.host.rss - r.cases.hostEmpty.rss)} RSS (install state is read per company on first use, not at boot)`);
  if (r.others) log(r.others);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(`bench/boot.ts — ${machineLine()} — ${new Date().toISOString()}`);
  const r = await runBootBench({ rounds: arg('rounds', 7), companies: arg('companies', 100) });
  printBootSummary(r);
}
