// CPU per POST of the webhook sender (`sendDelivery` through the dispatcher's shared agent: guard,
// deadline, bounded excerpt) vs a bare undici request and vs node:http with a keep-alive agent
// (what the sender used before undici), the same body to the same loopback receiver (a child
// process, so that it costs every case alike) at the same concurrency, in interleaved rounds.
// Usage: npx tsx bench/webhook-sender.ts [requests per case and round, default 8000] [concurrency, default 32]
import { spawn } from 'node:child_process';
import http from 'node:http';
import { Agent } from 'undici';
import { sendDelivery, webhookAgent } from '../core/webhooks/send.ts';

const N = Number(process.argv[2] ?? 8000);
const C = Number(process.argv[3] ?? 32);
const ROUNDS = 3;
const RECEIVER = `
const http = require('node:http');
const s = http.createServer((req, res) => { req.resume(); req.on('end', () => { res.writeHead(200, { 'content-type': 'text/plain' }); res.end('ok'); }); });
s.keepAliveTimeout = 5000;
s.listen(0, '127.0.0.1', () => process.stdout.write(String(s.address().port) + '\\n'));
`;

const child = spawn(process.execPath, ['-e', RECEIVER], { stdio: ['ignore', 'pipe', 'inherit'] });
const port = await new Promise<number>((resolve) => child.stdout.once('data', (d: Buffer) => resolve(Number(String(d).trim()))));
const origin = `http://127.0.0.1:${port}`;
const body = Buffer.from(JSON.stringify({ id: 'evt_bench', type: 'invoice.created', data: { notes: 'x'.repeat(900) } }));
const headers = { 'content-type': 'application/json', 'x-service-signature': 't=1,v1=' + 'a'.repeat(64) };

const shared = webhookAgent({ allowLoopback: true });
const bare = new Agent({ pipelining: 1 });
const nodeAgent = new http.Agent({ keepAlive: true, maxFreeSockets: 64 });
const cases: Record<string, (i: number) => Promise<void>> = {
  'sender (sendDelivery, shared agent)': async (i) => {
    const r = await sendDelivery({ url: `${origin}/hook/${i % 4}`, headers, body, allowLoopback: true, agent: shared });
    if (!r.ok) throw new Error(`sender: ${r.failure} ${r.detail ?? ''}`);
  },
  'bare undici request': async (i) => {
    const res = await bare.request({ origin, path: `/hook/${i % 4}`, method: 'POST', headers, body });
    await res.body.text();
  },
  'node:http keep-alive agent': (i) =>
    new Promise<void>((resolve, reject) => {
      const req = http.request(`${origin}/hook/${i % 4}`, { method: 'POST', agent: nodeAgent, headers: { ...headers, 'content-length': String(body.length) } });
      req.on('error', reject);
      req.on('response', (res) => res.resume().on('end', resolve));
      req.end(body);
    }),
};

async function run(one: (i: number) => Promise<void>): Promise<{ perSecond: number; cpuUs: number }> {
  let next = 0;
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  await Promise.all(Array.from({ length: C }, async () => {
    while (next < N) await one(next++);
  }));
  const c = process.cpuUsage(c0);
  return { perSecond: (N / (performance.now() - t0)) * 1000, cpuUs: (c.user + c.system) / N };
}

try {
  console.log(`webhook-sender: ${N} POSTs per case and round, ${C} at a time, ${ROUNDS} rounds (the first is a warm-up)`);
  const best = new Map<string, { perSecond: number; cpuUs: number }>();
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, one] of Object.entries(cases)) {
      const r = await run(one);
      if (round === 0) continue;
      const b = best.get(name);
      if (!b || r.cpuUs < b.cpuUs) best.set(name, r);
    }
  }
  const base = best.get('bare undici request')!;
  for (const [name, r] of best) {
    console.log(`${name.padEnd(36)} ${r.perSecond.toFixed(0).padStart(6)} POSTs/s  ${r.cpuUs.toFixed(1).padStart(6)} µs CPU each  (${(r.cpuUs / base.cpuUs).toFixed(2)}× bare undici's CPU)`);
  }
  console.log(JSON.stringify({ bench: 'webhook-sender', requests: N, concurrency: C, cases: Object.fromEntries(best) }));
} finally {
  await Promise.all([shared.destroy(), bare.destroy()]);
  nodeAgent.destroy();
  child.kill();
}
