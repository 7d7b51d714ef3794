// Services bound to one app and one caller's company (the Backstage `forPlugin` shape): an app
// reaches its data, strings, audit and events only through this object, never the host.
import type { AppContext, CompanyInfo, Doc, DocHandle, EnqueueOptions } from '../../sdk/define-app.ts';
import type { Company } from '../tenancy/companies.ts';
import type { UnitOfWork } from '../audit/unit-of-work.ts';
import type { Db } from '../storage/db.ts';
import type { Translator } from '../kernel/i18n/i18n.ts';
import type { Clock } from '../kernel/clock.ts';
import type { Logger } from '../kernel/logger.ts';
import { isoNow } from '../kernel/ids.ts';
import { SecretBoxError } from '../kernel/secret-box.ts';
import { DiwanError } from '../kernel/errors/diwan-error.ts';
import type { PermissionRegistry } from '../identity/permissions.ts';
import type { Caller, DocType } from './doc-type.ts';
import type { AppSecrets } from './secrets.ts';

export interface ContextDeps {
  appId: string;
  db: Db;
  uow: UnitOfWork;
  tr: Translator;
  permissions: PermissionRegistry;
  clock: Clock;
  log: Logger;
  /** The app's settings in a company (defaults overlaid with what the company set). */
  settings(companyId: string): Promise<Record<string, unknown>>;
  /** `type` (own) or `app/type` (a dependency) → the type, refusing anything else. */
  docType(ref: string): DocType;
  /** Refuses (APP_ERROR) a topic the app may not emit itself, or data that breaks its payload schema. */
  checkEmit(topic: string, data: unknown): void;
  /** Refuses (APP_ERROR) an audit action the catalogue has no audit topic for. */
  checkAudit(resource: string, action: string): void;
  /** Enqueues one of the app's jobs (refusing a name it declares no handler for), in the caller's transaction. */
  enqueue(caller: Caller, name: string, payload: unknown, opts?: EnqueueOptions): Promise<{ id: string; created: boolean }>;
  /** Retries the app's failed job with a key (see the SDK's JobsHandle). */
  retryJob: (caller: Caller, key: string) => ReturnType<AppContext['jobs']['retry']>;
  /** The next number of a company's counter (storage's gap-free sequences); `key` already names the app. */
  nextNumber(companyId: string, key: string): Promise<number>;
  /** Apps' sealed secrets (bound below to this app and the caller's company). */
  secrets: AppSecrets;
}

/** A counter's key in storage: the app's id first, so one app cannot reach another's counters. */
export const sequenceKey = (appId: string, key: string): string => `${appId}/${key}`;

/** `appId`: the app whose code holds the handle (it may `set` only its own types' fields). */
export function docHandle(dt: DocType, caller: Caller, appId: string): DocHandle {
  const companyId = caller.company.id;
  return {
    get: (id) => dt.get(companyId, id),
    list: (q) => dt.list(companyId, q),
    async all(q = {}) {
      const out: Doc[] = [];
      for (let page = 1; ; page++) {
        const r = await dt.list(companyId, { ...q, page, pageSize: 100 });
        out.push(...r.data);
        if (page * r.pageSize >= r.total) return out;
      }
    },
    create: (data) => dt.create(caller, data),
    update: (id, patch) => dt.update(caller, id, patch),
    set: (id, fields) => dt.setKept(caller, id, fields, appId),
    transition: (id, name, input) => dt.transition(caller, id, name, input),
    remove: (id) => dt.remove(caller, id),
  };
}

/** What an app sees of the company: its id, name, currency and seller's profile (copies: an app cannot change the cached company). */
const companyInfo = (c: Company): CompanyInfo => ({
  id: c.id, name: c.name, currency: c.currency, vatRate: c.vatRate,
  ...(c.legalName ? { legalName: { ...c.legalName } } : {}),
  ...(c.vatNumber ? { vatNumber: c.vatNumber } : {}),
  ...(c.crNumber ? { crNumber: c.crNumber } : {}),
  ...(c.address ? { address: { ...c.address } } : {}),
});

