// The events a company's consumers can read back (`GET /api/v1/events`, `/events/{id}`, the
// event stream): the outbox in its order, filtered by subscription patterns (with their
// semantics: `*` leaves out the opt-in families) and by time, within the retention window.
//
// A cursor is opaque to clients: it names the last event a page (or the stream) gave, with that
// event's time. A cursor from before the retention window answers 410 CURSOR_EXPIRED, whether
// or not the retention loop has pruned the events yet, so what a consumer sees does not depend
// on when the loop last ran; an event older than the window answers 404 saying so. Both are
// decided by the injected clock.
import type { OutboxRepo, StoredEvent, TopicFilter } from '../storage/repos/outbox.ts';
import type { Clock } from '../kernel/clock.ts';
import { DiwanError, type ErrorDetail } from '../kernel/errors/diwan-error.ts';
import { isoNow } from '../kernel/ids.ts';
import { OPT_IN_PREFIXES, parsePattern, validatePatterns, type KnownTopics } from './patterns.ts';
import { eventJson } from './event-body.ts';

const DAY_MS = 86_400_000;
/** Company events looked at per page at most before answering (a selective filter then pages on with `hasMore`). */
const SCAN_CHUNK = 10_000;
const SCAN_MAX = 100_000;

export interface EventLogDeps {
  outbox: OutboxRepo;
  clock: Clock;
  /** DIWAN_EVENT_RETENTION_DAYS; 0 keeps everything. */
  retentionDays: number;
  known: () => KnownTopics | Promise<KnownTopics>;
}

export interface EventListQuery {
  /** Subscription patterns; none: every topic `*` reaches. */
  topics?: string[];
  cursor?: string;
  /** ISO date-times: `from` inclusive, `to` exclusive. */
  from?: string;
  to?: string;
  limit: number;
}

export interface EventPage {
  /** Each event as its webhook body, JSON text. */
  items: string[];
  /** Where to go on from: the last event looked at; the given cursor (or null) when nothing was. */
  next: string | null;
  /** More events are there now past `next`. */
  hasMore: boolean;
}

const CURSOR_RE = /^evt_[0-9a-z]{20}$/;

/** The opaque cursor after an event. */
export function encodeCursor(e: { id: string; createdAt: string }): string {
  return Buffer.from(JSON.stringify({ e: e.id, t: Date.parse(e.createdAt) }), 'utf8').toString('base64url');
}

/** The event and time a cursor names, or undefined for anything that is not a cursor. */
export function decodeCursor(text: string): { id: string; at: number } | undefined {
  if (text.length > 200 || !/^[A-Za-z0-9_-]+$/.test(text)) return undefined;
  try {
    const v = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as { e?: unknown; t?: unknown };
    if (typeof v.e !== 'string' || !CURSOR_RE.test(v.e) || typeof v.t !== 'number' || !Number.isSafeInteger(v.t)) return undefined;
    return { id: v.e, at: v.t };
  } catch {
    return undefined;
  }
}

const invalid = (where: 'query' | 'headers', pointer: string, rule: string, message: string, value?: unknown): DiwanError =>
  new DiwanError('VALIDATION_ERROR', [{ in: where, pointer, rule, message, ...(value !== undefined ? { value } : {}) }], { summary: message });

/** The SQL-side filter of subscription patterns, every problem of them as one VALIDATION_ERROR. */
export function topicFilter(patterns: string[], known: KnownTopics, where: 'query' | 'headers' = 'query'): TopicFilter {
  const problems = validatePatterns(patterns, known, { maxItems: 100 });
  if (problems.length) {
    const details: ErrorDetail[] = problems.map((p) => ({ in: where, ...p }));
    throw new DiwanError('VALIDATION_ERROR', details, { summary: problems.map((p) => `${p.pointer}: ${p.message ?? p.rule}`).join('; ') });
  }
  const f: TopicFilter = { topics: [], prefixes: [], all: false, allExcept: [...OPT_IN_PREFIXES] };
  for (const p of patterns) {
    const parsed = parsePattern(p);
    if (parsed.kind === 'exact') f.topics.push(parsed.topic);
    else if (parsed.kind === 'family') f.prefixes.push(parsed.prefix);
    else if (parsed.kind === 'all') f.all = true;
  }
  return f;
}

/** `a,b , c` → `['a', 'b', 'c']`. */
export const splitPatterns = (text: string): string[] => text.split(',').map((t) => t.trim()).filter((t) => t !== '');

