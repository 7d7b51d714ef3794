// One document type of one app: its schemas and validators (compiled on first use, once per app
// version, whatever company uses it), its table, and the CRUD that both the generated routes and
// app code use. Every write runs its hooks, its audit row and the events whose source it is in
// one unit of work (a parent's totals that a child's write moves are derived: their row and
// `change` topics only, in the child's unit of work).
import type { ValidateFunction } from 'ajv';
import type { DocumentTypeDecl, FieldDecl, TopicDecl, SourceDecl, ConditionDecl, TransitionDecl, WhenDecl } from '../../manifests/manifest.schema.ts';
import type { AppContext, DocHooks, Doc, ListQuery, ListResult } from '../../sdk/define-app.ts';
import type { DocumentTable, DocRow, FilterField, ListRow } from '../storage/repos/documents.ts';
import type { UnitOfWork, Work } from '../audit/unit-of-work.ts';
import type { Translator, Lang } from '../kernel/i18n/i18n.ts';
import type { Clock } from '../kernel/clock.ts';
import type { Actor } from '../kernel/actor.ts';
import type { Company } from '../tenancy/companies.ts';
import type { Principal } from '../identity/principal.ts';
import { newSortableId, isoDay, isoNow } from '../kernel/ids.ts';
import { DiwanError } from '../kernel/errors/diwan-error.ts';
import { compileFor, check, validationError, ajvDetails, unstorableDetails } from '../kernel/validation.ts';
import { buildDocSchemas, eventPayloadSchema, getOnly, isReadOnly, numericBounds, type DocSchemas } from './doc-schemas.ts';
import { appFault } from './app-fault.ts';
import { buildRules, hasExpressions, readsRef, rulesRead, type CompiledRules } from './rules/document-rules.ts';
import { applyDefaults, applySet, defaultsToProposeAgain, brokenRules, celActivation, computeInto, conditionHolds, guardHolds, transitionScope, type Refs, type RuleScope } from './rules/evaluate.ts';
import { aggregateDeltas, addToAggregate, distinctMoves, inLockOrder, statesNotCounted, type AggregatedBy, type Deltas, type DistinctMove, type ParentMove } from './rules/aggregates.ts';
import { currencyDigits } from '../tenancy/companies.ts';
import { roleAtLeast } from '../identity/roles.ts';
import { actsOnDependency, buildEffects, hasEffects, runEffects, type CompiledEffect, type CompiledEffects } from './rules/effects.ts';
import { formatName, namingDate, seriesKey } from './rules/naming.ts';
import { uniqueLockName } from './rules/unique.ts';

/** Who writes, in which company and language: what every operation is bound to. */
export interface Caller {
  company: Company;
  actor: Actor;
  lang: Lang;
  requestId: string | null;
  /** The request's principal, for the permission checks app code makes (`ctx.can`); absent for the operator and the host. */
  principal?: Principal;
}

/** A topic of the catalogue with its payload schema and example resolved. */
export interface ResolvedTopic extends TopicDecl {
  payload: Record<string, unknown>;
  example: Record<string, unknown>;
}

export interface DocTypeDeps {
  table: DocumentTable;
  uow: UnitOfWork;
  tr: Translator;
  clock: Clock;
  /** `type` (own) or `app/type` (a dependency) → the type, refusing anything else. */
  resolve(ref: string): DocType;
  hooks: DocHooks;
  /** The owning app's context for hooks, bound to the caller. */
  context(caller: Caller): AppContext;
  /** The app's topics whose source is this type. */
  topics: TopicDecl[];
  /** The next number of the app's counter `key` in a company, in the write's transaction (naming series). */
  sequence(companyId: string, key: string): Promise<number>;
  /** Holds a named lock to the end of the write's transaction (uniqueness checks). */
  lock(name: string): Promise<void>;
  /** The aggregates of other types of the app over this one (a payroll run's totals over its payslips). */
  aggregatedBy?: AggregatedBy[];
  /** The reference fields of the loaded apps' types (or of their lines) that can name a document of this type. */
  referencedBy?(): { dt: DocType; field: string; lines?: string }[];
}

type Fields = readonly (FieldDecl | NonNullable<FieldDecl['fields']>[number])[];

const SYSTEM = ['id', 'state', 'createdAt', 'updatedAt'];

/** A document's body: its fields without the ones every document has. */
const bodyOf = (doc: Record<string, unknown>): Record<string, unknown> => Object.fromEntries(Object.entries(doc).filter(([k]) => !SYSTEM.includes(k)));

/** The minor digits of the caller's company currency (SAR's 2 when unknown). */
const digitsOf = (caller: Caller): number => currencyDigits(caller.company.currency) ?? 2;
/** How JSON.stringify writes U+0000 or half of a surrogate pair (a false alarm, `\\u0000` typed as text, only costs the walk). */
const UNSTORABLE_ESCAPE = /\\u(0000|d[89a-f])/i;
/** Thrown to end a dry run's transaction: a rollback that is not a failure. */
const ROLLED_BACK = Symbol('dry run');
/** Batches of due documents a schedule takes in one tick. */
const MAX_BATCHES = 50;

const byKey = ([a]: [string, unknown], [b]: [string, unknown]) => (a < b ? -1 : a > b ? 1 : 0);

export function holds(c: ConditionDecl, doc: Record<string, unknown>): boolean {
  const v = doc[c.field];
  if (c.equals !== undefined) return v === c.equals;
  if (c.in !== undefined) return c.in.includes(v as string | number);
  if (c.present !== undefined) return c.present === (v !== undefined && v !== null && v !== '');
  if (typeof v !== 'number') return false;
  if (c.below !== undefined) return v < c.below;
  return v > c.above!;
}

export class DocType {
  private builtSchemas?: DocSchemas;
  private compiled?: { write: ValidateFunction; stored: ValidateFunction; patch: ValidateFunction; listQuery: ValidateFunction; params: ValidateFunction; transitions: Map<string, ValidateFunction> };
  /** The type's compiled rules, once per manifest version; null when it declares none (the common, free case). */
  private compiledRules?: CompiledRules | null;
  private readonly filterable: Set<string>;

  constructor(
    readonly appId: string,
    readonly decl: DocumentTypeDecl,
    private deps: DocTypeDeps,
  ) {
    this.filterable = new Set([...decl.fields.filter((f) => f.filterable && f.type !== 'lines').map((f) => f.name), ...(decl.states ? ['state'] : [])]);
  }

  get resource(): string {
    return this.decl.resource;
  }

  get table(): DocumentTable {
    return this.deps.table;
  }

  /** Validators, compiled on first use (the catalogue and the OpenAPI document need only the schemas). */
  private get c() {
    if (!this.compiled) {
      const schemas = this.schemas;
      this.compiled = {
        write: compileFor('body', schemas.write),
        stored: compileFor('body', schemas.stored),
        patch: compileFor('body', schemas.patch),
        listQuery: compileFor('query', schemas.listQuery),
        params: compileFor('params', schemas.params),
        transitions: new Map(Object.entries(schemas.transitions).map(([name, schema]) => [name, compileFor('body', schema)])),
      };
    }
    return this.compiled;
  }

