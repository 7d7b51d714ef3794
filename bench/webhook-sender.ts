// CPU per POST of the webhook sender (`sendDelivery` through the dispatcher's shared agent: guard,
// deadline, bounded excerpt; to an address, and to a name) vs a bare undici request and vs
// node:http with a keep-alive agent (what the sender used before undici): the same body to the
// same loopback receiver (a child process, so that it costs every case alike) at the same
// concurrency. Each case runs in a process of its own (HTTP clients sharing one process slow
// each other down), warmed up first; rounds alternate the order of the cases.
// Usage: npx tsx bench/webhook-sender.ts [requests per case and round, default 8000] [concurrency, default 32]
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { Agent } from 'undici';
import { sendDelivery, webhookAgent } from '../core/webhooks/send.ts';
import { firstMessage, forkTs, median, startWebhookReceiver } from './lib/util.ts';

const args = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const N = Number(args[0] ?? 8000);
const C = Number(args[1] ?? 32);
const ROUNDS = 3;
type Case = (port: number) => { one(i: number): Promise<void>; close(): Promise<void> };
const body = Buffer.from(JSON.stringify({ id: 'evt_bench', type: 'invoice.created', data: { notes: 'x'.repeat(900) } }));
const headers = { 'content-type': 'application/json', 'x-service-signature': 't=1,v1=' + 'a'.repeat(64) };

const sender = (host: string): Case => (port) => {
  const agent = webhookAgent({ allowLoopback: true });
  return {
    async one(i) {
      const r = await sendDelivery({ url: `http://${host}:${port}/hook/${i % 4}`, headers, body, allowLoopback: true, agent });
      if (!r.ok) throw new Error(`sender: ${r.failure} ${r.detail ?? ''}`);
    },
    close: () => agent.destroy(),
  };
};
const CASES: Record<string, Case> = {
  'sender (sendDelivery, shared agent)': sender('127.0.0.1'),
  // A name, resolved by the system's resolver (for localhost, the hosts file).
  'sender to a name (localhost)': sender('localhost'),
  'bare undici request': (port) => {
    const agent = new Agent({ pipelining: 1 });
    return {
      async one(i) {
        const res = await agent.request({ origin: `http://127.0.0.1:${port}`, path: `/hook/${i % 4}`, method: 'POST', headers, body });
        await res.body.text();
      },
      close: () => agent.destroy(),
    };
  },
  'node:http keep-alive agent': (port) => {
    const agent = new http.Agent({ keepAlive: true, maxFreeSockets: 64 });
    return {
      one: (i) =>
        new Promise<void>((resolve, reject) => {
          const req = http.request(`http://127.0.0.1:${port}/hook/${i % 4}`, { method: 'POST', agent, headers: { ...headers, 'content-length': String(body.length) } });
          req.on('error', reject);
          req.on('response', (res) => res.resume().on('end', resolve));
          req.end(body);
        }),
      close: async () => agent.destroy(),
    };
  },
};

interface Result {
  perSecond: number;
  cpuUs: number;
}

async function measure(one: (i: number) => Promise<void>): Promise<Result> {
  let next = 0;
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  await Promise.all(Array.from({ length: C }, async () => {
    while (next < N) await one(next++);
  }));
  const c = process.cpuUsage(c0);
  return { perSecond: (N / (performance.now() - t0)) * 1000, cpuUs: (c.user + c.system) / N };
}

const caseArg = process.argv.indexOf('--case');
if (caseArg > 0) {
  // A child: one case against the receiver, a warm-up pass, then the measured one.
  const c = CASES[process.argv[caseArg + 1]](Number(process.argv[process.argv.indexOf('--port') + 1]));
  await measure(c.one);
  const r = await measure(c.one);
  await c.close();
  process.send!(r);
  process.disconnect();
} else {
  const receiver = await startWebhookReceiver();
  const port = receiver.port;
  try {
    console.log(`webhook-sender: ${N} POSTs per case and round (after as many to warm up), ${C} at a time, ${ROUNDS} rounds, each case in its own process`);
    const names = Object.keys(CASES);
    const runs = new Map<string, Result[]>(names.map((n) => [n, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const name of round % 2 ? [...names].reverse() : names) {
        const c = forkTs(fileURLToPath(import.meta.url), [String(N), String(C), '--case', name, '--port', String(port)]);
        runs.get(name)!.push(await firstMessage<Result>(c));
      }
    }
    const med = new Map([...runs].map(([n, rs]) => [n, { perSecond: median(rs.map((r) => r.perSecond)), cpuUs: median(rs.map((r) => r.cpuUs)) }]));
    const base = med.get('bare undici request')!;
    for (const [name, r] of med) {
      console.log(`${name.padEnd(36)} ${r.perSecond.toFixed(0).padStart(6)} POSTs/s  ${r.cpuUs.toFixed(1).padStart(6)} µs CPU each  (${(r.cpuUs / base.cpuUs).toFixed(2)}× bare undici's CPU; medians)`);
    }
    console.log(JSON.stringify({ bench: 'webhook-sender', requests: N, concurrency: C, cases: Object.fromEntries(med) }));
  } finally {
    receiver.stop();
  }
}
