// The OpenAPI document with every first-party app: its size (as JSON, gzip and brotli), the
// time to build it, and the time to answer GET /api/v1/openapi.json once built (plain, gzip,
// and a 304 for a client holding the ETag). Baselines in the same run: the host with no app
// (the core routes alone) for the build, and JSON.parse of the built text, the least a client
// pays to read it, for its size. Each build runs in a fresh host (the host caches its build).
//
//   npx tsx bench/openapi.ts [--rounds 5]
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildHost } from '../core/host.ts';
import { arg, machineLine, median, ratio } from './lib/util.ts';

const ROUNDS = arg('rounds', 5);

interface Built {
  ms: number;
  text: string;
  operations: number;
  webhooks: number;
}

async function build(apps: 'all' | 'none'): Promise<Built> {
  const host = await buildHost({ dbFile: ':memory:', ...(apps === 'none' ? { sources: [] } : {}), logger: false });
  try {
    const t0 = performance.now();
    const text = await host.openapi();
    const ms = performance.now() - t0;
    const doc = JSON.parse(text) as { paths: Record<string, object>; webhooks?: Record<string, object> };
    const operations = Object.values(doc.paths).reduce((n, item) => n + Object.keys(item).length, 0);
    return { ms, text, operations, webhooks: Object.keys(doc.webhooks ?? {}).length };
  } finally {
    await host.close();
  }
}

/** One GET over loopback HTTP: status and the bytes on the wire (not decompressed). */
function get(port: number, headers: Record<string, string>): Promise<{ status: number; etag: string; bytes: number }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: '/api/v1/openapi.json', headers }, (res) => {
        let bytes = 0;
        res.on('data', (b: Buffer) => (bytes += b.length));
        res.on('end', () => resolve({ status: res.statusCode!, etag: String(res.headers.etag), bytes }));
      })
      .on('error', reject);
  });
}

async function served(): Promise<Record<'plain' | 'gzip' | 'notModified', number> & { bytes: Record<string, number> }> {
  const host = await buildHost({ dbFile: ':memory:', logger: false });
  try {
    await host.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (host.app.server.address() as AddressInfo).port;
    const first = await get(port, {});
    const bytes = { json: first.bytes, gzip: (await get(port, { 'accept-encoding': 'gzip' })).bytes, br: (await get(port, { 'accept-encoding': 'br' })).bytes };
    const time = async (headers: Record<string, string>) => {
      const xs: number[] = [];
      for (let i = 0; i < 20; i++) {
        const t0 = performance.now();
        await get(port, headers);
        xs.push(performance.now() - t0);
      }
      return median(xs);
    };
    return { plain: await time({}), gzip: await time({ 'accept-encoding': 'gzip' }), notModified: await time({ 'if-none-match': first.etag }), bytes };
  } finally {
    await host.close();
  }
}

console.log(`bench/openapi.ts — ${machineLine()}`);
const all: Built[] = [];
const core: Built[] = [];
const parse: number[] = [];
for (let r = 0; r < ROUNDS; r++) {
  // Alternate the order, so neither case always runs on a warmer process.
  const pair = r % 2 === 0 ? [await build('all'), await build('none')] : [await build('none'), await build('all')].reverse();
  all.push(pair[0]);
  core.push(pair[1]);
  const t0 = performance.now();
  JSON.parse(pair[0].text);
  parse.push(performance.now() - t0);
  console.log(`  round ${r + 1}: every app ${pair[0].ms.toFixed(0)} ms, core only ${pair[1].ms.toFixed(0)} ms, JSON.parse of the full text ${parse[r].toFixed(0)} ms`);
}
const a = all[0];
const s = await served();
const mib = (n: number) => `${(n / 1024 / 1024).toFixed(2)} MiB`;
console.log(`
document with every app: ${a.operations} operations, ${a.webhooks} webhooks; ${mib(s.bytes.json)} JSON, ${mib(s.bytes.gzip)} gzip, ${mib(s.bytes.br)} brotli
core only: ${core[0].operations} operations, ${mib(core[0].text.length)}
build, median of ${ROUNDS}: every app ${median(all.map((x) => x.ms)).toFixed(0)} ms, core only ${median(core.map((x) => x.ms)).toFixed(0)} ms, JSON.parse of the full text ${median(parse).toFixed(0)} ms
served over loopback HTTP once built, median of 20: plain ${s.plain.toFixed(1)} ms, gzip ${s.gzip.toFixed(1)} ms, 304 ${s.notModified.toFixed(2)} ms

== summary: openapi ==
build with every app / core only:        ${ratio(median(all.map((x) => x.ms)), median(core.map((x) => x.ms)))} (${a.operations} vs ${core[0].operations} operations)
build with every app / JSON.parse of it: ${ratio(median(all.map((x) => x.ms)), median(parse))}
compressed / JSON: gzip ${ratio(s.bytes.gzip, s.bytes.json)}, brotli ${ratio(s.bytes.br, s.bytes.json)}`);
