// HTTP throughput of the host against a bare Fastify + better-sqlite3 server, in the same run.
//
//   GET  /api/v1/customers?page=N&pageSize=20  host ≥ 0.9× the bare list (same SELECTs, same JSON)
//   POST /api/v1/invoices (2 lines)            host ≥ 0.7× a bare INSERT of an equivalent row
//   GET  /api/v1/bench-contacts?page=N         generated list of a manifest-only doc type
//                                              ≥ 0.9× the invoicing customers list
//
// Each server runs in its own child process on 127.0.0.1; load comes from another child
// (autocannon). Cases are interleaved round by round (order alternating) so load from other
// processes on the machine hits baseline and subject alike; medians are reported, and for the
// list targets the median of each round's back-to-back ratio (what drift moves least). The
// server not being measured is paused (SIGSTOP) meanwhile, so that it takes no CPU. Server CPU
// per request (from /proc) is reported too: it is less sensitive to a busy machine than req/s.
//
//   npx tsx bench/http.ts [--rounds 10] [--seconds 3] [--connections 8] [--customers 10000]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import type { ChildProcess } from 'node:child_process';
import Database from 'better-sqlite3';
import { seedHttpBench, CONTACTS_RESOURCE, type HttpBenchData } from './lib/http-data.ts';
import { invoiceBody, type LoadResult, type LoadSpec } from './lib/load.ts';
import { BENCH_DIR, arg, fmtInt, fmtMs, firstMessage, forkTs, machineLine, median, otherLoadMeter, processCpuSeconds, runLoadChild, stopChild } from './lib/util.ts';

type CaseId = 'bareList' | 'hostCustomers' | 'hostContacts' | 'bareInsert' | 'bareSameRows' | 'hostInvoices';

interface CaseDef {
  id: CaseId;
  label: string;
  server: 'bare' | 'host';
  spec: Omit<LoadSpec, 'url' | 'seconds' | 'connections'>;
  subject: boolean;
}

export interface CaseSummary {
  label: string;
  rounds: number;
  rps: number;
  p50: number;
  p99: number;
  cpuUsPerReq: number;
  rpsPerRound: number[];
  requests: number;
  failures: number;
}

export interface HttpBenchResult {
  cases: Record<CaseId, CaseSummary>;
  listRatio: number;
  /** Median over rounds of host / bare measured back to back in the round. */
  listPairedRatio: number;
  /** Each round's host / bare list ratio, in round order. */
  listPairs: number[];
  createRatio: number;
  generatedRatio: number;
  generatedPairedRatio: number;
  sameRowsRatio: number;
  listCpuRatio: number;
  createCpuRatio: number;
  generatedCpuRatio: number;
  valid: boolean;
  others: string;
}

async function startServer(script: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ child: ChildProcess; port: number; pid: number }> {
  const child = forkTs(path.join(BENCH_DIR, 'lib', script), args, { env });
  const { port } = await firstMessage<{ port: number }>(child);
  return { child, port, pid: child.pid! };
}

/** Waits until no outbox event is pending (read through a separate read-only connection); seconds taken. */
async function drainOutbox(dbFile: string, timeoutMs = 120_000): Promise<number> {
  const t0 = performance.now();
  const db = new Database(dbFile, { readonly: true });
  try {
    const pending = db.prepare('SELECT count(*) FROM outbox WHERE dispatched_at IS NULL').pluck();
    while ((pending.get() as number) > 0) {
      if (performance.now() - t0 > timeoutMs) throw new Error('the host did not fan out the seeded outbox events in time');
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    db.close();
  }
  return (performance.now() - t0) / 1000;
}

async function request(port: number, method: string, url: string, headers: Record<string, string>, body?: string) {
  const res = await fetch(`http://127.0.0.1:${port}${url}`, { method, headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) }, body });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/**
 * Both databases must hold the customers in as many pages per table and index: a baseline whose
 * indexes were packed denser would read fewer pages for the same count.
 */
function samePages(hostDb: string, bareDb: string): string {
  const pages = (file: string) => {
    const db = new Database(file, { readonly: true });
    try {
      return db.prepare("SELECT name, count(*) AS n FROM dbstat WHERE name LIKE 'doc_invoicing_customer%' GROUP BY name ORDER BY name").all() as { name: string; n: number }[];
    } finally {
      db.close();
    }
  };
  const [h, b] = [pages(hostDb), pages(bareDb)];
  if (!isDeepStrictEqual(h, b)) throw new Error(`sanity: the customer table and indexes take different pages: host ${JSON.stringify(h)}, bare ${JSON.stringify(b)}`);
  return h.map((x) => `${x.name.replace('doc_invoicing_customer', 'customers')} ${x.n}`).join(', ');
}

