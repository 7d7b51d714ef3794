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
// Beside it, the floor with a lean delivery log: the least a host that caps each endpoint's
// deliveries in flight and delivers at least once writes, in batches with the host's own
// statements where it has them: each delivery's row pending before it may go (the host's fan-out
// insert, a transaction per 16 events, which marks them dispatched as a fan-out does), leased as
// it is sent (one UPDATE by id for the rows wanted in a turn of the loop, as a take leases what
// it sends), its result recorded (the host's recordMany, ending the endpoints' failing streaks).
// No dispatcher: the jobs wait in memory, so no row is read back, and no take looks at an
// endpoint. It says what the delivery log alone costs on these parts, and so how far the host's
// dispatcher is from it.
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
import { isoNow, newId, newSortableId } from '../core/kernel/ids.ts';
import type { AttemptResult, NewDelivery } from '../core/storage/repos/webhook-deliveries.ts';
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
/** Events whose delivery rows the lean log writes in one transaction (the host gathers events for 20 ms). */
const LEAN_FAN_EVENTS = 16;

/**
 * The lean delivery log of the floor (see the top of this file): rows written pending in batches
 * with their events marked dispatched, leased by id as they are sent, results recorded in
 * batches with their endpoints' failing streaks ended, each step a transaction.
 */
function leanLog(parts: FloorParts) {
  const { db, deliveries } = parts.storage;
  type Row = { id: string; token?: string };
  const rows: Row[] = [];
  let writing: Promise<void> = Promise.resolve();
  // The rows workers are about to send, leased together at the end of the loop's turn.
  let wanted: { row: Row; leased: () => void }[] = [];
  // Resolves once the rows of the events gathered now are committed (a worker may take a job
  // before its write starts: on PostgreSQL the event write lets the workers run).
  let written!: () => void;
  let gathering = new Promise<void>((r) => (written = r));
  let results: (AttemptResult & { token: string })[] = [];
  let recording = false;
  let recorded = 0;
  let allRecorded!: () => void;
  const settled = new Promise<void>((r) => (allRecorded = r));
  let expected = Infinity;
  const record = async (): Promise<void> => {
    if (recording || !results.length) return;
    recording = true;
    const batch = results;
    results = [];
    await db.transaction(() => deliveries.recordMany(batch, [...new Set(batch.map((r) => r.endpointId))]));
    recorded += batch.length;
    recording = false;
    if (recorded >= expected) allRecorded();
    else if (results.length) setImmediate(record);
  };
  const leaseWanted = async (): Promise<void> => {
    const batch = wanted;
    wanted = [];
    const token = newId('lse');
    const now = Date.now();
    await db.transaction(() =>
      db.run(`UPDATE webhook_deliveries SET state = 'in_flight', lease_until = ?, lease_token = ?, updated_at = ? WHERE id IN (${batch.map(() => '?').join(', ')}) AND state = 'pending'`, [
        now + 30_000, token, isoNow(now), ...batch.map((b) => b.row.id),
      ]),
    );
    for (const b of batch) {
      b.row.token = token;
      b.leased();
    }
  };
  return {
    /** Settles once the rows of the events gathered now (the next write's) are committed. */
    get durable(): Promise<void> {
      return gathering;
    },
    /** Writes the gathered events' delivery rows, each event's to every endpoint in turn; answers their ids in that order. */
    write(eventIds: string[], endpoints: number): string[] {
      const now = Date.now();
      const fresh: NewDelivery[] = eventIds.flatMap((eventId) =>
        Array.from({ length: endpoints }, (_, endpoint) => ({ id: newSortableId('dlv', now), companyId: 'co_bench', endpointId: `ep_${endpoint}`, eventId, topic: 'invoice.created' })),
      );
      for (const r of fresh) rows.push({ id: r.id });
      const done = written;
      gathering = new Promise<void>((r) => (written = r));
      writing = writing.then(async () => {
        await db.transaction(async () => {
          // As a fan-out takes its events: marked dispatched with their deliveries written.
          await db.run(`UPDATE outbox SET dispatched_at = ? WHERE id IN (${eventIds.map(() => '?').join(', ')})`, [isoNow(now), ...eventIds]);
          await deliveries.insertMany(fresh, now, isoNow(now));
        });
        done();
      });
      return fresh.map((r) => r.id);
    },
    /** Leases the k-th row (written) with the others wanted in the same turn, as a take leases what it sends; answers its lease token. */
    async lease(k: number): Promise<string> {
      await new Promise<void>((leased) => {
        wanted.push({ row: rows[k], leased });
        if (wanted.length === 1) setImmediate(leaseWanted);
      });
      return rows[k].token!;
    },
    /** Records an attempt's result (with those that end meanwhile, in one transaction). */
    done(r: AttemptResult & { token: string }): void {
      results.push(r);
      if (results.length === 1) setImmediate(record);
    },
    /** Resolves once `n` results are recorded. */
    settled(n: number): Promise<void> {
      expected = n;
      if (recorded >= n) allRecorded();
      return settled;
    },
  };
}

