// What the per-key rate limit costs per request, on each database, against the same run's
// baseline (core/http/rate-limit.ts chooses the counter from these numbers):
//
//   1. the counter alone: the memory window, and the shared one (an upsert into rate_windows for
//      every request, as near the limit) on an SQLite file and on PostgreSQL, one call at a time
//      and, on PostgreSQL, 8 at once; then the shared one at the default limit of 6000, far from
//      it (requests written 60 at a time);
//   2. a request through the host (GET /api/v1/customers, 20 rows, Fastify inject, one at a
//      time, spread over 10 keys) with the limit off and at the default 6000, the host choosing
//      its counter as in production (memory on SQLite, the database on PostgreSQL); rounds
//      interleaved, medians reported.
//
//   DIWAN_BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/rate-limit.ts [--rounds 5] [--requests 2000]
// (DIWAN_TEST_DATABASE_URL is used when the first is unset; a fresh database is made and dropped.)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { buildHost, type Host } from '../core/host.ts';
import { openStorage, type Storage } from '../core/storage/open.ts';
import { memoryRateLimiter, sharedRateLimiter, type RateLimiter } from '../core/http/rate-limit.ts';
import { CLI_ACTOR } from '../core/kernel/actor.ts';
import { REPO_ROOT, validManifest } from '../core/apps/app-source.ts';
import { arg, machineLine, median, pgAdmin } from './lib/util.ts';

const rounds = arg('rounds', 5);
const requests = arg('requests', 2000);
const calls = arg('calls', 5000);
const serverUrl = process.env.DIWAN_BENCH_DATABASE_URL?.trim() || process.env.DIWAN_TEST_DATABASE_URL?.trim() || '';
if (!serverUrl) throw new Error('set DIWAN_BENCH_DATABASE_URL (or DIWAN_TEST_DATABASE_URL) to a PostgreSQL server');

const dbName = `diwan_bench_rate_${process.pid}`;
const pgUrl = (() => {
  const u = new URL(serverUrl);
  u.pathname = `/${dbName}`;
  return u.toString();
})();
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'diwan-bench-rate-'));
const sqliteFile = path.join(root, 'diwan.db');
const sources = (() => {
  const manifest = validManifest(JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'manifests/invoicing.json'), 'utf8')));
  return [{ manifest, dir: path.join(REPO_ROOT, 'apps-installed', 'invoicing'), origin: 'first-party' as const }];
})();

/** Microseconds per call of `fn`, `n` calls, `parallel` at a time. */
async function perCall(n: number, parallel: number, fn: (i: number) => Promise<unknown>): Promise<number> {
  let next = 0;
  const t0 = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < n) await fn(next++);
    }),
  );
  return Number(process.hrtime.bigint() - t0) / 1000 / n;
}

const keys = Array.from({ length: 50 }, (_, i) => `key:bench_${i}`);
const BIG = 1_000_000_000;
/** The default DIWAN_RATE_LIMIT. */
const LIMIT = 6000;

async function counterCosts(sqlite: Storage, postgres: Storage): Promise<Record<string, number[]>> {
  // batch 1: a write per request, as every request near the limit is counted.
  const limiters: [string, RateLimiter, number][] = [
    ['memory', memoryRateLimiter(BIG, Date.now), 1],
    ['shared on SQLite, a write per request', sharedRateLimiter(sqlite.rateWindows, BIG, Date.now, 60_000, 1), 1],
    ['shared on PostgreSQL, a write per request', sharedRateLimiter(postgres.rateWindows, BIG, Date.now, 60_000, 1), 1],
    ['shared on PostgreSQL, a write per request, 8 at once', sharedRateLimiter(postgres.rateWindows, BIG, Date.now, 60_000, 1), 8],
    ['shared on PostgreSQL, limit 6000 (batches of 60)', sharedRateLimiter(postgres.rateWindows, LIMIT, Date.now), 1],
  ];
  const out: Record<string, number[]> = {};
  for (let r = 0; r < rounds; r++) {
    for (const [name, l, parallel] of r % 2 ? [...limiters].reverse() : limiters) {
      (out[name] ??= []).push(await perCall(calls, parallel, (i) => l.hit(keys[i % keys.length])));
    }
  }
  return out;
}

/** A company with 40 customers, and 10 keys to spread requests over (each stays far below the limit). */
async function seed(host: Host): Promise<{ headers: Record<string, string>[] }> {
  const { company } = await host.createCompany({ name: 'Bench Co', apps: ['invoicing'] });
  const headers: Record<string, string>[] = [];
  for (let i = 0; i < 10; i++) {
    const { key } = await host.keys.create({ companyId: company.id, actor: CLI_ACTOR, appId: 'core' }, { role: 'Owner', scopes: ['*'], name: `bench ${i}` });
    headers.push({ authorization: `Bearer ${key}`, 'x-company-id': company.id });
  }
  for (let i = 0; i < 40; i++) {
    const res = await host.app.inject({ method: 'POST', url: '/api/v1/customers', headers: headers[0], payload: { name: `Customer ${i}` } });
    if (res.statusCode !== 201) throw new Error(res.body);
  }
  return { headers };
}

