// What an app's server bundle default-exports: `defineApp({...})`. The host calls into it
// with services bound to the app and to the request's company; the app never reaches a
// global host object.
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';

export type Lang = 'en' | 'ar';
export type Doc = Record<string, unknown> & { id: string; state?: string; createdAt: string; updatedAt: string };

export interface ListQuery {
  page?: number;
  pageSize?: number;
  /** Equality filters over filterable fields and `state`. */
  filters?: Record<string, string | number | boolean>;
  /** `createdAt` (the default), a filterable field or `state`; `-` first for descending. */
  sort?: string;
}

export interface ListResult<T = Doc> {
  data: T[];
  total: number;
  page: number;
  pageSize: number;
}

/** A tenant-bound handle on one document type. Every method is asynchronous; writes are transactional. */
export interface DocHandle {
  get(id: string): Promise<Doc | undefined>;
  list(q?: ListQuery): Promise<ListResult>;
  /** Every document the filters match, in the order asked (read a page at a time). */
  all(q?: Pick<ListQuery, 'filters' | 'sort'>): Promise<Doc[]>;
  create(data: Record<string, unknown>): Promise<Doc>;
  update(id: string, patch: Record<string, unknown>): Promise<Doc>;
  /**
   * Sets fields of one of the app's own documents that no client may send (read-only ones,
   * never computed ones or aggregates): what the app's code keeps, such as an outside service's
   * answer. Locks, hooks, rules, the audit entry and events apply as for an update.
   */
  set(id: string, fields: Record<string, unknown>): Promise<Doc>;
  /** Runs a transition; `input` is the body it declares (validated as the route's body is). */
  transition(id: string, name: string, input?: Record<string, unknown>): Promise<Doc>;
  remove(id: string): Promise<Doc>;
}

/** A national address as ZATCA names its parts (a seller's or a buyer's); every part is optional. */
export interface Address {
  buildingNumber?: string;
  street?: string;
  district?: string;
  city?: string;
  postalCode?: string;
  /** ISO 3166-1 alpha-2 (`SA`). */
  country?: string;
}

/** The caller's company and its seller's profile (set by the Owner: `PATCH /api/v1/company`). */
export interface CompanyInfo {
  id: string;
  name: string;
  currency: string;
  legalName?: { en: string; ar: string };
  /** VAT registration number: 15 digits, the first and the last 3. */
  vatNumber?: string;
  crNumber?: string;
  address?: Address;
  /** The standard VAT rate in percent (15 unless the company set another). */
  vatRate: number;
}

export interface AppContext {
  appId: string;
  company: CompanyInfo;
  actor: { type: 'user' | 'key' | 'cli' | 'system'; id: string };
  lang: Lang;
  requestId: string | null;
  /** A string of the app's own table, in the caller's language. */
  t(key: string, params?: Record<string, unknown>): string;
  /** The host's clock (tests drive it): use it instead of `new Date()`. `today` is the UTC date. */
  clock: { now(): number; iso(): string; today(): string };
  /** A logger bound to the app, the company and the request: a message and structured data, never secrets. */
  log: {
    info(msg: string, data?: Record<string, unknown>): void;
    warn(msg: string, data?: Record<string, unknown>): void;
    error(msg: string, data?: Record<string, unknown>): void;
  };
  /** The app's settings in this company: each declared setting, the company's value or its default. */
  settings: { get<T extends Record<string, unknown> = Record<string, unknown>>(): Promise<T> };
  /** Own document types by name; a dependency's as `app-id/type`. */
  docs(type: string): DocHandle;
  audit: { record(e: { action: string; resource: string; resourceId?: string; before?: unknown; after?: unknown }): Promise<void> };
  /** Only topics of a family the app owns, validated against their declared payload. Inside a hook or `transaction`, tied to that write. */
  events: { emit(topic: string, data: unknown): Promise<void> };
  /** Whether the caller holds a permission. */
  can(permission: string): boolean;
  /** Runs `fn` in one transaction (joined with the current write when there is one). */
  transaction<T>(fn: () => Promise<T>): Promise<T>;
  /** The app's durable jobs (declared in `defineApp({ jobs })`): see `JobsHandle`. */
  jobs: JobsHandle;
  /**
   * Gap-free counters of this app in this company: `next(key)` answers 1, 2, 3… taken in the
   * current write's transaction, so a write that fails gives its number back and concurrent
   * writers never get the same one. Another app's counters are out of reach.
   */
  sequences: { next(key: string): Promise<number> };
  /**
   * Secrets of this app in this company (a private key, an API secret): sealed at rest with the
   * host's keys, never logged, never answered by the host's API; another app's or company's are
   * out of reach. `set` joins the current write's transaction when there is one.
   */
  secrets: {
    get(name: string): Promise<string | undefined>;
    set(name: string, value: string): Promise<void>;
    /** True when there was one. */
    delete(name: string): Promise<boolean>;
  };
}

export interface EnqueueOptions {
  /**
   * Idempotency: a job of this app in this company with the same key is not enqueued again;
   * the call answers the one already there (whatever its state), with `created: false`.
   */
  key?: string;
  /** Run no sooner than this many milliseconds from now (0 by default). */
  delayMs?: number;
}

/**
 * Enqueues a job for the host's workers. Inside a write (a route, a hook, `transaction`) the job
 * commits with that write or not at all; outside one it commits on its own. The payload is
 * stored as JSON (plain data: ids, not documents).
 */
