// `diwan listen --forward-to http://localhost:4000/hooks [--topics …] --company co_… --key dwk_…
// [--url http://localhost:3000]`, as `stripe listen` does: the CLI holds the event stream of a
// running Diwan (`GET /api/v1/events/stream`, authenticated by the key like every route),
// prints a signing secret made for this session, and forwards each event to the local URL
// signed exactly as deliveries are (`x-service-signature: t=…,v1=…` and the Standard Webhooks headers, the event and delivery id
// headers, the same body bytes), one line per event with the receiver's answer. Nothing on the
// server needs to reach the local machine. If the stream drops (the server restarts), it
// reconnects and resumes after the last event it got (`Last-Event-ID`). Ctrl-C stops it.
//
// It needs no database: it is an API client. With `--json` it prints one JSON object per line
// (ready, each event, reconnects) instead of one document, as a stream has no end.
import http from 'node:http';
import https from 'node:https';
import { DiwanError } from '../../core/kernel/errors/diwan-error.ts';
import type { ErrorCode } from '../../core/kernel/errors/codes.ts';
import { newId } from '../../core/kernel/ids.ts';
import {
  SIGNATURE_HEADER, STANDARD_ID_HEADER, STANDARD_SIGNATURE_HEADER, STANDARD_TIMESTAMP_HEADER, generateSecret, signHeader, standardSignatureHeader, unixSeconds,
} from '../../core/webhooks/signature.ts';
import { UsageError, write } from '../output.ts';
import { recordedPublicUrl } from '../public-url.ts';
import type { Command, CommandContext, CommandGroup } from './command.ts';

const TEXT = {
  en: {
    ready: 'Ready. Forwarding the events of {company} ({topics}) from {url} to {forward}.',
    secret: 'Your webhook signing secret for this session is {secret} (shown this once; verify x-service-signature or webhook-signature with it).',
    failed: 'failed: {failure}{detail}',
    dropped: 'The stream ended ({reason}); reconnecting in {seconds} s…',
    back: 'Reconnected; resuming after the last event received.',
    stopped: 'Stopped.',
    keyRequired: '--key (or the DIWAN_KEY environment variable) is required',
    url: '{name} must be an http(s) URL',
    unreachable: 'cannot reach {url}: {reason}',
  },
  ar: {
    ready: 'جاهز. تُمرَّر أحداث {company} ({topics}) من {url} إلى {forward}.',
    secret: 'سر توقيع الويب هوك لهذه الجلسة هو {secret} (يظهر مرة واحدة؛ تحقق به من x-service-signature أو webhook-signature).',
    failed: 'أخفق: {failure}{detail}',
    dropped: 'انتهى البث ({reason})؛ إعادة الاتصال بعد {seconds} ث…',
    back: 'أُعيد الاتصال؛ يُستأنف بعد آخر حدث وصل.',
    stopped: 'توقف.',
    keyRequired: 'الخيار --key (أو متغير البيئة DIWAN_KEY) مطلوب',
    url: 'يجب أن تكون قيمة {name} عنوان http(s)',
    unreachable: 'تعذّر الوصول إلى {url}: {reason}',
  },
} as const;

type Key = keyof (typeof TEXT)['en'];

interface Message {
  id?: string;
  event?: string;
  data: string[];
}

/** Reads server-sent events from text chunks; calls `onMessage` for each complete message. */
export class SseParser {
  private buffer = '';
  private current: Message = { data: [] };
  constructor(private onMessage: (m: { id?: string; event?: string; data: string }) => void) {}

  push(chunk: string): void {
    this.buffer += chunk;
    let nl: number;
    while ((nl = this.buffer.indexOf('\n')) >= 0) {
      const line = this.buffer.slice(0, nl).replace(/\r$/, '');
      this.buffer = this.buffer.slice(nl + 1);
      this.line(line);
    }
  }

  private line(line: string): void {
    if (line === '') {
      const m = this.current;
      this.current = { data: [] };
      if (m.data.length || m.event) this.onMessage({ id: m.id, event: m.event, data: m.data.join('\n') });
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'data') this.current.data.push(value);
    else if (field === 'id') this.current.id = value;
    else if (field === 'event') this.current.event = value;
  }
}

function httpUrl(value: string, name: string, say: (k: Key, p?: Record<string, string>) => string): URL {
  let u: URL | undefined;
  try {
    u = new URL(value);
  } catch {
    u = undefined;
  }
  if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:')) throw new UsageError(`--${name}`, 'format', say('url', { name: `--${name}` }), { value });
  return u;
}