export const eventJsonOf = (e: StoredEvent): string => eventJson(e.id, e.topic, e.createdAt, e.companyId, e.data, e.test);

export class EventLog {
  constructor(private deps: EventLogDeps) {}

  get retentionDays(): number {
    return this.deps.retentionDays;
  }

  /** The oldest creation time kept now (ISO), or null when nothing is pruned. */
  cutoff(): string | null {
    return this.deps.retentionDays > 0 ? isoNow(this.deps.clock.now() - this.deps.retentionDays * DAY_MS) : null;
  }

  private pruned(): ErrorDetail {
    const days = this.deps.retentionDays;
    return days > 0
      ? { retentionDays: days, oldestKept: this.cutoff(), message: `events older than ${days} days are pruned` }
      : { retentionDays: 0, message: 'events are kept without a time limit' };
  }

  /**
   * The outbox position a cursor stands for in this company: 410 CURSOR_EXPIRED when it is older
   * than the retention window, 400 when it is not a cursor of this company's.
   */
  async position(companyId: string, cursor: string, where: 'query' | 'headers' = 'query', pointer = '/cursor'): Promise<number> {
    const c = decodeCursor(cursor);
    if (!c) throw invalid(where, pointer, 'cursor', 'the cursor is not one this API gave', cursor);
    const cutoff = this.cutoff();
    if (cutoff !== null && c.at < Date.parse(cutoff)) {
      throw new DiwanError('CURSOR_EXPIRED', [{ in: where, pointer, ...this.pruned() }], { days: this.deps.retentionDays });
    }
    const seq = await this.deps.outbox.positionOf(companyId, c.id);
    if (seq === undefined) throw invalid(where, pointer, 'cursor', "the cursor does not name an event of this company's", cursor);
    return seq;
  }

  /** A cursor for the position the stream starts at: after the company's latest event. */
  cursorOf(e: { id: string; createdAt: string }): string {
    return encodeCursor(e);
  }

  /** One event of the company, as its webhook body; 404 (saying events older than the retention are pruned) otherwise. */
  async get(companyId: string, id: string): Promise<string> {
    const e = await this.deps.outbox.get(companyId, id);
    const cutoff = this.cutoff();
    if (!e || (cutoff !== null && e.createdAt < cutoff)) throw new DiwanError('NOT_FOUND', [{ resource: 'events', id, ...this.pruned() }]);
    return eventJsonOf(e);
  }

  /** A page of the company's events, oldest first, after the cursor. */
  async list(companyId: string, q: EventListQuery): Promise<EventPage> {
    // No patterns is `*`: the opt-in families are left out, as for a subscription.
    const filter = topicFilter(q.topics?.length ? q.topics : ['*'], await this.deps.known());
    let afterSeq = q.cursor !== undefined ? await this.position(companyId, q.cursor) : 0;
    const cutoff = this.cutoff();
    let from = q.from;
    if (cutoff !== null && (from === undefined || from < cutoff)) from = cutoff;
    let next = q.cursor ?? null;
    let scanned = 0;
    for (;;) {
      const { rows, scannedTo } = await this.deps.outbox.page(companyId, { afterSeq, filter, from, to: q.to, limit: q.limit + 1, scan: SCAN_CHUNK });
      if (rows.length > q.limit) {
        const kept = rows.slice(0, q.limit);
        return { items: kept.map(eventJsonOf), next: encodeCursor(kept[kept.length - 1]), hasMore: true };
      }
      if (rows.length) next = encodeCursor(rows[rows.length - 1]);
      if (!scannedTo) return { items: rows.map(eventJsonOf), next, hasMore: false };
      // The look stopped at its bound: what lies past it is unseen.
      next = encodeCursor(scannedTo);
      scanned += SCAN_CHUNK;
      if (rows.length || scanned >= SCAN_MAX) return { items: rows.map(eventJsonOf), next, hasMore: true };
      afterSeq = scannedTo.seq;
    }
  }

  /** The company's events after a position and up to another (the stream's reads). */
  async between(companyId: string, afterSeq: number, upTo: number, filter: TopicFilter | undefined, limit: number): Promise<StoredEvent[]> {
    return (await this.deps.outbox.page(companyId, { afterSeq, upTo, filter, limit, from: this.cutoff() ?? undefined })).rows;
  }

  /** The last position of the whole outbox: a live reader starts there, and reads up to it. */
  lastPosition(): Promise<number> {
    return this.deps.outbox.lastPosition();
  }
}