/**
 * A class rather than an object literal: a hook runs with a fresh context on every write, and
 * methods on the prototype cost nothing per write where a literal made ~20 closures each time.
 * The parts an app uses less often are made when first read.
 */
class BoundContext implements AppContext {
  readonly appId: string;
  readonly company: AppContext['company'];
  readonly actor: AppContext['actor'];
  readonly lang: AppContext['lang'];
  readonly requestId: string | null;

  constructor(
    private readonly deps: ContextDeps,
    private readonly caller: Caller,
  ) {
    this.appId = deps.appId;
    this.company = companyInfo(caller.company);
    this.actor = caller.actor;
    this.lang = caller.lang;
    this.requestId = caller.requestId;
  }

  private get scope() {
    return { companyId: this.company.id, actor: this.actor, appId: this.appId, requestId: this.requestId };
  }

  t(key: string, params?: Record<string, unknown>): string {
    return this.deps.tr.t(this.lang, key, params, `app.${this.appId}`);
  }

  get clock(): AppContext['clock'] {
    const { clock } = this.deps;
    return { now: () => clock.now(), iso: () => isoNow(clock.now()), today: () => isoNow(clock.now()).slice(0, 10) };
  }

  get log(): AppContext['log'] {
    const where = { app: this.appId, company: this.company.id, requestId: this.requestId };
    const log = (level: 'info' | 'warn' | 'error') => (msg: string, data?: Record<string, unknown>) => this.deps.log[level](data ? { ...data, ...where } : where, msg);
    return { info: log('info'), warn: log('warn'), error: log('error') };
  }

  get settings(): AppContext['settings'] {
    return { get: <T,>() => this.deps.settings(this.company.id) as Promise<T> };
  }

  docs(type: string): DocHandle {
    return docHandle(this.deps.docType(type), this.caller, this.appId);
  }

  get audit(): AppContext['audit'] {
    return {
      record: async (e) => {
        this.deps.checkAudit(e.resource, e.action);
        await this.deps.uow.run(this.scope, (w) => w.audit(e));
      },
    };
  }

  get events(): AppContext['events'] {
    return {
      emit: async (topic, data) => {
        this.deps.checkEmit(topic, data);
        await this.deps.uow.run(this.scope, (w) => w.emit(topic, data));
      },
    };
  }

  can(permission: string): boolean {
    // The operator's CLI and the host itself act with every permission.
    return this.caller.principal ? this.deps.permissions.allows(this.caller.principal, permission) : true;
  }

  transaction<T>(fn: () => Promise<T>): Promise<T> {
    return this.deps.db.transaction(fn);
  }

  get jobs(): AppContext['jobs'] {
    return { enqueue: (name, payload, opts) => this.deps.enqueue(this.caller, name, payload, opts), retry: (key) => this.deps.retryJob(this.caller, key) };
  }

  get secrets(): AppContext['secrets'] {
    const { secrets } = this.deps;
    const [companyId, appId] = [this.company.id, this.appId];
    return {
      // A value the host's keys no longer open (its key file lost or replaced) is the operator's
      // to mend, not the app's fault: a named CONFLICT rather than APP_ERROR.
      get: (name) =>
        secrets.get(companyId, appId, name).catch((err: unknown) => {
          if (!(err instanceof SecretBoxError) || (err.reason !== 'unknown_key' && err.reason !== 'tampered')) throw err;
          throw new DiwanError('CONFLICT', [{ reason: 'secretUnreadable', app: appId, secret: name }], { reason: this.deps.tr.t(this.lang, 'reason.secretUnreadable', { app: appId }) });
        }),
      set: (name, value) => secrets.set(companyId, appId, name, value),
      delete: (name) => secrets.delete(companyId, appId, name),
    };
  }

  get sequences(): AppContext['sequences'] {
    return { next: (key) => this.deps.nextNumber(this.company.id, sequenceKey(this.appId, key)) };
  }
}

export function appContext(deps: ContextDeps, caller: Caller): AppContext {
  return new BoundContext(deps, caller);
}
