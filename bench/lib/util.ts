// Shared by the bench scripts: child processes (servers and load generators run apart from the
// script that measures them), medians, number formatting, and how busy the machine was.
import { execFileSync, fork, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { LoadResult, LoadSpec } from './load.ts';

export const BENCH_DIR = path.resolve(import.meta.dirname, '..');
export const REPO_ROOT = path.resolve(BENCH_DIR, '..');

/** Forks a TypeScript file under tsx with an IPC channel; stdout/stderr are inherited unless piped. */
export function forkTs(file: string, args: string[] = [], opts: { env?: NodeJS.ProcessEnv; silent?: boolean } = {}): ChildProcess {
  return fork(file, args, {
    cwd: REPO_ROOT,
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, ...opts.env },
    stdio: opts.silent ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'inherit', 'inherit', 'ipc'],
  });
}

/** The first IPC message of a child, or a rejection if it exits (or times out) before sending one. */
export function firstMessage<T>(child: ChildProcess, timeoutMs = 120_000): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`child ${child.pid} sent nothing within ${timeoutMs} ms`));
    }, timeoutMs);
    const onMessage = (m: T) => {
      cleanup();
      resolve(m);
    };
    const onExit = (code: number | null, signal: string | null) => {
      cleanup();
      reject(new Error(`child ${child.pid} exited (code ${code}, signal ${signal}) before reporting`));
    };
    const cleanup = () => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    child.on('message', onMessage);
    child.on('exit', onExit);
  });
}

/** Stops a child we started (SIGTERM, then SIGKILL after a grace period) and waits for it. */
export function stopChild(child: ChildProcess, graceMs = 5000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

const WEBHOOK_RECEIVER = `
const http = require('node:http');
const s = http.createServer((req, res) => { req.resume(); req.on('end', () => { res.writeHead(200, { 'content-type': 'text/plain' }); res.end('ok'); }); });
s.keepAliveTimeout = 5000;
s.listen(0, '127.0.0.1', () => process.stdout.write(String(s.address().port) + '\\n'));
`;

/** A loopback webhook receiver answering 200 to every POST, in a process of its own (so it costs every case alike). */
export async function startWebhookReceiver(): Promise<{ port: number; stop(): void }> {
  const child = spawn(process.execPath, ['-e', WEBHOOK_RECEIVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.once('data', (d: Buffer) => resolve(Number(String(d).trim())));
    child.once('error', reject);
  });
  return { port, stop: () => child.kill() };
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  if (n === 0) return NaN;
  return n % 2 ? s[n >> 1] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

export const fmtInt = (n: number) => Math.round(n).toLocaleString('en-US');
export const fmtMs = (n: number) => {
  const a = Math.abs(n);
  return a < 10 ? n.toFixed(2) : a < 100 ? n.toFixed(1) : Math.round(n).toString();
};
export const fmtMiB = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
export const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`;

export function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const v = i > 0 ? Number(process.argv[i + 1]) : NaN;
  return Number.isFinite(v) ? v : fallback;
}

/** Busy CPU seconds of the whole machine (Linux /proc/stat), to tell how much others used. */
export function machineBusySeconds(): number | undefined {
  try {
    const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const [user, nice, system, , , irq, softirq, steal] = f;
    return (user + nice + system + irq + softirq + steal) / 100;
  } catch {
    return undefined;
  }
}

/** CPU seconds used by one process (Linux /proc/<pid>/stat: utime + stime), or NaN. */
export function processCpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

/** CPU seconds of this process plus every child it has reaped (Linux /proc/self/stat). */
function selfAndReapedChildrenSeconds(): number {
  try {
    const f = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
    return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / 100;
  } catch {
    return NaN;
  }
}

/**
 * Tracks how much CPU processes other than ours used during a run: machine busy time minus this
 * process, its finished children (load generators, boots) and the long-lived servers named.
 */
export function otherLoadMeter(livePids: number[] = []) {
  const busy0 = machineBusySeconds();
  const ours0 = selfAndReapedChildrenSeconds();
  const live0 = livePids.map(processCpuSeconds);
  const wall0 = performance.now();
  return {
    report(): string {
      const busy1 = machineBusySeconds();
      if (busy0 === undefined || busy1 === undefined) return '';
      const live = livePids.reduce((sum, pid, i) => sum + (processCpuSeconds(pid) - live0[i] || 0), 0);
      const ours = selfAndReapedChildrenSeconds() - ours0 + live;
      const others = Math.max(0, busy1 - busy0 - ours);
      const wall = (performance.now() - wall0) / 1000;
      return `other processes used ≈${others.toFixed(0)} CPU-seconds during the ${wall.toFixed(0)} s run (≈${((others / wall) * 100).toFixed(0)}% of one core); ours ≈${ours.toFixed(0)} (of ${(2 * wall).toFixed(0)} available on 2 cores)`;
    },
  };
}

/** The commit measured, and whether tracked files differ from it. */
export function revision(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO_ROOT, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: REPO_ROOT, encoding: 'utf8' }).trim() !== '';
    return `${head}${dirty ? ' (with uncommitted changes)' : ''}`;
  } catch {
    return 'unknown revision';
  }
}

export function machineLine(): string {
  const cpu = os.cpus()[0]?.model?.trim() ?? 'unknown CPU';
  return `commit ${revision()}, node ${process.version}, ${os.availableParallelism()} cores (${cpu}), ${os.platform()} ${os.release()}`;
}

/** A small seeded PRNG (mulberry32), so every run draws the same workload. */
export function prng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = seed;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Runs one load (bench/lib/load.ts, autocannon) in a child process of its own; its result. */
export async function runLoadChild(spec: LoadSpec): Promise<LoadResult> {
  const child = forkTs(path.join(BENCH_DIR, 'lib', 'load.ts'));
  const answer = firstMessage<{ ok: boolean; result?: LoadResult; error?: string }>(child, (spec.seconds + 60) * 1000);
  child.send(spec);
  const m = await answer;
  await new Promise((r) => (child.exitCode !== null ? r(null) : child.once('exit', r)));
  if (!m.ok) throw new Error(`load generator failed: ${m.error}`);
  return m.result!;
}

/** Runs one statement on a PostgreSQL server (CREATE or DROP DATABASE), on a connection of its own. */
export async function pgAdmin(serverUrl: string, sql: string): Promise<void> {
  const { default: pg } = await import('pg');
  const c = new pg.Client({ connectionString: serverUrl });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

/** An invoice-sized event payload (about 1 KB), the same for every webhook bench. */
export function sampleInvoiceData(i: number) {
  return {
    id: `inv_${i.toString(36).padStart(8, '0')}`,
    number: `INV-2026-${i}`,
    customerId: `cus_${i % 97}`,
    currency: 'SAR',
    lines: Array.from({ length: 4 }, (_, j) => ({ description: `Line ${j} of invoice ${i}`, quantity: j + 1, unitPrice: 1999 + j, amount: (j + 1) * (1999 + j) })),
    notes: 'Payment due within 30 days of the invoice date. '.repeat(5),
  };
}
