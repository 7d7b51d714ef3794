// Webhook endpoints: one company each, a URL the address guard accepts, topic patterns checked
// against the catalogue, and a signing secret. The secret is stored sealed (the host must sign
// with it, so it is encrypted rather than hashed) and leaves the host only in the create and
// rotate answers; after a rotation the previous secret keeps signing for the grace period.
// Optionally an ed25519 key pair signs too (Standard Webhooks `v1a`): the signing key is sealed
// like the secrets, the public key is shown. Custom headers go with every delivery (checked here:
// never the signature headers, hop-by-hop headers or those the host sets itself).
// Every change is audited in its transaction.
import type { WebhookEndpointsRepo, EndpointRecord } from '../storage/repos/webhook-endpoints.ts';
import type { ChangeFeed } from '../storage/changes.ts';
import type { UnitOfWork, WriteScope } from '../audit/unit-of-work.ts';
import type { HostConfig } from '../kernel/config.ts';
import type { Clock } from '../kernel/clock.ts';
import type { KnownTopics } from '../events/patterns.ts';
import { validatePatterns } from '../events/patterns.ts';
import { DiwanError, type ErrorDetail } from '../kernel/errors/diwan-error.ts';
import { newId, isoNow } from '../kernel/ids.ts';
import { SYSTEM_ACTOR } from '../kernel/actor.ts';
import { createTranslator, type Lang, type Translator } from '../kernel/i18n/i18n.ts';
import { guardUrl } from './address-guard.ts';
import { generateSecret, generateSigningKeyPair } from './signature.ts';

export interface Endpoint {
  id: string;
  companyId: string;
  url: string;
  topics: string[];
  description: string | null;
  enabled: boolean;
  /** Why it is disabled: `failing` (by the host, after failing without a success for the set time), `gone` (by the host, on a 410 answer) or `manual`; null while enabled. */
  disabledReason: DisabledReason | null;
  disabledAt: string | null;
  /** What the host saw when it disabled the endpoint (a sentence), or null. */
  disabledDetail: string | null;
  /** The first failed attempt since the last success; null while healthy. */
  failingSince: string | null;
  /** Attempts in flight at once; null: the host default (DIWAN_WEBHOOK_MAX_IN_FLIGHT). */
  maxInFlight: number | null;
  /** Deliveries started per second at most; null: no throttle. */
  ratePerSecond: number | null;
  /** When the secret was last rotated; null if never. */
  secretRotatedAt: string | null;
  /** Headers sent with every delivery (names in lower case); empty: none. */
  headers: Record<string, string>;
  /** The ed25519 public key (`whpk_…`) that verifies the `v1a` signatures, or null when the endpoint is not signed so. */
  publicKey: string | null;
  createdAt: string;
  updatedAt: string;
}

export type DisabledReason = 'failing' | 'gone' | 'manual';

/** Bounds of the custom headers. */
export const MAX_CUSTOM_HEADERS = 20;
export const MAX_HEADER_NAME = 100;
export const MAX_HEADER_VALUE = 1000;
/** Names and values together, in bytes. */
export const MAX_HEADERS_BYTES = 4096;
/** Headers an endpoint may not set: hop-by-hop ones, framing, and those the host sets itself. */
const REFUSED_HEADERS = new Set(['connection', 'keep-alive', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'host', 'content-length', 'content-type', 'x-service-signature']);
const REFUSED_PREFIXES = ['proxy-', 'webhook-', 'x-diwan-'];
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const HEADER_VALUE = /^[\t\x20-\x7e]*$/;

/**
 * Every problem of a custom header set (one detail each, all at once); the accepted set has its
 * names in lower case. `null` or `{}`: none.
 */