  get schemas(): DocSchemas {
    return (this.builtSchemas ??= buildDocSchemas(this.decl, (to) => this.deps.resolve(to).decl.idPrefix));
  }

  get validators() {
    const { write, patch, listQuery, params } = this.c;
    return { write, patch, listQuery, params };
  }

  /** The rules' programs, compiled on first use (the manifest was checked, so they compile). */
  private get rules(): CompiledRules | null {
    if (this.compiledRules === undefined) {
      if (!hasExpressions(this.decl) && !this.deps.topics.some((t) => t.source.when && 'rule' in t.source.when)) this.compiledRules = null;
      else {
        const { rules, problems } = buildRules(this.decl, '', this.ruleInputs);
        if (!rules) throw new Error(`${this.appId}.${this.decl.name}: rules do not compile: ${problems.map((p) => p.message).join('; ')}`);
        this.compiledRules = rules;
      }
    }
    return this.compiledRules;
  }

  /** What the rules are built from besides the type: the fields of the types its references name, and its topics' rules. */
  private get ruleInputs() {
    const conditions = this.deps.topics.flatMap((t) => (t.source.when && 'rule' in t.source.when ? [{ rule: t.source.when.rule, pointer: `/${t.topic}/source/when/rule` }] : []));
    const targets = (to: string) => {
      try {
        return this.deps.resolve(to).decl.fields;
      } catch {
        return undefined;
      }
    };
    return { targets, conditions };
  }

  /**
   * At install: rules that read a document of another app (typed `dyn` when the manifest alone
   * was validated) checked against that app's fields, every problem at its pointer (`at` is the
   * type's). Types without such rules are left to compile on first use.
   */
  checkRules(at: string): { pointer: string; rule: string; message: string }[] {
    if (!this.decl.fields.some((f) => f.type === 'reference' && f.to?.includes('/')) || !readsRef(this.decl)) return [];
    const { rules, problems } = buildRules(this.decl, at, this.ruleInputs);
    if (rules) this.compiledRules = rules;
    return problems;
  }

  /** The fields of the table's indexes: filters, and the dates schedules watch. */
  static indexedFields(decl: DocumentTypeDecl): { filters: FilterField[]; dates: string[] } {
    const kind = (f: FieldDecl): FilterField['kind'] => (['number', 'integer', 'money'].includes(f.type) ? 'number' : f.type === 'boolean' ? 'boolean' : 'text');
    const filters = decl.fields.filter((f) => f.filterable && f.type !== 'lines').map((f) => ({ name: f.name, kind: kind(f) }));
    const dates = [...new Set((decl.schedules ?? []).map((s) => s.date))];
    return { filters, dates };
  }

  // ---- the catalogue -------------------------------------------------------------------

  /** The type's topics with their payload schema (the document) and an example. */
  topics(): ResolvedTopic[] {
    return this.deps.topics.map((t) => {
      const payload = eventPayloadSchema(this.schemas.read, this.decl, t.source);
      return { ...t, payload, example: t.example ?? this.exampleFor(t.source) };
    });
  }

  private exampleFor(source: SourceDecl): Record<string, unknown> {
    const doc = this.example();
    if (source.on === 'transition') {
      const t = this.decl.transitions!.find((x) => x.name === source.transition)!;
      return { ...doc, state: t.to, previous: { state: t.from[0] } };
    }
    if (source.on === 'change') {
      const field = source.field!;
      return { ...doc, previous: { [field]: field === 'state' ? this.decl.initialState : null } };
    }
    return doc;
  }

  /** A document that validates against the read schema and the events' payload schema, for test events and the catalogue. */
  example(): Record<string, unknown> {
    // Within the field's bounds: the example must validate against the schema it illustrates.
    const within = (v: number, f: Fields[number]) => Math.min(f.maximum ?? Infinity, Math.max(f.minimum ?? -Infinity, v));
    const text = (f: Fields[number]) => `${f.name} example`.padEnd(f.minLength ?? 0, 'x').slice(0, f.maxLength ?? 10_000);
    const value = (f: Fields[number]): unknown => {
      switch (f.type) {
        case 'string': return text(f);
        case 'number': case 'money': return within(10, f);
        case 'integer': return Math.ceil(within(1, f));
        case 'boolean': return true;
        case 'date': return '2026-01-15';
        case 'enum': return f.values![0];
        case 'reference': return `${this.deps.resolve(f.to!).decl.idPrefix}_0example0000000000000`;
        case 'lines': return [Object.fromEntries(((f as FieldDecl).fields ?? []).map((lf) => [lf.name, value(lf)]))];
      }
    };
    return {
      id: `${this.decl.idPrefix}_0example0000000000000`,
      ...(this.decl.initialState ? { state: this.decl.initialState } : {}),
      // As lists and events carry it: without its get-only fields.
      ...Object.fromEntries(this.decl.fields.filter((f) => !getOnly(f)).map((f) => [f.name, value(f)])),
      createdAt: '2026-01-15T09:30:00.000Z',
      updatedAt: '2026-01-15T09:30:00.000Z',
    };
  }

  // ---- reading ---------------------------------------------------------------------------

  /** Secret and other get-only fields: answered only by the document's get route. */
  private get secrets(): string[] {
    return (this.secretFields ??= this.decl.fields.filter(getOnly).map((f) => f.name));
  }

  private secretFields?: string[];

  /** The document without its get-only fields: what lists, audit rows and events carry. */
  private redact(doc: Doc): Doc;
  private redact(doc: Doc | undefined): Doc | undefined;
  private redact(doc: Doc | undefined): Doc | undefined {
    if (!doc || !this.secrets.length) return doc;
    const out = { ...doc };
    for (const k of this.secrets) delete out[k];
    return out;
  }

  /** The stored row as a document; `body`, its JSON already parsed. */
  private toDoc(r: ListRow, body: Record<string, unknown> = JSON.parse(r.data)): Doc {
    return {
      id: r.id,
      ...(r.state !== null ? { state: r.state } : {}),
      ...body,
      createdAt: r.created_at,
      updatedAt: r.updated_at,
    } as Doc;
  }

  /** A stored row as the rules read a referenced document (`ref`): its body, id and state, not copied into a document. */
  private asRef(r: ListRow): Record<string, unknown> {
    const body = JSON.parse(r.data) as Record<string, unknown>;
    body.id = r.id;
    if (r.state !== null) body.state = r.state;
    return body;
  }

