// The company's events read back: `GET /api/v1/events` (cursor paging, oldest first, filtered by
// subscription patterns and time) and `GET /api/v1/events/{id}`, so a consumer catches up after
// an outage; and `GET /api/v1/events/stream`, the same events live as server-sent events (what
// `diwan listen` forwards). Each event is its webhook body, byte for byte.
//
// Permission: `webhooks:read` (Admin). An event's payload is the document it is about, of any
// app, and the audit trail's rows: reading them back is receiving webhooks after the fact, so it
// asks what registering an endpoint asks, not the Viewer-level `events:read` of the catalogue
// (which shows schemas, never data).
import type { ServerResponse } from 'node:http';
import { DiwanError } from '../../kernel/errors/diwan-error.ts';
import type { StoredEvent, TopicFilter } from '../../storage/repos/outbox.ts';
import { encodeCursor, eventJsonOf, splitPatterns, topicFilter, type EventLog } from '../../events/event-log.ts';
import { eventBodySchema } from '../../events/event-body.ts';
import type { EventStreams } from '../../events/event-stream.ts';
import type { KnownTopics } from '../../events/patterns.ts';
import { core, type ApiRequest, type Route } from '../route.ts';

const PERMISSION = 'webhooks:read';
/** Streams one company may hold open at once. */
export const MAX_STREAMS_PER_COMPANY = 20;
/** A comment line this often keeps proxies from closing a quiet stream, and finds clients gone. */
const HEARTBEAT_MS = 15_000;

const topicsQuery = {
  type: 'string', maxLength: 4000,
  description: 'Subscription patterns, comma-separated: exact topics, `<family>.*`, or `*` (which leaves out the opt-in `audit.*` and `webhook.*`). Default: `*`',
} as const;
const cursorQuery = { type: 'string', maxLength: 200, description: 'Where the previous page ended (its `next`); opaque' } as const;

const pageSchema = {
  type: 'object', additionalProperties: false, required: ['data', 'next', 'hasMore'],
  properties: {
    data: { type: 'array', items: eventBodySchema, description: 'Oldest first; each event exactly as its webhook body' },
    next: { type: ['string', 'null'], description: 'The cursor to go on from (also when `hasMore` is false: poll with it later for newer events)' },
    hasMore: { type: 'boolean', description: 'More events are there now past `next`' },
  },
} as const;

function isoOf(value: unknown, pointer: string): string | undefined {
  if (value === undefined) return undefined;
  const d = typeof value === 'string' ? new Date(value) : undefined;
  if (!d || Number.isNaN(d.getTime())) {
    const message = `${pointer.slice(1)} must be an ISO 8601 date-time`;
    throw new DiwanError('VALIDATION_ERROR', [{ in: 'query', pointer, rule: 'format', limit: 'date-time', message, value }], { summary: message });
  }
  return d.toISOString();
}

export interface EventLogRouteDeps {
  log: EventLog;
  streams: EventStreams;
  known: () => KnownTopics;
  /** Whether the caller's credentials still hold (checked on every heartbeat: a revoked key's stream ends). */
  stillValid(req: ApiRequest): Promise<boolean>;
  heartbeatMs?: number;
}

/** `id`, `event` and `data` lines of one event. */
const sse = (e: StoredEvent) => `id: ${encodeCursor(e)}\nevent: ${e.topic}\ndata: ${eventJsonOf(e)}\n\n`;

function write(res: ServerResponse, text: string): Promise<void> {
  if (res.destroyed || res.writableEnded) return Promise.reject(new Error('stream closed'));
  if (res.write(text)) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const done = (err?: Error) => {
      res.off('drain', ok);
      res.off('close', gone);
      if (err) reject(err);
      else resolve();
    };
    const ok = () => done();
    const gone = () => done(new Error('stream closed'));
    res.once('drain', ok);
    res.once('close', gone);
  });
}