export function checkHeaders(input: unknown): { headers: Record<string, string> | null; details: ErrorDetail[] } {
  const details: ErrorDetail[] = [];
  if (input === null || input === undefined) return { headers: null, details };
  if (typeof input !== 'object' || Array.isArray(input)) {
    return { headers: null, details: [{ in: 'body', pointer: '/headers', rule: 'type', message: 'headers must be an object of header names to string values' }] };
  }
  const out: Record<string, string> = {};
  // Not `name in out`: an object answers true for `constructor` and the like.
  const seen = new Set<string>();
  const entries = Object.entries(input as Record<string, unknown>);
  const problem = (name: string, rule: string, message: string, extra: ErrorDetail = {}) =>
    details.push({ in: 'body', pointer: `/headers/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`, rule, message, header: name, ...extra });
  if (entries.length > MAX_CUSTOM_HEADERS) {
    details.push({ in: 'body', pointer: '/headers', rule: 'maxProperties', limit: MAX_CUSTOM_HEADERS, message: `at most ${MAX_CUSTOM_HEADERS} headers` });
  }
  let bytes = 0;
  for (const [name, value] of entries) {
    const lower = name.toLowerCase();
    bytes += Buffer.byteLength(name) + (typeof value === 'string' ? Buffer.byteLength(value) : 0);
    if (name.length === 0 || name.length > MAX_HEADER_NAME || !TOKEN.test(name)) {
      problem(name, 'header_name', `"${name}" is not a valid header name (letters, digits and !#$%&'*+.^_\`|~-, at most ${MAX_HEADER_NAME})`);
      continue;
    }
    if (REFUSED_HEADERS.has(lower) || REFUSED_PREFIXES.some((p) => lower.startsWith(p))) {
      const why =
        lower === 'x-service-signature' || lower.startsWith('webhook-') || lower.startsWith('x-diwan-')
          ? 'the host sets it (signature and delivery headers)'
          : lower === 'host' || lower === 'content-length' || lower === 'content-type'
            ? 'the host sets it from the URL and the body'
            : 'it is a hop-by-hop header';
      problem(name, 'header_refused', `the header ${lower} cannot be set: ${why}`);
      continue;
    }
    if (typeof value !== 'string') {
      problem(name, 'type', `the value of ${lower} must be a string`);
      continue;
    }
    if (value.length > MAX_HEADER_VALUE || !HEADER_VALUE.test(value) || value !== value.trim()) {
      problem(name, 'header_value', `the value of ${lower} must be printable ASCII (tabs allowed, no line breaks, no leading or trailing space), at most ${MAX_HEADER_VALUE} characters`);
      continue;
    }
    if (seen.has(lower)) {
      problem(name, 'duplicate', `the header ${lower} is given twice (names are case-insensitive)`);
      continue;
    }
    seen.add(lower);
    out[lower] = value;
  }
  if (bytes > MAX_HEADERS_BYTES) {
    details.push({ in: 'body', pointer: '/headers', rule: 'maxBytes', limit: MAX_HEADERS_BYTES, message: `the headers' names and values come to ${bytes} bytes; at most ${MAX_HEADERS_BYTES}` });
  }
  return { headers: Object.keys(out).length ? out : null, details };
}

/** Bounds of the per-endpoint limits. */
export const MAX_IN_FLIGHT_LIMIT = 1000;
export const MAX_RATE_PER_SECOND = 10_000;

/** The endpoint as answered: never a secret. */
export const endpointSchema = {
  type: 'object',
  additionalProperties: false,
  required: [
    'id', 'companyId', 'url', 'topics', 'description', 'enabled', 'disabledReason', 'disabledAt', 'disabledDetail', 'failingSince',
    'maxInFlight', 'ratePerSecond', 'secretRotatedAt', 'headers', 'publicKey', 'createdAt', 'updatedAt',
  ],
  properties: {
    id: { type: 'string' },
    companyId: { type: 'string' },
    url: { type: 'string' },
    topics: { type: 'array', items: { type: 'string' } },
    description: { type: ['string', 'null'] },
    enabled: { type: 'boolean' },
    disabledReason: {
      type: ['string', 'null'], enum: ['failing', 'gone', 'manual', null],
      description:
        '`failing`: the host disabled it after it failed without a single success for DIWAN_WEBHOOK_DISABLE_AFTER; `gone`: the host disabled it when it answered 410 Gone; `manual`: a caller did. Enable it again with `enabled: true` or POST …/enable',
    },
    disabledAt: { type: ['string', 'null'] },
    disabledDetail: { type: ['string', 'null'], description: 'What the host saw when it disabled the endpoint' },
    failingSince: { type: ['string', 'null'], description: 'The first failed attempt since the last success; null while healthy' },
    maxInFlight: { type: ['integer', 'null'], description: 'Attempts in flight at once; null: the host default (DIWAN_WEBHOOK_MAX_IN_FLIGHT)' },
    ratePerSecond: { type: ['integer', 'null'], description: 'Deliveries started per second at most; null: no throttle' },
    secretRotatedAt: { type: ['string', 'null'] },
    headers: { type: 'object', additionalProperties: { type: 'string' }, description: 'Headers sent with every delivery (names in lower case)' },
    publicKey: {
      type: ['string', 'null'],
      description: 'With `asymmetric: true`: the ed25519 public key (`whpk_` + base64) that verifies the `v1a,…` signatures in `webhook-signature`; null otherwise',
    },
    createdAt: { type: 'string' },
    updatedAt: { type: 'string' },
  },
} as const;