/** The subject must answer what the baseline answers, and accept the bodies we will send. */
async function sanityCheck(data: HttpBenchData, hostPort: number, barePort: number, auth: Record<string, string>) {
  for (const page of [1, 7, Math.ceil(data.customers / 20)]) {
    const url = `/api/v1/customers?page=${page}&pageSize=20`;
    const [h, b] = await Promise.all([request(hostPort, 'GET', url, auth), request(barePort, 'GET', url, {})]);
    if (h.status !== 200 || b.status !== 200) throw new Error(`sanity: ${url} answered host ${h.status}, bare ${b.status}: ${JSON.stringify(h.body)}`);
    if (!isDeepStrictEqual(h.body, b.body)) throw new Error(`sanity: ${url} differs between host and bare server`);
  }
  const c = await request(hostPort, 'GET', `/api/v1/${CONTACTS_RESOURCE}?page=3&pageSize=20`, auth);
  if (c.status !== 200 || c.body.total !== data.customers || c.body.data.length !== 20) throw new Error(`sanity: generated list answered ${c.status}: ${JSON.stringify(c.body).slice(0, 300)}`);
  const body = invoiceBody(data.customerIds[0], 0);
  const [hi, bi, bs] = await Promise.all([
    request(hostPort, 'POST', '/api/v1/invoices', auth, body),
    request(barePort, 'POST', '/api/v1/invoices', {}, body),
    request(barePort, 'POST', '/api/v1/invoices-same-rows', {}, body),
  ]);
  if (hi.status !== 201 || bi.status !== 201 || bs.status !== 201) throw new Error(`sanity: POST /api/v1/invoices answered host ${hi.status}, bare ${bi.status}/${bs.status}: ${JSON.stringify(hi.body)}`);
  if (hi.body.data.total !== 1560.75) throw new Error(`sanity: unexpected invoice total ${hi.body.data.total}`);
}

/** The run's shape when neither the command line nor a caller gives it. */
const DEFAULTS = { rounds: 10, seconds: 3, connections: 8, customers: 10_000 };

