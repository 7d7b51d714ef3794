// Apps over the API: what is available and installed in the caller's company, the merged
// menu, and the lifecycle steps (Owner only). Code enters the host only through the operator
// (`diwan apps install <package>`); a company's Owner chooses among the apps available.
import { direction, type Translator } from '../../kernel/i18n/i18n.ts';
import { docTypeMeta, docTypeMetaSchema } from '../../apps/doc-type-meta.ts';
import { actorOf } from '../../identity/principal.ts';
import type { PermissionRegistry } from '../../identity/permissions.ts';
import type { AppRuntime } from '../../apps/runtime.ts';
import type { Lifecycle } from '../../apps/lifecycle.ts';
import { core, dataOf, ok, type ApiRequest, type Route } from '../route.ts';
import { homeRoutes } from './home.ts';
import { searchRoutes } from './search.ts';

const appId = { type: 'object', required: ['id'], properties: { id: { type: 'string', pattern: '^[a-z][a-z0-9-]{1,39}$' } } } as const;
const installState = {
  type: 'object',
  additionalProperties: false,
  required: ['appId', 'version', 'state', 'installedAt', 'updatedAt'],
  properties: {
    appId: { type: 'string' }, version: { type: 'string' }, state: { type: 'string', enum: ['enabled', 'disabled', 'uninstalled'] },
    installedAt: { type: 'string' }, updatedAt: { type: 'string' }, dataKept: { type: 'boolean' },
  },
} as const;
const appItem = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'name', 'description', 'version', 'installedVersion', 'state', 'upgradeAvailable', 'web', 'dependencies'],
  properties: {
    id: { type: 'string' }, name: { type: 'string' }, description: { type: 'string' },
    version: { type: 'string', description: 'Version available on the host' },
    installedVersion: { type: ['string', 'null'] },
    state: { type: 'string', enum: ['enabled', 'disabled', 'uninstalled', 'not_installed'] },
    upgradeAvailable: { type: 'boolean' },
    web: { type: 'boolean', description: 'Whether the app has a web bundle, served under `/apps/<id>/`' },
    dependencies: { type: 'object', additionalProperties: { type: 'string' } },
    category: { type: 'string', description: "The catalogue category the manifest names (`sales`, `hr`, …); absent when it names none" },
    icon: { type: 'string', description: "The launcher mark the manifest gives; absent when it gives none" },
  },
} as const;
/** What each lifecycle step answers. */
const stepSchemas = {
  enable: installState,
  disable: installState,
  uninstall: { ...installState, required: [...installState.required, 'dataKept'] },
  purge: {
    type: 'object', additionalProperties: false, required: ['appId', 'purged', 'documentsRemoved'],
    properties: { appId: { type: 'string' }, purged: { type: 'boolean', const: true }, documentsRemoved: { type: 'integer', minimum: 0 } },
  },
} as const;
const withLang = (schema: object) => ({
  type: 'object', additionalProperties: false, required: ['data', 'lang', 'dir'],
  properties: { data: schema, lang: { type: 'string', enum: ['en', 'ar'] }, dir: { type: 'string', enum: ['ltr', 'rtl'] } },
});
const diffSchema = { type: 'object', additionalProperties: false, required: ['added', 'removed'], properties: { added: { type: 'array', items: { type: 'string' } }, removed: { type: 'array', items: { type: 'string' } } } };
const planSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['appId', 'from', 'to', 'permissions', 'routes', 'documentTypes', 'fields', 'topics', 'migrations'],
  properties: {
    appId: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' },
    permissions: {
      type: 'object', additionalProperties: false, required: ['added', 'removed', 'changed'],
      properties: {
        ...diffSchema.properties,
        changed: { type: 'array', items: { type: 'object', additionalProperties: false, required: ['permission', 'from', 'to'], properties: { permission: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' } } } },
      },
    },
    routes: diffSchema,
    documentTypes: diffSchema,
    fields: { type: 'object', additionalProperties: false, required: ['added', 'removed', 'changed'], properties: { ...diffSchema.properties, changed: { type: 'array', items: { type: 'string' } } } },
    topics: diffSchema,
    migrations: { type: 'array', items: { type: 'string' } },
  },
};
const menuItem = {
  type: 'object',
  additionalProperties: false,
  required: ['app', 'id', 'label', 'order', 'permission'],
  properties: {
    app: { type: 'string' }, id: { type: 'string' }, label: { type: 'string' },
    documentType: { type: 'string', description: 'The document type whose list the entry opens' },
    resource: { type: 'string', description: "That document type's resource (`/api/v1/<resource>`)" },
    path: { type: 'string', description: "A page of the app's own web bundle, under `/apps/<app>/`" },
    order: { type: 'integer' }, permission: { type: 'string' },
    group: { type: 'string', description: "The heading the entry sits under in its app's menu, in the caller's language" },
  },
};

const stepSummary = {
  enable: 'Enable an installed app',
  disable: "Disable an app: its routes answer APP_NOT_ENABLED in this company",
  uninstall: 'Uninstall an app; its data is kept until purge',
  purge: "Delete an uninstalled app's data from this company",
} as const;

export function appRoutes(deps: { runtime: AppRuntime; lifecycle: Lifecycle; permissions: PermissionRegistry; tr: Translator }): Route[] {
  const { runtime, lifecycle } = deps;
  const opts = (req: ApiRequest) => ({ lang: req.lang, requestId: req.id });
  const id = (req: ApiRequest) => req.params.id;

  const steps = (['enable', 'disable', 'uninstall', 'purge'] as const).map((step) =>
    core(
      {
        method: 'POST', url: `/api/v1/apps/:id/${step}`, operationId: `core.${step}App`, summary: stepSummary[step],
        permission: 'apps:manage', errors: ['NOT_FOUND', 'APP_REFUSED', 'CONFLICT'],
        schema: { params: appId, response: { 200: dataOf(stepSchemas[step]) } },
      },
      async (req) => ok(await lifecycle[step](req.company.id, id(req), actorOf(req.principal), opts(req))),
    ),
  );

  return [
    // The launcher's and the palette's reads across apps (new files; mounted with the app routes).
    ...homeRoutes(deps),
    ...searchRoutes(deps),
    core(
      {
        method: 'GET', url: '/api/v1/apps', operationId: 'core.listApps', summary: 'Apps available on the host and their state in this company',
        permission: 'apps:read',
        schema: { querystring: { type: 'object', additionalProperties: false, properties: { installed: { type: 'boolean', description: 'Only apps installed (enabled or disabled)' } } }, response: { 200: withLang({ type: 'array', items: appItem }) } },
      },
      async (req) => {
        const installs = await runtime.installs(req.company.id);
        const onlyInstalled = (req.query as { installed?: boolean }).installed;
        const data = runtime
          .list()
          .map((a) => {
            const row = installs.get(a.manifest.id);
            return {
              id: a.manifest.id,
              name: a.manifest.name[req.lang],
              description: a.manifest.description[req.lang],
              version: a.manifest.version,
              installedVersion: row?.version ?? null,
              state: row?.state ?? 'not_installed',
              upgradeAvailable: !!row && row.state !== 'uninstalled' && row.version !== a.manifest.version,
              web: !!a.manifest.web,
              dependencies: a.manifest.dependencies ?? {},
              ...(a.manifest.category ? { category: a.manifest.category } : {}),
              ...(a.manifest.icon ? { icon: a.manifest.icon } : {}),
            };
          })
          .filter((a) => !onlyInstalled || a.state === 'enabled' || a.state === 'disabled');
        return { body: { data, lang: req.lang, dir: direction(req.lang) } };
      },
    ),
    core(
      {
        method: 'GET', url: '/api/v1/menu', operationId: 'core.getMenu', summary: "The menu of the company's enabled apps that the caller may open, in the caller's language",
        permission: 'apps:read',
        schema: { response: { 200: withLang({ type: 'array', items: menuItem }) } },
      },
      async (req) => {
        const installs = await runtime.installs(req.company.id);
        const data = runtime
          .list()
          .filter((a) => installs.get(a.manifest.id)?.state === 'enabled')
          .flatMap((a) =>
            (a.manifest.menu ?? []).map((m) => {
              const dt = m.documentType ? a.docTypes.get(m.documentType) : undefined;
              return {
                app: a.manifest.id, id: m.id, label: m.label[req.lang], order: m.order, permission: m.permission,
                ...(dt ? { documentType: dt.decl.name, resource: dt.resource } : {}),
                ...(m.path ? { path: m.path } : {}),
                ...(m.group ? { group: m.group[req.lang] } : {}),
              };
            }),
          )
          .filter((m) => deps.permissions.allows(req.principal, m.permission))
          .sort((a, b) => a.order - b.order || (a.app < b.app ? -1 : a.app > b.app ? 1 : 0));
        return { body: { data, lang: req.lang, dir: direction(req.lang) } };
      },
    ),
    core(
      {
        method: 'GET', url: '/api/v1/document-types', operationId: 'core.listDocumentTypes',
        summary: "The document types of the company's enabled apps: fields, states and transitions in the caller's language, and the caller's permissions on each",
        permission: 'apps:read',
        schema: { response: { 200: withLang({ type: 'array', items: docTypeMetaSchema }) } },
      },
      async (req) => {
        const installs = await runtime.installs(req.company.id);
        const meta = { lang: req.lang, tr: deps.tr, app: (id: string) => runtime.get(id), allows: (p: string) => deps.permissions.allows(req.principal, p), role: req.principal.role };
        const data = runtime
          .list()
          .filter((a) => installs.get(a.manifest.id)?.state === 'enabled')
          .flatMap((a) => docTypeMeta(a, meta));
        return { body: { data, lang: req.lang, dir: direction(req.lang) } };
      },
    ),
    core(
      {
        method: 'POST', url: '/api/v1/apps', operationId: 'core.installApp', summary: 'Install an available app (and the apps it depends on) into this company',
        permission: 'apps:manage', errors: ['NOT_FOUND', 'APP_REFUSED'],
        schema: {
          body: { type: 'object', additionalProperties: false, required: ['appId'], properties: { appId: appId.properties.id, withDependencies: { type: 'boolean', default: true } } },
          response: { 201: dataOf({ type: 'object', additionalProperties: false, required: ['installed', 'app'], properties: { installed: { type: 'array', items: { type: 'string' } }, app: installState } }) },
        },
      },
      async (req) => {
        const b = req.body as { appId: string; withDependencies: boolean };
        return ok(await lifecycle.install(req.company.id, b.appId, actorOf(req.principal), { ...opts(req), withDependencies: b.withDependencies }), 201);
      },
    ),
    ...steps,
    core(
      { method: 'GET', url: '/api/v1/apps/:id/upgrade', operationId: 'core.planAppUpgrade', summary: 'Dry run: what upgrading the app to the available version changes', permission: 'apps:manage', errors: ['NOT_FOUND', 'APP_REFUSED'], schema: { params: appId, response: { 200: dataOf(planSchema) } } },
      async (req) => ok(await lifecycle.upgradePlan(req.company.id, id(req))),
    ),
    core(
      {
        method: 'POST', url: '/api/v1/apps/:id/upgrade', operationId: 'core.upgradeApp', summary: 'Apply the upgrade plan, confirmed by naming its target version',
        permission: 'apps:manage', errors: ['NOT_FOUND', 'APP_REFUSED', 'CONFLICT'],
        schema: {
          params: appId,
          body: { type: 'object', additionalProperties: false, required: ['confirm', 'version'], properties: { confirm: { const: true }, version: { type: 'string', maxLength: 64, description: 'The `to` version of the plan you accept' } } },
          response: { 200: dataOf({ type: 'object', additionalProperties: false, required: ['plan', 'app'], properties: { plan: planSchema, app: installState } }) },
        },
      },
      async (req) => ok(await lifecycle.upgrade(req.company.id, id(req), actorOf(req.principal), { ...opts(req), expectTo: (req.body as { version: string }).version })),
    ),
  ];
}