const listenCommand: Command & { host?: boolean } = {
  name: '',
  summary: "Forward a company's events from a running Diwan to a local URL, signed with a secret made for the session (no public URL needed)",
  host: false,
  options: {
    'forward-to': { type: 'string', value: 'url', required: true, description: 'The local URL that receives the events, e.g. http://localhost:4000/hooks' },
    company: { type: 'string', value: 'id', required: true, description: 'The company (co_…) whose events to forward' },
    key: { type: 'string', value: 'dwk_…', description: 'An API key of the company with webhooks:read (default: env DIWAN_KEY, which keeps it out of the process list)' },
    url: { type: 'string', value: 'url', description: 'Where Diwan runs (default: env DIWAN_URL, else the server running on the data folder, else http://localhost:3000)' },
    topics: { type: 'string', value: "'invoice.*,crm.lead.created'", description: 'Topic patterns, comma-separated (default *: every topic but audit.* and webhook.*)' },
  },
  examples: [
    'diwan listen --forward-to http://localhost:4000/hooks --company co_… --key dwk_…',
    "DIWAN_KEY=dwk_… diwan listen --forward-to http://localhost:4000/hooks --topics 'invoice.*' --company co_… --url https://diwan.example.com",
  ],
  run: (ctx) => runListen(ctx),
};

export const listen: CommandGroup = { name: 'listen', summary: listenCommand.summary, commands: [listenCommand] };

