// App routes live in their own router (find-my-way, as in Fastify), behind one catch-all
// Fastify route: apps can then be installed, upgraded and removed while the host runs,
// which Fastify's own route table (closed after start) does not allow.
import FindMyWay from 'find-my-way';
import type { ValidateFunction } from 'ajv';
import type { HttpMethod } from '../../sdk/define-app.ts';
import type { RouteDoc } from '../openapi/route-doc.ts';

export interface MountedRoute {
  appId: string;
  doc: RouteDoc;
  validators: { params?: ValidateFunction; query?: ValidateFunction; body?: ValidateFunction };
  /** Generated create routes honour `Idempotency-Key` inside the write's transaction. */
  idempotent: boolean;
  handle(input: RouteInput): Promise<RouteOutput> | RouteOutput;
}

export interface RouteInput {
  params: Record<string, string>;
  query: Record<string, unknown>;
  body: unknown;
  headers: Record<string, string | string[] | undefined>;
}

/** `json` is already-serialised text (the fast path); otherwise `body` is serialised. */
export type RouteOutput = { status: number; body?: unknown; json?: string };

const METHODS: HttpMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

export class AppRouter {
  private fmw = FindMyWay({ caseSensitive: true, ignoreTrailingSlash: false });
  private byApp = new Map<string, MountedRoute[]>();

  mount(route: MountedRoute): void {
    const { method, url } = route.doc;
    if (this.fmw.hasRoute(method, url)) {
      const owner = this.list().find((r) => r.doc.method === method && r.doc.url === url)?.appId;
      throw new Error(`route ${method} ${url} of ${route.appId} is already served by ${owner}`);
    }
    this.fmw.on(method, url, () => {}, route);
    const list = this.byApp.get(route.appId) ?? [];
    list.push(route);
    this.byApp.set(route.appId, list);
  }

  unmountApp(appId: string): void {
    for (const r of this.byApp.get(appId) ?? []) this.fmw.off(r.doc.method, r.doc.url);
    this.byApp.delete(appId);
  }

  find(method: string, path: string): { route: MountedRoute; params: Record<string, string> } | null {
    const found = this.fmw.find(method as HttpMethod, path);
    if (!found) return null;
    return { route: found.store as MountedRoute, params: found.params as Record<string, string> };
  }

  /** Methods some route serves at this path, for 405 and `Allow`. */
  allowed(path: string): string[] {
    return METHODS.filter((m) => this.fmw.find(m, path));
  }

  routesOf(appId: string): MountedRoute[] {
    return this.byApp.get(appId) ?? [];
  }

  list(): MountedRoute[] {
    return [...this.byApp.values()].flat();
  }
}
