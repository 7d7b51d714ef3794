// One document type of one app, compiled once: schemas, validators, storage statements and
// the synchronous, transactional CRUD that both the generated routes and app code use. Every
// write runs its hooks, its audit row and its outbox event in one transaction.
import type { ValidateFunction } from 'ajv';
import type { DocumentTypeDecl, FieldDecl } from '../../manifests/manifest.schema.ts';
import type { AppContext, DocHooks, Doc, ListQuery, ListResult } from '../../sdk/define-app.ts';
import { createDocTableSql, docStatements, docTableName, type DocStatements } from '../db/dialect.ts';
import { newId, isoNow } from '../ids.ts';
import { DiwanError } from '../errors/diwan-error.ts';
import { compileFor, check, validationError } from '../http/validation.ts';
import type { Lang } from '../i18n/i18n.ts';
import type { Actor } from '../identity/principal.ts';
import type { HostServices } from './host-services.ts';
import { buildDocSchemas, type DocSchemas } from './doc-schemas.ts';

/** Who writes, in which company and language: what every operation is bound to. */
export interface Caller {
  company: { id: string; name: string; currency: string };
  actor: Actor;
  lang: Lang;
  requestId: string | null;
}

export interface GeneratedTopic {
  topic: string;
  description: { en: string; ar: string };
  payload: Record<string, unknown>;
  example: Record<string, unknown>;
}

interface Row {
  id: string;
  state: string | null;
  data: string;
  created_at: string;
  updated_at: string;
}

export class DocType {
  readonly schemas: DocSchemas;
  readonly table: string;
  readonly topicBase: string;
  readonly validateWrite: ValidateFunction;
  readonly validatePatch: ValidateFunction;
  readonly validateListQuery: ValidateFunction;
  private stmts!: DocStatements;
  private filterable: Set<string>;

  constructor(
    readonly appId: string,
    readonly decl: DocumentTypeDecl,
    defaultTopicPrefix: string,
    private host: HostServices,
    /** Resolves `type` or `app/type` to a compiled type (own app first). */
    private resolve: (ref: string) => DocType,
    private hooks: DocHooks,
    /** The owning app's context for hooks, bound to the caller. */
    private contextFor: (caller: Caller) => AppContext,
  ) {
    this.schemas = buildDocSchemas(decl, (to) => resolve(to).decl.idPrefix);
    this.table = docTableName(appId, decl.name);
    this.topicBase = decl.topicBase ?? `${defaultTopicPrefix}.${decl.name}`;
    this.validateWrite = compileFor('body', this.schemas.write);
    this.validatePatch = compileFor('body', this.schemas.patch);
    this.validateListQuery = compileFor('query', this.schemas.listQuery);
    this.filterable = new Set([...decl.fields.filter((f) => f.filterable).map((f) => f.name), ...(decl.states ? ['state'] : [])]);
  }

  get resource(): string {
    return this.decl.resource;
  }

  /** Creates the table and its indexes; idempotent, run when the app loads. */
  ensureStorage(): void {
    const filters = this.decl.fields.filter((f) => f.filterable && f.type !== 'lines').map((f) => f.name);
    this.host.storage.sqlite.exec(createDocTableSql(this.table, filters));
    this.stmts = docStatements(this.host.storage.sqlite, this.table);
  }

  /** created, updated, deleted, and one per transition. */
  topics(): GeneratedTopic[] {
    const label = this.decl.label;
    const example = this.example();
    const mk = (verb: string, en: string, ar: string): GeneratedTopic => ({
      topic: `${this.topicBase}.${verb}`,
      description: { en, ar },
      payload: this.schemas.read,
      example,
    });
    return [
      mk('created', `A ${label.en.toLowerCase()} was created.`, `تم إنشاء ${label.ar}.`),
      mk('updated', `A ${label.en.toLowerCase()} was changed.`, `تم تعديل ${label.ar}.`),
      mk('deleted', `A ${label.en.toLowerCase()} was deleted.`, `تم حذف ${label.ar}.`),
      ...(this.decl.transitions ?? []).map((t) =>
        mk(
          t.event ?? t.to,
          `A ${label.en.toLowerCase()} went through "${t.label?.en ?? t.name}" and is now ${t.to}.`,
          `أُجري على ${label.ar} إجراء «${t.label?.ar ?? t.name}» وأصبحت حالته ${t.to}.`,
        ),
      ),
    ];
  }