  /** The document as JSON text, spliced from the stored JSON without parsing it (the list's hot path). */
  private toJson(r: ListRow): string {
    const inner = r.data.length > 2 ? `${r.data.slice(1, -1)},` : '';
    const state = r.state !== null ? `"state":${JSON.stringify(r.state)},` : '';
    return `{"id":"${r.id}",${state}${inner}"createdAt":"${r.created_at}","updatedAt":"${r.updated_at}"}`;
  }

  async get(companyId: string, id: string): Promise<Doc | undefined> {
    const r = await this.deps.table.get(companyId, id);
    return r && this.toDoc(r);
  }

  private async mustGet(companyId: string, id: string): Promise<{ doc: Doc; row: DocRow }> {
    const row = await this.deps.table.get(companyId, id);
    if (!row) throw new DiwanError('NOT_FOUND', [{ resource: this.resource, id }]);
    return { doc: this.toDoc(row), row };
  }

  private page(companyId: string, q: ListQuery) {
    const page = q.page ?? 1;
    const pageSize = q.pageSize ?? 20;
    // Loops rather than callbacks: run by tsx, each closure made per request also pays its name helper.
    const given = q.filters ?? {};
    const filters: [string, string | number | boolean][] = [];
    for (const k of Object.keys(given)) {
      const v = given[k];
      if (v !== undefined && this.filterable.has(k)) filters.push([k, v]);
    }
    filters.sort(byKey);
    return { page, pageSize, result: this.deps.table.page(companyId, filters, page, pageSize, this.orderOf(q.sort)) };
  }

  /** A `sort` value as a field and direction; anything not sortable falls back to creation order. */
  private orderOf(sort: string | undefined): { field: string; desc: boolean } {
    const desc = !!sort?.startsWith('-');
    const field = desc ? sort!.slice(1) : sort;
    if (field && field !== 'createdAt' && this.filterable.has(field)) return { field, desc };
    return { field: 'seq', desc };
  }

  async list(companyId: string, q: ListQuery = {}): Promise<ListResult> {
    const { page, pageSize, result } = this.page(companyId, q);
    const { rows, total } = await result;
    return { data: rows.map((r) => this.toDoc(r)), total, page, pageSize };
  }

  /** The list route's envelope as JSON text (without secret fields). */
  async listJson(companyId: string, q: ListQuery): Promise<string> {
    const { page, pageSize, result } = this.page(companyId, q);
    const { rows, total } = await result;
    const docs: string[] = new Array(rows.length);
    for (let i = 0; i < rows.length; i++) docs[i] = this.secrets.length ? JSON.stringify(this.redact(this.toDoc(rows[i]))) : this.toJson(rows[i]);
    return `{"data":[${docs.join(',')}],"total":${total},"page":${page},"pageSize":${pageSize}}`;
  }

  // ---- writing ---------------------------------------------------------------------------

  private scope(caller: Caller) {
    return { companyId: caller.company.id, actor: caller.actor, appId: this.appId, requestId: caller.requestId };
  }

  /** Runs an app hook; what it throws becomes a stable error (its AppError, or APP_ERROR). */
  private async hook(name: keyof DocHooks, caller: Caller, ...args: unknown[]): Promise<void> {
    const fn = this.deps.hooks[name] as ((...a: unknown[]) => unknown) | undefined;
    if (!fn) return;
    try {
      await fn(...args, this.deps.context(caller));
    } catch (err) {
      throw appFault(err, this.appId, { rule: 'hook', hook: `${this.decl.name}.${name}` }, `${this.decl.name}.${name} failed`);
    }
  }

