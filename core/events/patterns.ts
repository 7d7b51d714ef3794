// The topic-pattern grammar of webhook subscriptions (spec section 6). A pattern is exactly one of:
//   - an exact topic, `crm.lead.created`;
//   - a family pattern, `<prefix>.*` (the prefix is one segment: the family of a topic is the
//     part before its first dot);
//   - `*`, every topic except the opt-in families.
// The opt-in families (`OPT_IN_PREFIXES`: the audit trail `audit.*` and the webhook operations
// `webhook.*`) reach a subscriber only through `<prefix>.*` or an exact topic, never through `*`.
//
// `patternMatches` is the one statement of what a pattern matches; the matcher index
// (`matcher.ts`) is tested against it and the catalogue filters with it.

/** One topic segment; mirrors the manifest schema's `prefix` pattern (a test keeps them in step). */
export const PREFIX_RE = /^[a-zA-Z][a-zA-Z0-9_-]*$/;
/** A whole topic, two segments or more; mirrors the manifest schema's `topic` pattern. */
export const TOPIC_RE = /^[a-zA-Z][a-zA-Z0-9_-]*(\.[a-zA-Z][a-zA-Z0-9_-]*)+$/;
/** Longest pattern accepted; longer ones fail with rule `grammar`. */
export const MAX_PATTERN_LENGTH = 255;

/** The audit trail's prefix: always known, never reached by `*`. */
export const AUDIT_PREFIX = 'audit';
/** The webhook operations' prefix (`webhook.delivery.dead`, `webhook.endpoint.disabled`). */
export const WEBHOOK_PREFIX = 'webhook';

/**
 * Families `*` does not reach: a subscriber names them (`<prefix>.*` or an exact topic) to get
 * them. The audit trail (every write, twice the traffic) and the webhook operations (events
 * about deliveries, which a catch-all endpoint should not receive about itself by surprise).
 */
export const OPT_IN_PREFIXES: ReadonlySet<string> = new Set([AUDIT_PREFIX, WEBHOOK_PREFIX]);

export type ParsedPattern =
  | { kind: 'exact'; topic: string }
  | { kind: 'family'; prefix: string }
  | { kind: 'all' };

/** Stable codes; clients and the error table switch on them. */
export type PatternRule =
  | 'type'
  | 'empty'
  | 'whitespace'
  | 'grammar'
  | 'unknown_family'
  | 'unknown_topic'
  | 'duplicate'
  | 'min_items'
  | 'max_items';

/** What `parsePattern` answers for a value that is not a pattern. */
export interface InvalidPattern {
  kind: 'invalid';
  rule: Extract<PatternRule, 'type' | 'empty' | 'whitespace' | 'grammar'>;
  /** English; clients should switch on `rule`. */
  message: string;
  /** A pattern that was probably meant, when one is obvious (`crm` → `crm.*`). */
  suggestion?: string;
}

export interface PatternProblem {
  /** JSON pointer into the request body: `/topics/<i>`, or `/topics` for the list itself. */
  pointer: string;
  /** The offending value (any JSON value for rule `type`; absent for list-level rules). */
  pattern?: unknown;
  rule: PatternRule;
  message?: string;
  suggestion?: string;
}

/** The topics some known app declares: what a subscription may name. */
export interface KnownTopics {
  prefixes: Set<string>;
  topics: Set<string>;
}

/** The family of a topic: the part before the first dot (the whole string if it has none). */
export function familyOf(topic: string): string {
  const dot = topic.indexOf('.');
  return dot < 0 ? topic : topic.slice(0, dot);
}

/** True for topics of the audit trail. */
export function isAuditTopic(topic: string): boolean {
  return familyOf(topic) === AUDIT_PREFIX;
}

/** True for topics of an opt-in family: `*` does not reach them. */
export function isOptInTopic(topic: string): boolean {
  return OPT_IN_PREFIXES.has(familyOf(topic));
}

function invalid(rule: InvalidPattern['rule'], message: string, suggestion?: string): InvalidPattern {
  return suggestion === undefined ? { kind: 'invalid', rule, message } : { kind: 'invalid', rule, message, suggestion };
}

/** Parses one pattern; never throws. */
export function parsePattern(p: unknown): ParsedPattern | InvalidPattern {
  if (typeof p !== 'string') return invalid('type', 'a topic pattern must be a string');
  if (p.length === 0) return invalid('empty', 'a topic pattern must not be empty');
  if (/\s/.test(p)) {
    const trimmed = p.replace(/\s+/g, '');
    return invalid('whitespace', 'a topic pattern must not contain spaces', trimmed.length > 0 ? trimmed : undefined);
  }
  if (p.length > MAX_PATTERN_LENGTH) {
    return invalid('grammar', `a topic pattern must have at most ${MAX_PATTERN_LENGTH} characters`);
  }
  if (p === '*') return { kind: 'all' };
  if (p.endsWith('.*')) {
    const prefix = p.slice(0, -2);
    if (PREFIX_RE.test(prefix)) return { kind: 'family', prefix };
    const first = familyOf(prefix);
    const suggestion = PREFIX_RE.test(first) ? `${first}.*` : undefined;
    return invalid(
      'grammar',
      'a family pattern is `<prefix>.*` where the prefix is one segment (letters, digits, `_`, `-`), e.g. `crm.*`',
      suggestion,
    );
  }
  if (p.includes('*')) {
    return invalid('grammar', '`*` may only stand alone or end a family pattern `<prefix>.*`');
  }
  if (TOPIC_RE.test(p)) return { kind: 'exact', topic: p };
  if (PREFIX_RE.test(p)) {
    return invalid('grammar', 'an exact topic has at least two segments, `<prefix>.<verb>`; a whole family is `<prefix>.*`', `${p}.*`);
  }
  return invalid(
    'grammar',
    'a topic is dot-separated segments, each starting with a letter followed by letters, digits, `_` or `-`',
  );
}

