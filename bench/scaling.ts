// Scaling out: the host on PostgreSQL against SQLite, 1 against 2 API processes, and webhook
// deliveries with 1, 2 and 4 delivery workers, each against a baseline measured in the same run.
//
//   1. GET /api/v1/customers?page=N&pageSize=20 and POST /api/v1/invoices: one API process on
//      PostgreSQL against one on SQLite (ratio PG/SQLite).
//   2. The same on PostgreSQL with 2 API processes on one database against 1 (ratio 2/1).
//      Every API case is driven by the same two autocannon children at once, half the
//      connections each: for 2 processes each child drives one port, for 1 both drive the same
//      port, so that the load side is the same in every case.
//   3. Deliveries per second with 1, 2 and 4 `DIWAN_ROLES=worker` processes (core/main.ts) on
//      PostgreSQL (ratio against 1), and p50/p99 from commit to receipt: the bench commits each
//      event through its own API-only host and notes the time; a receiver in a child process
//      notes when each delivery arrived (by its x-diwan-event-id header).
//
// API processes are `DIWAN_ROLES=api` (bench/lib/host-server.ts, rate limit off); those not in
// the case being measured are paused (SIGSTOP) while idle. Workers are started and stopped
// instead (a paused worker stalls the others: see docs/benchmarks-history.md). Cases alternate order round by round; the
// report gives medians. PostgreSQL: DIWAN_BENCH_DATABASE_URL, else
// postgres://postgres@127.0.0.1:5432/test; a fresh database per part, dropped after.
//
//   npx tsx bench/scaling.ts [--rounds 3] [--seconds 4] [--connections 8] [--customers 10000] [--events 500]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import pg from 'pg';
import { buildHost, type Host } from '../core/host.ts';
import { CLI_ACTOR } from '../core/kernel/actor.ts';
import { loadConfig } from '../core/kernel/config.ts';
import type { Caller } from '../core/apps/doc-type.ts';
import { generateKey } from '../core/kernel/secret-box.ts';
import { httpBenchSources, writeContactsApp } from './lib/http-data.ts';
import { invoiceBody, type LoadResult, type LoadSpec } from './lib/load.ts';
import { BENCH_DIR, REPO_ROOT, arg, firstMessage, fmtInt, fmtMs, forkTs, machineLine, median, otherLoadMeter, pgAdmin, processCpuSeconds, runLoadChild, sampleInvoiceData, stopChild } from './lib/util.ts';

const rounds = arg('rounds', 3);
const seconds = arg('seconds', 4);
const connections = arg('connections', 8);
const customers = arg('customers', 10_000);
const events = arg('events', 500);
const ENDPOINTS = 4;
const WORKERS = [1, 2, 4];
const LIGHT_EVENTS = 30;
const LIGHT_MS = 50;
const serverUrl = process.env.DIWAN_BENCH_DATABASE_URL?.trim() || 'postgres://postgres@127.0.0.1:5432/test';
// Every process (the bench's hosts, API processes, workers) seals and opens webhook secrets with one key.
process.env.DIWAN_SECRET_KEY ||= generateKey().toString('base64');

const log = (s: string) => console.log(s);
const children: ChildProcess[] = [];
const databases: string[] = [];
const dirs: string[] = [];