export async function runHttpBench(opts: { rounds?: number; seconds?: number; connections?: number; customers?: number; log?: (s: string) => void } = {}): Promise<HttpBenchResult> {
  const rounds = opts.rounds ?? DEFAULTS.rounds;
  const seconds = opts.seconds ?? DEFAULTS.seconds;
  const connections = opts.connections ?? DEFAULTS.connections;
  const log = opts.log ?? ((s: string) => console.log(s));
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'diwan-bench-http-'));
  const children: ChildProcess[] = [];
  try {
    let t0 = performance.now();
    const data = await seedHttpBench(dataDir, opts.customers ?? DEFAULTS.customers);
    log(`seeded ${fmtInt(data.customers)} customers and ${fmtInt(data.customers)} generated-type documents through the DocType API in ${((performance.now() - t0) / 1000).toFixed(1)} s (${dataDir})`);

    t0 = performance.now();
    const host = await startServer('host-server.ts', [data.appsDir], { DATA_DIR: dataDir });
    const bare = await startServer('bare-server.ts', [data.bareDb, data.companyId]);
    children.push(host.child, bare.child);
    log(`servers listening: host on :${host.port} (pid ${host.pid}), bare on :${bare.port} (pid ${bare.pid}) after ${((performance.now() - t0) / 1000).toFixed(1)} s`);

    // Seeding wrote ~40,000 outbox events (document + audit event per create); the host's
    // webhook loop fans them out after it starts listening. Let it finish before measuring.
    const backlog = await drainOutbox(path.join(dataDir, 'diwan.db'));
    log(`outbox backlog from seeding fanned out by the host in ${backlog.toFixed(1)} s`);

    log(`sanity: same pages in both databases (${samePages(path.join(dataDir, 'diwan.db'), data.bareDb)})`);
    const auth = { authorization: `Bearer ${data.key}`, 'x-company-id': data.companyId };
    await sanityCheck(data, host.port, bare.port, auth);
    log('sanity: host and bare list bodies are identical for pages 1, 7 and last; both accept the invoice body (201)');

    const pages = Math.ceil(data.customers / 20);
    const ids = data.customerIds;
    const cases: CaseDef[] = [
      { id: 'bareList', label: 'bare   GET /api/v1/customers', server: 'bare', subject: false, spec: { kind: 'list', path: '/api/v1/customers', pages, pageSize: 20, headers: {} } },
      { id: 'hostCustomers', label: 'host   GET /api/v1/customers', server: 'host', subject: true, spec: { kind: 'list', path: '/api/v1/customers', pages, pageSize: 20, headers: auth } },
      { id: 'hostContacts', label: `host   GET /api/v1/${CONTACTS_RESOURCE}`, server: 'host', subject: true, spec: { kind: 'list', path: `/api/v1/${CONTACTS_RESOURCE}`, pages, pageSize: 20, headers: auth } },
      { id: 'bareInsert', label: 'bare   POST /api/v1/invoices', server: 'bare', subject: false, spec: { kind: 'create', path: '/api/v1/invoices', customerIds: ids, headers: {} } },
      { id: 'bareSameRows', label: 'bare   POST, same rows as the host*', server: 'bare', subject: false, spec: { kind: 'create', path: '/api/v1/invoices-same-rows', customerIds: ids, headers: {} } },
      { id: 'hostInvoices', label: 'host   POST /api/v1/invoices', server: 'host', subject: true, spec: { kind: 'create', path: '/api/v1/invoices', customerIds: ids, headers: auth } },
    ];
    // Lists, then creates (so the invoice tables grow after every list was measured in a round);
    // within each group the order reverses every other round.
    const groups = [cases.slice(0, 3), cases.slice(3)];
    const serverOf = (c: CaseDef) => (c.server === 'host' ? host : bare);
    const results = new Map<CaseId, { r: LoadResult; cpu: number }[]>(cases.map((c) => [c.id, []]));

    const warm = Math.min(2, seconds);
    for (const c of cases) await runLoadChild({ ...c.spec, url: `http://127.0.0.1:${serverOf(c).port}`, seconds: warm, connections, seed: 99 });
    log(`warmed up (${warm} s per case); ${rounds} rounds × ${cases.length} cases × ${seconds} s, ${connections} connections, order alternating per round`);

    const meter = otherLoadMeter([host.pid, bare.pid]);
    for (let round = 0; round < rounds; round++) {
      const order = groups.flatMap((g) => (round % 2 === 0 ? g : [...g].reverse()));
      const line: string[] = [];
      for (const c of order) {
        const srv = serverOf(c);
        const idle = srv === host ? bare : host;
        const cpu0 = processCpuSeconds(srv.pid);
        // The server not under test is paused, so that nothing it does while idle (the host's
        // webhook loop polls) takes CPU from the measured server or its load generator.
        process.kill(idle.pid, 'SIGSTOP');
        let r: LoadResult;
        try {
          r = await runLoadChild({ ...c.spec, url: `http://127.0.0.1:${srv.port}`, seconds, connections, seed: 1000 + round });
        } finally {
          process.kill(idle.pid, 'SIGCONT');
        }
        const cpu = processCpuSeconds(srv.pid) - cpu0;
        results.get(c.id)!.push({ r, cpu });
        const bad = r.non2xx + r.errors + r.timeouts;
        line.push(`${c.id} ${fmtInt(r.rps)}${bad ? ` (${bad} failed: ${JSON.stringify(r.statusCodes)})` : ''}`);
      }
      log(`  round ${round + 1}: ${line.join(', ')} req/s`);
    }
    const others = meter.report();

    const summary = {} as Record<CaseId, CaseSummary>;
    for (const c of cases) {
      const rs = results.get(c.id)!;
      summary[c.id] = {
        label: c.label,
        rounds: rs.length,
        rps: median(rs.map((x) => x.r.rps)),
        p50: median(rs.map((x) => x.r.p50)),
        p99: median(rs.map((x) => x.r.p99)),
        cpuUsPerReq: median(rs.map((x) => (x.cpu / x.r.requests) * 1e6)),
        rpsPerRound: rs.map((x) => x.r.rps),
        requests: rs.reduce((sum, x) => sum + x.r.requests, 0),
        failures: rs.reduce((s, x) => s + x.r.non2xx + x.r.errors + x.r.timeouts, 0),
      };
    }
    const valid = cases.every((c) => summary[c.id].failures === 0);
    // This machine's speed drifts over seconds (the bare list alone has ranged 640–1,720 req/s
    // across the rounds of one run): a round's two lists run back to back, so their ratio shares
    // its moment, and the median of those ratios is the figure that drift moves least.
    const pairs = (subject: CaseId, base: CaseId) => results.get(subject)!.map((x, i) => x.r.rps / results.get(base)![i].r.rps);
    const listPairs = pairs('hostCustomers', 'bareList');
    return {
      cases: summary,
      listRatio: summary.hostCustomers.rps / summary.bareList.rps,
      listPairedRatio: median(listPairs),
      listPairs,
      createRatio: summary.hostInvoices.rps / summary.bareInsert.rps,
      generatedRatio: summary.hostContacts.rps / summary.hostCustomers.rps,
      generatedPairedRatio: median(pairs('hostContacts', 'hostCustomers')),
      sameRowsRatio: summary.bareSameRows.rps / summary.bareInsert.rps,
      listCpuRatio: summary.bareList.cpuUsPerReq / summary.hostCustomers.cpuUsPerReq,
      createCpuRatio: summary.bareInsert.cpuUsPerReq / summary.hostInvoices.cpuUsPerReq,
      generatedCpuRatio: summary.hostCustomers.cpuUsPerReq / summary.hostContacts.cpuUsPerReq,
      valid,
      others,
    };
  } finally {
    await Promise.all(children.map((c) => stopChild(c)));
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

export function printHttpSummary(r: HttpBenchResult, log: (s: string) => void = console.log): void {
  log('\ncase                                        req/s (median)   p50 ms   p99 ms   server CPU µs/req   failures   req/s per round');
  for (const c of Object.values(r.cases)) {
    log(
      `${c.label.padEnd(42)} ${fmtInt(c.rps).padStart(10)} ${fmtMs(c.p50).padStart(12)} ${fmtMs(c.p99).padStart(8)} ${c.cpuUsPerReq.toFixed(0).padStart(12)} ${String(c.failures).padStart(14)}   ${c.rpsPerRound.map(fmtInt).join(' ')}`,
    );
  }
  const verdict = (x: number, target: number) => (x >= target ? `met (≥ ${target})` : `MISSED (target ${target})`);
  log('\n== summary: http ==');
  log(`GET customers, host / bare list:      ${r.listPairedRatio.toFixed(2)}× req/s  ${verdict(r.listPairedRatio, 0.9)}   (ratio of the medians ${r.listRatio.toFixed(2)}×; CPU per request: bare/host ${r.listCpuRatio.toFixed(2)}×)`);
  log(`  the rounds' pairs: ${r.listPairs.map((x) => x.toFixed(2)).join(' ')}`);
  log(`POST invoices, host / bare insert:    ${r.createRatio.toFixed(2)}× req/s  ${verdict(r.createRatio, 0.7)}   (CPU per request: bare/host ${r.createCpuRatio.toFixed(2)}×)`);
  log(`generated list / customers list:      ${r.generatedPairedRatio.toFixed(2)}× req/s  ${verdict(r.generatedPairedRatio, 0.9)}   (ratio of the medians ${r.generatedRatio.toFixed(2)}×; CPU per request: customers/generated ${r.generatedCpuRatio.toFixed(2)}×)`);
  log(`* reference, not a target: bare Fastify running the host's SQL for a create (customer lookup, document, audit row, 2 outbox rows, one transaction): ${r.sameRowsRatio.toFixed(2)}× the bare insert; host / it ${(r.cases.hostInvoices.rps / r.cases.bareSameRows.rps).toFixed(2)}×`);
  const total = Object.values(r.cases).reduce((sum, c) => sum + c.requests, 0);
  const failed = Object.values(r.cases).reduce((sum, c) => sum + c.failures, 0);
  log(r.valid ? `all ${fmtInt(total)} measured requests answered 2xx: run valid` : `${fmtInt(failed)} of ${fmtInt(total)} measured requests failed (non-2xx, errors or timeouts): run INVALID`);
  if (r.others) log(r.others);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(`bench/http.ts — ${machineLine()} — ${new Date().toISOString()}`);
  const r = await runHttpBench({ rounds: arg('rounds', DEFAULTS.rounds), seconds: arg('seconds', DEFAULTS.seconds), connections: arg('connections', DEFAULTS.connections), customers: arg('customers', DEFAULTS.customers) });
  printHttpSummary(r);
  if (!r.valid) process.exitCode = 1;
}
