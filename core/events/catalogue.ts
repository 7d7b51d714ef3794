// The event catalogue the API serves (`GET /api/v1/events/catalogue`), built from what apps
// contribute: each source (an app, or the core for `apps` and `audit`) declares event families
// in its manifest; the host adds generated topics (document-type events, audit topics) per
// family prefix. Pure: no database, no HTTP. Filtering by pattern uses the subscription
// semantics of `patterns.ts`, so `*` leaves the opt-in families (audit, webhook) out.
//
// One prefix, one owner: if two sources claim a prefix the first (in source order) keeps it and
// the other's family is left out; `prefixConflicts` / `catalogueProblems` report it, and the app
// runtime should refuse such an install before it gets here.
import type { EventFamilyDecl, SourceDecl, TopicDecl } from '../../manifests/manifest.schema.ts';
import { DiwanError } from '../kernel/errors/diwan-error.ts';
import { OPT_IN_PREFIXES, parsePattern, patternMatches, type KnownTopics, type ParsedPattern } from './patterns.ts';

export type Lang = 'en' | 'ar';
/** The owner id of the families the host itself declares (`apps`, `audit`). */
export const CORE_OWNER = 'core';

export interface CatalogueSource {
  /** An app id, or `core`. */
  appId: string;
  families: readonly EventFamilyDecl[];
}

/** Topics the host generates, keyed by family prefix (e.g. `invoice` → `invoice.created`, …). */
export type GeneratedTopics = ReadonlyMap<string, readonly TopicDecl[]> | Readonly<Record<string, readonly TopicDecl[]>>;

export interface CatalogueInput {
  sources: readonly CatalogueSource[];
  generated?: GeneratedTopics;
  /** App ids installed (and enabled) in the caller's company; `core` is always installed. */
  installed: ReadonlySet<string> | readonly string[];
}

export interface CatalogueOptions {
  lang: Lang;
  /** Only this family: its prefix or its display name (case-insensitive). */
  family?: string;
  /** Only topics this subscription pattern matches (`*` leaves the audit trail out). */
  pattern?: string;
  /** Only families whose owner is installed in the company (the core's always are). */
  installedOnly?: boolean;
}

export interface CatalogueTopic {
  topic: string;
  description: string;
  /** What makes it fire: a document's create/update/delete, a transition, a field change, a schedule, or an app operation. */
  source: SourceDecl;
  payload: Record<string, unknown>;
  example: Record<string, unknown>;
  owner: string;
  optIn: boolean;
}

export interface CatalogueFamily {
  /** Display name, e.g. `point of sale`. */
  family: string;
  prefix: string;
  label: string;
  owner: string;
  installed: boolean;
  /** True for the opt-in families (audit trail, webhook operations): reached only through `<prefix>.*` or exact topics. */
  optIn: boolean;
  count: number;
  topics: CatalogueTopic[];
}

export interface Catalogue {
  families: CatalogueFamily[];
  totals: { families: number; topics: number };
}

const text = { type: 'string' } as const;

/** JSON Schema of `Catalogue`, for the route's response and the OpenAPI document. */
export const catalogueSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['families', 'totals'],
  properties: {
    families: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['family', 'prefix', 'label', 'owner', 'installed', 'optIn', 'count', 'topics'],
        properties: {
          family: { type: 'string' },
          prefix: { type: 'string' },
          label: text,
          owner: { type: 'string' },
          installed: { type: 'boolean' },
          optIn: { type: 'boolean' },
          count: { type: 'integer', minimum: 0 },
          topics: {
            type: 'array',
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['topic', 'description', 'source', 'payload', 'example', 'owner', 'optIn'],
              properties: {
                topic: { type: 'string' },
                description: text,
                source: {
                  type: 'object',
                  required: ['on'],
                  description: 'What makes the event fire',
                  properties: {
                    on: { type: 'string', enum: ['create', 'update', 'delete', 'transition', 'change', 'schedule', 'operation'] },
                    type: { type: 'string', description: 'The document type' },
                    transition: { type: 'string' },
                    field: { type: 'string' },
                    schedule: { type: 'string' },
                    operation: { type: 'string', description: 'The route or hook that emits it' },
                    when: { type: 'object', additionalProperties: true, description: 'The condition on the document' },
                  },
                },
                payload: { type: 'object', additionalProperties: true },
                example: { type: 'object', additionalProperties: true },
                owner: { type: 'string' },
                optIn: { type: 'boolean' },
              },
            },
          },
        },
      },
    },
    totals: {
      type: 'object',
      additionalProperties: false,
      required: ['families', 'topics'],
      properties: { families: { type: 'integer', minimum: 0 }, topics: { type: 'integer', minimum: 0 } },
    },
  },
} as const;