export function eventLogRoutes(deps: EventLogRouteDeps): Route[] {
  const { log, streams } = deps;
  const heartbeatMs = deps.heartbeatMs ?? HEARTBEAT_MS;
  const retention = `Events older than the retention (\`DIWAN_EVENT_RETENTION_DAYS\`, ${log.retentionDays > 0 ? `${log.retentionDays} days here` : 'no limit here'}) are pruned`;

  return [
    core(
      {
        method: 'GET', url: '/api/v1/events', operationId: 'core.listEvents',
        summary: "The company's events, oldest first, a page at a time: catch up after an outage",
        description: `Each event is exactly its webhook body. Page on with \`cursor\` = the previous page's \`next\` until \`hasMore\` is false; keep \`next\` to poll for newer events later. ${retention}: a cursor from before that answers 410 CURSOR_EXPIRED (list again from a time). Needs \`webhooks:read\`: payloads carry the documents of every app.`,
        permission: PERMISSION, errors: ['CURSOR_EXPIRED'],
        schema: {
          querystring: {
            type: 'object', additionalProperties: false,
            properties: {
              topics: topicsQuery,
              cursor: cursorQuery,
              from: { type: 'string', maxLength: 40, description: 'Only events created at or after this ISO 8601 date-time' },
              to: { type: 'string', maxLength: 40, description: 'Only events created before this ISO 8601 date-time' },
              limit: { type: 'integer', minimum: 1, maximum: 500, default: 100, description: 'Events per page, at most 500' },
            },
          },
          response: { 200: pageSchema },
        },
      },
      async (req) => {
        const q = req.query as { topics?: string; cursor?: string; from?: string; to?: string; limit: number };
        const page = await log.list(req.company.id, {
          topics: q.topics !== undefined ? splitPatterns(q.topics) : undefined, cursor: q.cursor, from: isoOf(q.from, '/from'), to: isoOf(q.to, '/to'), limit: q.limit,
        });
        // Each event is spliced from its stored JSON, as deliveries are.
        return { json: `{"data":[${page.items.join(',')}],"next":${JSON.stringify(page.next)},"hasMore":${page.hasMore}}` };
      },
    ),
    core(
      {
        method: 'GET', url: '/api/v1/events/stream', operationId: 'core.streamEvents',
        summary: "The company's events live, as server-sent events (what `diwan listen` forwards)",
        description: `\`text/event-stream\`: one message per event, \`id\` its cursor, \`event\` its topic, \`data\` its webhook body (one line); a comment every ${Math.round(heartbeatMs / 1000)} s keeps the connection open. Starts after the latest event, or after \`Last-Event-ID\` (or \`cursor\`) to resume without a gap. Events committed by any process of the host arrive. The stream ends with an \`event: close\` message when the host stops, or when the key stops being valid. Needs \`webhooks:read\`.`,
        permission: PERMISSION, errors: ['CURSOR_EXPIRED'],
        produces: 'text/event-stream',
        headers: [{ name: 'Last-Event-ID', description: 'Resume after this event (the `id` of the last message received)', schema: { type: 'string', maxLength: 200 } }],
        schema: {
          querystring: { type: 'object', additionalProperties: false, properties: { topics: topicsQuery, cursor: cursorQuery } },
          response: { 200: { type: 'string', description: 'Server-sent events: `id: <cursor>`, `event: <topic>`, `data: <webhook body>`' } },
        },
      },
      async (req) => {
        const q = req.query as { topics?: string; cursor?: string };
        const filter: TopicFilter = topicFilter(q.topics !== undefined ? splitPatterns(q.topics) : ['*'], deps.known());
        const lastId = req.headers['last-event-id'];
        const resume = typeof lastId === 'string' && lastId !== '' ? { cursor: lastId, where: 'headers' as const, pointer: '/last-event-id' } : q.cursor ? { cursor: q.cursor, where: 'query' as const, pointer: '/cursor' } : undefined;
        // Everything that can fail is decided before the stream starts, so it answers in the envelope.
        const position = resume ? await log.position(req.company.id, resume.cursor, resume.where, resume.pointer) : await log.lastPosition();
        if (streams.countOf(req.company.id) >= MAX_STREAMS_PER_COMPANY) {
          throw new DiwanError('RATE_LIMITED', [{ reason: 'streams', limit: MAX_STREAMS_PER_COMPANY }], { seconds: 5 }, { 'retry-after': '5' });
        }

        req.reply.hijack();
        const res = req.reply.raw;
        res.writeHead(200, {
          'content-type': 'text/event-stream; charset=utf-8',
          'cache-control': 'no-cache, no-transform',
          connection: 'keep-alive',
          'x-accel-buffering': 'no',
          'content-language': req.lang,
        });
        // HEAD: the headers say what a GET would open; there is no stream to hold.
        if (req.raw.method === 'HEAD') {
          res.end();
          return { hijacked: true };
        }
        res.write(': connected\nretry: 2000\n\n');
        let beat: NodeJS.Timeout | undefined;
        let handle: { close(): void } | undefined;
        let ended = false;
        const stop = () => {
          ended = true;
          clearInterval(beat);
          handle?.close();
        };
        /** Ends the stream from this side, saying why (`host_closing`, `credentials`). */
        const end = (reason: string) => {
          if (ended) return;
          stop();
          if (!res.writableEnded && !res.destroyed) res.end(`event: close\ndata: ${JSON.stringify({ reason })}\n\n`);
        };
        res.on('close', stop);
        handle = streams.open(req.company.id, filter, position, {
          send: (events) => write(res, events.map(sse).join('')),
          end: () => end('host_closing'),
        });
        beat = setInterval(() => {
          void deps
            .stillValid(req)
            .catch(() => false)
            .then((valid) => {
              if (!valid) end('credentials');
              else if (!ended) write(res, ': keep-alive\n\n').catch(stop);
            });
        }, heartbeatMs);
        beat.unref();
        return { hijacked: true };
      },
    ),
    core(
      {
        method: 'GET', url: '/api/v1/events/:id', operationId: 'core.getEvent',
        summary: 'One event of the company, exactly as its webhook body',
        description: `${retention}: an event older than that answers 404 NOT_FOUND, and its \`details\` say so.`,
        permission: PERMISSION, errors: ['NOT_FOUND'],
        schema: {
          params: { type: 'object', required: ['id'], properties: { id: { type: 'string', maxLength: 64 } } },
          response: { 200: { type: 'object', additionalProperties: false, required: ['data'], properties: { data: eventBodySchema } } },
        },
      },
      async (req) => ({ json: `{"data":${await log.get(req.company.id, req.params.id)}}` }),
    ),
  ];
}
