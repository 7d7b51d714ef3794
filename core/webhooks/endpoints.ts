// Webhook endpoints: one company each, a URL the address guard accepts, topic patterns checked
// against the catalogue, and a signing secret. The secret is stored (the host must sign with it)
// but leaves the host only in the create and rotate answers; after a rotation the previous
// secret keeps signing for `rotationGraceSeconds`. Every write is audited in its transaction.
import type { Sqlite } from '../db/connection.ts';
import type { AuditLog } from '../audit/audit-log.ts';
import type { Actor } from '../identity/principal.ts';
import type { HostConfig } from '../config.ts';
import type { Clock } from '../clock.ts';
import type { KnownTopics } from '../events/patterns.ts';
import { validatePatterns } from '../events/patterns.ts';
import { DiwanError, type ErrorDetail } from '../errors/diwan-error.ts';
import { newId, isoNow } from '../ids.ts';
import { guardUrl } from './address-guard.ts';
import { generateSecret } from './signature.ts';

export interface Endpoint {
  id: string;
  companyId: string;
  url: string;
  topics: string[];
  description: string | null;
  enabled: boolean;
  /** When the secret was last rotated; null if never. */
  secretRotatedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

/** The endpoint as answered: never a secret. */
export const endpointSchema = {
  type: 'object',
  required: ['id', 'url', 'topics', 'description', 'enabled', 'secretRotatedAt', 'createdAt', 'updatedAt'],
  properties: {
    id: { type: 'string' },
    companyId: { type: 'string' },
    url: { type: 'string' },
    topics: { type: 'array', items: { type: 'string' } },
    description: { type: ['string', 'null'] },
    enabled: { type: 'boolean' },
    secretRotatedAt: { type: ['string', 'null'] },
    createdAt: { type: 'string' },
    updatedAt: { type: 'string' },
  },
} as const;

export const endpointWithSecretSchema = {
  ...endpointSchema,
  required: [...endpointSchema.required, 'secret'],
  properties: { ...endpointSchema.properties, secret: { type: 'string', description: 'The signing secret (`whsec_…`), shown this once' } },
} as const;

export interface EndpointRow {
  id: string;
  company_id: string;
  url: string;
  topics: string;
  description: string | null;
  enabled: number;
  secret: string;
  previous_secret: string | null;
  previous_secret_until: number | null;
  secret_rotated_at: string | null;
  created_at: string;
  updated_at: string;
}

export function toEndpoint(r: EndpointRow): Endpoint {
  return {
    id: r.id,
    companyId: r.company_id,
    url: r.url,
    topics: JSON.parse(r.topics),
    description: r.description,
    enabled: r.enabled === 1,
    secretRotatedAt: r.secret_rotated_at,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** The secrets that sign now, newest first: the current one and, during a grace period, the previous. */
export function signingSecrets(r: Pick<EndpointRow, 'secret' | 'previous_secret' | 'previous_secret_until'>, nowMs: number): string[] {
  return r.previous_secret && r.previous_secret_until !== null && r.previous_secret_until > nowMs ? [r.secret, r.previous_secret] : [r.secret];
}

export interface EndpointInput {
  url: string;
  topics: string[];
  description?: string | null;
  enabled?: boolean;
}

export type EndpointPatch = Partial<EndpointInput>;

export interface EndpointsDeps {
  sqlite: Sqlite;
  audit: AuditLog;
  clock: Clock;
  config: HostConfig['webhooks'];
  known: () => KnownTopics;
  /** Called after a committed change of a company's endpoints (the dispatcher's index). */
  onChange?: (companyId: string) => void;
}

const RESOURCE = 'webhook-endpoints';

export class Endpoints {
  constructor(private deps: EndpointsDeps) {}

  onChange: (companyId: string) => void = (id) => this.deps.onChange?.(id);

  private row(companyId: string, id: string): EndpointRow | undefined {
    return this.deps.sqlite.prepare('SELECT * FROM webhook_endpoints WHERE company_id = ? AND id = ?').get(companyId, id) as EndpointRow | undefined;
  }

  /** The row, or 404 NOT_FOUND (also for another company's endpoint). */
  requireRow(companyId: string, id: string): EndpointRow {
    const r = this.row(companyId, id);
    if (!r) throw new DiwanError('NOT_FOUND', [{ resource: RESOURCE, id }]);
    return r;
  }

  get(companyId: string, id: string): Endpoint {
    return toEndpoint(this.requireRow(companyId, id));
  }

  list(companyId: string, q: { page: number; pageSize: number }): { data: Endpoint[]; total: number } {
    const total = this.deps.sqlite.prepare('SELECT count(*) FROM webhook_endpoints WHERE company_id = ?').pluck().get(companyId) as number;
    const rows = this.deps.sqlite
      .prepare('SELECT * FROM webhook_endpoints WHERE company_id = ? ORDER BY seq LIMIT ? OFFSET ?')
      .all(companyId, q.pageSize, (q.page - 1) * q.pageSize) as EndpointRow[];
    return { total, data: rows.map(toEndpoint) };
  }

  /** Enabled endpoints of a company with their patterns (the dispatcher's index). */
  enabledOf(companyId: string): { id: string; topics: string[]; createdAt: string }[] {
    return (
      this.deps.sqlite.prepare('SELECT id, topics, created_at FROM webhook_endpoints WHERE company_id = ? AND enabled = 1 ORDER BY seq').all(companyId) as { id: string; topics: string; created_at: string }[]
    ).map((r) => ({ id: r.id, topics: JSON.parse(r.topics), createdAt: r.created_at }));
  }

  /** Every problem of the URL and the patterns, as VALIDATION_ERROR details. */
  private async check(input: { url?: string; topics?: unknown }): Promise<void> {
    const details: ErrorDetail[] = [];
    if (input.url !== undefined) {
      const { allowLoopback, allowPrivate } = this.deps.config;
      const g = await guardUrl(input.url, { allowLoopback, allowPrivate });
      if (!g.ok) {
        details.push({
          in: 'body', pointer: '/url', rule: g.reason,
          message: g.reason === 'refused_address' ? `the URL resolves to a refused address (${g.detail ?? 'internal'})` : g.reason === 'dns' ? 'the URL host does not resolve' : g.reason === 'credentials' ? 'the URL must not carry credentials' : 'the URL must be an absolute http or https URL',
          value: input.url,
          ...(g.detail !== undefined ? { reason: g.detail } : {}),
        });
      }
    }
    if (input.topics !== undefined) {
      for (const p of validatePatterns(input.topics, this.deps.known(), { maxItems: 100 })) {
        details.push({ in: 'body', ...p });
      }
    }
    if (details.length) {
      throw new DiwanError('VALIDATION_ERROR', details, { summary: details.map((d) => `${d.pointer}: ${d.message ?? d.rule}`).join('; ') });
    }
  }

  async create(companyId: string, input: EndpointInput, actor: Actor, requestId?: string): Promise<Endpoint & { secret: string }> {
    await this.check(input);
    const now = isoNow(this.deps.clock.now());
    const row: EndpointRow = {
      id: newId('whe'),
      company_id: companyId,
      url: input.url,
      topics: JSON.stringify(input.topics),
      description: input.description ?? null,
      enabled: input.enabled === false ? 0 : 1,
      secret: generateSecret(),
      previous_secret: null,
      previous_secret_until: null,
      secret_rotated_at: null,
      created_at: now,
      updated_at: now,
    };
    const ep = toEndpoint(row);
    this.deps.sqlite.transaction(() => {
      this.deps.sqlite
        .prepare(
          `INSERT INTO webhook_endpoints (id, company_id, url, topics, description, enabled, secret, created_at, updated_at)
           VALUES (@id, @company_id, @url, @topics, @description, @enabled, @secret, @created_at, @updated_at)`,
        )
        .run(row);
      this.deps.audit.record({ companyId, actor, appId: 'core', action: 'create', resource: RESOURCE, resourceId: ep.id, after: ep, requestId });
    }).immediate();
    this.onChange(companyId);
    return { ...ep, secret: row.secret };
  }

  async update(companyId: string, id: string, patch: EndpointPatch, actor: Actor, requestId?: string): Promise<Endpoint> {
    this.requireRow(companyId, id);
    await this.check({ url: patch.url, topics: patch.topics });
    const after = this.deps.sqlite.transaction(() => {
      const before = this.requireRow(companyId, id);
      const next: EndpointRow = {
        ...before,
        url: patch.url ?? before.url,
        topics: patch.topics !== undefined ? JSON.stringify(patch.topics) : before.topics,
        description: patch.description !== undefined ? patch.description : before.description,
        enabled: patch.enabled === undefined ? before.enabled : patch.enabled ? 1 : 0,
        updated_at: isoNow(this.deps.clock.now()),
      };
      this.deps.sqlite
        .prepare('UPDATE webhook_endpoints SET url = @url, topics = @topics, description = @description, enabled = @enabled, updated_at = @updated_at WHERE id = @id')
        .run(next);
      const a = toEndpoint(next);
      this.deps.audit.record({ companyId, actor, appId: 'core', action: 'update', resource: RESOURCE, resourceId: id, before: toEndpoint(before), after: a, requestId });
      return a;
    }).immediate();
    this.onChange(companyId);
    return after;
  }

  /** Deletes the endpoint with its delivery log; deliveries not yet made are dropped. */
  remove(companyId: string, id: string, actor: Actor, requestId?: string): Endpoint {
    const ep = this.deps.sqlite.transaction(() => {
      const before = toEndpoint(this.requireRow(companyId, id));
      const s = this.deps.sqlite;
      s.prepare('DELETE FROM webhook_attempts WHERE delivery_id IN (SELECT id FROM webhook_deliveries WHERE endpoint_id = ?)').run(id);
      s.prepare('DELETE FROM webhook_deliveries WHERE endpoint_id = ?').run(id);
      s.prepare('DELETE FROM webhook_endpoints WHERE id = ?').run(id);
      this.deps.audit.record({ companyId, actor, appId: 'core', action: 'delete', resource: RESOURCE, resourceId: id, before, requestId });
      return before;
    }).immediate();
    this.onChange(companyId);
    return ep;
  }

  /** A new secret (returned this once); the previous one keeps signing for the grace period. */
  rotate(companyId: string, id: string, actor: Actor, requestId?: string): Endpoint & { secret: string; previousSecretValidUntil: string | null } {
    const nowMs = this.deps.clock.now();
    const graceMs = this.deps.config.rotationGraceSeconds * 1000;
    return this.deps.sqlite.transaction(() => {
      const before = this.requireRow(companyId, id);
      const next: EndpointRow = {
        ...before,
        secret: generateSecret(),
        previous_secret: graceMs > 0 ? before.secret : null,
        previous_secret_until: graceMs > 0 ? nowMs + graceMs : null,
        secret_rotated_at: isoNow(nowMs),
        updated_at: isoNow(nowMs),
      };
      this.deps.sqlite
        .prepare(
          'UPDATE webhook_endpoints SET secret = @secret, previous_secret = @previous_secret, previous_secret_until = @previous_secret_until, secret_rotated_at = @secret_rotated_at, updated_at = @updated_at WHERE id = @id',
        )
        .run(next);
      const after = toEndpoint(next);
      this.deps.audit.record({ companyId, actor, appId: 'core', action: 'rotate', resource: RESOURCE, resourceId: id, before: toEndpoint(before), after, requestId });
      return { ...after, secret: next.secret, previousSecretValidUntil: next.previous_secret_until !== null ? isoNow(next.previous_secret_until) : null };
    }).immediate();
  }
}