async function runListen(ctx: CommandContext): Promise<{ data: null; text: string }> {
  const t = TEXT[ctx.lang];
  const say = (k: Key, p: Record<string, string> = {}) => t[k].replace(/\{(\w+)\}/g, (_, name: string) => p[name] ?? '');
  const key = (ctx.opts.key as string | undefined) ?? process.env.DIWAN_KEY;
  if (!key) throw new UsageError('--key', 'required', say('keyRequired'));
  const base = httpUrl((ctx.opts.url as string | undefined) ?? process.env.DIWAN_URL ?? recordedPublicUrl(ctx.dataDir) ?? 'http://localhost:3000', 'url', say);
  const forwardTo = httpUrl(String(ctx.opts['forward-to']), 'forward-to', say).toString();
  const company = String(ctx.opts.company);
  const topics = (ctx.opts.topics as string | undefined)?.trim() || '*';
  // Loaded on use: the rest of the CLI never pays for them.
  const { sendDelivery } = await import('../../core/webhooks/send.ts');
  const { EVENT_ID_HEADER, DELIVERY_ID_HEADER } = await import('../../core/webhooks/dispatcher.ts');

  const secret = generateSecret();
  const out = (line: string | Record<string, unknown>) => write(process.stdout, typeof line === 'string' ? line : JSON.stringify(line));
  const streamUrl = new URL(`${base.pathname.replace(/\/$/, '')}/api/v1/events/stream`, base);
  streamUrl.searchParams.set('topics', topics);

  let lastId: string | undefined;
  let stopping = false;
  let current: http.ClientRequest | undefined;
  let forwarding: Promise<void> = Promise.resolve();
  const stopSignal = new AbortController();
  const stopped = new Promise<void>((resolve) => stopSignal.signal.addEventListener('abort', () => resolve(), { once: true }));
  const stop = () => {
    stopping = true;
    current?.destroy();
    stopSignal.abort();
  };

  const forward = async (m: { id?: string; event?: string; data: string }) => {
    let ev: { id: string; type: string };
    try {
      ev = JSON.parse(m.data);
    } catch {
      return;
    }
    const body = Buffer.from(m.data, 'utf8');
    const t = unixSeconds(Date.now());
    const signature = signHeader([secret], t, body);
    // Both schemes, as deliveries carry them.
    const r = await sendDelivery({
      url: forwardTo,
      body,
      headers: {
        [SIGNATURE_HEADER]: signature, [STANDARD_ID_HEADER]: ev.id, [STANDARD_TIMESTAMP_HEADER]: String(t), [STANDARD_SIGNATURE_HEADER]: standardSignatureHeader([secret], ev.id, t, body),
        [EVENT_ID_HEADER]: ev.id, [DELIVERY_ID_HEADER]: newId('dlv'), 'content-type': 'application/json',
      },
      // The local receiver is the point: loopback and private addresses are what it is on.
      allowLoopback: true,
      allowPrivate: true,
    });
    if (m.id) lastId = m.id;
    const at = new Date().toISOString();
    if (ctx.json) {
      await out({ type: 'event', at, id: ev.id, topic: ev.type, status: r.status ?? null, ok: r.ok, failure: r.failure ?? null, durationMs: r.durationMs });
    } else {
      const answer = r.status !== undefined && (r.ok || r.failure === 'http_status') ? `${r.status}` : say('failed', { failure: r.failure ?? 'other', detail: r.detail ? ` (${r.detail})` : '' });
      await out(`${at}  ${ev.type}  ${ev.id}  → ${answer} [${r.durationMs} ms]`);
    }
  };

  /**
   * One connection. Resolves when it ends: whether it opened, and why it ended. Rejects when the
   * API refuses it (401, 403, 410…), or when the very first one cannot reach the server.
   */
  const connect = (first: boolean) =>
    new Promise<{ opened: boolean; reason: string }>((resolve, reject) => {
      let opened = false;
      const transport = streamUrl.protocol === 'https:' ? https : http;
      const req = transport.get(streamUrl, {
        headers: {
          authorization: `Bearer ${key}`, 'x-company-id': company, accept: 'text/event-stream', 'accept-language': ctx.lang,
          ...(lastId ? { 'last-event-id': lastId } : {}),
        },
      });
      current = req;
      req.on('error', (err: NodeJS.ErrnoException) => {
        if (stopping) resolve({ opened, reason: 'stopped' });
        else if (first && !opened) reject(new Error(say('unreachable', { url: base.origin, reason: err.code ?? err.message })));
        else resolve({ opened, reason: err.code ?? err.message });
      });
      req.on('response', (res) => {
        res.setEncoding('utf8');
        if (res.statusCode !== 200) {
          let text = '';
          res.on('data', (c: string) => (text += c));
          res.on('end', () => {
            let e: { code?: string; message?: string; details?: Record<string, unknown>[] } = {};
            try {
              e = (JSON.parse(text) as { error: typeof e }).error ?? {};
            } catch {
              // not the envelope
            }
            const code = (e.code ?? 'INTERNAL') as ErrorCode;
            reject(new DiwanError(code, e.details ?? [{ status: res.statusCode }], { summary: e.message, reason: e.message, seconds: res.headers['retry-after'] }));
          });
          return;
        }
        opened = true;
        let closing: string | undefined;
        const parser = new SseParser((m) => {
          if (m.event === 'close') {
            try {
              closing = (JSON.parse(m.data) as { reason?: string }).reason;
            } catch {
              closing = 'close';
            }
            return;
          }
          forwarding = forwarding.then(() => forward(m)).catch(() => {});
        });
        if (first) {
          forwarding = forwarding.then(() =>
            ctx.json
              ? out({ type: 'ready', company, topics, url: base.origin, forwardTo, secret })
              : out(`${say('ready', { company, topics, url: base.origin, forward: forwardTo })}\n${say('secret', { secret })}`),
          );
        } else {
          forwarding = forwarding.then(() => out(ctx.json ? { type: 'reconnected' } : say('back')));
        }
        res.on('data', (c: string) => parser.push(c));
        res.on('end', () => resolve({ opened, reason: closing ?? 'ended' }));
        res.on('error', () => resolve({ opened, reason: closing ?? 'reset' }));
      });
    });

  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    let ended = await Promise.race([connect(true), stopped.then(() => ({ opened: true, reason: 'stopped' }))]);
    let wait = 1;
    while (!stopping) {
      // A refused key ends the session; anything else (a restart, the network) is waited out.
      if (ended.reason === 'credentials') throw new DiwanError('UNAUTHENTICATED', [{ reason: 'revoked' }]);
      wait = ended.opened ? 1 : Math.min(10, wait * 2);
      await forwarding;
      if (ctx.json) await out({ type: 'reconnecting', reason: ended.reason, seconds: wait });
      else await out(say('dropped', { reason: ended.reason, seconds: String(wait) }));
      await Promise.race([new Promise((r) => setTimeout(r, wait * 1000)), stopped]);
      if (stopping) break;
      try {
        ended = await Promise.race([connect(false), stopped.then(() => ({ opened: true, reason: 'stopped' }))]);
      } catch (err) {
        if (err instanceof DiwanError && ['UNAUTHENTICATED', 'FORBIDDEN', 'CURSOR_EXPIRED', 'VALIDATION_ERROR'].includes(err.code)) throw err;
        ended = { opened: false, reason: err instanceof Error ? err.message : String(err) };
      }
    }
    await forwarding;
    if (!ctx.json) await out(say('stopped'));
    return { data: null, text: '' };
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    current?.destroy();
  }
}