async function requestCosts(): Promise<Record<string, number[]>> {
  const hosts: { name: string; host: Host }[] = [];
  try {
    // Limit off and on, on each database; the hosts of one database share it (the data is seeded once).
    const sOff = await buildHost({ dbFile: sqliteFile, sources, config: { dataDir: path.join(root, 's-off'), rateLimitPerMinute: 0 } });
    const sOn = await buildHost({ dbFile: sqliteFile, sources, config: { dataDir: path.join(root, 's-on'), rateLimitPerMinute: LIMIT } });
    const pOff = await buildHost({ databaseUrl: pgUrl, sources, config: { dataDir: path.join(root, 'p-off'), rateLimitPerMinute: 0 } });
    const pOn = await buildHost({ databaseUrl: pgUrl, sources, config: { dataDir: path.join(root, 'p-on'), rateLimitPerMinute: LIMIT } });
    hosts.push({ name: 'SQLite, limit off', host: sOff }, { name: 'SQLite, limit 6000 (memory)', host: sOn }, { name: 'PostgreSQL, limit off', host: pOff }, { name: 'PostgreSQL, limit 6000 (shared)', host: pOn });
    const s = await seed(sOff);
    const p = await seed(pOff);
    const headersOf = (h: Host) => (h === sOff || h === sOn ? s.headers : p.headers);
    const one = (h: Host) => async (i: number) => {
      const res = await h.app.inject({ method: 'GET', url: '/api/v1/customers?pageSize=20', headers: headersOf(h)[i % 10] });
      if (res.statusCode !== 200) throw new Error(`${res.statusCode} ${res.body}`);
    };
    // Warm up every host (caches, statements, JIT).
    for (const { host } of hosts) await perCall(300, 1, one(host));
    const out: Record<string, number[]> = {};
    // Off and on of one database run next to each other, in alternating order.
    const order = [hosts[0], hosts[1], hosts[3], hosts[2]];
    for (let r = 0; r < rounds; r++) {
      for (const { name, host } of r % 2 ? [...order].reverse() : order) (out[name] ??= []).push(await perCall(requests, 1, one(host)));
    }
    return out;
  } finally {
    for (const { host } of hosts.reverse()) await host.close();
  }
}

const fmt = (us: number) => (us < 10 ? us.toFixed(2) : us.toFixed(1));

async function main(): Promise<void> {
  await pgAdmin(serverUrl, `CREATE DATABASE "${dbName}" TEMPLATE template0 ENCODING 'UTF8'`);
  try {
    console.log(machineLine());
    console.log(`rounds ${rounds}; counter: ${calls} calls a round; requests: ${requests} a round, one at a time\n`);
    const sqlite = await openStorage({ file: sqliteFile });
    const postgres = await openStorage({ file: '', url: pgUrl });
    let counters: Record<string, number[]>;
    try {
      counters = await counterCosts(sqlite, postgres);
    } finally {
      await sqlite.close();
      await postgres.close();
    }
    console.log('| counter | µs per call, median | min | rounds |');
    console.log('|---|---:|---:|---|');
    for (const [name, xs] of Object.entries(counters)) console.log(`| ${name} | ${fmt(median(xs))} | ${fmt(Math.min(...xs))} | ${xs.map(fmt).join(', ')} |`);

    const reqs = await requestCosts();
    console.log('\n| GET /api/v1/customers (20 rows) | µs per request, median | min | rounds |');
    console.log('|---|---:|---:|---|');
    for (const [name, xs] of Object.entries(reqs)) console.log(`| ${name} | ${fmt(median(xs))} | ${fmt(Math.min(...xs))} | ${xs.map(fmt).join(', ')} |`);
    const m = (k: string) => median(reqs[k]);
    // Each round's on minus off (the two ran back to back, under the same load), then the median.
    const paired = (on: string, off: string) => median(reqs[on].map((x, i) => x - reqs[off][i]));
    const sq = paired('SQLite, limit 6000 (memory)', 'SQLite, limit off');
    const pq = paired('PostgreSQL, limit 6000 (shared)', 'PostgreSQL, limit off');
    // On a busy machine the least disturbed round (the minimum) is the better estimate of what the work itself costs.
    const lo = (k: string) => Math.min(...reqs[k]);
    console.log(`\nfrom the minima: SQLite memory limit ${fmt(lo('SQLite, limit 6000 (memory)') - lo('SQLite, limit off'))} µs a request; PostgreSQL shared limit ${fmt(lo('PostgreSQL, limit 6000 (shared)') - lo('PostgreSQL, limit off'))} µs a request`);
    console.log('(below: the median over rounds of on minus off, each pair run back to back)');
    console.log(`SQLite: the memory limit costs ${fmt(sq)} µs a request (${((sq / m('SQLite, limit off')) * 100).toFixed(1)}% of ${fmt(m('SQLite, limit off'))} µs)`);
    const pExact = median(counters['shared on PostgreSQL, a write per request']);
    console.log(`PostgreSQL, near the limit (a write per request): + ${fmt(pExact)} µs a request (${((pExact / m('PostgreSQL, limit off')) * 100).toFixed(1)}% of the request)`);
    console.log(`PostgreSQL: the shared limit costs ${fmt(pq)} µs a request (${((pq / m('PostgreSQL, limit off')) * 100).toFixed(1)}% of ${fmt(m('PostgreSQL, limit off'))} µs)`);
    const sShared = median(counters['shared on SQLite, a write per request']);
    console.log(`SQLite, had it been shared: + ${fmt(sShared)} µs a request (${((sShared / m('SQLite, limit off')) * 100).toFixed(1)}% of the request), a write on every read`);
  } finally {
    await pgAdmin(serverUrl, `DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`).catch(() => {});
    fs.rmSync(root, { recursive: true, force: true });
  }
}

await main();
