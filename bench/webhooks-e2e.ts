// Webhook deliveries per second from a committed write to a 2xx at a loopback receiver: the
// host (outbox → fan-out → batched signing on the pool → guarded POST → delivery log) vs a
// bare undici loop that signs inline and POSTs the same bodies to the same receiver, at the
// same concurrency, in the same run. The receiver runs in a child process so that it costs
// both cases alike; so does the bare loop, so that nothing the host loads or runs (its HTTP
// client, its JIT state) speeds it up or slows it down. Prints deliveries/s, their ratio, and
// p50/p99 latency (write → 2xx) under a burst, with the CPU (all threads) and the main thread's
// busy time per delivery (the serial part, steadier than the rate on a shared machine); then
// p50/p99 at a light load (10 events a second, each sent as it is written).
// Also the floor: the bare loop with the parts the host cannot do without and nothing else (a
// committed event write per event through the host's SqliteDb and outbox, signing on the
// host's SignerPool in batches, both schemes as the host signs them, the host's guarded send), no
// fan-out and no delivery log. No host can go faster than its floor; the floor/bare ratio says
// how close to the bare loop any host built on those parts can come.
// Usage: npx tsx bench/webhooks-e2e.ts [events, default 1000] [endpoints, default 4] [in flight per endpoint, default 8] [--postgres]
// With --postgres, the host runs on a new database of DIWAN_BENCH_DATABASE_URL's server
// (default postgres://postgres@127.0.0.1:5432/test), dropped after each run.
// With SQL_TIME=1, also prints where the measured host runs' database time went, by statement.
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { buildHost } from '../core/host.ts';
import { REPO_ROOT, validManifest } from '../core/apps/app-source.ts';
import { signHeader, unixSeconds, generateSecret } from '../core/webhooks/signature.ts';
import { eventBody, EVENT_ID_HEADER, SIGNING_THREADS } from '../core/webhooks/dispatcher.ts';
import { SignerPool, type Signed } from '../core/webhooks/signer-pool.ts';
import { sendDelivery, webhookAgent } from '../core/webhooks/send.ts';
import { Outbox } from '../core/events/outbox.ts';
import { openStorage, type Storage } from '../core/storage/open.ts';
import { systemClock } from '../core/kernel/clock.ts';
import type { AttemptOutcome } from '../core/webhooks/deliveries.ts';
import { forkTs, pgAdmin, sampleInvoiceData, startWebhookReceiver } from './lib/util.ts';
import { sqlTimer } from './lib/sql-time.ts';

const args = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const POSTGRES = process.argv.includes('--postgres');
const BARE_CHILD = process.argv.includes('--bare-child');
const PG_SERVER = process.env.DIWAN_BENCH_DATABASE_URL?.trim() || 'postgres://postgres@127.0.0.1:5432/test';
const EVENTS = Number(args[0] ?? 1000);
const ENDPOINTS = Number(args[1] ?? 4);
const PER_ENDPOINT = Number(args[2] ?? 8);
const CONCURRENCY = ENDPOINTS * PER_ENDPOINT;
const sql = process.env.SQL_TIME ? sqlTimer() : undefined;

const cpuPer = (since: NodeJS.CpuUsage, n: number) => {
  const c = process.cpuUsage(since);
  return (c.user + c.system) / n;
};
const loopPer = (since: ReturnType<typeof performance.eventLoopUtilization>, n: number) => (performance.eventLoopUtilization(since).active * 1000) / n;

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

interface Result {
  name: string;
  deliveries: number;
  seconds: number;
  perSecond: number;
  p50: number;
  p99: number;
  /** CPU time of this process (every thread: the signing pool's too) per delivery, µs. */
  cpuUs: number;
  /** Time the main thread's event loop was busy per delivery, µs: the serial part, which bounds the rate. */
  loopUs: number;
}