  /** A document that validates against the read schema, for test events and the catalogue. */
  example(): Record<string, unknown> {
    const value = (f: FieldDecl | NonNullable<FieldDecl['fields']>[number]): unknown => {
      switch (f.type) {
        case 'string': return `${f.name} example`;
        case 'number': case 'money': return Math.max(f.minimum ?? 0, 10);
        case 'integer': return Math.max(f.minimum ?? 0, 1);
        case 'boolean': return true;
        case 'date': return '2026-01-15';
        case 'enum': return f.values![0];
        case 'reference': return `${this.resolve(f.to!).decl.idPrefix}_0example0000000000000`;
        case 'lines': return [Object.fromEntries(((f as FieldDecl).fields ?? []).map((lf) => [lf.name, value(lf)]))];
      }
    };
    return {
      id: `${this.decl.idPrefix}_0example0000000000000`,
      ...(this.decl.initialState ? { state: this.decl.initialState } : {}),
      ...Object.fromEntries(this.decl.fields.map((f) => [f.name, value(f)])),
      createdAt: '2026-01-15T09:30:00.000Z',
      updatedAt: '2026-01-15T09:30:00.000Z',
    };
  }

  private toDoc(r: Row): Doc {
    return {
      id: r.id,
      ...(r.state !== null ? { state: r.state } : {}),
      ...JSON.parse(r.data),
      createdAt: r.created_at,
      updatedAt: r.updated_at,
    } as Doc;
  }

  /** The document as JSON text, spliced from the stored JSON without parsing it. */
  private toJson(r: Row): string {
    const inner = r.data.length > 2 ? `${r.data.slice(1, -1)},` : '';
    const state = r.state !== null ? `"state":${JSON.stringify(r.state)},` : '';
    return `{"id":"${r.id}",${state}${inner}"createdAt":"${r.created_at}","updatedAt":"${r.updated_at}"}`;
  }

  get(companyId: string, id: string): Doc | undefined {
    const r = this.stmts.get.get(companyId, id) as Row | undefined;
    return r && this.toDoc(r);
  }

  private mustGet(companyId: string, id: string): Doc {
    const d = this.get(companyId, id);
    if (!d) throw new DiwanError('NOT_FOUND', [{ resource: this.resource, id }]);
    return d;
  }

  private page(companyId: string, q: ListQuery): { rows: Row[]; total: number; page: number; pageSize: number } {
    const page = q.page ?? 1;
    const pageSize = q.pageSize ?? 20;
    const entries = Object.entries(q.filters ?? {}).filter(([k, v]) => this.filterable.has(k) && v !== undefined);
    entries.sort(([a], [b]) => a.localeCompare(b));
    const s = this.stmts.list(entries.map(([k]) => k));
    const args = [companyId, ...entries.map(([, v]) => (typeof v === 'boolean' ? Number(v) : v))];
    const total = s.count.get(...args) as number;
    const rows = s.rows.all(...args, pageSize, (page - 1) * pageSize) as Row[];
    return { rows, total, page, pageSize };
  }

  list(companyId: string, q: ListQuery = {}): ListResult {
    const p = this.page(companyId, q);
    return { data: p.rows.map((r) => this.toDoc(r)), total: p.total, page: p.page, pageSize: p.pageSize };
  }

  /** The list envelope as JSON text: the hot path of the generated list route. */
  listJson(companyId: string, q: ListQuery): string {
    const p = this.page(companyId, q);
    return `{"data":[${p.rows.map((r) => this.toJson(r)).join(',')}],"total":${p.total},"page":${p.page},"pageSize":${p.pageSize}}`;
  }

  private tx<T>(fn: () => T): T {
    return this.host.storage.sqlite.transaction(fn).immediate();
  }

