// Several processes on one PostgreSQL database (issue 13, item 5): two API processes
// (`diwan serve`) and three workers (`diwan worker`), a loopback receiver, one company with one
// endpoint, 2,000 events sent through both API processes, and one worker killed with SIGKILL
// while it delivers. Then: every event reached the receiver at least once; no delivery was ever
// in flight twice at once; a delivery received twice was first received before the kill (only
// the killed worker's work is redone); and the delivery log agrees (every delivery delivered,
// its attempts count equal to its attempt rows, one successful attempt each). PostgreSQL only:
// that is where several processes are meant to run.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildHost, type Host } from '../core/host.ts';
import { dropTestDatabase, testDatabaseUrl } from './db.ts';
import { createKey } from './webhook-helpers.ts';

const BIN = path.resolve(import.meta.dirname, '../cli/bin.js');
const EVENTS = 2000;
const CONCURRENCY = 16;
/** The kill comes once this many requests reached the receiver. */
const KILL_AFTER = 150;
/** Once every event is sent, how long delivery (and the killed worker's leases running out) may take. */
const DRAIN_MS = 60_000;
/** How late this process's receiver may stamp a request the killed worker sent before it died. */
const RECEIVER_LAG_MS = 250;

/** Short leases and retries, so the killed worker's deliveries come back within seconds. */
const PROCESS_ENV = {
  DIWAN_WEBHOOK_ALLOW_LOOPBACK: '1',
  DIWAN_WEBHOOK_TIMEOUT_MS: '3000',
  DIWAN_WEBHOOK_LEASE_MS: '5000',
  DIWAN_WEBHOOK_LADDER: '1s,1s,2s,2s,5s',
  DIWAN_WEBHOOK_MAX_IN_FLIGHT: '8',
  DIWAN_RATE_LIMIT: '0',
  DIWAN_LANG: '',
};

interface Proc {
  name: string;
  child: ChildProcess;
  url: string;
  stderr: string[];
}

/** What the receiver saw. */
interface Seen {
  requests: number;
  /** Event id → how many times it was received. */
  events: Map<string, number>;
  /** Delivery id → receipt times (ms). */
  deliveries: Map<string, number[]>;
  /** Delivery id → the sender's port of its first receipt (which process sent it: see socketPortsOf). */
  firstPort: Map<string, number>;
  /** Delivery id → requests in flight right now (from arrival until the response ends or the connection drops). */
  inFlight: Map<string, number>;
  /** Deliveries one of whose requests lost its connection before the answer was written (its sender died). */
  cut: Set<string>;
  /** Deliveries that arrived while another request for them was still in flight. */
  overlaps: { deliveryId: string; at: number }[];
}

function receiver(): Promise<{ url: string; seen: Seen; close(): Promise<void> }> {
  const seen: Seen = { requests: 0, events: new Map(), deliveries: new Map(), firstPort: new Map(), inFlight: new Map(), cut: new Set(), overlaps: [] };
  const server = http.createServer((req, res) => {
    const deliveryId = String(req.headers['x-diwan-delivery-id'] ?? '');
    const eventId = String(req.headers['x-diwan-event-id'] ?? '');
    const now = Date.now();
    seen.requests++;
    const n = (seen.inFlight.get(deliveryId) ?? 0) + 1;
    seen.inFlight.set(deliveryId, n);
    if (n > 1) seen.overlaps.push({ deliveryId, at: now });
    seen.deliveries.set(deliveryId, [...(seen.deliveries.get(deliveryId) ?? []), now]);
    if (!seen.firstPort.has(deliveryId)) seen.firstPort.set(deliveryId, req.socket.remotePort ?? 0);
    // 'close' comes when the response is sent and when the sender's connection drops (a killed worker).
    res.once('close', () => {
      seen.inFlight.set(deliveryId, (seen.inFlight.get(deliveryId) ?? 1) - 1);
      if (!res.writableFinished) seen.cut.add(deliveryId);
    });
    req.resume();
    req.on('end', () => {
      // A few milliseconds of work, so that requests overlap as they would on a real receiver.
      setTimeout(() => {
        seen.events.set(eventId, (seen.events.get(eventId) ?? 0) + 1);
        res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      }, 2 + Math.floor(Math.random() * 8));
    });
  });
  server.keepAliveTimeout = 30_000;
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      resolve({
        url: `http://127.0.0.1:${port}/hook`,
        seen,
        close: () => new Promise<void>((done) => {
          server.closeAllConnections();
          server.close(() => done());
        }),
      });
    }),
  );
}

