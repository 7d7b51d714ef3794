// App routes follow the runtime: an app that loads, upgrades or leaves changes the pipeline at
// once. The runtime describes an app's routes as data with a handler (core/apps/routes-for-app.ts);
// here they become routes of the one pipeline, served like the host's own.
import type { AppRuntime } from '../apps/runtime.ts';
import type { AppRoute } from '../apps/routes-for-app.ts';
import { actorOf } from '../identity/principal.ts';
import type { Pipeline } from './pipeline.ts';
import type { Route } from './route.ts';

const toRoute = (r: AppRoute): Route => ({
  doc: r.doc,
  appId: r.appId,
  idempotent: r.idempotent,
  handler: (req) =>
    r.handle({ params: req.params, query: req.query, body: req.body, headers: req.headers, caller: { company: req.company, actor: actorOf(req.principal), lang: req.lang, requestId: req.id, principal: req.principal } }),
});

/** Serves every loaded app's routes through `pipeline`, now and as apps come and go. */
export function mountAppRoutes(runtime: AppRuntime, pipeline: Pipeline): void {
  const mounted = new Map<string, Route[]>();
  const remount = (appId: string) => {
    for (const r of mounted.get(appId) ?? []) pipeline.remove(r);
    const routes = (runtime.get(appId)?.routes ?? []).map(toRoute);
    for (const r of routes) pipeline.add(r);
    mounted.set(appId, routes);
  };
  runtime.onChange(remount);
  for (const app of runtime.list()) remount(app.manifest.id);
}