  /** References must name a document of this company. (Money keeps its precision: unit prices may be finer than the currency; apps round what they compute.) */
  private normalise(doc: Record<string, unknown>, caller: Caller): void {
    const problems: Record<string, unknown>[] = [];
    const visit = (fields: readonly (FieldDecl | NonNullable<FieldDecl['fields']>[number])[], obj: Record<string, unknown>, base: string) => {
      for (const f of fields) {
        const v = obj[f.name];
        if (v === undefined || v === null) continue;
        if (f.type === 'reference' && typeof v === 'string') {
          const target = this.resolve(f.to!);
          if (!target.get(caller.company.id, v)) {
            const field = `${base}/${f.name}`.slice(1).replace(/\/(\d+)\//g, '[$1].').replace(/\//g, '.');
            problems.push({
              in: 'body',
              pointer: `${base}/${f.name}`,
              rule: 'exists',
              value: v,
              message: this.host.tr.t(caller.lang, 'rule.exists', { field, target: target.decl.label[caller.lang] }),
            });
          }
        }
        if (f.type === 'lines' && Array.isArray(v)) {
          v.forEach((line, i) => visit((f as FieldDecl).fields ?? [], line as Record<string, unknown>, `${base}/${f.name}/${i}`));
        }
      }
    };
    visit(this.decl.fields, doc, '');
    if (problems.length) throw validationError(problems);
  }

  private emit(caller: Caller, verb: string, action: string, before: Doc | null, after: Doc | null): void {
    this.host.audit.record({
      companyId: caller.company.id,
      actor: caller.actor,
      appId: this.appId,
      action,
      resource: this.resource,
      resourceId: (after ?? before)!.id,
      before,
      after,
      requestId: caller.requestId,
    });
    this.host.outbox.emit(caller.company.id, `${this.topicBase}.${verb}`, after ?? before);
  }

  create(caller: Caller, data: Record<string, unknown>, opts: { validated?: boolean; onCommit?: (doc: Doc) => void } = {}): Doc {
    const doc = opts.validated ? structuredClone(data) : check<Record<string, unknown>>(this.validateWrite, structuredClone(data), 'body', caller.lang, this.host.tr);
    return this.tx(() => {
      this.normalise(doc, caller);
      this.hooks.beforeCreate?.(doc, this.contextFor(caller));
      const now = isoNow(this.host.clock.now());
      const row: Row = { id: newId(this.decl.idPrefix), state: this.decl.initialState ?? null, data: JSON.stringify(doc), created_at: now, updated_at: now };
      this.stmts.insert.run(row.id, caller.company.id, row.state, row.data, now, now);
      const out = this.toDoc(row);
      this.emit(caller, 'created', 'create', null, out);
      opts.onCommit?.(out);
      return out;
    });
  }

  update(caller: Caller, id: string, patch: Record<string, unknown>, opts: { validated?: boolean } = {}): Doc {
    if (!opts.validated) check(this.validatePatch, patch, 'body', caller.lang, this.host.tr);
    return this.tx(() => {
      const previous = this.mustGet(caller.company.id, id);
      const { id: _i, state, createdAt: _c, updatedAt: _u, ...current } = previous;
      // Read-only fields (top-level and in lines) are recomputed by hooks from what the client may write.
      for (const f of this.decl.fields) {
        if (f.readOnly) delete current[f.name];
        else if (f.type === 'lines' && Array.isArray(current[f.name])) {
          const readOnly = (f.fields ?? []).filter((lf) => lf.readOnly).map((lf) => lf.name);
          current[f.name] = (current[f.name] as Record<string, unknown>[]).map((line) => Object.fromEntries(Object.entries(line).filter(([k]) => !readOnly.includes(k))));
        }
      }
      const merged = check<Record<string, unknown>>(this.validateWrite, { ...current, ...structuredClone(patch) }, 'body', caller.lang, this.host.tr);
      this.normalise(merged, caller);
      this.hooks.beforeUpdate?.(merged, previous, this.contextFor(caller));
      const now = isoNow(this.host.clock.now());
      this.stmts.update.run(state ?? null, JSON.stringify(merged), now, caller.company.id, id);
      const out = this.mustGet(caller.company.id, id);
      this.emit(caller, 'updated', 'update', previous, out);
      return out;
    });
  }

  transition(caller: Caller, id: string, name: string): Doc {
    const t = (this.decl.transitions ?? []).find((x) => x.name === name);
    if (!t) throw new DiwanError('NOT_FOUND', [{ resource: this.resource, transition: name }]);
    return this.tx(() => {
      const previous = this.mustGet(caller.company.id, id);
      if (!t.from.includes(previous.state!)) {
        throw new DiwanError(
          'CONFLICT',
          [{ reason: 'transition', transition: name, state: previous.state, allowedFrom: t.from }],
          { reason: this.host.tr.t(caller.lang, 'reason.transition', { transition: name, state: previous.state }) },
        );
      }
      this.hooks.beforeTransition?.(previous, name, this.contextFor(caller));
      const { id: _i, state: _s, createdAt: _c, updatedAt: _u, ...data } = previous;
      this.stmts.update.run(t.to, JSON.stringify(data), isoNow(this.host.clock.now()), caller.company.id, id);
      const out = this.mustGet(caller.company.id, id);
      this.emit(caller, t.event ?? t.to, name, previous, out);
      return out;
    });
  }

  remove(caller: Caller, id: string): Doc {
    return this.tx(() => {
      const previous = this.mustGet(caller.company.id, id);
      this.hooks.beforeDelete?.(previous, this.contextFor(caller));
      this.stmts.remove.run(caller.company.id, id);
      this.emit(caller, 'deleted', 'delete', previous, null);
      return previous;
    });
  }

  /** Drops a company's documents of this type (purge after uninstall). */
  purge(companyId: string): number {
    return this.stmts.purgeCompany.run(companyId).changes;
  }
}