/** Server processes (backends) serving connections to `database`: their CPU is PostgreSQL's share of a case. */
async function backends(database: string): Promise<number[]> {
  const c = new pg.Client({ connectionString: serverUrl });
  await c.connect();
  try {
    return (await c.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1', [database])).rows.map((r) => r.pid);
  } finally {
    await c.end();
  }
}

const cpuOf = (pids: number[]) => pids.reduce((s, pid) => s + (processCpuSeconds(pid) || 0), 0);

/** A fresh database on the PostgreSQL server, dropped at the end; its URL. */
async function freshDatabase(): Promise<string> {
  const name = `bench_scaling_${process.pid}_${databases.length + 1}`;
  await pgAdmin(serverUrl, `CREATE DATABASE "${name}" TEMPLATE template0 ENCODING 'UTF8'`);
  databases.push(name);
  const u = new URL(serverUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

function tempDir(prefix: string): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  dirs.push(d);
  return d;
}

const secondsSince = (t0: number) => ((performance.now() - t0) / 1000).toFixed(1);

// ---------------------------------------------------------------- part 1 and 2: the API

interface ApiData {
  companyId: string;
  key: string;
  customerIds: string[];
}

/** One company with invoicing, an Owner key and `customers` customers, through the DocType API in one transaction. */
async function seedApi(where: { databaseUrl?: string; dataDir: string }, appsDir: string): Promise<ApiData> {
  const host = await buildHost({
    ...(where.databaseUrl ? { databaseUrl: where.databaseUrl } : { dbFile: path.join(where.dataDir, 'diwan.db') }),
    config: { dataDir: where.dataDir, rateLimitPerMinute: 0, roles: { api: true, worker: false } },
    sources: httpBenchSources(appsDir),
    defaultApps: [],
    logger: false,
  });
  try {
    const { company } = await host.createCompany({ name: 'Bench Trading Co', currency: 'SAR', apps: ['invoicing'] });
    const actor = { type: 'cli' as const, id: 'bench' };
    const key = (await host.keys.create({ companyId: company.id, actor, appId: 'core' }, { role: 'Owner', scopes: ['*'], name: 'bench owner' })).key;
    const caller: Caller = { company, actor, lang: 'en', requestId: null };
    const customerType = host.runtime.get('invoicing')!.docTypes.get('customer')!;
    const customerIds: string[] = [];
    await host.storage.db.transaction(async () => {
      for (let i = 0; i < customers; i++) {
        const party = { name: `Customer ${String(i).padStart(5, '0')} Trading LLC`, email: `accounts${i}@customer${i}.example.com`, phone: `+9665${String(10_000_000 + i).slice(-8)}` };
        customerIds.push((await customerType.create(caller, party)).id);
      }
    });
    if (!where.databaseUrl) await host.storage.db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    return { companyId: company.id, key, customerIds };
  } finally {
    await host.close();
    // A freshly filled table has no planner statistics until autovacuum gets to it (a minute or
    // more): without them PostgreSQL sorts all 10,000 rows for every page (measured: 8.6 ms of
    // queries a list against 3.3 ms after ANALYZE). A database in service has been analysed.
    if (where.databaseUrl) {
      const c = new pg.Client({ connectionString: where.databaseUrl });
      await c.connect();
      await c.query('VACUUM ANALYZE').finally(() => c.end());
    }
  }
}

interface Server {
  child: ChildProcess;
  port: number;
  pid: number;
}

async function startApi(dataDir: string, appsDir: string, databaseUrl?: string): Promise<Server> {
  const env: NodeJS.ProcessEnv = { DATA_DIR: dataDir, DIWAN_ROLES: 'api', DIWAN_DATABASE_URL: databaseUrl ?? '' };
  const child = forkTs(path.join(BENCH_DIR, 'lib', 'host-server.ts'), [appsDir], { env });
  children.push(child);
  const { port } = await firstMessage<{ port: number }>(child);
  return { child, port, pid: child.pid! };
}

interface ApiCase {
  id: string;
  label: string;
  servers: Server[];
  data: ApiData;
  kind: 'list' | 'create';
  /** The PostgreSQL database, whose backends' CPU is measured too. */
  database?: string;
}

interface ApiRun {
  rps: number;
  p50: number;
  p99: number;
  cpuUsPerReq: number;
  pgUsPerReq: number;
  failed: number;
}

/** Two load children at once, half the connections each, on the case's ports (the first twice for one server). */
async function runApiCase(c: ApiCase, secs: number, seed: number, paused: Server[]): Promise<ApiRun> {
  const auth = { authorization: `Bearer ${c.data.key}`, 'x-company-id': c.data.companyId };
  const spec = (i: number): LoadSpec => ({
    url: `http://127.0.0.1:${c.servers[i % c.servers.length].port}`,
    seconds: secs,
    connections: Math.max(1, connections / 2),
    headers: auth,
    kind: c.kind,
    path: c.kind === 'list' ? '/api/v1/customers' : '/api/v1/invoices',
    pages: Math.ceil(customers / 20),
    pageSize: 20,
    customerIds: c.data.customerIds,
    seed: seed * 2 + i,
  });
  const cpu0 = c.servers.map((s) => processCpuSeconds(s.pid));
  const pgPids = c.database ? await backends(c.database) : [];
  const pg0 = cpuOf(pgPids);
  for (const s of paused) process.kill(s.pid, 'SIGSTOP');
  let rs: LoadResult[];
  try {
    rs = await Promise.all([runLoadChild(spec(0)), runLoadChild(spec(1))]);
  } finally {
    for (const s of paused) process.kill(s.pid, 'SIGCONT');
  }
  const cpu = c.servers.reduce((sum, s, i) => sum + processCpuSeconds(s.pid) - cpu0[i], 0);
  const pgCpu = cpuOf(pgPids) - pg0;
  const requests = rs[0].requests + rs[1].requests;
  return {
    rps: rs[0].rps + rs[1].rps,
    p50: (rs[0].p50 + rs[1].p50) / 2,
    p99: Math.max(rs[0].p99, rs[1].p99),
    cpuUsPerReq: (cpu / requests) * 1e6,
    pgUsPerReq: (pgCpu / requests) * 1e6,
    failed: rs.reduce((s, r) => s + r.non2xx + r.errors + r.timeouts, 0),
  };
}

interface ApiSummary {
  label: string;
  rps: number;
  p50: number;
  p99: number;
  cpuUsPerReq: number;
  pgUsPerReq: number;
  perRound: number[];
  failed: number;
}

async function apiPart(): Promise<{ cases: Record<string, ApiSummary>; others: string }> {
  const root = tempDir('diwan-bench-scaling-');
  const appsDir = path.join(root, 'bench-apps');
  writeContactsApp(appsDir);
  const sqliteDir = path.join(root, 'sqlite');
  const pgDirs = [path.join(root, 'pg-a'), path.join(root, 'pg-b')];
  for (const d of [sqliteDir, ...pgDirs]) fs.mkdirSync(d, { recursive: true });
  const pgUrl = await freshDatabase();
  const database = databases.at(-1)!;

  let t0 = performance.now();
  const sqliteData = await seedApi({ dataDir: sqliteDir }, appsDir);
  log(`SQLite: seeded ${fmtInt(customers)} customers in ${secondsSince(t0)} s`);
  t0 = performance.now();
  const pgData = await seedApi({ dataDir: pgDirs[0], databaseUrl: pgUrl }, appsDir);
  log(`PostgreSQL: seeded ${fmtInt(customers)} customers in ${secondsSince(t0)} s`);

  t0 = performance.now();
  const sqlite = await startApi(sqliteDir, appsDir);
  const pgA = await startApi(pgDirs[0], appsDir, pgUrl);
  const pgB = await startApi(pgDirs[1], appsDir, pgUrl);
  const all = [sqlite, pgA, pgB];
  log(`API processes listening (SQLite :${sqlite.port}; PostgreSQL :${pgA.port} and :${pgB.port}, one database) after ${secondsSince(t0)} s`);

  // Every server answers the same page and accepts the body.
  for (const [s, d] of [[sqlite, sqliteData], [pgA, pgData], [pgB, pgData]] as const) {
    const headers = { authorization: `Bearer ${d.key}`, 'x-company-id': d.companyId };
    const list = await fetch(`http://127.0.0.1:${s.port}/api/v1/customers?page=7&pageSize=20`, { headers });
    const body = (await list.json()) as { total: number; data: unknown[] };
    if (list.status !== 200 || body.total !== customers || body.data.length !== 20) throw new Error(`sanity: list on :${s.port} answered ${list.status}`);
    const created = await fetch(`http://127.0.0.1:${s.port}/api/v1/invoices`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: invoiceBody(d.customerIds[0], 0) });
    if (created.status !== 201) throw new Error(`sanity: create on :${s.port} answered ${created.status}: ${await created.text()}`);
  }
  log('sanity: every API process lists 20 of the customers and creates an invoice (201)');

  const cases: ApiCase[] = [];
  for (const kind of ['list', 'create'] as const) {
    const what = kind === 'list' ? 'GET /api/v1/customers' : 'POST /api/v1/invoices';
    cases.push(
      { id: `sqlite-${kind}`, label: `SQLite, 1 process      ${what}`, servers: [sqlite], data: sqliteData, kind },
      { id: `pg1-${kind}`, label: `PostgreSQL, 1 process  ${what}`, servers: [pgA], data: pgData, kind, database },
      { id: `pg2-${kind}`, label: `PostgreSQL, 2 processes ${what}`, servers: [pgA, pgB], data: pgData, kind, database },
    );
  }
  const pausedFor = (c: ApiCase) => all.filter((s) => !c.servers.includes(s));
  const warm = Math.min(2, seconds);
  for (const c of cases) await runApiCase(c, warm, 99, pausedFor(c));
  log(`warmed up (${warm} s per case); ${rounds} rounds × ${cases.length} cases × ${seconds} s, ${connections} connections in two load children`);

  const results = new Map<string, ApiRun[]>(cases.map((c) => [c.id, []]));
  // PostgreSQL's backends for this database count as ours, not as other processes' load.
  const meter = otherLoadMeter([...all.map((s) => s.pid), ...(await backends(database))]);
  const groups = [cases.slice(0, 3), cases.slice(3)];
  for (let round = 0; round < rounds; round++) {
    const order = groups.flatMap((g) => (round % 2 === 0 ? g : [...g].reverse()));
    const line: string[] = [];
    for (const c of order) {
      const r = await runApiCase(c, seconds, 1000 + round, pausedFor(c));
      results.get(c.id)!.push(r);
      line.push(`${c.id} ${fmtInt(r.rps)}${r.failed ? ` (${r.failed} failed)` : ''}`);
    }
    log(`  round ${round + 1}: ${line.join(', ')} req/s`);
  }
  const others = meter.report();
  await Promise.all(all.map((s) => stopChild(s.child)));

  const summary: Record<string, ApiSummary> = {};
  for (const c of cases) {
    const rs = results.get(c.id)!;
    summary[c.id] = {
      label: c.label,
      rps: median(rs.map((r) => r.rps)),
      p50: median(rs.map((r) => r.p50)),
      p99: median(rs.map((r) => r.p99)),
      cpuUsPerReq: median(rs.map((r) => r.cpuUsPerReq)),
      pgUsPerReq: median(rs.map((r) => r.pgUsPerReq)),
      perRound: rs.map((r) => r.rps),
      failed: rs.reduce((s, r) => s + r.failed, 0),
    };
  }
  return { cases: summary, others };
}

// ---------------------------------------------------------------- part 3: delivery workers

/** A `DIWAN_ROLES=worker` process running core/main.ts, ready once it logs that it listens. */
async function startWorker(databaseUrl: string): Promise<Server> {
  const env: NodeJS.ProcessEnv = {
    DIWAN_ROLES: 'worker', PORT: '0', HOST: '127.0.0.1', DATA_DIR: tempDir('diwan-bench-worker-'),
    DIWAN_DATABASE_URL: databaseUrl, DIWAN_WEBHOOK_ALLOW_LOOPBACK: '1',
  };
  const child = forkTs(path.join(REPO_ROOT, 'core', 'main.ts'), [], { env, silent: true });
  children.push(child);
  let err = '';
  child.stderr!.on('data', (b: Buffer) => (err += b));
  await new Promise<void>((resolve, reject) => {
    let out = '';
    const onData = (b: Buffer) => {
      out += b;
      if (/Diwan is listening/.test(out)) {
        child.stdout!.off('data', onData);
        child.stdout!.resume(); // the log is read and dropped from now on
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`worker exited (code ${code}) before listening: ${err}${out.slice(-2000)}`)));
  });
  return { child, port: 0, pid: child.pid! };
}

