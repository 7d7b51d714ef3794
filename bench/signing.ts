// Signatures per second for ~1 KiB JSON webhook bodies, both schemes (x-service-signature and
// webhook-signature, as the dispatcher signs): inline createHmac on the main thread (the
// baseline) vs the batched piscina pool, all measured in the same run with interleaved rounds so
// load from elsewhere on the machine hits every case alike.
// Usage: npx tsx bench/signing.ts [seconds per case, default 2]
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { signHeader, standardSignatureHeader } from '../core/webhooks/signature.ts';
import { machineBusySeconds } from './lib/util.ts';
import { SignerPool, encodeBatch, type SignItem } from '../core/webhooks/signer-pool.ts';
// @ts-expect-error plain JS worker module without types
import signBatch from '../core/webhooks/sign-worker.mjs';

const SECONDS = Number(process.argv[2] ?? 2);
const ROUNDS = 9;
const WINDOW = 4096; // items a producer keeps in flight per call or tick

type Kind = 'ascii string' | 'arabic string' | 'arabic bytes';

function makeItems(kind: Kind, count: number): SignItem[] {
  const secrets = Array.from({ length: 50 }, (_, i) => `whsec_bench_endpoint_secret_${i}_${'x'.repeat(20)}`);
  const name = kind === 'ascii string' ? 'Diwan Trading Company LLC' : 'شركة الديوان للتجارة';
  return Array.from({ length: count }, (_, i) => {
    const data = {
      id: `inv_${i.toString(36).padStart(8, '0')}`,
      number: `INV-2026-${i}`,
      customer: { id: `cus_${i % 977}`, name, email: `billing${i}@example.com` },
      currency: 'SAR',
      lines: Array.from({ length: 4 }, (_, j) => ({ description: `Line item ${j} of invoice ${i}`, quantity: j + 1, unitPrice: 1999 + j })),
      notes: 'Payment due within 30 days of the invoice date. '.repeat(7),
      tags: ['wholesale', 'riyadh', 'q1'],
    };
    const text = JSON.stringify({ id: `evt_${i}`, topic: 'invoice.created', companyId: 'co_123', occurredAt: '2026-01-01T00:00:00.000Z', data });
    // With the event id, as the dispatcher signs: both schemes (x-service-signature and webhook-signature).
    return { secrets: [secrets[i % secrets.length]], t: 1767225600 + (i % 60), body: kind === 'arabic bytes' ? Buffer.from(text) : text, id: `evt_${i}` };
  });
}


