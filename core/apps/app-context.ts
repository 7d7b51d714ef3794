// Services bound to one app and one caller's company (the Backstage `forPlugin` shape): an app
// reaches its data, strings, audit and events only through this object, never the host.
import type { AppContext, CompanyInfo, DocHandle } from '../../sdk/define-app.ts';
import type { Company } from '../tenancy/companies.ts';
import type { UnitOfWork } from '../audit/unit-of-work.ts';
import type { Db } from '../storage/db.ts';
import type { Translator } from '../kernel/i18n/i18n.ts';
import type { Clock } from '../kernel/clock.ts';
import type { Logger } from '../kernel/logger.ts';
import { isoNow } from '../kernel/ids.ts';
import type { PermissionRegistry } from '../identity/permissions.ts';
import type { Caller, DocType } from './doc-type.ts';

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
  /** The next number of a company's counter (storage's gap-free sequences); `key` already names the app. */
  nextNumber(companyId: string, key: string): Promise<number>;
}

/** A counter's key in storage: the app's id first, so one app cannot reach another's counters. */
export const sequenceKey = (appId: string, key: string): string => `${appId}/${key}`;

export function docHandle(dt: DocType, caller: Caller): DocHandle {
  const companyId = caller.company.id;
  return {
    get: (id) => dt.get(companyId, id),
    list: (q) => dt.list(companyId, q),
    create: (data) => dt.create(caller, data),
    update: (id, patch) => dt.update(caller, id, patch),
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

export function appContext(deps: ContextDeps, caller: Caller): AppContext {
  const { appId, uow, tr, clock } = deps;
  const scope = { companyId: caller.company.id, actor: caller.actor, appId, requestId: caller.requestId };
  const where = { app: appId, company: caller.company.id, requestId: caller.requestId };
  const log = (level: 'info' | 'warn' | 'error') => (msg: string, data?: Record<string, unknown>) => deps.log[level](data ? { ...data, ...where } : where, msg);
  return {
    appId,
    company: companyInfo(caller.company),
    actor: caller.actor,
    lang: caller.lang,
    requestId: caller.requestId,
    t: (key, params) => tr.t(caller.lang, key, params, `app.${appId}`),
    clock: {
      now: () => clock.now(),
      iso: () => isoNow(clock.now()),
      today: () => isoNow(clock.now()).slice(0, 10),
    },
    log: { info: log('info'), warn: log('warn'), error: log('error') },
    settings: { get: <T,>() => deps.settings(caller.company.id) as Promise<T> },
    docs: (type) => docHandle(deps.docType(type), caller),
    audit: {
      record: async (e) => {
        deps.checkAudit(e.resource, e.action);
        await uow.run(scope, (w) => w.audit(e));
      },
    },
    events: {
      emit: async (topic, data) => {
        deps.checkEmit(topic, data);
        await uow.run(scope, (w) => w.emit(topic, data));
      },
    },
    // The operator's CLI and the host itself act with every permission.
    can: (permission) => (caller.principal ? deps.permissions.allows(caller.principal, permission) : true),
    transaction: (fn) => deps.db.transaction(fn),
    sequences: { next: (key) => deps.nextNumber(caller.company.id, sequenceKey(appId, key)) },
  };
}
