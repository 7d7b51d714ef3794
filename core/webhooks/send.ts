// One delivery attempt: guard the address, POST to it with the connection pinned to that address
// (through a shared agent: on a connection whose own lookup is guarded, so a pooled attempt
// resolves nothing), read a bounded excerpt of the reply, and report the outcome as data. Never throws.
import { Agent, Client, type Dispatcher } from 'undici';
import { checkUrl, guardedLookup, guardUrl, pinnedLookup, REFUSED_ADDRESS_CODE, type GuardOptions, type GuardReason, type LookupRefusal, type UrlCheck } from './address-guard.ts';

export type SendFailure =
  | 'timeout'
  | 'connection_refused'
  | 'connection_reset'
  | 'dns'
  | 'tls'
  | 'refused_address'
  | 'http_status'
  | 'redirect'
  | 'other';

export interface SendOptions extends GuardOptions {
  url: string;
  headers: Record<string, string>;
  body: string | Uint8Array;
  /** From the start of the attempt (DNS included) until the whole response is read. */
  timeoutMs?: number;
  /** Bytes of the response body kept as the excerpt. */
  maxResponseBytes?: number;
  /** Bytes counted before the connection is dropped; a reply this long is not worth reading on. */
  hardCapBytes?: number;
  /** Connection reuse is the caller's choice (`webhookAgent`); by default each attempt has its own connection. */
  agent?: Dispatcher;
}

export interface SendResult {
  ok: boolean;
  status?: number;
  durationMs: number;
  failure?: SendFailure;
  /** The guard's reason when failure is refused_address or dns. */
  guardReason?: GuardReason;
  /** The error code or message behind a failure, for the delivery log. */
  detail?: string;
  /** Address connected to (after the guard). */
  address?: string;
  responseExcerpt: string;
  /** Response bytes seen, up to hardCapBytes. */
  responseBytes: number;
  /** The body went past hardCapBytes and the connection was dropped. */
  responseTruncated?: boolean;
  /** The `Retry-After` header of a 429 or 503 answer, as sent (ladder.ts reads it). */
  retryAfter?: string;
}

export const DEFAULT_TIMEOUT_MS = 10_000;
export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024;
export const DEFAULT_HARD_CAP_BYTES = 1024 * 1024;

const TLS_CODES = /^(ERR_TLS_|ERR_SSL_|EPROTO$|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_MISMATCH|ERR_OSSL_)/;

function classify(err: NodeJS.ErrnoException): SendFailure {
  const code = err.code ?? '';
  if (code === 'ECONNREFUSED') return 'connection_refused';
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return 'timeout';
  // UND_ERR_SOCKET: undici's word for a connection the other side closed or reset.
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'ECONNABORTED' || code === 'UND_ERR_SOCKET') return 'connection_reset';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'dns';
  if (code === REFUSED_ADDRESS_CODE) return 'refused_address';
  if (TLS_CODES.test(code)) return 'tls';
  return 'other';
}

/**
 * Keep-alive connections for attempts (undici: less than half the CPU per request of node:http; bench/webhook-sender.ts).
 * No connection limit per origin: the per-endpoint caps bound the attempts, and two endpoints on
 * one origin must not wait for each other. Each new connection is guarded again.
 */
export function webhookAgent(options: GuardOptions): Dispatcher {
  return new Agent({ pipelining: 1, connect: { lookup: guardedLookup(options) } });
}