/** `diwan serve|worker --json --port 0`: resolves once it prints where it listens. */
function startProcess(name: string, command: 'serve' | 'worker', env: Record<string, string>): Promise<Proc> {
  const child = spawn(process.execPath, [BIN, command, '--json', '--port', '0', '--host', '127.0.0.1'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const stderr: string[] = [];
  child.stderr!.on('data', (d) => stderr.push(String(d)));
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      let doc: { url?: string; error?: unknown };
      try {
        doc = JSON.parse(out);
      } catch {
        return; // not complete yet
      }
      if (doc.url) resolve({ name, child, url: doc.url, stderr });
      else reject(new Error(`${name} did not start: ${out}`));
    });
    child.once('exit', (code, signal) => reject(new Error(`${name} exited (${code ?? signal}) before listening: ${stderr.join('')}`)));
  });
}

/**
 * The local ports of a process's TCP connections to `toPort` (Linux's /proc; elsewhere none).
 * Read just before the kill, they tell the killed worker's requests apart from the others'
 * whenever the receiver reads them: a request it sent just before dying may be read well after
 * the kill on a busy machine.
 */
function socketPortsOf(pid: number, toPort: number): Set<number> {
  const ports = new Set<number>();
  try {
    const inodes = new Set<string>();
    for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (m) inodes.add(m[1]);
      } catch {
        // closed meanwhile
      }
    }
    for (const table of ['tcp', 'tcp6']) {
      for (const line of fs.readFileSync(`/proc/${pid}/net/${table}`, 'utf8').split('\n').slice(1)) {
        const cols = line.trim().split(/\s+/);
        if (cols.length > 9 && inodes.has(cols[9]) && parseInt(cols[2].split(':')[1], 16) === toPort) ports.add(parseInt(cols[1].split(':')[1], 16));
      }
    }
  } catch {
    // no /proc: only the time rule below applies
  }
  return ports;
}

/** Attempts this worker made so far, from its own /metrics. */
async function attemptsOf(p: Proc): Promise<number> {
  const text = await (await fetch(`${p.url}/metrics`, { signal: AbortSignal.timeout(5000) })).text();
  let n = 0;
  for (const m of text.matchAll(/^diwan_webhook_attempts_total\{[^}]*\} (\d+)/gm)) n += Number(m[1]);
  return n;
}

const until = async (what: string, probe: () => boolean | Promise<boolean>, ms: number, everyMs = 25) => {
  const deadline = Date.now() + ms;
  while (!(await probe())) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  return true;
};

