// Requests malformed below HTTP semantics, sent on a raw socket to a listening host: what Node's
// parser and Fastify's client-error path answer before any route runs. Each probe must end in
// an answer in the envelope (a code of the error table at its status, never a 5xx), within a
// time limit, and never in silence.
import net from 'node:net';
import type { Answer } from './oracle.ts';

export interface Probe {
  /** Stable name, also the key of KNOWN_HARDENING_GAPS. */
  name: string;
  /** Raw bytes to write, in order; a number waits that many ms before the next part. */
  parts: (string | number)[];
  /** Half-close the socket after the last part (the client has nothing more to send). */
  end?: boolean;
}

export interface ProbeResult {
  answer?: Answer;
  /** The socket closed without any answer. */
  silent: boolean;
  /** No answer and no close within the wait. */
  timedOut: boolean;
  raw: string;
}

const CRLF = '\r\n';

export function probes(ctx: { companyId: string; key: string; path: string; waitMs: number }): Probe[] {
  const auth = `Authorization: Bearer ${ctx.key}${CRLF}X-Company-Id: ${ctx.companyId}${CRLF}`;
  const head = (extra: string, method = 'POST') => `${method} ${ctx.path} HTTP/1.1${CRLF}Host: localhost${CRLF}${auth}Content-Type: application/json${CRLF}${extra}`;
  const body = '{"name":"Probe"}';
  return [
    { name: 'content-length.not-a-number', parts: [head(`Content-Length: abc${CRLF}Connection: close${CRLF}${CRLF}`) + body] },
    { name: 'content-length.negative', parts: [head(`Content-Length: -1${CRLF}Connection: close${CRLF}${CRLF}`) + body] },
    { name: 'content-length.conflicting', parts: [head(`Content-Length: 16${CRLF}Content-Length: 17${CRLF}Connection: close${CRLF}${CRLF}`) + body] },
    { name: 'content-length.with-transfer-encoding', parts: [head(`Content-Length: 16${CRLF}Transfer-Encoding: chunked${CRLF}Connection: close${CRLF}${CRLF}`) + `10${CRLF}${body}${CRLF}0${CRLF}${CRLF}`] },
    { name: 'content-length.longer-than-body', parts: [head(`Content-Length: 100${CRLF}Connection: close${CRLF}${CRLF}`) + body], end: true },
    { name: 'chunked.bad-size', parts: [head(`Transfer-Encoding: chunked${CRLF}Connection: close${CRLF}${CRLF}`) + `zz${CRLF}${body}${CRLF}0${CRLF}${CRLF}`] },
    { name: 'chunked.truncated', parts: [head(`Transfer-Encoding: chunked${CRLF}Connection: close${CRLF}${CRLF}`) + `40${CRLF}{"na`], end: true },
    { name: 'chunked.bad-extension', parts: [head(`Transfer-Encoding: chunked${CRLF}Connection: close${CRLF}${CRLF}`) + `10;\u0001${CRLF}${body}${CRLF}0${CRLF}${CRLF}`] },
    { name: 'slow-body', parts: [head(`Content-Length: 16${CRLF}Connection: close${CRLF}${CRLF}`) + '{"na', ctx.waitMs] },
    { name: 'slow-headers', parts: [`POST ${ctx.path} HTTP/1.1${CRLF}Host: localhost${CRLF}X-Slow: `, ctx.waitMs] },
    { name: 'oversized-header', parts: [head(`X-Padding: ${'p'.repeat(20_000)}${CRLF}Content-Length: 16${CRLF}Connection: close${CRLF}${CRLF}`) + body] },
    { name: 'oversized-request-line', parts: [`GET ${ctx.path}?q=${'q'.repeat(20_000)} HTTP/1.1${CRLF}Host: localhost${CRLF}${auth}Connection: close${CRLF}${CRLF}`] },
  ];
}

/** Parses one HTTP/1.1 response (Content-Length or close-delimited; chunked decoded). */
function parse(raw: string): Answer | undefined {
  const at = raw.indexOf(CRLF + CRLF);
  if (at < 0) return undefined;
  const [statusLine, ...lines] = raw.slice(0, at).split(CRLF);
  const status = Number(statusLine.split(' ')[1]);
  if (!Number.isInteger(status)) return undefined;
  const headers: Answer['headers'] = {};
  for (const l of lines) {
    const i = l.indexOf(':');
    if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
  }
  let body = raw.slice(at + 4);
  if (String(headers['transfer-encoding'] ?? '').includes('chunked')) {
    let out = '';
    let rest = body;
    for (;;) {
      const nl = rest.indexOf(CRLF);
      if (nl < 0) break;
      const size = parseInt(rest.slice(0, nl), 16);
      if (!size) break;
      out += rest.slice(nl + 2, nl + 2 + size);
      rest = rest.slice(nl + 2 + size + 2);
    }
    body = out;
  } else if (headers['content-length'] !== undefined) {
    body = Buffer.from(body, 'utf8').subarray(0, Number(headers['content-length'])).toString('utf8');
  }
  return { status, headers, body };
}

/** Sends a probe and waits for the answer (or the close) up to `timeoutMs`. */
export function sendProbe(port: number, probe: Probe, timeoutMs: number): Promise<ProbeResult> {
  return new Promise((resolve) => {
    let raw = '';
    let done = false;
    const finish = (timedOut: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const answer = parse(raw);
      resolve({ answer, silent: !answer && !timedOut, timedOut: timedOut && !answer, raw });
    };
    const timer = setTimeout(() => finish(true), timeoutMs);
    const socket = net.connect(port, '127.0.0.1', async () => {
      for (const part of probe.parts) {
        if (done) return;
        if (typeof part === 'number') await new Promise((r) => setTimeout(r, part));
        else socket.write(part);
      }
      if (probe.end) socket.end();
    });
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => {
      raw += d;
      // One complete answer is enough: a keep-alive server would not close.
      const a = parse(raw);
      if (a && (a.headers['content-length'] === undefined || Buffer.byteLength(a.body) >= Number(a.headers['content-length']))) finish(false);
    });
    socket.on('error', () => finish(false));
    socket.on('close', () => finish(false));
  });
}
