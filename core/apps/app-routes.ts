// Apps over the API: what is available and installed in the caller's company, the merged
// menu, and the lifecycle steps (Owner only). Code enters the host only through the operator
// (`diwan apps install <package>`); a company's Owner chooses among the apps available.
import type { CoreRoutes } from '../http/core-route.ts';
import { dataOf } from '../http/core-route.ts';
import { direction } from '../i18n/i18n.ts';
import { actorOf } from '../identity/principal.ts';
import type { FastifyRequest } from 'fastify';
import type { AppRuntime } from './runtime.ts';
import type { Lifecycle } from './lifecycle.ts';

const appId = { type: 'object', required: ['id'], properties: { id: { type: 'string', pattern: '^[a-z][a-z0-9-]{1,39}$' } } } as const;
const installState = {
  type: 'object',
  required: ['appId', 'version', 'state'],
  properties: { appId: { type: 'string' }, version: { type: 'string' }, state: { type: 'string', enum: ['enabled', 'disabled', 'uninstalled'] }, installedAt: { type: 'string' }, updatedAt: { type: 'string' }, dataKept: { type: 'boolean' } },
} as const;
const appItem = {
  type: 'object',
  required: ['id', 'name', 'description', 'version', 'state'],
  properties: {
    id: { type: 'string' }, name: { type: 'string' }, description: { type: 'string' },
    version: { type: 'string', description: 'Version available on the host' },
    installedVersion: { type: ['string', 'null'] },
    state: { type: 'string', enum: ['enabled', 'disabled', 'uninstalled', 'not_installed'] },
    upgradeAvailable: { type: 'boolean' },
    dependencies: { type: 'object', additionalProperties: { type: 'string' } },
  },
} as const;
const withLang = (schema: object) => ({
  type: 'object', required: ['data', 'lang', 'dir'],
  properties: { data: schema, lang: { type: 'string', enum: ['en', 'ar'] }, dir: { type: 'string', enum: ['ltr', 'rtl'] } },
});
const diffSchema = { type: 'object', properties: { added: { type: 'array', items: { type: 'string' } }, removed: { type: 'array', items: { type: 'string' } } } };
const planSchema = {
  type: 'object',
  required: ['appId', 'from', 'to'],
  properties: { appId: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' }, permissions: { type: 'object', properties: { ...diffSchema.properties, changed: { type: 'array', items: { type: 'object', properties: { permission: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' } } } } } }, routes: diffSchema, documentTypes: diffSchema, topics: diffSchema, migrations: { type: 'array', items: { type: 'string' } } },
};

