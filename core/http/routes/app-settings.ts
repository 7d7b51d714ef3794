// An app's settings in the caller's company: what its manifest declares, each with the
// company's value or its default. Reading takes `apps:read`; changing them is the Owner's
// (`apps:manage`), checked against the declared types (every problem at once) and audited.
import type { AppRuntime } from '../../apps/runtime.ts';
import type { Manifest } from '../../../manifests/manifest.schema.ts';
import { actorOf } from '../../identity/principal.ts';
import { DiwanError } from '../../kernel/errors/diwan-error.ts';
import { core, dataOf, ok, type ApiRequest, type Route } from '../route.ts';

const params = { type: 'object', required: ['id'], properties: { id: { type: 'string', pattern: '^[a-z][a-z0-9-]{1,39}$' } } } as const;
const values = { type: 'object', additionalProperties: true, description: "Each declared setting's value (the app's reference lists them)" } as const;

export function appSettingsRoutes(runtime: AppRuntime): Route[] {
  /** The manifest of an app installed in the caller's company. */
  const installed = async (req: ApiRequest): Promise<Manifest> => {
    const id = req.params.id;
    const app = runtime.get(id);
    const row = await runtime.install(req.company.id, id);
    if (!app || !row || row.state === 'uninstalled') throw new DiwanError('NOT_FOUND', [{ resource: 'apps', id }]);
    return app.manifest;
  };
  return [
    core(
      { method: 'GET', url: '/api/v1/apps/:id/settings', operationId: 'core.getAppSettings', summary: "An app's settings in this company (its defaults where the company set none)", permission: 'apps:read', errors: ['NOT_FOUND'], schema: { params, response: { 200: dataOf(values) } } },
      async (req) => ok(await runtime.settings.get(await installed(req), req.company.id)),
    ),
    core(
      {
        method: 'PATCH', url: '/api/v1/apps/:id/settings', operationId: 'core.updateAppSettings', summary: "Change some of an app's settings in this company",
        description: 'Each value is checked against the type the app declares for it; an unknown name is refused.',
        permission: 'apps:manage', errors: ['NOT_FOUND'], schema: { params, body: { type: 'object' }, response: { 200: dataOf(values) } },
      },
      async (req) => {
        const m = await installed(req);
        const scope = { companyId: req.company.id, actor: actorOf(req.principal), appId: 'core', requestId: req.id };
        return ok(await runtime.settings.update(scope, m, req.body as Record<string, unknown>, req.lang));
      },
    ),
  ];
}
