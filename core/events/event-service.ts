// The catalogue the host serves: the union of what available apps contribute (their
// declared topics plus those their document types generate), the core's `apps` family, and
// the audit trail, whose topics the core generates from the writes it audits.
import fs from 'node:fs';
import path from 'node:path';
import type { EventFamilyDecl, TopicDecl } from '../../manifests/manifest.schema.ts';
import { DiwanError } from '../errors/diwan-error.ts';
import type { Actor } from '../identity/principal.ts';
import type { AppRuntime } from '../apps/runtime.ts';
import { auditRowSchema, auditTopic } from '../audit/audit-log.ts';
import type { Outbox, OutboxEvent } from './outbox.ts';
import { buildCatalogue, knownTopics, type Catalogue, type CatalogueOptions, type CatalogueSource } from './catalogue.ts';
import type { KnownTopics } from './patterns.ts';

export const CORE_FAMILIES: EventFamilyDecl[] = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, 'core-families.json'), 'utf8'));

/** Writes the core itself audits, as `resource: actions`. */
const CORE_AUDITED: Record<string, string[]> = {
  companies: ['create'],
  'api-keys': ['create', 'revoke'],
  apps: ['install', 'enable', 'disable', 'uninstall', 'purge', 'upgrade'],
  'webhook-endpoints': ['create', 'update', 'delete', 'rotate', 'retry'],
};

const AUDIT_EXAMPLE = {
  id: 'aud_0example0000000000000', companyId: 'co_0example0000000000000', actor: { type: 'key', id: '0example00000000' },
  appId: 'invoicing', action: 'create', resource: 'invoices', resourceId: 'inv_0example0000000000000',
  before: null, after: { id: 'inv_0example0000000000000' }, requestId: 'req-1', at: '2026-01-15T09:30:00.000Z',
};

export class EventService {
  private cache?: { version: number; sources: CatalogueSource[]; generated: Map<string, TopicDecl[]>; known: KnownTopics; topics: Map<string, { decl: TopicDecl; owner: string }> };

  constructor(
    private runtime: AppRuntime,
    private outbox: Outbox,
  ) {}

  /** Audit topics: one per audited write of the core and of every document type. */
  private auditTopics(): TopicDecl[] {
    const writes: [string, string][] = Object.entries(CORE_AUDITED).flatMap(([r, actions]) => actions.map((a) => [r, a] as [string, string]));
    for (const app of this.runtime.list()) {
      for (const dt of app.docTypes.values()) {
        for (const a of ['create', 'update', 'delete', ...(dt.decl.transitions ?? []).map((t) => t.name)]) writes.push([dt.resource, a]);
      }
    }
    return writes.map(([resource, action]) => ({
      topic: auditTopic(resource, action),
      description: { en: `Audit trail: a ${action} of ${resource} was recorded.`, ar: `سجل التدقيق: سُجّلت عملية ${action} على ${resource}.` },
      payload: auditRowSchema as unknown as Record<string, unknown>,
      example: { ...AUDIT_EXAMPLE, action, resource },
    }));
  }

  private state() {
    if (this.cache?.version !== this.runtime.version) {
      const sources: CatalogueSource[] = [{ appId: 'core', families: CORE_FAMILIES }, ...this.runtime.eventSources()];
      const generated = new Map([['audit', this.auditTopics()]]);
      const topics = new Map<string, { decl: TopicDecl; owner: string }>();
      for (const s of sources) for (const f of s.families) for (const t of f.topics) topics.set(t.topic, { decl: t, owner: s.appId });
      for (const t of generated.get('audit')!) topics.set(t.topic, { decl: t, owner: 'core' });
      this.cache = { version: this.runtime.version, sources, generated, known: knownTopics(sources, generated), topics };
    }
    return this.cache;
  }

  /** What a webhook subscription may name. */
  known(): KnownTopics {
    return this.state().known;
  }

  topic(name: string): { decl: TopicDecl; owner: string } | undefined {
    return this.state().topics.get(name);
  }

  /** The catalogue, each family marked installed or not in `companyId` (none: nothing installed). */
  catalogue(companyId: string | undefined, options: CatalogueOptions): Catalogue {
    const { sources, generated } = this.state();
    const installed = companyId ? this.runtime.list().map((a) => a.manifest.id).filter((id) => this.runtime.isEnabled(companyId, id)) : [];
    return buildCatalogue({ sources, generated, installed }, options);
  }

  /** Emits a topic's example payload (or `data`), marked as a test, for webhook consumers to exercise their endpoints. */
  trigger(companyId: string, topic: string, actor: Actor, data?: Record<string, unknown>): OutboxEvent {
    const t = this.topic(topic);
    if (!t) {
      throw new DiwanError('VALIDATION_ERROR', [{ in: 'body', pointer: '/topic', rule: 'unknown_topic', message: `${topic} is not a topic of the catalogue`, value: topic }], { summary: `${topic} is not a topic of the catalogue` });
    }
    if (t.owner !== 'core' && !this.runtime.isEnabled(companyId, t.owner)) {
      throw new DiwanError('APP_NOT_ENABLED', [{ app: t.owner, topic }], { app: t.owner });
    }
    void actor;
    return this.outbox.emit(companyId, topic, data ?? t.decl.example, true);
  }
}