/** Events of the light load, one every LIGHT_MS; the first WARM_UP of each side are not timed (a server runs warm). */
const LIGHT_EVENTS = 50;
const WARM_UP = 3;
const LIGHT_MS = 100;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A new database of the bench's PostgreSQL server; its URL. */
async function createPgDatabase(name: string): Promise<string> {
  await pgAdmin(PG_SERVER, `CREATE DATABASE "${name}" TEMPLATE template0 ENCODING 'UTF8'`);
  const u = new URL(PG_SERVER);
  u.pathname = `/${name}`;
  return u.toString();
}

async function runHost(port: number, events = EVENTS, paceMs = 0): Promise<Result> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'diwan-bench-wh-'));
  const file = path.join(REPO_ROOT, 'manifests', 'invoicing.json');
  const manifest = validManifest(JSON.parse(fs.readFileSync(file, 'utf8')));
  const pgName = POSTGRES ? `diwan_bench_wh_${process.pid}_${Date.now()}` : undefined;
  const databaseUrl = pgName && (await createPgDatabase(pgName));
  const host = await buildHost({
    ...(databaseUrl ? { databaseUrl } : { dbFile: path.join(dir, 'bench.db') }),
    sources: [{ manifest, dir: path.join(REPO_ROOT, 'apps-installed', manifest.id), origin: 'first-party' }],
    config: { dataDir: dir, webhooks: { ladder: [60], timeoutMs: 10_000, allowLoopback: true, allowPrivate: false, maxInFlightPerEndpoint: PER_ENDPOINT, rotationGraceSeconds: 0 } },
  });
  try {
    const { company } = await host.createCompany({ name: 'Bench', apps: ['invoicing'] });
    const actor = { type: 'cli' as const, id: 'bench' };
    for (let e = 0; e < ENDPOINTS; e++) {
      await host.webhooks.endpoints.create({ companyId: company.id, actor, appId: 'core' }, { url: `http://127.0.0.1:${port}/hook/${e}`, topics: ['invoice.*'] });
    }
    await host.webhooks.dispatcher.fanOut(); // the endpoints' own audit events

    // Delivery time per delivery: once the transaction that records its result (a take's, or
    // recordMany's when no loop runs) has committed.
    const committed = new Map<string, number>();
    const warmUp = new Set<string>();
    const latencies: number[] = [];
    let delivered = 0;
    let failed = 0;
    const expected = events * ENDPOINTS;
    let done!: () => void;
    const allDone = new Promise<void>((r) => (done = r));
    const seen = (items: AttemptOutcome[]) => {
      const at = performance.now();
      for (const it of items) {
        if (it.result.ok) {
          delivered++;
          if (!warmUp.has(it.row.event_id)) latencies.push(at - committed.get(it.row.event_id)!);
        } else failed++;
      }
      if (delivered + failed === expected) done();
    };
    const deliveries = host.webhooks.deliveries;
    const take = deliveries.take.bind(deliveries);
    deliveries.take = async (...args) => {
      const taken = await take(...args);
      const results = args[4];
      if (results) seen(results.items);
      return taken;
    };
    const recordMany = deliveries.recordMany.bind(deliveries);
    deliveries.recordMany = async (items, after) => {
      const stored = await recordMany(items, after);
      seen(items);
      return stored;
    };

    host.webhooks.start();
    const started = performance.now();
    const cpu0 = process.cpuUsage();
    const loop0 = performance.eventLoopUtilization();
    for (let i = 0; i < events; i++) {
      if (paceMs) await sleep(paceMs);
      // One committed write per event, as a document write's transaction would emit it.
      const ev = await host.storage.db.transaction(() => host.outbox.emit(company.id, 'invoice.created', sampleInvoiceData(i)));
      committed.set(ev.id, performance.now());
      if (paceMs && i < WARM_UP) warmUp.add(ev.id);
    }
    await allDone;
    const seconds = (performance.now() - started) / 1000;
    const cpuUs = cpuPer(cpu0, delivered);
    const loopUs = loopPer(loop0, delivered);
    latencies.sort((a, b) => a - b);
    if (failed) console.error(`host: ${failed} failed attempts`);
    return { name: 'host (outbox → pool-signed → guarded POST → log)', deliveries: delivered, seconds, perSecond: delivered / seconds, p50: pct(latencies, 50), p99: pct(latencies, 99), cpuUs, loopUs };
  } finally {
    await host.close();
    fs.rmSync(dir, { recursive: true, force: true });
    if (pgName) await pgAdmin(PG_SERVER, `DROP DATABASE IF EXISTS "${pgName}" WITH (FORCE)`);
  }
}

