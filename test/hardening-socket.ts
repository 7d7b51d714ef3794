// Raw HTTP/1.1 over a loopback socket, for the cases a client library would never send (bad
// framing, no Host, slow bytes). Every exchange is bounded in time and closes its socket.
import net from 'node:net';

/** A string or bytes to write, or a pause in milliseconds. */
export type Step = string | Buffer | number;

export interface RawAnswer {
  /** Everything the server sent. */
  text: string;
  /** The first response, parsed (undefined when nothing parseable came back). */
  status?: number;
  headers: Record<string, string>;
  body?: unknown;
  /** Whether the server closed the connection before `timeoutMs`, and when (ms after connecting). */
  closed: boolean;
  closedAfterMs: number;
}

/**
 * Connects to 127.0.0.1:`port`, plays `steps` (writes and pauses; a trailing `repeat` keeps
 * writing it every `repeatEveryMs` until the server closes), and collects the answer until the
 * server closes or `timeoutMs` passes.
 */
export function exchange(port: number, steps: Step[], opts: { timeoutMs?: number; repeat?: string; repeatEveryMs?: number } = {}): Promise<RawAnswer> {
  const timeoutMs = opts.timeoutMs ?? 3000;
  return new Promise((resolve) => {
    const started = Date.now();
    const chunks: Buffer[] = [];
    let done = false;
    const socket = net.connect(port, '127.0.0.1');
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ ...parse(Buffer.concat(chunks).toString('utf8')), closed, closedAfterMs: Date.now() - started });
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    socket.on('data', (d) => chunks.push(d));
    socket.on('error', () => {}); // a reset after the answer is expected; what was read counts
    socket.on('close', () => finish(true));
    socket.on('connect', async () => {
      const write = (data: string | Buffer) => {
        if (!done && !socket.destroyed && socket.writable) socket.write(data);
      };
      for (const step of steps) {
        if (done) return;
        if (typeof step === 'number') await new Promise((r) => setTimeout(r, step));
        else write(step);
      }
      while (opts.repeat !== undefined && !done) {
        await new Promise((r) => setTimeout(r, opts.repeatEveryMs ?? 100));
        write(opts.repeat);
      }
    });
  });
}

function parse(text: string): Omit<RawAnswer, 'closed' | 'closedAfterMs'> {
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return { text, headers: {} };
  const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1]);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  let raw = text.slice(end + 4);
  if (headers['content-length'] !== undefined) raw = Buffer.from(raw).subarray(0, Number(headers['content-length'])).toString('utf8');
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    body = raw;
  }
  return { text, status: Number.isFinite(status) ? status : undefined, headers, body };
}

/** Asserts-free check used by the tests: exactly `{ error: { code, message, details[] } }`. */
export function envelopeOf(answer: RawAnswer): { code: string; message: string; details: Record<string, unknown>[] } | undefined {
  const b = answer.body as { error?: { code?: unknown; message?: unknown; details?: unknown } } | undefined;
  if (!b || typeof b !== 'object' || Object.keys(b).join() !== 'error' || !b.error) return undefined;
  const e = b.error;
  if (Object.keys(e).sort().join() !== 'code,details,message') return undefined;
  if (typeof e.code !== 'string' || typeof e.message !== 'string' || e.message === '' || !Array.isArray(e.details)) return undefined;
  return e as { code: string; message: string; details: Record<string, unknown>[] };
}