/** On the host's kind of database: `url` (PostgreSQL, made and dropped by the parent) or a new SQLite file. */
async function floorParts(url?: string): Promise<FloorParts> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'diwan-bench-floor-'));
  const storage = await openStorage({ file: path.join(dir, 'floor.db'), ...(url ? { url } : {}) });
  process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  return { storage, outbox: new Outbox(storage.db, storage.outbox, systemClock), signer: new SignerPool({ threads: SIGNING_THREADS }) };
}

async function runBare(port: number, events = EVENTS, paceMs = 0, floor?: FloorParts, lean = false): Promise<Result> {
  const log = floor && lean ? leanLog(floor) : undefined;
  const secrets = Array.from({ length: ENDPOINTS }, () => generateSecret());
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: CONCURRENCY, pipelining: 1 });
  const agent = floor && webhookAgent({ allowLoopback: true, allowPrivate: false });
  type Job = {
    body: string; bytes?: Buffer; endpoint: number; ready: number; eventId: string; warm: boolean; signature?: Promise<Signed>; t?: string;
    /** The lean log's row, and its write's commit. */
    deliveryId?: string; durable?: Promise<void>;
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
  // The lean log: the events since its last write, and their jobs.
  let fanned: string[] = [];
  let unwritten: Job[] = [];
  const fan = () => {
    log!.write(fanned, ENDPOINTS).forEach((id, i) => (unwritten[i].deliveryId = id));
    fanned = [];
    unwritten = [];
  };
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
        if (log) {
          job.durable = log.durable;
          unwritten.push(job);
        }
        jobs.push(job);
        if (floor) {
          // A worker may take the job before its batch is signed (on PostgreSQL the event write
          // lets the workers run): it waits for the signature, as an attempt waits for its take's.
          job.signature = new Promise<Signed>((resolve) => (job.signed = resolve));
          unsigned.push(job);
        }
      }
      if (log) {
        fanned.push(eventId);
        if (paceMs || fanned.length >= LEAN_FAN_EVENTS || i === events - 1) fan();
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
      const k = next++;
      const j = jobs[k];
      let ok: boolean;
      if (floor) {
        // Sent only once its row is written and leased.
        let token: string | undefined;
        if (log) {
          await j.durable;
          token = await log.lease(k);
        }
        const signed = await j.signature!;
        const headers = {
          'x-service-signature': signed.signature, 'webhook-id': j.eventId, 'webhook-timestamp': j.t!, 'webhook-signature': signed.standard, [EVENT_ID_HEADER]: j.eventId,
        };
        const sent = await sendDelivery({ url: `http://127.0.0.1:${port}/hook/${j.endpoint}`, body: j.bytes!, headers, allowLoopback: true, allowPrivate: false, agent });
        ok = sent.ok;
        if (log) {
          const at = isoNow(Date.now());
          log.done({
            deliveryId: j.deliveryId!, token: token!, companyId: 'co_bench', endpointId: `ep_${j.endpoint}`, attempt: 1, at, durationMs: sent.durationMs,
            status: sent.status ?? null, failure: sent.ok ? null : (sent.failure ?? 'other'), detail: sent.detail ?? null, responseExcerpt: sent.responseExcerpt,
            responseBytes: sent.responseBytes, next: { state: sent.ok ? 'delivered' : 'dead', at: null },
          });
        }
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
  // Delivered once its result is recorded, as the host's are.
  await log?.settled(events * ENDPOINTS);
  const seconds = (performance.now() - started) / 1000;
  const cpuUs = cpuPer(cpu0, delivered);
  const loopUs = loopPer(loop0, delivered);
  await pool.close();
  await agent?.destroy();
  latencies.sort((a, b) => a - b);
  const name = log ? 'lean log (floor + rows written, leased, recorded)' : floor ? 'floor (bare + event write, pool signing, guarded send)' : 'bare undici loop (inline sign, keep-alive POST)';
  return { name, deliveries: delivered, seconds, perSecond: delivered / seconds, p50: pct(latencies, 50), p99: pct(latencies, 99), cpuUs, loopUs };
}

/** The bare loop in a process of its own, kept for the whole run (warmed up like the host). */
function bareProcess(floorUrl?: string): { run(port: number, events?: number, paceMs?: number, floor?: boolean, lean?: boolean): Promise<Result>; stop(): void } {
  const child: ChildProcess = forkTs(fileURLToPath(import.meta.url), [...process.argv.slice(2), '--bare-child']);
  return {
    run: (port, events = EVENTS, paceMs = 0, floor = false, lean = false) =>
      new Promise<Result>((resolve, reject) => {
        const exited = (code: number | null) => reject(new Error(`the bare loop's process exited (${code})`));
        child.once('exit', exited);
        child.once('message', (r: Result) => {
          child.off('exit', exited);
          resolve(r);
        });
        child.send({ port, events, paceMs, floor, lean, floorUrl });
      }),
    stop: () => void child.kill(),
  };
}

if (BARE_CHILD) {
  let floor: Promise<FloorParts> | undefined;
  process.on('message', async (m: { port: number; events: number; paceMs: number; floor: boolean; lean: boolean; floorUrl?: string }) =>
    process.send!(await runBare(m.port, m.events, m.paceMs, m.floor ? await (floor ??= floorParts(m.floorUrl)) : undefined, m.lean)),
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
    await bare.run(receiver.port, EVENTS, 0, true, true);
    for (let round = 0; round < 2; round++) {
      sql?.start();
      results.push(await runHost(receiver.port));
      sql?.stop();
      results.push(await bare.run(receiver.port));
      results.push(await bare.run(receiver.port, EVENTS, 0, true));
      results.push(await bare.run(receiver.port, EVENTS, 0, true, true));
    }
    const best = (prefix: string) => results.filter((r) => r.name.startsWith(prefix)).sort((a, b) => b.perSecond - a.perSecond)[0];
    const host = best('host');
    const bareBest = best('bare');
    const floor = best('floor');
    const lean = best('lean');
    for (const r of [host, bareBest, floor, lean]) {
      console.log(`${r.name.padEnd(55)} ${r.perSecond.toFixed(0).padStart(7)} deliveries/s  p50 ${r.p50.toFixed(1)} ms  p99 ${r.p99.toFixed(1)} ms  (${r.deliveries} in ${r.seconds.toFixed(2)} s)`);
    }
    console.log(`ratio host/bare throughput: ${(host.perSecond / bareBest.perSecond).toFixed(3)}`);
    console.log(`ratio floor/bare: ${(floor.perSecond / bareBest.perSecond).toFixed(3)} (the most any host on these parts can reach); host/floor: ${(host.perSecond / floor.perSecond).toFixed(3)}`);
    console.log(`ratio lean log/floor: ${(lean.perSecond / floor.perSecond).toFixed(3)} (what the delivery log alone leaves of the floor); host/lean log: ${(host.perSecond / lean.perSecond).toFixed(3)}`);
    // Steadier than throughput where other tenants share the cores: the work each side does per delivery.
    console.log(`CPU per delivery (each side's process, all threads): host ${host.cpuUs.toFixed(0)} µs, bare ${bareBest.cpuUs.toFixed(0)} µs, ratio bare/host ${(bareBest.cpuUs / host.cpuUs).toFixed(3)}`);
    console.log(`event loop busy per delivery (the main thread): host ${host.loopUs.toFixed(0)} µs, bare ${bareBest.loopUs.toFixed(0)} µs, floor ${floor.loopUs.toFixed(0)} µs (CPU ${floor.cpuUs.toFixed(0)} µs), lean log ${lean.loopUs.toFixed(0)} µs (CPU ${lean.cpuUs.toFixed(0)} µs)`);
    if (sql) console.log(sql.report(2 * EVENTS * ENDPOINTS, 'delivery'));
    // Light load: latency, not throughput.
    const lightHost = await runHost(receiver.port, LIGHT_EVENTS, LIGHT_MS);
    const lightBare = await bare.run(receiver.port, LIGHT_EVENTS, LIGHT_MS);
    console.log(`light load (${1000 / LIGHT_MS} events/s × ${ENDPOINTS} endpoints, ${LIGHT_EVENTS} events): host p50 ${lightHost.p50.toFixed(1)} ms p99 ${lightHost.p99.toFixed(1)} ms; bare p50 ${lightBare.p50.toFixed(1)} ms p99 ${lightBare.p99.toFixed(1)} ms`);
    console.log(JSON.stringify({ bench: 'webhooks-e2e', events: EVENTS, endpoints: ENDPOINTS, perEndpoint: PER_ENDPOINT, host, bare: bareBest, floor, lean, ratio: host.perSecond / bareBest.perSecond, floorRatio: floor.perSecond / bareBest.perSecond, leanRatio: lean.perSecond / floor.perSecond, cpuRatio: bareBest.cpuUs / host.cpuUs, light: { host: lightHost, bare: lightBare } }));
  } finally {
    bare.stop();
    receiver.stop();
    if (floorPg) await pgAdmin(PG_SERVER, `DROP DATABASE IF EXISTS "${floorPg}" WITH (FORCE)`);
  }
}
