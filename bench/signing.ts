// Signatures per second: inline createHmac on the main thread vs the batched piscina pool,
// measured in the same run on ~1 KiB JSON bodies. Usage: npx tsx bench/signing.ts [seconds per case]
import os from 'node:os';
import { signHeader } from '../core/webhooks/signature.ts';
import { SignerPool, encodeBatch, type SignItem } from '../core/webhooks/signer-pool.ts';
// @ts-expect-error plain JS worker module, no types
import signBatch from '../core/webhooks/sign-worker.mjs';

const SECONDS = Number(process.argv[2] ?? 2); // per case, split over ROUNDS
const ROUNDS = 7;
const WINDOW = 4096; // items a producer keeps in flight

function makeItems(count: number): SignItem[] {
  const secrets = Array.from({ length: 50 }, (_, i) => `whsec_bench_endpoint_secret_${i}_${'x'.repeat(20)}`);
  const items: SignItem[] = [];
  for (let i = 0; i < count; i++) {
    const data = {
      id: `inv_${i.toString(36).padStart(8, '0')}`,
      number: `INV-2026-${i}`,
      customer: { id: `cus_${i % 977}`, name: 'شركة الديوان للتجارة', email: `billing${i}@example.com` },
      currency: 'SAR',
      lines: Array.from({ length: 4 }, (_, j) => ({ description: `Line item ${j} of invoice ${i}`, quantity: j + 1, unitPrice: 1999 + j })),
      notes: 'Payment due within 30 days of the invoice date. '.repeat(7),
      tags: ['wholesale', 'riyadh', 'q1'],
    };
    const body = JSON.stringify({ id: `evt_${i}`, topic: 'invoice.created', companyId: 'co_123', occurredAt: '2026-01-01T00:00:00.000Z', data });
    items.push({ secrets: [secrets[i % secrets.length]], t: 1767225600 + (i % 60), body });
  }
  return items;
}

type Case = { label: string; run: (deadline: number) => Promise<number> };

/** Rounds interleave the cases, so load from anything else on the machine hits them alike. */
async function measure(cases: Case[], rounds: number): Promise<number[]> {
  for (const c of cases) await c.run(performance.now() + 300); // warm-up
  const rates = cases.map(() => [] as number[]);
  const slice = (SECONDS * 1000) / rounds;
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < cases.length; i++) {
      const start = performance.now();
      const n = await cases[i].run(start + slice);
      rates[i].push(n / ((performance.now() - start) / 1000));
    }
  }
  return rates.map((list, i) => {
    list.sort((a, b) => a - b);
    const median = list[list.length >> 1];
    const spread = `${Math.round(list[0] / 1000)}k–${Math.round(list[list.length - 1] / 1000)}k`;
    console.log(`${cases[i].label.padEnd(44)} ${Math.round(median).toLocaleString('en-US').padStart(10)} signatures/s  (rounds ${spread})`);
    return median;
  });
}

const items = makeItems(WINDOW * 4);
const avgBytes = items.reduce((s, it) => s + Buffer.byteLength(it.body), 0) / items.length;
console.log(`node ${process.version}, ${os.availableParallelism()} cores, body ≈ ${Math.round(avgBytes)} bytes, 1 secret each`);

const inline: Case = { label: 'inline createHmac (main thread)', run: async (deadline) => {
  let n = 0;
  let sink = 0;
  while (performance.now() < deadline) {
    for (let i = 0; i < WINDOW; i++, n++) {
      const item = items[n % items.length];
      sink += signHeader(item.secrets, item.t, item.body).length;
    }
  }
  if (sink === 0) throw new Error('unreachable');
  return n;
} };

// The worker's own HMAC code run on the main thread: separates the gain of parallelism from the
// gain of the one-shot HMAC.
const inlineFast: Case = { label: 'inline one-shot HMAC (worker code, main)', run: async (deadline) => {
  let n = 0;
  let from = 0;
  while (performance.now() < deadline) {
    from = (from + WINDOW) % (items.length - WINDOW);
    const headers = (signBatch(encodeBatch(items.slice(from, from + WINDOW))) as string).split('\n');
    n += headers.length;
  }
  return n;
} };

const pool = new SignerPool({ threads: Number(process.env.T ?? os.availableParallelism()), maxBatch: Number(process.env.B ?? 512) });
await pool.sign(items.slice(0, 64)); // workers up

// Producer submitting whole batches, two windows in flight so the main thread encodes while workers hash.
const batched: Case = { label: 'pool, sign(batch of 4096), 2 in flight', run: async (deadline) => {
  let n = 0;
  let cursor = 0;
  const next = () => {
    const from = cursor % (items.length - WINDOW);
    cursor += WINDOW;
    return pool.sign(items.slice(from, from + WINDOW));
  };
  const inFlight = [next(), next()];
  while (performance.now() < deadline) {
    await inFlight.shift();
    n += WINDOW;
    inFlight.push(next());
  }
  await Promise.all(inFlight);
  return n + 2 * WINDOW;
} };

// Many one-item calls in the same tick, gathered by the pool's microtask window.
const single: Case = { label: 'pool, 4096 × sign([one]) per tick', run: async (deadline) => {
  let n = 0;
  let cursor = 0;
  while (performance.now() < deadline) {
    const calls: Promise<string[]>[] = [];
    for (let i = 0; i < WINDOW; i++) calls.push(pool.sign([items[cursor++ % items.length]]));
    await Promise.all(calls);
    n += WINDOW;
  }
  return n;
} };

const [rInline, rInlineFast, rBatched, rSingle] = await measure([inline, inlineFast, batched, single], ROUNDS);
await pool.close();
console.log(`ratio pooled/inline createHmac: batched ${(rBatched / rInline).toFixed(2)}x, single-item calls ${(rSingle / rInline).toFixed(2)}x`);
console.log(`ratio pooled/inline one-shot:   batched ${(rBatched / rInlineFast).toFixed(2)}x, single-item calls ${(rSingle / rInlineFast).toFixed(2)}x`);