/** Does a parsed pattern match a topic? The reference semantics (the matcher index agrees with it). */
export function patternMatches(pattern: ParsedPattern, topic: string): boolean {
  switch (pattern.kind) {
    case 'exact':
      return pattern.topic === topic;
    case 'family':
      return topic.indexOf('.') > 0 && familyOf(topic) === pattern.prefix;
    case 'all':
      return !isOptInTopic(topic);
  }
}

/** Small edit distance (Levenshtein), for "did you mean"; gives up above `max`. */
function distance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const v = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      cur.push(v);
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > max) return max + 1;
    prev = cur;
  }
  return prev[b.length];
}

function closest(word: string, candidates: Iterable<string>, max = 2): string | undefined {
  let best: string | undefined;
  let bestD = max + 1;
  for (const c of candidates) {
    const d = distance(word.toLowerCase(), c.toLowerCase(), max);
    if (d < bestD || (d === bestD && best !== undefined && c < best)) {
      best = c;
      bestD = d;
    }
  }
  return bestD <= max ? best : undefined;
}

export interface ValidatePatternsOptions {
  /** Pointer of the list in the request body; default `/topics`. */
  pointer?: string;
  /** Most patterns one list may hold; no limit by default. */
  maxItems?: number;
}

/**
 * Every problem of a subscription's pattern list, in list order; empty when the list is good.
 * Checks, per item: `type`, `empty`, `whitespace`, `grammar`, then `unknown_family` /
 * `unknown_topic` against `known`; a repeat of an earlier item is reported once as `duplicate`.
 * The `audit` prefix is always known; an exact audit topic is known when `known.topics` lists it.
 */
export function validatePatterns(patterns: unknown, known: KnownTopics, options: ValidatePatternsOptions = {}): PatternProblem[] {
  const base = options.pointer ?? '/topics';
  if (!Array.isArray(patterns)) {
    return [{ pointer: base, pattern: patterns, rule: 'type', message: 'topics must be a list of topic patterns' }];
  }
  if (patterns.length === 0) {
    return [{ pointer: base, rule: 'min_items', message: 'topics must hold at least one topic pattern' }];
  }
  const problems: PatternProblem[] = [];
  if (options.maxItems !== undefined && patterns.length > options.maxItems) {
    problems.push({ pointer: base, rule: 'max_items', message: `topics must hold at most ${options.maxItems} patterns` });
  }
  const seen = new Map<string, number>();
  patterns.forEach((p, i) => {
    const pointer = `${base}/${i}`;
    if (typeof p === 'string') {
      const first = seen.get(p);
      if (first !== undefined) {
        problems.push({ pointer, pattern: p, rule: 'duplicate', message: `repeats ${base}/${first}` });
        return;
      }
      seen.set(p, i);
    }
    const parsed = parsePattern(p);
    if (parsed.kind === 'invalid') {
      const problem: PatternProblem = { pointer, pattern: p, rule: parsed.rule, message: parsed.message };
      if (parsed.suggestion !== undefined) problem.suggestion = parsed.suggestion;
      problems.push(problem);
      return;
    }
    if (parsed.kind === 'family' && parsed.prefix !== AUDIT_PREFIX && !known.prefixes.has(parsed.prefix)) {
      const near = closest(parsed.prefix, [...known.prefixes, AUDIT_PREFIX]);
      const problem: PatternProblem = {
        pointer,
        pattern: p,
        rule: 'unknown_family',
        message: `no known app declares the event family "${parsed.prefix}"`,
      };
      if (near !== undefined) problem.suggestion = `${near}.*`;
      problems.push(problem);
    } else if (parsed.kind === 'exact' && !known.topics.has(parsed.topic)) {
      const fam = familyOf(parsed.topic);
      const famKnown = fam === AUDIT_PREFIX || known.prefixes.has(fam);
      const near = closest(parsed.topic, known.topics);
      const problem: PatternProblem = {
        pointer,
        pattern: p,
        rule: 'unknown_topic',
        message: famKnown
          ? `the event family "${fam}" has no topic "${parsed.topic}"`
          : `no known app declares the topic "${parsed.topic}" (nor its family "${fam}")`,
      };
      if (near !== undefined) problem.suggestion = near;
      problems.push(problem);
    }
  });
  return problems;
}