/** What the floor adds to the bare loop: the host's own database, outbox, signing pool and send. */
interface FloorParts {
  storage: Storage;
  outbox: Outbox;
  signer: SignerPool;
}
/** Events whose deliveries the floor signs in one call, as a take signs what it took (~16 deliveries). */
const FLOOR_SIGN_EVENTS = 4;

/** On the host's kind of database: `url` (PostgreSQL, made and dropped by the parent) or a new SQLite file. */
async function floorParts(url?: string): Promise<FloorParts> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'diwan-bench-floor-'));
  const storage = await openStorage({ file: path.join(dir, 'floor.db'), ...(url ? { url } : {}) });
  process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  return { storage, outbox: new Outbox(storage.db, storage.outbox, systemClock), signer: new SignerPool({ threads: SIGNING_THREADS }) };
}

async function runBare(port: number, events = EVENTS, paceMs = 0, floor?: FloorParts): Promise<Result> {
  const secrets = Array.from({ length: ENDPOINTS }, () => generateSecret());
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: CONCURRENCY, pipelining: 1 });
  const agent = floor && webhookAgent({ allowLoopback: true, allowPrivate: false });
  type Job = {
    body: string; bytes?: Buffer; endpoint: number; ready: number; eventId: string; warm: boolean; signature?: Promise<Signed>; t?: string;
    /** Settles `signature` once the job's batch went to the pool. */
    signed?: (s: Promise<Signed>) => void;
  };
  const jobs: Job[] = [];
  let unsigned: Job[] = [];
  const signAll = () => {
    const batch = unsigned;
    unsigned = [];
    const t = unixSeconds(Date.now());
    // Both schemes in one worker call, as the host signs every delivery.
    const signed = floor!.signer.signAll(batch.map((j) => ({ secrets: [secrets[j.endpoint]], t, body: j.bytes!, id: j.eventId })));
    const ts = String(t);
    batch.forEach((j, i) => {
      j.t = ts;
      j.signed!(signed.then((h) => h[i]));
    });
  };
  const latencies: number[] = [];
  const started = performance.now();
  const cpu0 = process.cpuUsage();
  const loop0 = performance.eventLoopUtilization();
  let produced = 0;
  const produce = async () => {
    for (let i = 0; i < events; i++) {
      if (paceMs) await sleep(paceMs);
      const data = sampleInvoiceData(i);
      let eventId = `evt_${i}`;
      let createdAt = new Date().toISOString();
      if (floor) ({ id: eventId, createdAt } = await floor.storage.db.transaction(() => floor.outbox.emit('co_bench', 'invoice.created', data)));
      const body = eventBody({ event_id: eventId, topic: 'invoice.created', event_created_at: createdAt, company_id: 'co_bench', data: JSON.stringify(data), test: 0 });
      const bytes = floor && Buffer.from(body, 'utf8');
      const ready = performance.now();
      for (let e = 0; e < ENDPOINTS; e++) {
        const job: Job = { body, bytes, endpoint: e, ready, eventId, warm: paceMs > 0 && i < WARM_UP };
        jobs.push(job);
        if (floor) {
          // A worker may take the job before its batch is signed (on PostgreSQL the event write
          // lets the workers run): it waits for the signature, as an attempt waits for its take's.
          job.signature = new Promise<Signed>((resolve) => (job.signed = resolve));
          unsigned.push(job);
        }
      }
      if (floor && (paceMs || unsigned.length >= FLOOR_SIGN_EVENTS * ENDPOINTS || i === events - 1)) signAll();
      produced++;
    }
  };
  const producing = produce();
  let next = 0;
  let delivered = 0;
  const worker = async () => {
    while (next < jobs.length || produced < events) {
      if (next >= jobs.length) {
        await sleep(1);
        continue;
      }
      const j = jobs[next++];
      let ok: boolean;
      if (floor) {
        const signed = await j.signature!;
        const headers = {
          'x-service-signature': signed.signature, 'webhook-id': j.eventId, 'webhook-timestamp': j.t!, 'webhook-signature': signed.standard, [EVENT_ID_HEADER]: j.eventId,
        };
        ok = (await sendDelivery({ url: `http://127.0.0.1:${port}/hook/${j.endpoint}`, body: j.bytes!, headers, allowLoopback: true, allowPrivate: false, agent })).ok;
      } else {
        const t = unixSeconds(Date.now());
        const res = await pool.request({
          method: 'POST',
          path: `/hook/${j.endpoint}`,
          headers: { 'content-type': 'application/json', 'x-service-signature': signHeader([secrets[j.endpoint]], t, j.body), [EVENT_ID_HEADER]: j.eventId },
          body: j.body,
        });
        await res.body.text();
        ok = res.statusCode >= 200 && res.statusCode < 300;
      }
      if (ok) {
        delivered++;
        if (!j.warm) latencies.push(performance.now() - j.ready);
      }
    }
  };
  await Promise.all([producing, ...Array.from({ length: CONCURRENCY }, worker)]);
  const seconds = (performance.now() - started) / 1000;
  const cpuUs = cpuPer(cpu0, delivered);
  const loopUs = loopPer(loop0, delivered);
  await pool.close();
  await agent?.destroy();
  latencies.sort((a, b) => a - b);
  if (floor) return { name: 'floor (bare + event write, pool signing, guarded send)', deliveries: delivered, seconds, perSecond: delivered / seconds, p50: pct(latencies, 50), p99: pct(latencies, 99), cpuUs, loopUs };
  return { name: 'bare undici loop (inline sign, keep-alive POST)', deliveries: delivered, seconds, perSecond: delivered / seconds, p50: pct(latencies, 50), p99: pct(latencies, 99), cpuUs, loopUs };
}

