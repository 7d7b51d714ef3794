// `diwan companies create|list`: tenants, created with their apps in one audited transaction.
// Creating installs apps, so it loads them; listing reads the database only.
import { say, table } from '../output.ts';
import type { CommandGroup } from './command.ts';

export const companies: CommandGroup = {
  name: 'companies',
  summary: 'Create and list companies (tenants)',
  commands: [
    {
      name: 'create',
      summary: 'Create a company and install its apps',
      options: {
        name: { type: 'string', value: 'name', required: true, description: 'The company name' },
        currency: { type: 'string', value: 'code', description: 'ISO 4217 currency (default USD)' },
        apps: { type: 'string', value: 'none|id,id', description: "Apps to install; 'none' for none (default: the host's standard set)" },
      },
      examples: ['diwan companies create --name Acme --currency SAR', 'diwan companies create --name Empty --apps none --json'],
      async run(ctx) {
        const { opts, actor, lang } = ctx;
        const appsOpt = opts.apps as string | undefined;
        const apps = appsOpt === undefined ? undefined : appsOpt.trim() === 'none' ? [] : appsOpt.split(',').map((s) => s.trim()).filter(Boolean);
        const svc = await ctx.services({ apps: true });
        const { company, installed } = await svc.createCompany({ name: String(opts.name), currency: opts.currency as string | undefined, apps }, actor);
        const data = { ...company, apps: installed };
        return { data, text: say(lang, 'companies.created', { ...company, apps: installed.join(', ') || '-' }) };
      },
    },
    {
      name: 'list',
      summary: 'List the companies and their enabled apps',
      async run(ctx) {
        const { lang } = ctx;
        const { companies: all, storage } = await ctx.services();
        const data = await Promise.all(
          (await all.list()).map(async (c) => ({
            ...c,
            apps: (await storage.installs.ofCompany(c.id)).filter((r) => r.state === 'enabled').map((r) => r.appId).sort(),
          })),
        );
        return {
          data,
          text: data.length
            ? table(data.map((c) => ({ ...c, apps: c.apps.length > 6 ? `${c.apps.length} apps` : c.apps })), [
                { key: 'id', label: 'ID' },
                { key: 'name', label: 'NAME' },
                { key: 'currency', label: 'CURRENCY' },
                { key: 'apps', label: 'APPS' },
                { key: 'createdAt', label: 'CREATED' },
              ], lang)
            : say(lang, 'companies.none'),
        };
      },
    },
  ],
};