/** Something wrong in what the sources contribute; the catalogue still builds, leaving it out. */
export type CatalogueProblem =
  /** Two sources (or one source twice) declare the same prefix; the first keeps it. */
  | { rule: 'prefix_claimed'; prefix: string; owners: string[] }
  /** Two families share a display name (the `family` filter would be ambiguous). */
  | { rule: 'family_name_claimed'; family: string; prefixes: string[] }
  /** A declared topic does not lie in its family's prefix; left out. */
  | { rule: 'topic_outside_prefix'; topic: string; prefix: string; owner: string }
  /** A family declares a topic twice; the first is kept. */
  | { rule: 'duplicate_topic'; topic: string; owner: string }
  /** Generated topics for a prefix no family declares; left out. */
  | { rule: 'generated_without_family'; prefix: string; topics: string[] }
  /** A generated topic that does not lie in the prefix it is filed under; left out. */
  | { rule: 'generated_outside_prefix'; topic: string; prefix: string };

interface ResolvedFamily {
  decl: EventFamilyDecl;
  owner: string;
  /** topic → declaration; declared topics first, then generated ones not declared. */
  topics: Map<string, TopicDecl>;
}

const inPrefix = (topic: string, prefix: string) => topic.startsWith(`${prefix}.`) && topic.length > prefix.length + 1;

function generatedEntries(generated: GeneratedTopics | undefined): [string, readonly TopicDecl[]][] {
  if (!generated) return [];
  return generated instanceof Map ? [...generated.entries()] : Object.entries(generated as Record<string, readonly TopicDecl[]>);
}

/** Merges sources and generated topics into one family per prefix, collecting what was left out. */
function resolve(sources: readonly CatalogueSource[], generated?: GeneratedTopics): { families: Map<string, ResolvedFamily>; problems: CatalogueProblem[] } {
  const families = new Map<string, ResolvedFamily>();
  const claims = new Map<string, string[]>();
  const problems: CatalogueProblem[] = [];
  for (const source of sources) {
    for (const decl of source.families) {
      const owners = claims.get(decl.prefix);
      if (owners) {
        owners.push(source.appId);
        continue;
      }
      claims.set(decl.prefix, [source.appId]);
      const topics = new Map<string, TopicDecl>();
      for (const t of decl.topics) {
        if (!inPrefix(t.topic, decl.prefix)) {
          problems.push({ rule: 'topic_outside_prefix', topic: t.topic, prefix: decl.prefix, owner: source.appId });
        } else if (topics.has(t.topic)) {
          problems.push({ rule: 'duplicate_topic', topic: t.topic, owner: source.appId });
        } else {
          topics.set(t.topic, t);
        }
      }
      families.set(decl.prefix, { decl, owner: source.appId, topics });
    }
  }
  for (const [prefix, owners] of claims) {
    if (owners.length > 1) problems.unshift({ rule: 'prefix_claimed', prefix, owners });
  }
  const byName = new Map<string, string[]>();
  for (const f of families.values()) {
    const key = f.decl.family.trim().toLowerCase();
    byName.set(key, [...(byName.get(key) ?? []), f.decl.prefix]);
  }
  for (const [family, prefixes] of byName) {
    if (prefixes.length > 1) problems.push({ rule: 'family_name_claimed', family, prefixes });
  }
  for (const [prefix, topics] of generatedEntries(generated)) {
    const fam = families.get(prefix);
    if (!fam) {
      if (topics.length > 0) problems.push({ rule: 'generated_without_family', prefix, topics: topics.map((t) => t.topic) });
      continue;
    }
    for (const t of topics) {
      if (!inPrefix(t.topic, prefix)) problems.push({ rule: 'generated_outside_prefix', topic: t.topic, prefix });
      // A topic the app declares itself keeps the app's description and payload.
      else if (!fam.topics.has(t.topic)) fam.topics.set(t.topic, t);
    }
  }
  return { families, problems };
}