/** The bare loop in a process of its own, kept for the whole run (warmed up like the host). */
function bareProcess(floorUrl?: string): { run(port: number, events?: number, paceMs?: number, floor?: boolean): Promise<Result>; stop(): void } {
  const child: ChildProcess = forkTs(fileURLToPath(import.meta.url), [...process.argv.slice(2), '--bare-child']);
  return {
    run: (port, events = EVENTS, paceMs = 0, floor = false) =>
      new Promise<Result>((resolve, reject) => {
        const exited = (code: number | null) => reject(new Error(`the bare loop's process exited (${code})`));
        child.once('exit', exited);
        child.once('message', (r: Result) => {
          child.off('exit', exited);
          resolve(r);
        });
        child.send({ port, events, paceMs, floor, floorUrl });
      }),
    stop: () => void child.kill(),
  };
}

if (BARE_CHILD) {
  let floor: Promise<FloorParts> | undefined;
  process.on('message', async (m: { port: number; events: number; paceMs: number; floor: boolean; floorUrl?: string }) =>
    process.send!(await runBare(m.port, m.events, m.paceMs, m.floor ? await (floor ??= floorParts(m.floorUrl)) : undefined)),
  );
  process.on('disconnect', () => process.exit(0));
} else {
  const receiver = await startWebhookReceiver();
  const floorPg = POSTGRES ? `diwan_bench_floor_${process.pid}_${Date.now()}` : undefined;
  const bare = bareProcess(floorPg && (await createPgDatabase(floorPg)));
  try {
    console.log(`webhooks-e2e${POSTGRES ? ' (PostgreSQL)' : ''}: ${EVENTS} events × ${ENDPOINTS} endpoints = ${EVENTS * ENDPOINTS} deliveries, ${CONCURRENCY} in flight (${PER_ENDPOINT} per endpoint), ${os.availableParallelism()} cores`);
    // Warm-up of both paths (JIT, worker threads, connections), then measured runs, interleaved.
    const results: Result[] = [];
    await bare.run(receiver.port);
    await bare.run(receiver.port, EVENTS, 0, true);
    for (let round = 0; round < 2; round++) {
      sql?.start();
      results.push(await runHost(receiver.port));
      sql?.stop();
      results.push(await bare.run(receiver.port));
      results.push(await bare.run(receiver.port, EVENTS, 0, true));
    }
    const best = (prefix: string) => results.filter((r) => r.name.startsWith(prefix)).sort((a, b) => b.perSecond - a.perSecond)[0];
    const host = best('host');
    const bareBest = best('bare');
    const floor = best('floor');
    for (const r of [host, bareBest, floor]) {
      console.log(`${r.name.padEnd(55)} ${r.perSecond.toFixed(0).padStart(7)} deliveries/s  p50 ${r.p50.toFixed(1)} ms  p99 ${r.p99.toFixed(1)} ms  (${r.deliveries} in ${r.seconds.toFixed(2)} s)`);
    }
    console.log(`ratio host/bare throughput: ${(host.perSecond / bareBest.perSecond).toFixed(3)}`);
    console.log(`ratio floor/bare: ${(floor.perSecond / bareBest.perSecond).toFixed(3)} (the most any host on these parts can reach); host/floor: ${(host.perSecond / floor.perSecond).toFixed(3)}`);
    // Steadier than throughput where other tenants share the cores: the work each side does per delivery.
    console.log(`CPU per delivery (each side's process, all threads): host ${host.cpuUs.toFixed(0)} µs, bare ${bareBest.cpuUs.toFixed(0)} µs, ratio bare/host ${(bareBest.cpuUs / host.cpuUs).toFixed(3)}`);
    console.log(`event loop busy per delivery (the main thread): host ${host.loopUs.toFixed(0)} µs, bare ${bareBest.loopUs.toFixed(0)} µs, floor ${floor.loopUs.toFixed(0)} µs (CPU ${floor.cpuUs.toFixed(0)} µs)`);
    if (sql) console.log(sql.report(2 * EVENTS * ENDPOINTS, 'delivery'));
    // Light load: latency, not throughput.
    const lightHost = await runHost(receiver.port, LIGHT_EVENTS, LIGHT_MS);
    const lightBare = await bare.run(receiver.port, LIGHT_EVENTS, LIGHT_MS);
    console.log(`light load (${1000 / LIGHT_MS} events/s × ${ENDPOINTS} endpoints, ${LIGHT_EVENTS} events): host p50 ${lightHost.p50.toFixed(1)} ms p99 ${lightHost.p99.toFixed(1)} ms; bare p50 ${lightBare.p50.toFixed(1)} ms p99 ${lightBare.p99.toFixed(1)} ms`);
    console.log(JSON.stringify({ bench: 'webhooks-e2e', events: EVENTS, endpoints: ENDPOINTS, perEndpoint: PER_ENDPOINT, host, bare: bareBest, floor, ratio: host.perSecond / bareBest.perSecond, floorRatio: floor.perSecond / bareBest.perSecond, cpuRatio: bareBest.cpuUs / host.cpuUs, light: { host: lightHost, bare: lightBare } }));
  } finally {
    bare.stop();
    receiver.stop();
    if (floorPg) await pgAdmin(PG_SERVER, `DROP DATABASE IF EXISTS "${floorPg}" WITH (FORCE)`);
  }
}
