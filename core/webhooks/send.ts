// One delivery attempt: guard the address, POST to it with the connection pinned to that address,
// read a bounded excerpt of the reply, and report the outcome as data. Never throws.
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { guardUrl, type GuardOptions, type GuardReason } from './address-guard.ts';

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
  /** Connection reuse is the caller's choice; by default each attempt has its own connection. */
  agent?: http.Agent | false;
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
}

export const DEFAULT_TIMEOUT_MS = 10_000;
export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024;
export const DEFAULT_HARD_CAP_BYTES = 1024 * 1024;

const TLS_CODES = /^(ERR_TLS_|ERR_SSL_|EPROTO$|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_MISMATCH|ERR_OSSL_)/;

function classify(err: NodeJS.ErrnoException): SendFailure {
  const code = err.code ?? '';
  if (code === 'ECONNREFUSED') return 'connection_refused';
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'ECONNABORTED') return 'connection_reset';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'dns';
  if (TLS_CODES.test(code)) return 'tls';
  return 'other';
}

export async function sendDelivery(options: SendOptions): Promise<SendResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxExcerpt = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const hardCap = Math.max(maxExcerpt, options.hardCapBytes ?? DEFAULT_HARD_CAP_BYTES);

  return new Promise<SendResult>((resolve) => {
    let settled = false;
    let req: http.ClientRequest | undefined;
    const chunks: Buffer[] = [];
    let kept = 0;
    let seen = 0;
    let status: number | undefined;
    let address: string | undefined;

    const finish = (result: Omit<SendResult, 'durationMs' | 'responseExcerpt' | 'responseBytes'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req?.destroy();
      resolve({
        ...result,
        ...(address !== undefined ? { address } : {}),
        durationMs: elapsed(),
        responseExcerpt: Buffer.concat(chunks).toString('utf8'),
        responseBytes: seen,
      });
    };

    // One deadline for the whole attempt: a slow DNS answer, a silent server or a slow drip all end here.
    const timer = setTimeout(() => {
      finish({ ok: false, failure: 'timeout', ...(status !== undefined ? { status } : {}), detail: `no complete response within ${timeoutMs} ms` });
    }, timeoutMs);

    guardUrl(options.url, options).then(
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
        // The connection goes to the guarded address whatever the name resolves to now.
        const pinned: LookupFunction = (_hostname, opts, callback) => {
          if (opts.all) (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address: guard.address, family: guard.family }]);
          else callback(null, guard.address, guard.family);
        };
        const body = typeof options.body === 'string' ? Buffer.from(options.body, 'utf8') : options.body;
        const transport = guard.url.protocol === 'https:' ? https : http;
        try {
          req = transport.request(guard.url, {
            method: 'POST',
            lookup: pinned,
            agent: options.agent ?? false,
            headers: {
              'content-type': 'application/json',
              'user-agent': 'Diwan-Webhooks/1',
              ...options.headers,
              'content-length': String(body.byteLength),
            },
          });
        } catch (err) {
          finish({ ok: false, failure: 'other', detail: String(err) });
          return;
        }
        req.on('error', (err: NodeJS.ErrnoException) => {
          finish({ ok: false, failure: classify(err), ...(status !== undefined ? { status } : {}), detail: err.code ?? err.message });
        });
        req.on('response', (res) => {
          status = res.statusCode ?? 0;
          const code = status;
          res.on('data', (chunk: Buffer) => {
            seen += chunk.length;
            if (kept < maxExcerpt) {
              const part = chunk.subarray(0, maxExcerpt - kept);
              chunks.push(part);
              kept += part.length;
            }
            if (seen > hardCap) {
              seen = hardCap;
              finish({ ...verdict(code), responseTruncated: true });
            }
          });
          res.on('end', () => finish(verdict(code)));
          res.on('error', (err: NodeJS.ErrnoException) => {
            finish({ ok: false, status: code, failure: classify(err), detail: err.code ?? err.message });
          });
          // A server dropping the connection mid-body: 'aborted' comes without an 'error' on older paths.
          res.on('aborted', () => finish({ ok: false, status: code, failure: 'connection_reset', detail: 'response aborted' }));
        });
        req.end(body);
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