export function appRoutes(r: CoreRoutes, deps: { runtime: AppRuntime; lifecycle: Lifecycle }) {
  const { runtime, lifecycle } = deps;
  const opts = (req: FastifyRequest) => ({ lang: req.lang, requestId: req.id });

  r.add(
    {
      method: 'GET', url: '/api/v1/apps', operationId: 'core.listApps', summary: 'Apps available on the host and their state in this company',
      permission: 'apps:read',
      schema: { querystring: { type: 'object', additionalProperties: false, properties: { installed: { type: 'boolean', description: 'Only apps installed (enabled or disabled)' } } }, response: { 200: withLang({ type: 'array', items: appItem }) } },
    },
    async (req) => {
      const installs = runtime.installs(req.principal.companyId);
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
            dependencies: a.manifest.dependencies ?? {},
          };
        })
        .filter((a) => !onlyInstalled || a.state === 'enabled' || a.state === 'disabled');
      return { data, lang: req.lang, dir: direction(req.lang) };
    },
  );

  r.add(
    {
      method: 'GET', url: '/api/v1/menu', operationId: 'core.getMenu', summary: "The menu of the company's enabled apps that the caller may open, in the caller's language",
      permission: 'apps:read',
      schema: {
        response: {
          200: withLang({
            type: 'array',
            items: { type: 'object', required: ['app', 'id', 'label', 'path', 'order'], properties: { app: { type: 'string' }, id: { type: 'string' }, label: { type: 'string' }, path: { type: 'string' }, order: { type: 'integer' }, permission: { type: 'string' } } },
          }),
        },
      },
    },
    async (req) => {
      const data = runtime
        .list()
        .filter((a) => runtime.isEnabled(req.principal.companyId, a.manifest.id))
        .flatMap((a) => (a.manifest.menu ?? []).map((m) => ({ app: a.manifest.id, id: m.id, label: m.label[req.lang], path: m.path, order: m.order, permission: m.permission })))
        .filter((m) => runtime.host.permissions.allows(req.principal, m.permission))
        .sort((a, b) => a.order - b.order || a.app.localeCompare(b.app));
      return { data, lang: req.lang, dir: direction(req.lang) };
    },
  );

  r.add(
    {
      method: 'POST', url: '/api/v1/apps', operationId: 'core.installApp', summary: 'Install an available app (and the apps it depends on) into this company',
      permission: 'apps:manage', errors: ['APP_REFUSED'],
      schema: {
        body: { type: 'object', additionalProperties: false, required: ['appId'], properties: { appId: appId.properties.id, withDependencies: { type: 'boolean', default: true } } },
        response: { 201: dataOf({ type: 'object', properties: { installed: { type: 'array', items: { type: 'string' } }, app: installState } }) },
      },
    },
    async (req, reply) => {
      const b = req.body as { appId: string; withDependencies: boolean };
      reply.code(201);
      return { data: lifecycle.install(req.principal.companyId, b.appId, actorOf(req.principal), { ...opts(req), withDependencies: b.withDependencies }) };
    },
  );

  for (const step of ['enable', 'disable', 'uninstall', 'purge'] as const) {
    r.add(
      {
        method: 'POST', url: `/api/v1/apps/:id/${step}`, operationId: `core.${step}App`,
        summary: { enable: 'Enable an installed app', disable: "Disable an app: its routes answer APP_NOT_ENABLED in this company", uninstall: 'Uninstall an app; its data is kept until purge', purge: "Delete an uninstalled app's data from this company" }[step],
        permission: 'apps:manage', errors: ['APP_REFUSED', 'CONFLICT'],
        schema: { params: appId, response: { 200: dataOf({ type: 'object', additionalProperties: true }) } },
      },
      async (req) => ({ data: lifecycle[step](req.principal.companyId, (req.params as { id: string }).id, actorOf(req.principal), opts(req)) }),
    );
  }

  r.add(
    { method: 'GET', url: '/api/v1/apps/:id/upgrade', operationId: 'core.planAppUpgrade', summary: 'Dry run: what upgrading the app to the available version changes', permission: 'apps:manage', errors: ['APP_REFUSED'], schema: { params: appId, response: { 200: dataOf(planSchema) } } },
    async (req) => ({ data: lifecycle.upgradePlan(req.principal.companyId, (req.params as { id: string }).id) }),
  );
  r.add(
    {
      method: 'POST', url: '/api/v1/apps/:id/upgrade', operationId: 'core.upgradeApp', summary: 'Apply the upgrade plan, confirmed by naming its target version',
      permission: 'apps:manage', errors: ['APP_REFUSED', 'CONFLICT'],
      schema: {
        params: appId,
        body: { type: 'object', additionalProperties: false, required: ['confirm', 'version'], properties: { confirm: { const: true }, version: { type: 'string', description: 'The `to` version of the plan you accept' } } },
        response: { 200: dataOf({ type: 'object', properties: { plan: planSchema, app: installState } }) },
      },
    },
    async (req) => {
      const b = req.body as { version: string };
      return { data: lifecycle.upgrade(req.principal.companyId, (req.params as { id: string }).id, actorOf(req.principal), { ...opts(req), expectTo: b.version }) };
    },
  );
}