const warningsSchema = {
  type: 'array',
  description: 'What the host noticed but did not refuse, e.g. a host name that does not resolve yet (deliveries decide)',
  items: { type: 'object', required: ['pointer', 'rule', 'message'], properties: { pointer: { type: 'string' }, rule: { type: 'string' }, message: { type: 'string' } } },
} as const;

export const endpointWithSecretSchema = {
  ...endpointSchema,
  required: [...endpointSchema.required, 'secret', 'warnings'],
  properties: { ...endpointSchema.properties, secret: { type: 'string', description: 'The signing secret (`whsec_…`), shown this once' }, warnings: warningsSchema },
} as const;

export const endpointWithWarningsSchema = {
  ...endpointSchema,
  required: [...endpointSchema.required, 'warnings'],
  properties: { ...endpointSchema.properties, warnings: warningsSchema },
} as const;

export interface EndpointInput {
  url: string;
  topics: string[];
  description?: string | null;
  enabled?: boolean;
  maxInFlight?: number | null;
  ratePerSecond?: number | null;
  /** Headers sent with every delivery; null or {} for none. */
  headers?: Record<string, string> | null;
  /** Also sign with ed25519 (Standard Webhooks `v1a`); the public key is shown on the endpoint. */
  asymmetric?: boolean;
}

export type EndpointPatch = Partial<EndpointInput>;

export interface Warning {
  pointer: string;
  rule: string;
  message: string;
}

/** Seals and opens signing secrets (encryption at rest, bound to the endpoint's id); see kernel/secret-box.ts. */
export interface SecretSealer {
  seal(secret: string, endpointId: string): string;
  open(sealed: string, endpointId: string): string;
}

export interface EndpointsDeps {
  repo: WebhookEndpointsRepo;
  changes: ChangeFeed;
  uow: UnitOfWork;
  sealer: SecretSealer;
  clock: Clock;
  config: HostConfig['webhooks'];
  /** The topics the loaded apps declare (loaded on demand where no app is yet). */
  known: () => KnownTopics | Promise<KnownTopics>;
}

const RESOURCE = 'webhook-endpoints';

/** What the host saw when it disabled a failing endpoint: stored as JSON, worded for each reader. */
interface DisabledFacts {
  /** `gone`: a 410 answer (then `since` is when). */
  reason?: 'gone';
  since: string;
  hours: number;
  limitSeconds: number;
  lastStatus: number | null;
  lastFailure: string | null;
}

let words: Translator | undefined;

/** The stored detail in `lang` (a detail stored as text by an older host is shown as it is). */
function detailIn(stored: string | null, lang: Lang): string | null {
  if (stored === null || !stored.startsWith('{')) return stored;
  const f = JSON.parse(stored) as DisabledFacts;
  words ??= createTranslator();
  if (f.reason === 'gone') return words.t(lang, 'webhook.goneDetail', { at: f.since });
  const last = f.lastFailure === 'http_status' && f.lastStatus !== null ? `HTTP ${f.lastStatus}` : (f.lastFailure ?? 'other');
  return words.t(lang, 'webhook.disabledDetail', { since: f.since, hours: f.hours, limit: f.limitSeconds, last });
}

/** An endpoint as the API shows it; the host's reason for disabling it worded in `lang`. */
export function toEndpoint(r: EndpointRecord, lang: Lang = 'en'): Endpoint {
  return {
    id: r.id, companyId: r.companyId, url: r.url, topics: r.topics, description: r.description, enabled: r.enabled,
    // An endpoint disabled before reasons were recorded was disabled by a caller.
    disabledReason: r.enabled ? null : ((r.disabledReason as DisabledReason | null) ?? 'manual'),
    disabledAt: r.enabled ? null : r.disabledAt,
    disabledDetail: r.enabled ? null : detailIn(r.disabledDetail, lang),
    failingSince: r.failingSince === null ? null : isoNow(r.failingSince),
    maxInFlight: r.maxInFlight, ratePerSecond: r.ratePerSecond,
    secretRotatedAt: r.secretRotatedAt, headers: r.headers ?? {}, publicKey: r.publicKey, createdAt: r.createdAt, updatedAt: r.updatedAt,
  };
}