/** Every problem in what the sources contribute (prefix conflicts first). */
export function catalogueProblems(sources: readonly CatalogueSource[], generated?: GeneratedTopics): CatalogueProblem[] {
  return resolve(sources, generated).problems;
}

/** Prefixes claimed by more than one source, with every claimant in source order. */
export function prefixConflicts(sources: readonly CatalogueSource[]): { prefix: string; owners: string[] }[] {
  const claims = new Map<string, string[]>();
  for (const source of sources) {
    for (const decl of source.families) claims.set(decl.prefix, [...(claims.get(decl.prefix) ?? []), source.appId]);
  }
  return [...claims].filter(([, owners]) => owners.length > 1).map(([prefix, owners]) => ({ prefix, owners }));
}

/** The source that owns a prefix (the first to claim it), or undefined. */
export function ownerOfPrefix(sources: readonly CatalogueSource[], prefix: string): string | undefined {
  for (const source of sources) {
    if (source.families.some((f) => f.prefix === prefix)) return source.appId;
  }
  return undefined;
}

/** The prefixes and topics a subscription may name (for `validatePatterns`). */
export function knownTopics(sources: readonly CatalogueSource[], generated?: GeneratedTopics): KnownTopics {
  const { families } = resolve(sources, generated);
  const known: KnownTopics = { prefixes: new Set(), topics: new Set() };
  for (const [prefix, f] of families) {
    known.prefixes.add(prefix);
    for (const topic of f.topics.keys()) known.topics.add(topic);
  }
  return known;
}

/** Does the pattern reach this family at all (so it is listed, possibly with no topics)? */
function patternReachesFamily(pattern: ParsedPattern, prefix: string, topics: Map<string, TopicDecl>): boolean {
  switch (pattern.kind) {
    case 'all':
      return !OPT_IN_PREFIXES.has(prefix);
    case 'family':
      return pattern.prefix === prefix;
    case 'exact':
      return topics.has(pattern.topic);
  }
}

const byCodePoint = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The catalogue for one company and language, sorted by family display name (then prefix),
 * topics by name. Throws VALIDATION_ERROR (pointer `/pattern`) for a pattern that does not parse.
 */
export function buildCatalogue(input: CatalogueInput, options: CatalogueOptions): Catalogue {
  const { lang } = options;
  let pattern: ParsedPattern | undefined;
  if (options.pattern !== undefined) {
    const parsed = parsePattern(options.pattern);
    if (parsed.kind === 'invalid') {
      throw new DiwanError(
        'VALIDATION_ERROR',
        [{ in: 'query', pointer: '/pattern', rule: parsed.rule, message: parsed.message, pattern: options.pattern }],
        { summary: parsed.message },
      );
    }
    pattern = parsed;
  }
  const installed = new Set<string>(input.installed);
  const wanted = options.family?.trim().toLowerCase();
  const { families } = resolve(input.sources, input.generated);

  const out: CatalogueFamily[] = [];
  for (const [prefix, f] of families) {
    const isInstalled = f.owner === CORE_OWNER || installed.has(f.owner);
    if (options.installedOnly && !isInstalled) continue;
    if (wanted !== undefined && prefix.toLowerCase() !== wanted && f.decl.family.trim().toLowerCase() !== wanted) continue;
    if (pattern && !patternReachesFamily(pattern, prefix, f.topics)) continue;
    const optIn = OPT_IN_PREFIXES.has(prefix);
    const topics: CatalogueTopic[] = [];
    for (const t of f.topics.values()) {
      if (pattern && !patternMatches(pattern, t.topic)) continue;
      topics.push({
        topic: t.topic,
        description: t.description[lang],
        source: t.source,
        payload: t.payload ?? {},
        example: t.example ?? {},
        owner: f.owner,
        optIn,
      });
    }
    topics.sort((a, b) => byCodePoint(a.topic, b.topic));
    out.push({
      family: f.decl.family,
      prefix,
      label: f.decl.label[lang],
      owner: f.owner,
      installed: isInstalled,
      optIn,
      count: topics.length,
      topics,
    });
  }
  out.sort((a, b) => byCodePoint(a.family, b.family) || byCodePoint(a.prefix, b.prefix));
  return { families: out, totals: { families: out.length, topics: out.reduce((n, f) => n + f.count, 0) } };
}
