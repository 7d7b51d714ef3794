// Services bound to one app and one caller's company (the Backstage `forPlugin` shape):
// an app reaches its data, strings, audit and events only through this object.
import type { AppContext, DocHandle } from '../../sdk/define-app.ts';
import type { Principal } from '../identity/principal.ts';
import type { HostServices } from './host-services.ts';
import type { Caller, DocType } from './doc-type.ts';

export interface ContextDeps {
  host: HostServices;
  appId: string;
  ownedPrefixes: Set<string>;
  /** `type` (own) or `app/type` (a dependency) → the compiled type, refusing anything else. */
  docType(ref: string): DocType;
}

export function docHandle(dt: DocType, caller: Caller): DocHandle {
  const companyId = caller.company.id;
  return {
    get: (id) => dt.get(companyId, id),
    list: (q) => dt.list(companyId, q),
    create: (data) => dt.create(caller, data),
    update: (id, patch) => dt.update(caller, id, patch),
    transition: (id, name) => dt.transition(caller, id, name),
    remove: (id) => dt.remove(caller, id),
  };
}

export function appContext(deps: ContextDeps, caller: Caller, principal?: Principal): AppContext {
  const { host, appId } = deps;
  const ns = `app.${appId}`;
  return {
    appId,
    company: caller.company,
    actor: caller.actor,
    lang: caller.lang,
    requestId: caller.requestId,
    t: (key, params) => host.tr.t(caller.lang, key, params, ns),
    docs: (type) => docHandle(deps.docType(type), caller),
    audit: {
      record: (e) =>
        host.audit.record({ ...e, companyId: caller.company.id, actor: caller.actor, appId, requestId: caller.requestId }),
    },
    events: {
      emit(topic, data) {
        const prefix = topic.split('.')[0];
        if (!deps.ownedPrefixes.has(prefix)) {
          throw new Error(`app ${appId} may not emit ${topic}: the ${prefix}.* family belongs to another owner`);
        }
        host.outbox.emit(caller.company.id, topic, data);
      },
    },
    // The operator's CLI and the host itself act with every permission.
    can: (permission) => (principal ? host.permissions.allows(principal, permission) : true),
    transaction: (fn) => host.storage.sqlite.transaction(fn).immediate(),
  };
}