// DIWAN_TEST_DATABASES=sqlite leaves PostgreSQL out (test/db.ts).
describe.skipIf(process.env.DIWAN_TEST_DATABASES === 'sqlite')('2 API processes and 3 workers on one PostgreSQL database, one worker killed', { timeout: 170_000 }, () => {
  let url: string;
  let dataDir: string;
  let host: Host;
  let recv: Awaited<ReturnType<typeof receiver>>;
  const procs: Proc[] = [];

  beforeAll(async () => {
    url = await testDatabaseUrl();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'diwan-multi-'));
    recv = await receiver();
  }, 60_000);

  afterAll(async () => {
    await Promise.all(
      procs.map(async (p) => {
        if (p.child.exitCode !== null || p.child.signalCode !== null) return;
        const exited = new Promise((r) => p.child.once('exit', r));
        p.child.kill('SIGTERM');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
        if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
      }),
    );
    await host?.close();
    await recv?.close();
    if (url) await dropTestDatabase(url);
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  it('delivers every event at least once, never twice at a time, and keeps the delivery log consistent', async () => {
    // The operator's side, in this process: the company and its key (never listening, no worker).
    host = await buildHost({ databaseUrl: url, config: { dataDir: path.join(dataDir, 'setup'), roles: { api: true, worker: false } } });
    const { company } = await host.createCompany({ name: 'Busy Co', currency: 'SAR', apps: ['crm'] });
    const { key } = await createKey(host, company.id, { role: 'Owner', name: 'load' });
    const headers = { authorization: `Bearer ${key}`, 'x-company-id': company.id, 'content-type': 'application/json' };

    const env = { ...PROCESS_ENV, DIWAN_DATABASE_URL: url };
    const t0 = Date.now();
    const started = await Promise.all([
      startProcess('api-1', 'serve', { ...env, DATA_DIR: path.join(dataDir, 'api-1') }),
      startProcess('api-2', 'serve', { ...env, DATA_DIR: path.join(dataDir, 'api-2') }),
      startProcess('worker-1', 'worker', { ...env, DATA_DIR: path.join(dataDir, 'worker-1') }),
      startProcess('worker-2', 'worker', { ...env, DATA_DIR: path.join(dataDir, 'worker-2') }),
      startProcess('worker-3', 'worker', { ...env, DATA_DIR: path.join(dataDir, 'worker-3') }),
    ]);
    procs.push(...started);
    const apis = started.slice(0, 2);
    const workers = started.slice(2);
    for (const p of started) expect((await fetch(`${p.url}/readyz`)).status, p.name).toBe(200);
    const tBooted = Date.now();

    const made = await fetch(`${apis[0].url}/api/v1/webhook-endpoints`, { method: 'POST', headers, body: JSON.stringify({ url: recv.url, topics: ['crm.lead.created'], maxInFlight: 8 }) });
    expect(made.status, await made.clone().text()).toBe(201);
    const endpointId: string = (await made.json()).data.id;

    // The kill: once deliveries flow, the worker that has made the most attempts so far.
    let killedAt = 0;
    let killed: Proc | undefined;
    let killedAttempts = 0;
    let killedPorts = new Set<number>();
    const killer = (async () => {
      await until('deliveries flowing', () => recv.seen.requests >= KILL_AFTER, 120_000, 10);
      const counts = await Promise.all(workers.map((w) => attemptsOf(w).catch(() => 0)));
      killedAttempts = Math.max(...counts);
      killed = workers[counts.indexOf(killedAttempts)];
      killedPorts = socketPortsOf(killed.child.pid!, Number(new URL(recv.url).port));
      killedAt = Date.now();
      killed.child.kill('SIGKILL');
    })();

    // 2,000 events, alternately through the two API processes, 16 at a time.
    const emitted: string[] = [];
    const failures: string[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < EVENTS) {
          const i = next++;
          const api = apis[i % 2];
          const res = await fetch(`${api.url}/api/v1/events/test`, { method: 'POST', headers, body: JSON.stringify({ topic: 'crm.lead.created', data: { n: i } }), signal: AbortSignal.timeout(30_000) });
          if (res.status === 202) emitted.push((await res.json()).data.id);
          else failures.push(`${api.name} ${res.status} ${await res.text()}`);
        }
      }),
    );
    expect(failures).toEqual([]);
    expect(new Set(emitted).size).toBe(EVENTS);
    const tSent = Date.now();
    await killer;
    expect(killed, 'a worker was killed mid-run').toBeDefined();
    // It was delivering when it died.
    expect(killedAttempts).toBeGreaterThan(0);
    expect(await new Promise((r) => (killed!.child.exitCode !== null || killed!.child.signalCode !== null ? r(killed!.child.signalCode) : killed!.child.once('exit', (_c, s) => r(s))))).toBe('SIGKILL');

    // Delivery finishes on the two workers left, the killed one's leases running out.
    const db = host.storage.db;
    const pendingRows = async () => Number((await db.get<{ n: number }>("SELECT count(*) AS n FROM webhook_deliveries WHERE endpoint_id = ? AND state <> 'delivered'", [endpointId]))!.n);
    const done = await until('every event received and every delivery delivered', async () => emitted.every((id) => recv.seen.events.has(id)) && (await pendingRows()) === 0, DRAIN_MS, 200);

    const tDone = Date.now();
    const missing = emitted.filter((id) => !recv.seen.events.has(id));
    const states = await db.all<{ state: string; n: number }>('SELECT state, count(*) AS n FROM webhook_deliveries WHERE endpoint_id = ? GROUP BY state ORDER BY state', [endpointId]);
    const duplicates = [...recv.seen.deliveries].filter(([, times]) => times.length > 1);
    // A delivery received twice must be the killed worker's: first received before the kill, or
    // sent by it (over one of its connections, or cut off: its connection dropped before the
    // answer was written). The receiver runs on this test's event loop, so a request already on
    // the wire at the kill may be stamped after it: RECEIVER_LAG_MS allows for that where the
    // sender's ports are unknown.
    const fromKilled = (id: string) => killedPorts.has(recv.seen.firstPort.get(id) ?? -1);
    const redoneByLive = duplicates.filter(([id, times]) => times[0] >= killedAt + RECEIVER_LAG_MS && !recv.seen.cut.has(id) && !fromKilled(id)).map(([id, times]) => ({ id, times: times.map((t) => t - killedAt) }));
    const report = { done, missing: missing.length, states, overlaps: recv.seen.overlaps.length, duplicates: duplicates.length, fromKilledSockets: duplicates.filter(([id]) => fromKilled(id)).length, killedPorts: killedPorts.size, redoneByLive: redoneByLive.slice(0, 5), killed: killed!.name, killedAttempts, ms: { boot: tBooted - t0, send: tSent - tBooted, kill: killedAt - tBooted, drain: tDone - tSent } };
    console.log('multi-process:', JSON.stringify(report));

    // Every event was delivered at least once, and nothing was lost.
    expect({ missing: missing.length, first: missing.slice(0, 3) }, JSON.stringify(report)).toEqual({ missing: 0, first: [] });
    // No delivery was ever in flight twice at once.
    expect(recv.seen.overlaps, JSON.stringify(report)).toEqual([]);
    expect(redoneByLive, JSON.stringify(report)).toEqual([]);

    // The delivery log: one delivery per event, each delivered, with as many attempts as it counts (the one that delivered is kept in its row), one successful.
    const rows = await db.all<{ id: string; event_id: string; state: string; attempts: number; rows: number; ok: number }>(
      `SELECT d.id, d.event_id, d.state, d.attempts,
              (SELECT count(*) FROM webhook_attempts a WHERE a.delivery_id = d.id) + (CASE WHEN d.delivered_duration_ms IS NULL THEN 0 ELSE 1 END) AS rows,
              (SELECT count(*) FROM webhook_attempts a WHERE a.delivery_id = d.id AND a.status BETWEEN 200 AND 299)
                + (CASE WHEN d.delivered_duration_ms IS NULL THEN 0 ELSE 1 END) AS ok
         FROM webhook_deliveries d WHERE d.endpoint_id = ?`,
      [endpointId],
    );
    expect(rows.length, JSON.stringify(report)).toBe(EVENTS);
    expect(new Set(rows.map((r) => r.event_id))).toEqual(new Set(emitted));
    expect(rows.filter((r) => r.state !== 'delivered').map((r) => `${r.id} ${r.state}`), JSON.stringify(report)).toEqual([]);
    expect(rows.filter((r) => r.attempts !== r.rows).map((r) => `${r.id}: attempts ${r.attempts}, rows ${r.rows}`)).toEqual([]);
    expect(rows.filter((r) => r.ok !== 1).map((r) => `${r.id}: ${r.ok} successful attempts`)).toEqual([]);
    // Every delivery the receiver saw is in the log.
    const ids = new Set(rows.map((r) => r.id));
    expect([...recv.seen.deliveries.keys()].filter((id) => !ids.has(id))).toEqual([]);

    // The same log through the API of the other process: the endpoint's deliveries, all delivered.
    const listed = await fetch(`${apis[1].url}/api/v1/webhook-endpoints/${endpointId}/deliveries?state=delivered&pageSize=1`, { headers });
    expect(listed.status).toBe(200);
    expect((await listed.json()).total).toBe(EVENTS);

    // The processes left stop cleanly.
    for (const p of started.filter((p) => p !== killed)) {
      const exited = new Promise<number | null>((r) => p.child.once('exit', (code) => r(code)));
      p.child.kill('SIGTERM');
      expect(await exited, `${p.name}: ${p.stderr.join('')}`).toBe(0);
    }
  });
});