interface Receipt {
  eventId: string;
  deliveryId: string;
  at: number;
}

interface DeliveryRun {
  perSecond: number;
  p50: number;
  p99: number;
  seconds: number;
  /** How long committing the events took (the bench's writer, one transaction each). */
  emitSeconds: number;
  cpuUsPerDelivery: number;
  pgUsPerDelivery: number;
}

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function deliveryPart(): Promise<{ runs: Record<number, DeliveryRun[]>; light: Record<number, DeliveryRun[]>; others: string }> {
  const url = await freshDatabase();
  const receiverChild = forkTs(path.join(BENCH_DIR, 'lib', 'scaling-receiver.ts'));
  children.push(receiverChild);
  const { port } = await firstMessage<{ port: number }>(receiverChild);

  // The bench's own host writes the events: API role only, so it delivers nothing itself.
  const writer: Host = await buildHost({
    databaseUrl: url,
    config: { dataDir: tempDir('diwan-bench-writer-'), roles: { api: true, worker: false }, rateLimitPerMinute: 0, webhooks: { ...loadConfig().webhooks, allowLoopback: true } },
    defaultApps: [],
    logger: false,
  });
  try {
    const { company } = await writer.createCompany({ name: 'Bench', apps: ['invoicing'] });
    for (let e = 0; e < ENDPOINTS; e++) {
      // maxInFlight well above what 4 workers keep busy: the cap, held across processes, is not what is measured.
      await writer.webhooks.endpoints.create({ companyId: company.id, actor: CLI_ACTOR, appId: 'core' }, { url: `http://127.0.0.1:${port}/hook/${e}`, topics: ['invoice.*'], maxInFlight: 64 });
    }
    const database = databases.at(-1)!;
    const settled = async () => {
      const deadline = performance.now() + 60_000;
      for (;;) {
        const row = await writer.storage.db.get<{ n: number }>("SELECT count(*) AS n FROM webhook_deliveries WHERE state <> 'delivered'");
        if (Number(row!.n) === 0) return;
        if (performance.now() > deadline) throw new Error(`${row!.n} deliveries not delivered after 60 s`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    /** What the database was doing when a run stalled: the deliveries by state, and every connection's state and query. */
    const stallReport = async () => {
      const states = await writer.storage.db.all("SELECT state, count(*) AS n FROM webhook_deliveries GROUP BY state");
      const c = new pg.Client({ connectionString: serverUrl });
      await c.connect();
      try {
        const acts = (await c.query("SELECT pid, state, wait_event_type, wait_event, now() - xact_start AS xact_age, left(query, 160) AS query FROM pg_stat_activity WHERE datname = $1", [database])).rows;
        return JSON.stringify({ states, acts }, null, 1);
      } finally {
        await c.end();
      }
    };

    /** Commits `n` events one transaction each (one per `paceMs` if given, else back to back); waits for every delivery at the receiver. */
    const run = async (active: Server[], n: number, base: number, paceMs = 0): Promise<DeliveryRun> => {
      const cpu0 = active.map((w) => processCpuSeconds(w.pid));
      const pgPids = await backends(database);
      const pg0 = cpuOf(pgPids);
      const got = firstMessage<{ receipts: Receipt[] }>(receiverChild, 60_000);
      receiverChild.send({ expect: n * ENDPOINTS });
      const committed = new Map<string, number>();
      const start = performance.timeOrigin + performance.now();
      for (let i = 0; i < n; i++) {
        if (paceMs) await new Promise((r) => setTimeout(r, paceMs));
        const ev = await writer.storage.db.transaction(() => writer.outbox.emit(company.id, 'invoice.created', sampleInvoiceData(base + i)));
        committed.set(ev.id, performance.timeOrigin + performance.now());
      }
      const emitSeconds = (performance.timeOrigin + performance.now() - start) / 1000;
      const { receipts } = await got.catch(async (err) => {
        throw new Error(`${(err as Error).message}; with ${active.length} workers, the database then: ${await stallReport()}`);
      });
      const cpu = active.reduce((s, w, i) => s + processCpuSeconds(w.pid) - cpu0[i], 0);
      const pgCpu = cpuOf(pgPids) - pg0;
      const lat = receipts.map((r) => r.at - committed.get(r.eventId)!).sort((a, b) => a - b);
      if (lat.some((x) => !Number.isFinite(x))) throw new Error('a receipt names an event this run did not commit');
      const last = Math.max(...receipts.map((r) => r.at));
      const secs = (last - start) / 1000;
      await settled();
      return { perSecond: receipts.length / secs, p50: pct(lat, 50), p99: pct(lat, 99), seconds: secs, emitSeconds, cpuUsPerDelivery: (cpu / receipts.length) * 1e6, pgUsPerDelivery: (pgCpu / receipts.length) * 1e6 };
    };

    // The workers running: grown (new ones started, then warmed up with a burst through all of
    // them) or shrunk (the newest stopped with SIGTERM, which drains) to the case's count. The
    // rounds' alternating order (1, 2, 4 then 4, 2, 1) reuses them. Pausing the extra ones with
    // SIGSTOP instead stalled a run (a first version did): a paused worker in mid-transaction
    // holds what the others wait on, which is no state for a worker that is meant to be idle.
    const workers: Server[] = [];
    let warmBase = 1_000_000;
    const setWorkers = async (k: number) => {
      if (workers.length < k) {
        const t0 = performance.now();
        workers.push(...(await Promise.all(Array.from({ length: k - workers.length }, () => startWorker(url)))));
        await run(workers, Math.min(events, 100), (warmBase += 1000));
        log(`  (${k} workers running: started and warmed up in ${secondsSince(t0)} s)`);
      }
      while (workers.length > k) await stopChild(workers.pop()!.child);
    };
    await setWorkers(1);
    log(`\nreceiver :${port}; ${ENDPOINTS} endpoints, topics invoice.*; ${rounds} rounds × ${WORKERS.join('/')} workers × ${events} events, order alternating per round`);
    const runs: Record<number, DeliveryRun[]> = Object.fromEntries(WORKERS.map((k) => [k, []]));
    const light: Record<number, DeliveryRun[]> = Object.fromEntries(WORKERS.map((k) => [k, []]));
    // Workers come and go: their CPU and their backends' is in the per-delivery columns; this
    // meter counts workers that ended as ours, and the backends of workers as other processes.
    const meter = otherLoadMeter(await backends(database));
    let base = 1000;
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? WORKERS : [...WORKERS].reverse();
      const line: string[] = [];
      for (const k of order) {
        await setWorkers(k);
        const r = await run(workers, events, (base += events));
        runs[k].push(r);
        // Light load: latency without a backlog, LIGHT_EVENTS events at one per LIGHT_MS.
        const l = await run(workers, LIGHT_EVENTS, (base += LIGHT_EVENTS), LIGHT_MS);
        light[k].push(l);
        line.push(`${k}w ${fmtInt(r.perSecond)}/s (committed in ${r.emitSeconds.toFixed(1)} s, delivered in ${r.seconds.toFixed(1)} s) p50 ${fmtMs(r.p50)} p99 ${fmtMs(r.p99)} ms, light p50 ${fmtMs(l.p50)} p99 ${fmtMs(l.p99)} ms`);
      }
      log(`  round ${round + 1}: ${line.join(';\n           ')}`);
    }
    await setWorkers(0);
    const others = meter.report();
    return { runs, light, others };
  } finally {
    await writer.close();
  }
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  log(`bench/scaling.ts — ${machineLine()} — ${new Date().toISOString()}`);
  log(`load average at start: ${os.loadavg().map((x) => x.toFixed(2)).join(', ')}; PostgreSQL ${serverUrl.replace(/\/\/[^@]*@/, '//…@')}`);
  log(`rounds ${rounds}, ${seconds} s per API case, ${connections} connections, ${fmtInt(customers)} customers, ${events} events × ${ENDPOINTS} endpoints per delivery run\n`);
  const api = await apiPart();
  const del = await deliveryPart();
  const loadEnd = os.loadavg();

  log('\ncase                                              req/s (median)   p50 ms   p99 ms   API CPU µs/req   PostgreSQL CPU µs/req   failures   req/s per round');
  for (const c of Object.values(api.cases)) {
    log(`${c.label.padEnd(50)} ${fmtInt(c.rps).padStart(8)} ${fmtMs(c.p50).padStart(10)} ${fmtMs(c.p99).padStart(8)} ${c.cpuUsPerReq.toFixed(0).padStart(10)} ${c.pgUsPerReq.toFixed(0).padStart(18)} ${String(c.failed).padStart(16)}   ${c.perRound.map(fmtInt).join(' ')}`);
  }
  log(api.others);
  log(`\nworkers   deliveries/s (median)   burst p50 ms   p99 ms   light p50 ms   p99 ms   worker CPU µs/delivery   PostgreSQL CPU µs/delivery   deliveries/s per round`);
  const dsum: Record<number, { perSecond: number; p50: number; p99: number; lp50: number; lp99: number; cpu: number; pg: number }> = {};
  for (const k of WORKERS) {
    const rs = del.runs[k];
    const ls = del.light[k];
    dsum[k] = {
      perSecond: median(rs.map((r) => r.perSecond)), p50: median(rs.map((r) => r.p50)), p99: median(rs.map((r) => r.p99)),
      lp50: median(ls.map((r) => r.p50)), lp99: median(ls.map((r) => r.p99)), cpu: median(rs.map((r) => r.cpuUsPerDelivery)), pg: median(rs.map((r) => r.pgUsPerDelivery)),
    };
    const d = dsum[k];
    log(`${String(k).padStart(7)} ${fmtInt(d.perSecond).padStart(16)} ${fmtMs(d.p50).padStart(18)} ${fmtMs(d.p99).padStart(8)} ${fmtMs(d.lp50).padStart(14)} ${fmtMs(d.lp99).padStart(8)} ${d.cpu.toFixed(0).padStart(18)} ${d.pg.toFixed(0).padStart(24)}            ${rs.map((r) => fmtInt(r.perSecond)).join(' ')}`);
  }
  log(`(burst: ${events} events committed back to back; light: ${LIGHT_EVENTS} events, one every ${LIGHT_MS} ms, × ${ENDPOINTS} endpoints)`);
  log(del.others);

  const c = api.cases;
  const failed = Object.values(c).reduce((s, x) => s + x.failed, 0);
  log('\n== summary: scaling ==');
  log(`PostgreSQL / SQLite, 1 process:   list ${(c['pg1-list'].rps / c['sqlite-list'].rps).toFixed(2)}×, create ${(c['pg1-create'].rps / c['sqlite-create'].rps).toFixed(2)}× req/s (CPU per request, API process + PostgreSQL against the SQLite process, whose queries run inside it: list ${((c['pg1-list'].cpuUsPerReq + c['pg1-list'].pgUsPerReq) / c['sqlite-list'].cpuUsPerReq).toFixed(2)}×, create ${((c['pg1-create'].cpuUsPerReq + c['pg1-create'].pgUsPerReq) / c['sqlite-create'].cpuUsPerReq).toFixed(2)}×)`);
  log(`2 / 1 API processes, PostgreSQL:  list ${(c['pg2-list'].rps / c['pg1-list'].rps).toFixed(2)}×, create ${(c['pg2-create'].rps / c['pg1-create'].rps).toFixed(2)}× req/s`);
  log(`delivery workers, against 1:      ${WORKERS.map((k) => `${k}: ${(dsum[k].perSecond / dsum[1].perSecond).toFixed(2)}×`).join(', ')} deliveries/s`);
  log(`commit → receipt p50/p99, burst:  ${WORKERS.map((k) => `${k}w ${fmtMs(dsum[k].p50)}/${fmtMs(dsum[k].p99)} ms`).join(', ')}`);
  log(`commit → receipt p50/p99, light:  ${WORKERS.map((k) => `${k}w ${fmtMs(dsum[k].lp50)}/${fmtMs(dsum[k].lp99)} ms`).join(', ')}`);
  log(failed ? `${failed} API requests failed: run INVALID` : 'every measured API request answered 2xx');
  log(`load average at end: ${loadEnd.map((x) => x.toFixed(2)).join(', ')} (1, 5, 15 min; 2 cores)`);
  if (failed) process.exitCode = 1;
}

try {
  await main();
} finally {
  await Promise.all(children.map((c) => stopChild(c)));
  for (const name of databases) await pgAdmin(serverUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch(() => {});
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
}