/** CPU seconds of the main thread alone (Linux), the time signing takes from the event loop. */
function mainThreadSeconds(): number {
  try {
    const fields = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

type Case = { label: string; run: (items: SignItem[], deadline: number) => Promise<number> };

const pool = new SignerPool();

const cases: Case[] = [
  {
    label: 'inline createHmac (baseline)',
    run: async (items, deadline) => {
      let n = 0;
      let sink = 0;
      while (performance.now() < deadline) {
        for (let i = 0; i < WINDOW; i++, n++) {
          const item = items[n % items.length];
          sink += signHeader(item.secrets, item.t, item.body).length + standardSignatureHeader(item.secrets, item.id!, item.t, item.body).length;
        }
      }
      if (sink === 0) throw new Error('unreachable');
      return n;
    },
  },
  {
    // The worker's code on the main thread: tells the gain of parallelism from that of its one-shot HMAC.
    label: 'inline, worker code on main thread',
    run: async (items, deadline) => {
      let n = 0;
      let from = 0;
      while (performance.now() < deadline) {
        from = (from + WINDOW) % (items.length - WINDOW);
        // Two lines per item: the x-service-signature header, then the webhook-signature value ('' for an item without an id).
        n += (signBatch(encodeBatch(items.slice(from, from + WINDOW))) as string).split('\n').length / 2;
      }
      return n;
    },
  },
  {
    label: 'pool: sign(4096 items), 2 calls in flight',
    run: async (items, deadline) => {
      let n = 0;
      let cursor = 0;
      const next = () => {
        const from = cursor % (items.length - WINDOW);
        cursor += WINDOW;
        return pool.sign(items.slice(from, from + WINDOW));
      };
      const inFlight = [next(), next()];
      while (performance.now() < deadline) {
        n += (await inFlight.shift()!).length;
        inFlight.push(next());
      }
      for (const p of inFlight) n += (await p).length;
      return n;
    },
  },
  {
    label: 'pool: 4096 × sign([1 item]) in one tick',
    run: async (items, deadline) => {
      let n = 0;
      let cursor = 0;
      while (performance.now() < deadline) {
        const calls: Promise<string[]>[] = [];
        for (let i = 0; i < WINDOW; i++) calls.push(pool.sign([items[cursor++ % items.length]]));
        n += (await Promise.all(calls)).length;
      }
      return n;
    },
  },
];

const busy0 = machineBusySeconds();
const own0 = process.cpuUsage();
const wall0 = performance.now();
console.log(`node ${process.version}, ${os.availableParallelism()} cores, pool of ${os.availableParallelism()} threads, 1 secret per delivery, ${SECONDS} s per case in ${ROUNDS} interleaved rounds`);
const summary: string[] = [];
for (const kind of ['ascii string', 'arabic string', 'arabic bytes'] as Kind[]) {
  const items = makeItems(kind, WINDOW * 4);
  const bytes = items.reduce((s, it) => s + (typeof it.body === 'string' ? Buffer.byteLength(it.body) : it.body.byteLength), 0) / items.length;
  console.log(`\n${kind} bodies, ≈ ${Math.round(bytes)} bytes each`);
  for (const c of cases) await c.run(items, performance.now() + 300); // warm-up
  const rates = cases.map(() => [] as number[]);
  const mainCpu = cases.map(() => ({ seconds: 0, items: 0 }));
  for (let r = 0; r < ROUNDS; r++) {
    for (let i = 0; i < cases.length; i++) {
      const cpu0 = mainThreadSeconds();
      const start = performance.now();
      const n = await cases[i].run(items, start + (SECONDS * 1000) / ROUNDS);
      rates[i].push(n / ((performance.now() - start) / 1000));
      mainCpu[i].seconds += mainThreadSeconds() - cpu0;
      mainCpu[i].items += n;
    }
  }
  const medians = rates.map((list) => list.sort((a, b) => a - b)[list.length >> 1]);
  cases.forEach((c, i) => {
    const spread = `${Math.round(rates[i][0] / 1000)}k–${Math.round(rates[i][ROUNDS - 1] / 1000)}k`;
    const ratio = (medians[i] / medians[0]).toFixed(2);
    const mainUs = ((mainCpu[i].seconds / mainCpu[i].items) * 1e6).toFixed(2);
    console.log(`  ${c.label.padEnd(42)} ${Math.round(medians[i]).toLocaleString('en-US').padStart(9)} /s  ${ratio}x  main thread ${mainUs} µs/sig  (rounds ${spread})`);
  });
  summary.push(`${kind}: batched ${(medians[2] / medians[0]).toFixed(2)}x, one-item calls ${(medians[3] / medians[0]).toFixed(2)}x`);
}
await pool.close();
console.log(`\npooled / inline createHmac → ${summary.join('; ')}`);
const busy1 = machineBusySeconds();
if (busy0 !== undefined && busy1 !== undefined) {
  const own = process.cpuUsage(own0);
  const others = busy1 - busy0 - (own.user + own.system) / 1e6;
  const wall = (performance.now() - wall0) / 1000;
  // The pool needs both cores; anything else running skews the comparison against it.
  console.log(`other processes used ${Math.max(0, others).toFixed(1)} CPU-seconds during the ${wall.toFixed(0)} s run (${((Math.max(0, others) / wall) * 100).toFixed(0)}% of one core)`);
}
