// The catalogue the host serves: what the available apps declare (each topic with its source,
// payload schema and example), the core's `apps` and `webhook` families, and the audit trail, whose topics the
// host generates from the writes it audits. Rebuilt when the app set changes.
import fs from 'node:fs';
import path from 'node:path';
import type { EventFamilyDecl, TopicDecl } from '../../manifests/manifest.schema.ts';
import type { UnitOfWork } from '../audit/unit-of-work.ts';
import { auditRowSchema, auditTopic } from '../audit/audit-log.ts';
import type { OutboxEvent } from '../events/outbox.ts';
import { buildCatalogue, knownTopics, type Catalogue, type CatalogueOptions, type CatalogueSource } from '../events/catalogue.ts';
import type { KnownTopics } from '../events/patterns.ts';
import type { Actor } from '../kernel/actor.ts';
import { DiwanError } from '../kernel/errors/diwan-error.ts';
import { auditedActions, type AppRuntime } from './runtime.ts';
import type { ResolvedTopic } from './doc-type.ts';

export const CORE_FAMILIES: EventFamilyDecl[] = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, '../events/core-families.json'), 'utf8'));

/** Writes the core itself audits, as `resource: actions`. */
const CORE_AUDITED: Record<string, string[]> = {
  companies: ['create', 'update'],
  'api-keys': ['create', 'revoke'],
  members: ['create', 'invite', 'join', 'update', 'delete'],
  apps: ['install', 'enable', 'disable', 'uninstall', 'purge', 'upgrade', 'settings'],
  'webhook-endpoints': ['create', 'update', 'enable', 'disable', 'delete', 'rotate', 'retry'],
  jobs: ['retry'],
};

const AUDIT_EXAMPLE = {
  id: 'aud_0example0000000000000', companyId: 'co_0example0000000000000', actor: { type: 'key', id: '0example00000000' },
  appId: 'invoicing', action: 'create', resource: 'invoices', resourceId: 'inv_0example0000000000000',
  before: null, after: { id: 'inv_0example0000000000000' }, requestId: 'req-1', at: '2026-01-15T09:30:00.000Z',
};

export class CatalogueService {
  private cache?: { version: number; sources: CatalogueSource[]; known: KnownTopics; topics: Map<string, { decl: ResolvedTopic; owner: string }> };

  constructor(
    private runtime: AppRuntime,
    private uow: UnitOfWork,
  ) {}

  /** Audit topics: one per audited write of the core and of every app (its document types' writes and its own actions). */
  private auditTopics(): ResolvedTopic[] {
    const writes: [string, string][] = Object.entries(CORE_AUDITED).flatMap(([r, actions]) => actions.map((a) => [r, a] as [string, string]));
    for (const app of this.runtime.list()) writes.push(...auditedActions(app.manifest));
    const seen = new Set<string>();
    return writes
      .map(([resource, action]) => ({ resource, action, topic: auditTopic(resource, action) }))
      .filter((w) => !seen.has(w.topic) && seen.add(w.topic))
      .map(({ resource, action, topic }) => ({
        topic,
        description: { en: `Audit trail: a ${action} of ${resource} was recorded.`, ar: `سجل التدقيق: سُجّلت عملية ${action} على ${resource}.` },
        source: { on: 'operation' as const, operation: `the audit row of every ${action} of ${resource}` },
        payload: auditRowSchema as unknown as Record<string, unknown>,
        example: { ...AUDIT_EXAMPLE, action, resource },
      }));
  }

  private state() {
    if (this.cache?.version !== this.runtime.version) {
      const core = CORE_FAMILIES.map((f) => (f.prefix === 'audit' ? { ...f, topics: this.auditTopics() } : f));
      const sources: CatalogueSource[] = [{ appId: 'core', families: core }, ...this.runtime.eventSources()];
      const topics = new Map<string, { decl: ResolvedTopic; owner: string }>();
      for (const s of sources) for (const f of s.families) for (const t of f.topics) topics.set(t.topic, { decl: t as ResolvedTopic, owner: s.appId });
      this.cache = { version: this.runtime.version, sources, known: knownTopics(sources), topics };
    }
    return this.cache;
  }

  /** What a webhook subscription may name. */
  known(): KnownTopics {
    return this.state().known;
  }

  topic(name: string): { decl: ResolvedTopic; owner: string } | undefined {
    return this.state().topics.get(name);
  }

  /** Every topic with its owner (the OpenAPI document's webhooks). */
  all(): { decl: TopicDecl & { payload: Record<string, unknown>; example: Record<string, unknown> }; owner: string }[] {
    return [...this.state().topics.values()];
  }

  /** The catalogue, each family marked installed or not in `companyId` (none: nothing installed). */
  async catalogue(companyId: string | undefined, options: CatalogueOptions): Promise<Catalogue> {
    const { sources } = this.state();
    const installs = companyId ? await this.runtime.installs(companyId) : new Map();
    const installed = [...installs.values()].filter((r) => r.state === 'enabled').map((r) => r.appId);
    return buildCatalogue({ sources, installed }, options);
  }

  /** Emits a topic's example payload (or `data`), marked as a test, for webhook consumers to exercise their endpoints. */
  async trigger(companyId: string, topic: string, actor: Actor, data?: Record<string, unknown>, requestId?: string | null): Promise<OutboxEvent> {
    const t = this.topic(topic);
    if (!t) {
      throw new DiwanError('VALIDATION_ERROR', [{ in: 'body', pointer: '/topic', rule: 'unknown_topic', message: `${topic} is not a topic of the catalogue`, value: topic }], { summary: `${topic} is not a topic of the catalogue` });
    }
    if (t.owner !== 'core' && !(await this.runtime.isEnabled(companyId, t.owner))) {
      throw new DiwanError('APP_NOT_ENABLED', [{ app: t.owner, topic }], { app: t.owner });
    }
    return this.uow.run({ companyId, actor, appId: 'core', requestId }, (w) => w.emit(topic, data ?? t.decl.example, { test: true }));
  }
}