/** The enabled flag and what goes with it: disabling records why and when; enabling clears that and the failing streak. */
function withEnabled(r: EndpointRecord, enabled: boolean, nowIso: string, reason: DisabledReason = 'manual', detail: string | null = null): EndpointRecord {
  if (enabled) return { ...r, enabled: true, disabledReason: null, disabledAt: null, disabledDetail: null, failingSince: r.enabled ? r.failingSince : null };
  if (!r.enabled) return r;
  return { ...r, enabled: false, disabledReason: reason, disabledAt: nowIso, disabledDetail: detail };
}

/** The secrets that sign now, newest first: the current one and, during a grace period, the previous one. */
export function signingSecrets(r: { secret: string; previousSecret: string | null; previousSecretUntil: number | null }, nowMs: number): string[] {
  return r.previousSecret && r.previousSecretUntil !== null && r.previousSecretUntil > nowMs ? [r.secret, r.previousSecret] : [r.secret];
}

/** The settings that let an operator allow refused ranges, named in the refusal. */
const GUARD_SETTING = { loopback: 'DIWAN_WEBHOOK_ALLOW_LOOPBACK', private: 'DIWAN_WEBHOOK_ALLOW_PRIVATE' } as const;
const PRIVATE_RANGES = new Set(['private', 'uniqueLocal', 'carrierGradeNat']);

export class Endpoints {
  constructor(private deps: EndpointsDeps) {}

  private async record(companyId: string, id: string): Promise<EndpointRecord> {
    const r = await this.deps.repo.get(companyId, id);
    if (!r) throw new DiwanError('NOT_FOUND', [{ resource: RESOURCE, id }]);
    return r;
  }

  async get(companyId: string, id: string, lang?: Lang): Promise<Endpoint> {
    return toEndpoint(await this.record(companyId, id), lang);
  }

  async list(companyId: string, q: { page: number; pageSize: number }, lang?: Lang): Promise<{ data: Endpoint[]; total: number }> {
    const { total, rows } = await this.deps.repo.list(companyId, q.page, q.pageSize);
    return { total, data: rows.map((r) => toEndpoint(r, lang)) };
  }

  /**
   * Every problem of the URL and the patterns, as one VALIDATION_ERROR. A host name that does not
   * resolve yet is accepted with a warning: deliveries check the address every time anyway.
   */
  private async check(input: { url?: string; topics?: unknown; headers?: unknown }): Promise<Warning[]> {
    const details: ErrorDetail[] = [];
    if (input.headers !== undefined) details.push(...checkHeaders(input.headers).details);
    const warnings: Warning[] = [];
    if (input.url !== undefined) {
      const { allowLoopback, allowPrivate } = this.deps.config;
      const g = await guardUrl(input.url, { allowLoopback, allowPrivate });
      if (!g.ok && g.reason === 'dns') {
        warnings.push({ pointer: '/url', rule: 'dns', message: 'the URL host does not resolve now; deliveries will fail until it does' });
      } else if (!g.ok) {
        const setting = g.detail === 'loopback' ? GUARD_SETTING.loopback : PRIVATE_RANGES.has(g.detail ?? '') ? GUARD_SETTING.private : undefined;
        const message =
          g.reason === 'refused_address'
            ? `the URL resolves to a refused address (${g.detail ?? 'internal'})${setting ? `; an operator allows such addresses with ${setting}=1 in the host's environment` : ''}`
            : g.reason === 'credentials'
              ? 'the URL must not carry credentials'
              : 'the URL must be an absolute http or https URL';
        details.push({ in: 'body', pointer: '/url', rule: g.reason, message, value: input.url, ...(g.detail !== undefined ? { reason: g.detail } : {}), ...(setting ? { setting } : {}) });
      }
    }
    if (input.topics !== undefined) {
      for (const p of validatePatterns(input.topics, await this.deps.known(), { maxItems: 100 })) details.push({ in: 'body', ...p });
    }
    if (details.length) {
      throw new DiwanError('VALIDATION_ERROR', details, { summary: details.map((d) => `${d.pointer}: ${d.message ?? d.rule}`).join('; ') });
    }
    return warnings;
  }

