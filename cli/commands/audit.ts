// `diwan audit list`: a company's audit log, newest first, a page at a time (the database only).
import { say, table } from '../output.ts';
import { companyOf, companyOption, pageOf, pageOptions, type CommandGroup } from './command.ts';

export const audit: CommandGroup = {
  name: 'audit',
  summary: "Read a company's audit log",
  commands: [
    {
      name: 'list',
      summary: 'The audit log, newest first',
      options: {
        company: companyOption,
        resource: { type: 'string', value: 'resource', description: 'Only writes to this resource (api-keys, apps, invoices, …)' },
        action: { type: 'string', value: 'action', description: 'Only this action (create, revoke, install, …)' },
        ...pageOptions('Entries', 500),
      },
      async run(ctx) {
        const services = await ctx.services();
        const company = await companyOf(ctx, services);
        const { page, pageSize } = pageOf(ctx, 500);
        const { total, data } = await services.audit.list(company.id, { page, pageSize, resource: ctx.opts.resource as string | undefined, action: ctx.opts.action as string | undefined });
        const rows = data.map((r) => ({ ...r, actor: `${r.actor.type}:${r.actor.id}` }));
        const pages = Math.max(1, Math.ceil(total / pageSize));
        return {
          data: { data, total, page, pageSize },
          text: `${table(rows, [
            { key: 'at', label: 'AT' }, { key: 'actor', label: 'ACTOR' }, { key: 'appId', label: 'APP' }, { key: 'resource', label: 'RESOURCE' },
            { key: 'action', label: 'ACTION' }, { key: 'resourceId', label: 'RECORD' },
          ], ctx.lang)}\n${say(ctx.lang, 'audit.page', { page, pages, total })}`,
        };
      },
    },
  ],
};
