// The load generator, always run as a child process (so it never shares an event loop with
// the server it measures). It receives one LoadSpec over IPC, drives autocannon, and answers
// with a LoadResult. Requests vary per request: list pages drawn from a seeded generator, or
// invoice bodies naming a random existing customer.
import { createRequire } from 'node:module';
import { prng } from './util.ts';

// autocannon ships no types; this is the part of its result these benches read.
interface AutocannonResult {
  requests: { total: number };
  latency: { p50: number; p90: number; p99: number; mean: number };
  duration: number;
  '2xx': number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodeStats?: Record<string, { count: number }>;
}
const autocannon = createRequire(import.meta.url)('autocannon') as (opts: Record<string, unknown>) => Promise<AutocannonResult>;

export interface LoadSpec {
  url: string;
  seconds: number;
  connections: number;
  headers: Record<string, string>;
  /** `list`: GET `${path}?page=N&pageSize=…`; `create`: POST an invoice body to `path`. */
  kind: 'list' | 'create';
  path: string;
  pages?: number;
  pageSize?: number;
  customerIds?: string[];
  seed?: number;
}

export interface LoadResult {
  requests: number;
  seconds: number;
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  meanLatency: number;
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
}


/** A valid invoice create body with two lines, as a client would send it. */
export function invoiceBody(customerId: string, n: number): string {
  const day = 1 + (n % 28);
  const dd = String(day).padStart(2, '0');
  return JSON.stringify({
    customerId,
    date: `2026-03-${dd}`,
    dueDate: `2026-04-${dd}`,
    lines: [
      { description: `Consulting, week ${n % 52}`, quantity: 1 + (n % 5), unitPrice: 1250.5 },
      { description: 'Travel expenses', quantity: 1, unitPrice: 310.25 },
    ],
    notes: 'Payment due within 30 days.',
  });
}

export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const rand = prng(spec.seed ?? 7);
  let n = 0;
  const setupRequest =
    spec.kind === 'list'
      ? (req: Record<string, unknown>) => {
          const page = 1 + Math.floor(rand() * (spec.pages ?? 1));
          return { ...req, method: 'GET', path: `${spec.path}?page=${page}&pageSize=${spec.pageSize ?? 20}` };
        }
      : (req: Record<string, unknown>) => {
          const ids = spec.customerIds!;
          const body = invoiceBody(ids[Math.floor(rand() * ids.length)], n++);
          return { ...req, method: 'POST', path: spec.path, body };
        };
  const headers = { ...spec.headers, ...(spec.kind === 'create' ? { 'content-type': 'application/json' } : {}) };
  const r = await autocannon({
    url: spec.url,
    connections: spec.connections,
    duration: spec.seconds,
    headers,
    requests: [{ setupRequest }],
  });
  const codes: Record<string, number> = {};
  for (const [code, v] of Object.entries(r.statusCodeStats ?? {})) codes[code] = v.count;
  return {
    requests: r.requests.total,
    seconds: r.duration,
    rps: r.requests.total / r.duration,
    p50: r.latency.p50,
    p90: r.latency.p90,
    p99: r.latency.p99,
    meanLatency: r.latency.mean,
    ok: r['2xx'],
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    statusCodes: codes,
  };
}

if (process.send) {
  process.once('message', async (spec: LoadSpec) => {
    try {
      const result = await runLoad(spec);
      process.send!({ ok: true, result }, () => process.exit(0));
    } catch (e) {
      process.send!({ ok: false, error: String((e as Error).stack ?? e) }, () => process.exit(1));
    }
  });
}