export interface JobsHandle {
  enqueue(name: string, payload?: unknown, opts?: EnqueueOptions): Promise<{ id: string; created: boolean }>;
  /**
   * Puts the app's `failed` job with this key back to `pending` now, with a fresh set of attempts
   * (the earlier ones stay in its log; audited as `jobs:retry`). A job in another state is left
   * as it is (`retried: false`, its state); null: no job has this key (never enqueued, or
   * deleted after it ended).
   */
  retry(key: string): Promise<{ id: string; state: 'pending' | 'running' | 'done' | 'failed'; retried: boolean } | null>;
}

/** What a job handler receives beside its payload: the app's context in the job's company, and the attempt. */
export interface JobContext extends AppContext {
  job: {
    id: string;
    name: string;
    /** 1 for the first attempt. */
    attempt: number;
    /** After this attempt fails, the job is `failed`. */
    maxAttempts: number;
    key: string | null;
  };
  /** Aborted when the attempt's time is up (pass it to `fetch`): the attempt then fails and is retried. */
  signal: AbortSignal;
}

/**
 * A job handler. Its writes (`ctx.docs…`, `ctx.events.emit`) run in one unit of work per
 * attempt, committed together with the job's success; a throw rolls them back and the job is
 * retried along the host's ladder (with jitter) until it fails for good. Work outside the
 * database (an HTTP call) may run again after a crash: make it idempotent (a key the other side
 * recognises).
 */
export type JobHandler = (payload: any, ctx: JobContext) => void | Promise<void>;

/**
 * Hooks run inside the write's transaction. `before*` may change the document (set computed,
 * read-only fields) or throw an AppError to refuse: `beforeTransition` runs before the
 * transition's guard and rules, and what it changes is stored with the new state; `beforeDelete`
 * can only refuse. `after*` see the stored document (emit an `operation` event there).
 */
export interface DocHooks {
  beforeCreate?(doc: Record<string, unknown>, ctx: AppContext): void | Promise<void>;
  afterCreate?(doc: Doc, ctx: AppContext): void | Promise<void>;
  beforeUpdate?(doc: Record<string, unknown>, previous: Doc, ctx: AppContext): void | Promise<void>;
  afterUpdate?(doc: Doc, previous: Doc, ctx: AppContext): void | Promise<void>;
  beforeTransition?(doc: Doc, transition: string, ctx: AppContext): void | Promise<void>;
  afterTransition?(doc: Doc, transition: string, ctx: AppContext): void | Promise<void>;
  beforeDelete?(doc: Doc, ctx: AppContext): void | Promise<void>;
  afterDelete?(doc: Doc, ctx: AppContext): void | Promise<void>;
}

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

// Schemas are constrained loosely (a JSONSchema constraint on a `const` type parameter makes
// TypeScript instantiate the whole JSON Schema type and give up); FromSchema types what is given.
export interface RouteSchemas {
  params?: object;
  querystring?: object;
  body?: object;
  response: Record<number, object>;
}

type Infer<S> = [S] extends [undefined] ? undefined : object extends S ? unknown : S extends JSONSchema ? FromSchema<S> : unknown;

export interface RouteRequest<S extends RouteSchemas> {
  params: Infer<S['params']>;
  query: Infer<S['querystring']>;
  body: Infer<S['body']>;
  headers: Record<string, string | string[] | undefined>;
}

export interface RouteReply {
  status?: number;
  /** JSON (serialised by the route's response schema), or the bytes or text of a route that `produces` another media type. */
  body: unknown;
  headers?: Record<string, string>;
}

export interface AppRoute<S extends RouteSchemas = RouteSchemas> {
  method: HttpMethod;
  /** Relative to `/api/v1`, Fastify style: `/invoices/:id/remind`. */
  url: string;
  /** `resource:action`, declared in the manifest or by a document type. */
  permission: string;
  summary: string;
  description?: string;
  schema: S;
  /** Error codes the route may answer beyond the usual ones, for the OpenAPI document. */
  errors?: string[];
  /** The media type of its success answer when not JSON (`application/xml`, `application/pdf`): the handler's `body` is sent as it is. */
  produces?: string;
  /**
   * For a `GET /<resource>/:id/<name>` route that `produces` a file of a document (its PDF): the
   * document field whose presence means the file exists. The console offers the download on the
   * document's page once the document has that field (always, without it).
   */
  offeredWhen?: string;
  handler(req: RouteRequest<NoInfer<S>>, ctx: AppContext): RouteReply | Promise<RouteReply>;
}

export interface AppMigration {
  /** Stable, ordered id, e.g. `2026-11-01-backfill-terms`. */
  id: string;
  /** Runs once per company, inside the install or upgrade transaction. */
  up(ctx: AppContext): void | Promise<void>;
}

export interface AppDefinition {
  /** Must equal the manifest's id. */
  id: string;
  routes?: AppRoute<any>[];
  hooks?: Record<string, DocHooks>;
  migrations?: AppMigration[];
  /** Durable jobs by name, enqueued with `ctx.jobs.enqueue(name, payload)`. */
  jobs?: Record<string, JobHandler>;
}

export function defineApp(def: AppDefinition): AppDefinition {
  return def;
}

/** Route helper: the handler's `req` types flow from the schemas. */
export function route<const S extends RouteSchemas>(r: AppRoute<S>): AppRoute<S> {
  return r;
}