  async create(scope: WriteScope, input: EndpointInput): Promise<Endpoint & { secret: string; warnings: Warning[] }> {
    const warnings = await this.check(input);
    const now = isoNow(this.deps.clock.now());
    const secret = generateSecret();
    const id = newId('whe');
    const pair = input.asymmetric ? generateSigningKeyPair() : null;
    const record = withEnabled(
      {
        id, companyId: scope.companyId, url: input.url, topics: input.topics, description: input.description ?? null,
        enabled: true, secret: this.deps.sealer.seal(secret, id), previousSecret: null, previousSecretUntil: null,
        secretRotatedAt: null, createdAt: now, updatedAt: now, disabledReason: null, disabledAt: null, disabledDetail: null, failingSince: null,
        maxInFlight: input.maxInFlight ?? null, ratePerSecond: input.ratePerSecond ?? null,
        headers: checkHeaders(input.headers).headers,
        signingKey: pair ? this.deps.sealer.seal(pair.signingKey, id) : null, publicKey: pair?.publicKey ?? null,
      },
      input.enabled !== false,
      now,
    );
    const ep = toEndpoint(record);
    await this.deps.uow.run(scope, async (w) => {
      await this.deps.repo.insert(record);
      await w.audit({ action: 'create', resource: RESOURCE, resourceId: ep.id, after: ep });
      await this.deps.changes.bump('endpoints');
    });
    return { ...ep, secret, warnings };
  }

  update(scope: WriteScope, id: string, patch: EndpointPatch): Promise<Endpoint & { warnings: Warning[] }> {
    return this.change(scope, id, patch, 'update');
  }

  /** A patch, audited as `action`. */
  private async change(scope: WriteScope, id: string, patch: EndpointPatch, action: 'update' | 'enable'): Promise<Endpoint & { warnings: Warning[] }> {
    await this.record(scope.companyId, id);
    const warnings = await this.check({ url: patch.url, topics: patch.topics, headers: patch.headers });
    const after = await this.deps.uow.run(scope, async (w) => {
      const before = await this.record(scope.companyId, id);
      const now = isoNow(this.deps.clock.now());
      const next: EndpointRecord = withEnabled(
        {
          ...before,
          url: patch.url ?? before.url,
          topics: patch.topics ?? before.topics,
          description: patch.description !== undefined ? patch.description : before.description,
          maxInFlight: patch.maxInFlight !== undefined ? patch.maxInFlight : before.maxInFlight,
          ratePerSecond: patch.ratePerSecond !== undefined ? patch.ratePerSecond : before.ratePerSecond,
          headers: patch.headers !== undefined ? checkHeaders(patch.headers).headers : before.headers,
          ...this.asymmetric(before, patch.asymmetric),
          updatedAt: now,
        },
        patch.enabled ?? before.enabled,
        now,
      );
      await this.deps.repo.update(next);
      await w.audit({ action, resource: RESOURCE, resourceId: id, before: toEndpoint(before), after: toEndpoint(next) });
      await this.deps.changes.bump('endpoints');
      return toEndpoint(next, scope.lang);
    });
    return { ...after, warnings };
  }

  /** The signing key fields after a patch: a new pair when turned on, none when turned off, as they were otherwise. */
  private asymmetric(before: EndpointRecord, on: boolean | undefined): Pick<EndpointRecord, 'signingKey' | 'publicKey'> {
    if (on === undefined || on === (before.signingKey !== null)) return { signingKey: before.signingKey, publicKey: before.publicKey };
    if (!on) return { signingKey: null, publicKey: null };
    const pair = generateSigningKeyPair();
    return { signingKey: this.deps.sealer.seal(pair.signingKey, before.id), publicKey: pair.publicKey };
  }

  /**
   * Enables an endpoint again (the host's disabling included): the reason is cleared and the
   * failing streak starts afresh, so it has the whole DIWAN_WEBHOOK_DISABLE_AFTER again. Its
   * pending deliveries go out. Audited as `enable`.
   */
  async enable(scope: WriteScope, id: string): Promise<Endpoint> {
    const { warnings: _, ...ep } = await this.change(scope, id, { enabled: true }, 'enable');
    return ep;
  }