export async function sendDelivery(options: SendOptions): Promise<SendResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxExcerpt = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const hardCap = Math.max(maxExcerpt, options.hardCapBytes ?? DEFAULT_HARD_CAP_BYTES);

  return new Promise<SendResult>((resolve) => {
    let settled = false;
    // The request's own abort, once undici has started it; until then, `cut` aborts it as it starts.
    let controller: { abort(reason?: Error): void } | undefined;
    let cut = false;
    let own: Client | undefined;
    const chunks: Buffer[] = [];
    let kept = 0;
    let seen = 0;
    let status: number | undefined;
    let address: string | undefined;
    let retryAfter: string | undefined;

    const finish = (result: Omit<SendResult, 'durationMs' | 'responseExcerpt' | 'responseBytes'>, complete = false) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      // Cut short (a timeout, the hard cap): the connection goes, not back to the pool.
      if (!complete) {
        cut = true;
        controller?.abort(new Error('attempt ended'));
      }
      own?.destroy().catch(() => {});
      // The fixed fields first: after a spread, each costs ~0.5 µs on Node 20 (see Deliveries.take).
      resolve({
        durationMs: elapsed(),
        responseExcerpt: Buffer.concat(chunks).toString('utf8'),
        responseBytes: seen,
        ...result,
        ...(address !== undefined ? { address } : {}),
        ...(retryAfter !== undefined ? { retryAfter } : {}),
      });
    };
    const failed = (err: NodeJS.ErrnoException & Partial<LookupRefusal>) => {
      const failure = classify(err);
      finish({
        ok: false,
        failure,
        // A pool's connection refused by its guarded lookup reads as the attempt's guard would.
        ...(failure === 'dns' || failure === 'refused_address' ? { guardReason: failure } : {}),
        ...(err.address !== undefined ? { address: err.address } : {}),
        ...(status !== undefined ? { status } : {}),
        detail: err.detail || (err.code ?? err.message),
      });
    };

    // One deadline for the whole attempt: a slow DNS answer, a silent server or a slow drip all end here.
    const timer = setTimeout(() => {
      finish({ ok: false, failure: 'timeout', ...(status !== undefined ? { status } : {}), detail: `no complete response within ${timeoutMs} ms` });
    }, timeoutMs);

    // Through a pool, a name is resolved (and checked) once per new connection, not per attempt.
    const guarded: Promise<UrlCheck> = options.agent ? Promise.resolve(checkUrl(options.url, options)) : guardUrl(options.url, options);
    guarded.then(
      (guard) => {
        if (settled) return;
        if (!guard.ok) {
          finish({
            ok: false,
            failure: guard.reason === 'dns' ? 'dns' : 'refused_address',
            guardReason: guard.reason,
            ...(guard.detail !== undefined ? { detail: guard.detail } : {}),
            ...(guard.address !== undefined ? { address: guard.address } : {}),
          });
          return;
        }
        address = guard.address;
        let dispatcher = options.agent;
        if (!dispatcher) {
          // A connection of its own, to the guarded address whatever the name resolves to now.
          dispatcher = own = new Client(guard.url.origin, { pipelining: 1, connect: { lookup: pinnedLookup(guard.address!, guard.family!) } });
        }
        // The dispatch API, not request(): no response stream or abort signal per attempt, which
        // cost the sender about as much CPU again as the bare request (bench/webhook-sender.ts).
        dispatcher.dispatch(
          {
            origin: guard.url.origin,
            path: guard.url.pathname + guard.url.search,
            method: 'POST',
            headers: { 'content-type': 'application/json', 'user-agent': 'Diwan-Webhooks/1', ...options.headers },
            body: typeof options.body === 'string' ? Buffer.from(options.body, 'utf8') : options.body,
          },
          {
            onRequestStart(c) {
              controller = c;
              if (cut) c.abort(new Error('attempt ended'));
            },
            onResponseStart(_c, code, headers) {
              status = code;
              // Only where it asks for a later attempt (ladder.ts): a 429 or a 503.
              if (code === 429 || code === 503) {
                const v = headers['retry-after'];
                if (v !== undefined) retryAfter = Array.isArray(v) ? v[0] : v;
              }
            },
            onResponseData(_c, chunk) {
              seen += chunk.length;
              if (kept < maxExcerpt) {
                const part = chunk.subarray(0, maxExcerpt - kept);
                chunks.push(part);
                kept += part.length;
              }
              if (seen > hardCap) {
                seen = hardCap;
                finish({ ...verdict(status!), responseTruncated: true });
              }
            },
            onResponseEnd() {
              finish(verdict(status!), true);
            },
            onResponseError(_c, err) {
              failed(err);
            },
          },
        );
      },
      (err: unknown) => finish({ ok: false, failure: 'other', detail: String(err) }),
    );
  });
}

function verdict(status: number): Pick<SendResult, 'ok' | 'status' | 'failure'> {
  if (status >= 200 && status < 300) return { ok: true, status };
  if (status >= 300 && status < 400) return { ok: false, status, failure: 'redirect' };
  return { ok: false, status, failure: 'http_status' };
}