  /**
   * References must name a document of this company; every problem at once. Answers the
   * documents the top-level reference fields name (what `ref` is in the rules: read once, here).
   */
  private async checkReferences(doc: Record<string, unknown>, caller: Caller, fields: Fields = this.decl.fields): Promise<Refs> {
    const problems: Record<string, unknown>[] = [];
    const found: Refs = new Map();
    // Only a type whose rules read `ref` pays for reading the documents found.
    const keep = fields === this.decl.fields && !!this.rules?.usesRef;
    const visit = async (fields: Fields, obj: Record<string, unknown>, base: string) => {
      for (const f of fields) {
        const v = obj[f.name];
        if (v === undefined || v === null) continue;
        if (f.type === 'reference' && typeof v === 'string') {
          const target = this.deps.resolve(f.to!);
          const row = await target.deps.table.get(caller.company.id, v);
          if (row && keep && base === '') found.set(f.name, target.asRef(row));
          if (!row) {
            const field = `${base}/${f.name}`.slice(1).replace(/\/(\d+)\//g, '[$1].').replace(/\//g, '.');
            problems.push({
              in: 'body', pointer: `${base}/${f.name}`, rule: 'exists', value: v,
              message: this.deps.tr.t(caller.lang, 'rule.exists', { field, target: target.decl.label[caller.lang] }),
            });
          }
        }
        if (f.type === 'lines' && Array.isArray(v)) {
          for (let i = 0; i < v.length; i++) await visit((f as FieldDecl).fields ?? [], v[i] as Record<string, unknown>, `${base}/${f.name}/${i}`);
        }
      }
    };
    await visit(fields, doc, '');
    if (problems.length) throw validationError(problems);
    return found;
  }

  /** The documents this document's reference fields name, for rules that read `ref` outside a write that checked them. */
  private async loadRefs(doc: Record<string, unknown>, caller: Caller): Promise<Refs> {
    const found: Refs = new Map();
    for (const f of this.decl.fields) {
      const v = doc[f.name];
      if (f.type !== 'reference' || typeof v !== 'string') continue;
      const target = this.deps.resolve(f.to!);
      const row = await target.deps.table.get(caller.company.id, v);
      if (row) found.set(f.name, target.asRef(row));
    }
    return found;
  }

  /**
   * What the hooks computed must stay within the declared bounds (money kept exactly, numbers
   * finite, text both databases store). Answers the document as the JSON text to store.
   */
  private stored(doc: Record<string, unknown>, caller: Caller): string {
    const v = this.c.stored;
    const json = JSON.stringify(doc);
    // What a hook computed is held to what a client may send: its bounds, and text both databases store.
    const details = v(doc) ? [] : ajvDetails(v.errors ?? [], 'body', caller.lang, this.deps.tr);
    // JSON.stringify writes U+0000 and lone surrogates as escapes: only then is the walk worth it.
    if (UNSTORABLE_ESCAPE.test(json)) details.push(...unstorableDetails(doc, 'body', caller.lang, this.deps.tr));
    if (details.length) throw validationError(details.map((d) => ({ ...d, computed: true })));
    return json;
  }

  private ruleScope(caller: Caller): RuleScope {
    return { digits: digitsOf(caller), today: isoDay(this.deps.clock.now()), lang: caller.lang, tr: this.deps.tr };
  }

  /**
   * On create, the defaults of the fields the client left out; then the computed fields (of each
   * line, then of the document), then the validations: every problem at once. `refs`: the
   * documents the reference fields name, when the rules read `ref`.
   */
  private applyRules(doc: Record<string, unknown>, caller: Caller, earlier: Record<string, unknown>[] = [], refs?: Refs, defaults?: 'create' | ReadonlySet<string>): void {
    const rules = this.rules;
    if (!rules) {
      if (earlier.length) throw validationError(earlier);
      return;
    }
    const s = this.ruleScope(caller);
    const a = celActivation(rules, this.decl, doc, s, refs);
    if (defaults && rules.defaults.length) applyDefaults(rules, doc, a, s, defaults === 'create' ? undefined : defaults);
    const problems = [...earlier, ...computeInto(rules, doc, a, s), ...brokenRules(rules, this.decl, a, s)];
    if (problems.length) throw validationError(problems);
  }

  /** Whether a source's condition holds of a document: a test on a field, or a rule. */
  private when(c: WhenDecl, doc: Record<string, unknown>, caller: Caller | undefined): boolean {
    if (!('rule' in c)) return holds(c, doc);
    const index = this.deps.topics.filter((t) => t.source.when && 'rule' in t.source.when).findIndex((t) => t.source.when === c);
    // Money in the company currency's minor units (a write without a caller is the host's own, in SAR's 2 digits).
    return conditionHolds(this.rules!, index, this.decl, doc, { digits: caller ? digitsOf(caller) : 2, today: isoDay(this.deps.clock.now()) });
  }

  /** An update (or delete) of a document in a locked state, or of a field locked in it, is refused. */
  private checkLocks(previous: Doc, patch: Record<string, unknown> | undefined, caller: Caller): void {
    const state = previous.state;
    if (state === undefined) return;
    if (this.decl.lockedIn?.includes(state)) {
      throw new DiwanError('CONFLICT', [{ reason: 'locked', state }], { reason: this.deps.tr.t(caller.lang, 'reason.locked', { state }) });
    }
    if (!patch) return;
    for (const f of this.decl.fields) {
      if (!f.lockedIn?.includes(state) || !(f.name in patch)) continue;
      if (JSON.stringify(patch[f.name]) === JSON.stringify(previous[f.name])) continue;
      throw new DiwanError('CONFLICT', [{ reason: 'locked', state, field: f.name, pointer: `/${f.name}` }], {
        reason: this.deps.tr.t(caller.lang, 'reason.fieldLocked', { field: f.name, state }),
      });
    }
  }

  /** Emits the events whose source this write is. */
  private async emit(w: Work, on: 'create' | 'update' | 'delete' | 'transition' | 'derived', full: Doc, fullPrevious?: Doc, transition?: string, caller?: Caller): Promise<void> {
    const doc = this.redact(full);
    const previous = this.redact(fullPrevious);
    for (const t of this.deps.topics) {
      const s = t.source;
      if (s.on === on && (on !== 'transition' || s.transition === transition)) {
        if (!s.when || this.when(s.when, doc, caller)) await w.emit(t.topic, on === 'transition' ? { ...doc, previous: { state: previous?.state ?? null } } : doc);
      } else if (s.on === 'change' && previous && (on === 'update' || on === 'transition' || on === 'derived')) {
        const field = s.field!;
        const before = previous[field] ?? null;
        const after = doc[field] ?? null;
        if (JSON.stringify(before) === JSON.stringify(after)) continue;
        // With a condition, the event marks the moment it becomes true.
        if (s.when && (!this.when(s.when, doc, caller) || this.when(s.when, previous, caller))) continue;
        await w.emit(t.topic, { ...doc, previous: { [field]: before } });
      }
    }
  }

  /**
   * The one way a document changes: its row (`next`; null deletes `previous`), the audit entry
   * and the events whose source the change is, all in the caller's unit of work. `action` is
   * `create`, `update`, `delete` or a transition's name.
   */
  private async write(w: Work, action: string, next: DocRow | null, previous?: Doc, caller?: Caller): Promise<Doc> {
    const companyId = w.scope.companyId;
    if (!next) await this.deps.table.remove(companyId, previous!.id);
    else if (previous) await this.deps.table.update(companyId, next);
    else await this.deps.table.insert(companyId, next);
    const doc = next ? this.toDoc(next) : previous!;
    await w.audit({ action, resource: this.resource, resourceId: doc.id, before: previous && this.redact(previous), after: next ? this.redact(doc) : undefined });
    if (action === 'create' || action === 'update' || action === 'delete') await this.emit(w, action, doc, action === 'update' ? previous : undefined, undefined, caller);
    else await this.emit(w, 'transition', doc, previous, action, caller);
    // The totals of the documents this one counts in follow, in the same unit of work.
    if (caller && this.deps.aggregatedBy?.length) await this.followAggregates(w, caller, previous, next ? doc : undefined);
    return doc;
  }

  /**
   * Moves the aggregates over this type of the parents a write touched (each parent once, in id
   * order: concurrent writes lock them in the same order). Answers nothing when no parent moves.
   */
  private followAggregates(w: Work, caller: Caller, before: Doc | undefined, after: Doc | undefined): Promise<void> | undefined {
    const moves = aggregateDeltas(this.deps.aggregatedBy!, before, after, digitsOf(caller));
    const distinct = this.countsDistinct ? distinctMoves(this.deps.aggregatedBy!, before, after) : [];
    if (!distinct.length) {
      if (!moves.length) return undefined;
      // One parent, nearly every write: its refresh's own promise, no other made (each pays the unit of work's async hooks).
      if (moves.length === 1) return this.parentType(moves[0].parentType).refreshAggregates(w, caller, moves[0].parent, moves[0].deltas);
    }
    return this.refreshParents(w, caller, moves, distinct, (after ?? before)!.id);
  }

  /** Refreshes each parent moved, in lock order; `self` the child, `distinct` the values it moves in distinct counts. */
  private async refreshParents(w: Work, caller: Caller, moves: ParentMove[], distinct: DistinctMove[], self: string): Promise<void> {
    // A value that may move a distinct count locks its parent too, even should nothing else move there.
    for (const m of distinct) if (!moves.some((x) => x.parentType === m.parentType && x.parent === m.parent)) moves.push({ parentType: m.parentType, parent: m.parent, deltas: new Map() });
    // Whether another child counted in the parent has the value: asked with the parent locked.
    const othersHave = (m: DistinctMove) =>
      this.deps.table.findOther(caller.company.id, [[m.a.field.aggregate.via, m.parent], [m.a.field.aggregate.field!, m.value]], self, statesNotCounted(m.a, this.decl)).then((id) => id !== undefined);
    for (const p of inLockOrder(moves)) {
      const mine = distinct.filter((m) => m.parentType === p.parentType && m.parent === p.parent);
      await this.parentType(p.parentType).refreshAggregates(w, caller, p.parent, p.deltas, mine, othersHave);
    }
  }

  /** Whether an aggregate over this type counts distinct values (those ask the other children). */
  private get countsDistinct(): boolean {
    return (this.distinctCounts ??= this.deps.aggregatedBy!.some((a) => a.field.aggregate.op === 'countDistinct'));
  }

  private distinctCounts?: boolean;

  /** A type whose aggregates count this one, resolved once (one of the app's own types). */
  private parentType(name: string): DocType {
    let dt = this.parentTypes.get(name);
    if (!dt) this.parentTypes.set(name, (dt = this.deps.resolve(name)));
    return dt;
  }

  private parentTypes = new Map<string, DocType>();

  /**
   * A child's write moved some of this document's aggregates, on the row locked to the commit:
   * its computed fields, validations and bounds follow, and the `change` topics of what moved. A
   * parent whose state locks it (or the aggregate) refuses the child's write with CONFLICT naming
   * it; a parent rule the new totals break refuses it too.
   */
  async refreshAggregates(w: Work, caller: Caller, id: string, deltas: Deltas, distinct: DistinctMove[] = [], othersHave?: (m: DistinctMove) => Promise<boolean>): Promise<void> {
    const row = await this.deps.table.getLocked(caller.company.id, id);
    if (!row) return;
    // A value moves a distinct count only when no other child counted here has it.
    for (const m of distinct) {
      if (await othersHave!(m)) continue;
      const v = ((deltas.get(m.field) as bigint | undefined) ?? 0n) + m.by;
      if (v === 0n) deltas.delete(m.field);
      else deltas.set(m.field, v);
    }
    if (!deltas.size) return;
    // Parsed once: `doc` is the body the totals move in; `previous`, the document as it was, is
    // made only for what reads it (`change` topics, the aggregates this type itself counts in).
    const doc = JSON.parse(row.data) as Record<string, unknown>;
    const previous = this.watchesChanges || this.deps.aggregatedBy?.length ? this.toDoc(row, { ...doc }) : undefined;
    const label = this.decl.label[caller.lang];
    const state = row.state ?? undefined;
    if (state !== undefined && this.lockedFor(state, deltas)) {
      throw new DiwanError('CONFLICT', [{ reason: 'parentLocked', resource: this.resource, id, state }], {
        reason: this.deps.tr.t(caller.lang, 'reason.parentLocked', { parent: label, id, state }),
      });
    }
    const digits = digitsOf(caller);
    const kept = this.aggregateFacts;
    let inBounds = true;
    let moved = 0;
    for (const [name, delta] of deltas) {
      const k = kept.get(name)!;
      const v = (doc[name] = addToAggregate(k.field, doc[name], delta, digits));
      inBounds &&= Number.isFinite(v) && v >= k.minimum && v <= k.maximum;
      moved += k.bit;
    }
    let data: string;
    try {
      const rerun = this.rulesReadAggregates(deltas, moved);
      if (rerun) this.applyRules(doc, caller, [], this.rules!.usesRef ? await this.loadRefs(doc, caller) : undefined);
      // Only totals moved, each within its field's range: the rest was checked when it was
      // stored, so the whole body need not be checked again.
      data = rerun || !inBounds ? this.stored(doc, caller) : JSON.stringify(doc);
    } catch (e) {
      if (!(e instanceof DiwanError) || e.code !== 'VALIDATION_ERROR') throw e;
      const broken = e.details.map((d) => String(d.message)).join('; ');
      throw new DiwanError('CONFLICT', [{ reason: 'parentRule', resource: this.resource, id, problems: e.details }], {
        reason: this.deps.tr.t(caller.lang, 'reason.parentRule', { parent: label, id, problems: broken }),
      });
    }
    // A derived value, not a person's change: the row and the events that watch a field it moves
    // (a `change` topic, with its `when`); no audit entry, no update event, no hooks. The child's
    // write, audited and evented, says what moved it.
    const updatedAt = isoNow(this.deps.clock.now());
    await this.deps.table.updateData(caller.company.id, id, data, updatedAt);
    if (!previous) return;
    const after: Doc = { ...previous, ...doc, updatedAt };
    if (this.watchesChanges) await this.emit(w, 'derived', after, previous, undefined, caller);
    if (this.deps.aggregatedBy?.length) await this.followAggregates(w, caller, previous, after);
  }

  /** Whether the document's state locks it, or one of the aggregates that move. */
  private lockedFor(state: string, deltas: Deltas): boolean {
    if (this.decl.lockedIn?.includes(state)) return true;
    for (const name of deltas.keys()) if (this.aggregateFacts.get(name)!.field.lockedIn?.includes(state)) return true;
    return false;
  }

  /**
   * Each aggregate field by name, with its bounds and its bit in a set of them: what a child's
   * write looks up per total it moves, made once rather than searched for in the fields.
   */
  private get aggregateFacts(): Map<string, { field: FieldDecl; minimum: number; maximum: number; bit: number }> {
    // Up to 53 aggregates a set of them is a safe integer; beyond (never seen), NaN: not cached.
    return (this.factsOfAggregates ??= new Map(this.aggregates.map((f, i) => [f.name, { field: f, ...numericBounds(f), bit: i < 53 ? 2 ** i : NaN }])));
  }

  private factsOfAggregates?: Map<string, { field: FieldDecl; minimum: number; maximum: number; bit: number }>;

  /** Whether a topic of the type watches a field's change (the only events a derived write can fire). */
  private get watchesChanges(): boolean {
    return (this.changeTopics ??= this.deps.topics.some((t) => t.source.on === 'change'));
  }

  private changeTopics?: boolean;

  /**
   * Whether the type's rules read the aggregates a child's write moves, `moved` their set (the
   * sum of their bits): most read none, or only the same few, so it is asked once per set.
   */
  private rulesReadAggregates(deltas: Deltas, moved: number): boolean {
    if (!this.rules) return false;
    let r = this.readsAggregates.get(moved);
    if (r === undefined) {
      r = rulesRead(this.rules, deltas.keys());
      if (Number.isSafeInteger(moved)) this.readsAggregates.set(moved, r);
    }
    return r;
  }

  private readsAggregates = new Map<number, boolean>();

  async create(caller: Caller, data: Record<string, unknown>, opts: { validated?: boolean } = {}): Promise<Doc> {
    const body = opts.validated ? structuredClone(data) : check<Record<string, unknown>>(this.c.write, structuredClone(data), 'body', caller.lang, this.deps.tr);
    return this.deps.uow.run(this.scope(caller), async (w) => {
      const refs = await this.checkReferences(body, caller);
      await this.hook('beforeCreate', caller, body);
      // Aggregates start at nothing: no document can count in one not yet created.
      for (const f of this.aggregates) body[f.name] = 0;
      this.applyRules(body, caller, [], refs, 'create');
      if (this.decl.naming && this.decl.naming.on === undefined) await this.assignName(body, caller);
      await this.checkUnique(body, caller, this.decl.initialState);
      const data = this.stored(body, caller);
      const ms = this.deps.clock.now();
      const now = isoNow(ms);
      const row: DocRow = { id: newSortableId(this.decl.idPrefix, ms), state: this.decl.initialState ?? null, data, created_at: now, updated_at: now, state_changed_at: now };
      const doc = await this.write(w, 'create', row, undefined, caller);
      await this.runEffects(this.effects?.create, caller, doc, {}, doc.state ?? '');
      await this.hook('afterCreate', caller, doc);
      return doc;
    });
  }

  async update(caller: Caller, id: string, patch: Record<string, unknown>, opts: { validated?: boolean } = {}): Promise<Doc> {
    if (!opts.validated) check(this.c.patch, patch, 'body', caller.lang, this.deps.tr);
    return this.deps.uow.run(this.scope(caller), async (w) => {
      const { doc: previous, row } = await this.mustGet(caller.company.id, id);
      this.checkLocks(previous, patch, caller);
      const current = bodyOf(previous);
      // Read-only fields (top level and in lines) are recomputed by hooks and rules from what the client may write.
      for (const f of this.decl.fields) {
        if (isReadOnly(f)) delete current[f.name];
        else if (f.type === 'lines' && Array.isArray(current[f.name])) {
          const readOnly = new Set((f.fields ?? []).filter((lf) => isReadOnly(lf)).map((lf) => lf.name));
          current[f.name] = (current[f.name] as Record<string, unknown>[]).map((line) => Object.fromEntries(Object.entries(line).filter(([k]) => !readOnly.has(k))));
        }
      }
      const merged = check<Record<string, unknown>>(this.c.write, { ...current, ...structuredClone(patch) }, 'body', caller.lang, this.deps.tr);
      this.keepReadOnly(merged, previous);
      return this.applyUpdate(w, caller, row, previous, merged, patch);
    });
  }

  /**
   * An update once `merged` holds the new values (`patch` what was sent): references, hooks, the
   * defaults what changed proposes again, rules and uniqueness, then the one write.
   */
  private async applyUpdate(w: Work, caller: Caller, row: DocRow, previous: Doc, merged: Record<string, unknown>, patch: Record<string, unknown>): Promise<Doc> {
    const refs = await this.checkReferences(merged, caller);
    await this.hook('beforeUpdate', caller, merged, previous);
    this.keepAggregates(merged, previous);
    const again = this.rules?.defaults.length ? defaultsToProposeAgain(this.rules, patch, previous, merged) : undefined;
    this.applyRules(merged, caller, [], refs, again);
    await this.checkUnique(merged, caller, previous.state, row.id);
    const next: DocRow = { ...row, data: this.stored(merged, caller), updated_at: isoNow(this.deps.clock.now()) };
    const doc = await this.write(w, 'update', next, previous, caller);
    await this.hook('afterUpdate', caller, doc, previous);
    return doc;
  }

  /**
   * The app's `beforeTransition` hook, before the transition's guard and rules, on a copy of the
   * document it may change as `beforeUpdate` may (a read-only field, say): answers the body to
   * store, checked as any write's is. Aggregates stay as they were.
   */
  private async hookedTransition(caller: Caller, previous: Doc, name: string): Promise<string> {
    const doc = structuredClone(previous);
    await this.hook('beforeTransition', caller, doc, name);
    const body = bodyOf(doc);
    this.keepAggregates(body, previous);
    return this.stored(body, caller);
  }

  /** Aggregates are kept by the writes of what they count: a write of the document itself leaves them as they were. */
  private keepAggregates(body: Record<string, unknown>, previous: Doc): void {
    for (const f of this.aggregates) if (previous[f.name] !== undefined) body[f.name] = previous[f.name];
  }

  /** The type's aggregate fields (kept by the writes of the documents they count). */
  private get aggregates(): FieldDecl[] {
    return (this.aggregateFields ??= this.decl.fields.filter((f) => f.aggregate));
  }

  private aggregateFields?: FieldDecl[];

  async transition(caller: Caller, id: string, name: string, input: Record<string, unknown> = {}, opts: { validated?: boolean } = {}): Promise<Doc> {
    const t = (this.decl.transitions ?? []).find((x) => x.name === name);
    if (!t) throw new DiwanError('NOT_FOUND', [{ resource: this.resource, transition: name }]);
    const body = opts.validated ? input : check<Record<string, unknown>>(this.c.transitions.get(name)!, structuredClone(input), 'body', caller.lang, this.deps.tr);
    // Roles narrow the permission: a person or key acting below every listed role may not run it.
    const role = caller.principal?.role;
    if (t.roles && role && !t.roles.some((r) => roleAtLeast(role, r))) {
      throw new DiwanError('FORBIDDEN', [{ reason: 'roles', transition: name, roles: t.roles, role }]);
    }
    return this.deps.uow.run(this.scope(caller), async (w) => {
      const { doc: previous, row } = await this.mustGet(caller.company.id, id);
      if (!t.from.includes(previous.state!)) {
        throw new DiwanError('CONFLICT', [{ reason: 'transition', transition: name, state: previous.state, allowedFrom: t.from }], {
          reason: this.deps.tr.t(caller.lang, 'reason.transition', { transition: name, state: previous.state }),
        });
      }
      // An input that names a document names one of this company, as a field does.
      if (t.input) await this.checkReferences(body, caller, t.input);
      let next: DocRow = { ...row };
      if (this.deps.hooks.beforeTransition) next = { ...row, data: await this.hookedTransition(caller, previous, name) };
      const compiled = this.rules?.transitions.get(name);
      if (compiled) {
        const s = this.ruleScope(caller);
        const doc = JSON.parse(next.data) as Record<string, unknown>;
        const refs = this.rules!.usesRef ? await this.loadRefs(doc, caller) : undefined;
        const activation = transitionScope(compiled, this.decl, t.input, doc, body, s, refs);
        if (!guardHolds(compiled, activation)) {
          throw new DiwanError('CONFLICT', [{ reason: 'guard', transition: name, state: previous.state }], { reason: t.guard!.message[caller.lang] });
        }
        if (compiled.set.length) {
          // What `set` gives is then held to every rule of a write: computed fields follow it, validations and bounds apply.
          this.applyRules(doc, caller, applySet(compiled, activation, doc, s), refs);
          next = { ...next, data: this.stored(doc, caller) };
        }
      }
      if (this.decl.naming?.on === name || this.isUniqueType) {
        const doc = JSON.parse(next.data) as Record<string, unknown>;
        if (this.decl.naming?.on === name) await this.assignName(doc, caller);
        await this.checkUnique(doc, caller, t.to, id);
        next = { ...next, data: JSON.stringify(doc) };
      }
      const now = isoNow(this.deps.clock.now());
      next.state = t.to;
      next.updated_at = now;
      next.state_changed_at = now;
      const doc = await this.write(w, name, next, previous, caller);
      await this.runEffects(this.effects?.transitions.get(name), caller, doc, body, previous.state!, t.input, previous);
      await this.hook('afterTransition', caller, doc, name);
      return doc;
    });
  }

  /**
   * What a create (or, with `id`, an update) would store, by the same path (hooks, rules,
   * references, locks), then rolled back: nothing is written and no event goes out. The
   * console's forms show computed fields and broken rules with it as the person types.
   */
  dryRun(caller: Caller, data: Record<string, unknown>, id?: string): Promise<Doc> {
    return this.rolledBack(caller, () => (id === undefined ? this.create(caller, data, { validated: true }) : this.update(caller, id, data, { validated: true })));
  }

  /** What a transition would do (its guard, inputs, `set`, and what follows), rolled back: the console shows a button only when it would run. */
  dryRunTransition(caller: Caller, id: string, name: string, input: Record<string, unknown>): Promise<Doc> {
    return this.rolledBack(caller, () => this.transition(caller, id, name, input, { validated: true }));
  }

  private async rolledBack(caller: Caller, op: () => Promise<Doc>): Promise<Doc> {
    let doc: Doc | undefined;
    try {
      await this.deps.uow.run(this.scope(caller), async () => {
        doc = await op();
        throw ROLLED_BACK;
      });
    } catch (err) {
      if (err !== ROLLED_BACK) throw err;
    }
    return doc!;
  }

  // ---- effects, naming series, unique fields (core/apps/rules/effects.ts, naming.ts, unique.ts) ----

  private compiledEffects?: CompiledEffects | null;

  /** The type's effects, compiled on first use (the manifest was checked, and those on a dependency at install, so they compile). */
  private get effects(): CompiledEffects | null {
    if (this.compiledEffects === undefined) {
      if (!hasEffects(this.decl)) this.compiledEffects = null;
      else {
        const { effects, problems } = this.buildEffects('');
        if (!effects) throw new Error(`${this.appId}.${this.decl.name}: effects do not compile: ${problems.map((p) => p.message).join('; ')}`);
        this.compiledEffects = effects;
      }
    }
    return this.compiledEffects;
  }

  /** Effects typed against the installed types: the app's own and (`app/type`) its dependencies', resolved as the runtime does. */
  private buildEffects(at: string) {
    const typeOf = (ref: string) => {
      if (ref === this.decl.name) return this.decl;
      try {
        return this.deps.resolve(ref).decl;
      } catch {
        return undefined;
      }
    };
    // The manifest was checked: a dependency it names is one; installed, its manifest is at hand.
    return buildEffects(this.decl, at, { typeOf, dependency: () => 'known' });
  }

  /** At install: effects on a dependency's types checked against them (`at` is the type's pointer), every problem listed. */
  checkEffects(at: string): { pointer: string; rule: string; message: string }[] {
    if (!actsOnDependency(this.decl)) return [];
    const { effects, problems } = this.buildEffects(at);
    if (effects) this.compiledEffects = effects;
    return problems;
  }

  private async runEffects(list: CompiledEffect[] | undefined, caller: Caller, doc: Doc, input: Record<string, unknown>, from: string, inputFields?: TransitionDecl['input'], before?: Doc): Promise<void> {
    if (!list?.length) return;
    await runEffects(list, {
      appId: this.appId, caller, companyId: caller.company.id, dt: this.decl, doc, before, input, inputFields, from, scope: this.ruleScope(caller),
      resolve: (type) => this.deps.resolve(type),
    });
  }

  /** The document, locked to the end of the write's transaction (what an effect acts on). */
  async getLocked(companyId: string, id: string): Promise<Doc | undefined> {
    const r = await this.deps.table.getLocked(companyId, id);
    return r && this.toDoc(r);
  }

  /**
   * An update by an effect: `patchOf` gives the fields from the document as it is once locked;
   * read-only fields may be set (not computed ones). Locks, hooks, rules, uniqueness, the audit
   * entry and the events apply as for any update.
   */
  async setFields(caller: Caller, id: string, patchOf: (current: Doc) => Record<string, unknown>): Promise<Doc> {
    return this.deps.uow.run(this.scope(caller), async (w) => {
      const row = await this.deps.table.getLocked(caller.company.id, id);
      if (!row) throw new DiwanError('NOT_FOUND', [{ resource: this.resource, id }]);
      const previous = this.toDoc(row);
      const patch = patchOf(previous);
      this.checkLocks(previous, patch, caller);
      const merged: Record<string, unknown> = { ...bodyOf(previous), ...patch };
      return this.applyUpdate(w, caller, row, previous, merged, patch);
    });
  }

  /**
   * `DocHandle.set`: the owning app's code sets fields no client may send (read-only, not computed
   * nor aggregates), through an update's locks, hooks, rules, audit entry and events. Another
   * app, or a field it may not set, is the calling app's fault (APP_ERROR).
   */
  async setKept(caller: Caller, id: string, fields: Record<string, unknown>, appId: string): Promise<Doc> {
    const wrong = Object.keys(fields).filter((k) => {
      const f = this.decl.fields.find((x) => x.name === k);
      return !f || f.compute !== undefined || !!f.aggregate;
    });
    if (appId !== this.appId || wrong.length) {
      const reason = appId !== this.appId ? `${this.resource} belongs to ${this.appId}: an app sets only its own documents' fields` : `${wrong.join(', ')}: not fields of ${this.decl.name} an app may set (computed fields and aggregates follow their rules)`;
      throw new DiwanError('APP_ERROR', [{ app: appId, rule: 'set', resource: this.resource, fields: wrong }], { app: appId, reason });
    }
    return this.setFields(caller, id, () => fields);
  }

  /** Read-only fields an update leaves out keep their values (a series' name, what effects set); hooks and rules may still recompute them. */
  private keepReadOnly(merged: Record<string, unknown>, previous: Doc): void {
    for (const f of this.decl.fields) {
      if (f.readOnly && f.compute === undefined && !(f.name in merged) && previous[f.name] !== undefined) merged[f.name] = previous[f.name];
    }
  }

  /** Gives the series' field its name (once: a document already named keeps it). */
  private async assignName(doc: Record<string, unknown>, caller: Caller): Promise<void> {
    const n = this.decl.naming!;
    if (typeof doc[n.field] === 'string' && doc[n.field] !== '') return;
    const date = namingDate(n, doc, isoDay(this.deps.clock.now()));
    doc[n.field] = formatName(n, date, await this.deps.sequence(caller.company.id, seriesKey(this.decl.name, n, date)));
  }

  private get isUniqueType(): boolean {
    return (this.uniqueFields ??= this.decl.fields.filter((f) => f.unique || f.uniqueWithin !== undefined)).length > 0;
  }

  private uniqueFields?: FieldDecl[];

  /**
   * Unique fields keep their rule: under a lock named for the value (held to the commit, so a
   * concurrent write of the same value waits and then sees this one), another document with the
   * value is a CONFLICT naming the field and that document.
   */
  private async checkUnique(doc: Record<string, unknown>, caller: Caller, state: string | undefined, exceptId?: string): Promise<void> {
    if (!this.isUniqueType) return;
    const companyId = caller.company.id;
    for (const f of this.uniqueFields!) {
      const value = doc[f.name];
      if (value === undefined || value === null || value === '' || typeof value === 'object') continue;
      // In a state that frees the value (cancelled), the document holds none.
      if (state !== undefined && f.uniqueExceptIn?.includes(state)) continue;
      // A value the rule does not name repeats freely (only Hajj leave is once per employee).
      if (f.uniqueValues !== undefined && !f.uniqueValues.includes(value as string)) continue;
      const equals: [string, string | number | boolean][] = [[f.name, value as string | number | boolean]];
      const parent = f.uniqueWithin !== undefined ? doc[f.uniqueWithin] : undefined;
      if (f.uniqueWithin !== undefined) {
        if (typeof parent !== 'string') continue;
        equals.push([f.uniqueWithin, parent]);
      }
      await this.deps.lock(uniqueLockName(this.deps.table.table, companyId, f.name, parent, value));
      const other = await this.deps.table.findOther(companyId, equals, exceptId, f.uniqueExceptIn);
      if (!other) continue;
      const reason = f.uniqueWithin !== undefined
        ? this.deps.tr.t(caller.lang, 'reason.uniqueWithin', { field: f.name, value: String(value), other, within: f.uniqueWithin, parent: String(parent) })
        : this.deps.tr.t(caller.lang, 'reason.unique', { field: f.name, value: String(value), other });
      throw new DiwanError('CONFLICT', [{ reason: 'unique', field: f.name, pointer: `/${f.name}`, value, other, ...(f.uniqueWithin !== undefined ? { within: f.uniqueWithin, parent } : {}) }], { reason });
    }
  }

  async remove(caller: Caller, id: string): Promise<Doc> {
    return this.deps.uow.run(this.scope(caller), async (w) => {
      const { doc: previous } = await this.mustGet(caller.company.id, id);
      this.checkLocks(previous, undefined, caller);
      await this.hook('beforeDelete', caller, previous);
      await this.refuseIfReferenced(caller, id);
      await this.write(w, 'delete', null, previous, caller);
      // What its creation and transitions did to related documents is undone in the same unit of work.
      await this.runEffects(this.effects?.delete, caller, previous, {}, previous.state ?? '', undefined, previous);
      await this.hook('afterDelete', caller, previous);
      return previous;
    });
  }

  /**
   * A document other documents name is not deleted from under them (Frappe's "linked with"):
   * CONFLICT naming one referrer of each kind, so that those are deleted or changed first.
   */
  private async refuseIfReferenced(caller: Caller, id: string): Promise<void> {
    const details: Record<string, unknown>[] = [];
    for (const r of this.deps.referencedBy?.() ?? []) {
      const other = await r.dt.deps.table.findReferencing(caller.company.id, r.field, id, r.lines, r.dt === this ? id : '');
      if (other) details.push({ reason: 'referenced', resource: r.dt.resource, id: other, field: r.lines ? `${r.lines}[].${r.field}` : r.field });
    }
    if (!details.length) return;
    const which = details.map((d) => `${d.resource} ${d.id} (${d.field})`).join(', ');
    throw new DiwanError('CONFLICT', details, { reason: this.deps.tr.t(caller.lang, 'reason.referenced', { label: this.decl.label[caller.lang], which }) });
  }

  /** Drops a company's documents of this type (purge after uninstall). */
  purge(companyId: string): Promise<number> {
    return this.deps.table.purgeCompany(companyId);
  }

  // ---- schedules -------------------------------------------------------------------------

  /**
   * Fires what this type's schedules find due at `nowMs`, across every company that has the
   * app enabled, each (document, schedule, date value) once: the firing is claimed in the
   * database in the transaction that emits the event. Returns how many fired.
   */
  async fireDue(
    nowMs: number,
    companyOf: (companyId: string) => Promise<Company | undefined>,
    onError: (err: unknown, firing: { companyId: string; docId: string; schedule: string }) => void = () => {},
    limit = 200,
  ): Promise<number> {
    let fired = 0;
    for (const sc of this.decl.schedules ?? []) {
      const topics = this.deps.topics.filter((t) => t.source.on === 'schedule' && t.source.schedule === sc.name);
      if (!topics.length) continue;
      const system = ['createdAt', 'updatedAt', 'stateChangedAt'].includes(sc.date);
      const cutoffMs = nowMs - (sc.offsetDays ?? 0) * 86_400_000;
      // A date field is due on the day after it plus the offset; a time when that instant has passed.
      const cutoff = system ? isoNow(cutoffMs) : isoNow(cutoffMs).slice(0, 10);
      // Batches in creation order, each after the last: firings that keep failing (left due) never
      // hide the ones behind them. At most MAX_BATCHES a tick; what is left waits for the next.
      let rows: Awaited<ReturnType<DocumentTable['due']>> = [];
      for (let batch = 0; batch < MAX_BATCHES && (batch === 0 || rows.length === limit); batch++) {
        const afterSeq = batch === 0 ? undefined : Number(rows[rows.length - 1].seq);
        rows = await this.deps.table.due(sc.name, { appId: this.appId, date: sc.date, states: sc.states, when: sc.when, cutoff, limit, afterSeq });
        fired += await this.fireRows(rows, sc.name, topics, nowMs, companyOf, onError);
      }
    }
    return fired;
  }

  /** Fires each due row in its own transaction (claimed there); answers how many fired. */
  private async fireRows(
    rows: (DocRow & { company_id: string; occurrence: string })[],
    schedule: string,
    topics: { topic: string }[],
    nowMs: number,
    companyOf: (companyId: string) => Promise<Company | undefined>,
    onError: (err: unknown, firing: { companyId: string; docId: string; schedule: string }) => void,
  ): Promise<number> {
    let fired = 0;
    for (const r of rows) {
      // One firing that fails (rolled back, so not claimed: tried again next tick) does not stop the others.
      try {
        const company = await companyOf(r.company_id);
        if (!company) continue;
        const caller: Caller = { company, actor: { type: 'system', id: 'scheduler' }, lang: 'en', requestId: null };
        const done = await this.deps.uow.run(this.scope(caller), async (w) => {
          if (!(await this.deps.table.claim(r.company_id, r.id, schedule, String(r.occurrence), isoNow(nowMs)))) return false;
          const doc = this.toDoc(r);
          for (const t of topics) await w.emit(t.topic, this.redact(doc));
          return true;
        });
        if (done) fired++;
      } catch (err) {
        onError(err, { companyId: r.company_id, docId: r.id, schedule });
      }
    }
    return fired;
  }
}