  /**
   * The host disables an endpoint that has failed without a single success since `failingSince`
   * (the caller checked the time), or (`reason: 'gone'`) that answered 410 Gone: recorded with the reason, audited as the system's `disable`,
   * and announced as `webhook.endpoint.disabled` to the company's other endpoints. Joins the
   * caller's transaction. Answers false when it was already disabled.
   */
  async disableFailing(
    companyId: string,
    id: string,
    seen: { failingSince: number; lastStatus: number | null; lastFailure: string | null; disableAfterSeconds: number; reason?: 'failing' | 'gone' },
  ): Promise<boolean> {
    const reason = seen.reason ?? 'failing';
    return this.deps.uow.run({ companyId, actor: SYSTEM_ACTOR, appId: 'core' }, async (w) => {
      const before = await this.deps.repo.get(companyId, id);
      if (!before || !before.enabled) return false;
      const nowMs = this.deps.clock.now();
      const now = isoNow(nowMs);
      const since = isoNow(seen.failingSince);
      const facts: DisabledFacts = {
        since, hours: Math.round((nowMs - seen.failingSince) / 3_600_000), limitSeconds: seen.disableAfterSeconds, lastStatus: seen.lastStatus, lastFailure: seen.lastFailure,
      };
      // A 410: the detail says when it answered so.
      const detail = JSON.stringify(reason === 'gone' ? { reason, ...facts, since: now } : facts);
      const next = withEnabled({ ...before, updatedAt: now }, false, now, reason, detail);
      await this.deps.repo.update(next);
      await w.audit({ action: 'disable', resource: RESOURCE, resourceId: id, before: toEndpoint(before), after: toEndpoint(next) });
      await w.emit(
        'webhook.endpoint.disabled',
        { endpointId: id, url: before.url, reason, failingSince: since, disabledAt: now, disableAfterSeconds: seen.disableAfterSeconds, lastStatus: seen.lastStatus, lastFailure: seen.lastFailure },
        { subjectId: id },
      );
      await this.deps.changes.bump('endpoints');
      return true;
    });
  }

  /** Deletes the endpoint with its delivery log; deliveries not yet made are dropped. */
  async remove(scope: WriteScope, id: string): Promise<Endpoint> {
    return this.deps.uow.run(scope, async (w) => {
      const before = await this.record(scope.companyId, id);
      await this.deps.repo.remove(scope.companyId, id);
      await w.audit({ action: 'delete', resource: RESOURCE, resourceId: id, before: toEndpoint(before) });
      await this.deps.changes.bump('endpoints');
      return toEndpoint(before, scope.lang);
    });
  }

  /** A new secret (answered this once); the previous one keeps signing for the grace period. */
  async rotate(scope: WriteScope, id: string): Promise<Endpoint & { secret: string; previousSecretValidUntil: string | null }> {
    const nowMs = this.deps.clock.now();
    const graceMs = this.deps.config.rotationGraceSeconds * 1000;
    const secret = generateSecret();
    return this.deps.uow.run(scope, async (w) => {
      const before = await this.record(scope.companyId, id);
      const next: EndpointRecord = {
        ...before,
        secret: this.deps.sealer.seal(secret, id),
        previousSecret: graceMs > 0 ? before.secret : null,
        previousSecretUntil: graceMs > 0 ? nowMs + graceMs : null,
        secretRotatedAt: isoNow(nowMs),
        updatedAt: isoNow(nowMs),
      };
      await this.deps.repo.update(next);
      await w.audit({ action: 'rotate', resource: RESOURCE, resourceId: id, before: toEndpoint(before), after: toEndpoint(next) });
      await this.deps.changes.bump('endpoints');
      return { ...toEndpoint(next, scope.lang), secret, previousSecretValidUntil: next.previousSecretUntil !== null ? isoNow(next.previousSecretUntil) : null };
    });
  }
}

/**
 * Seals what is not sealed with the current key: secrets stored in clear by an older host, and
 * after a key rotation those sealed with an older key. Returns how many it re-sealed.
 */
export async function resealSecrets(
  repo: WebhookEndpointsRepo,
  box: { encrypt(plain: string, context: string): string; decrypt(sealed: string, context: string): string; needsReencrypt(sealed: string): boolean },
  isSealed: (value: string) => boolean,
): Promise<number> {
  let count = 0;
  for (const row of await repo.sealed()) {
    const open = (v: string | null) => (v === null ? null : isSealed(v) ? box.decrypt(v, row.id) : v);
    const stale = (v: string | null) => v !== null && (!isSealed(v) || box.needsReencrypt(v));
    if (!stale(row.secret) && !stale(row.previousSecret) && !stale(row.signingKey)) continue;
    const secret = open(row.secret)!;
    const previous = open(row.previousSecret);
    const signingKey = open(row.signingKey);
    await repo.reseal(row.id, box.encrypt(secret, row.id), previous === null ? null : box.encrypt(previous, row.id), signingKey === null ? null : box.encrypt(signingKey, row.id));
    count++;
  }
  return count;
}
