// `diwan events catalogue` and `diwan events trigger`: the event catalogue, and test events
// that let webhook consumers exercise their endpoints. Both need the apps: they load them.
import type { Lang } from '../../core/kernel/i18n/i18n.ts';
import { table } from '../output.ts';
import { companyOf, companyOption, type CommandGroup } from './command.ts';

const words: Record<Lang, { totals: string; queued: string }> = {
  en: { totals: '{{families}} families, {{topics}} events', queued: 'test event {{id}} ({{topic}}) queued for {{company}}' },
  ar: { totals: '{{families}} عائلة، {{topics}} حدثًا', queued: 'أُدرج حدث الاختبار {{id}} ({{topic}}) للشركة {{company}}' },
};
const say = (lang: Lang, key: keyof (typeof words)['en'], params: Record<string, unknown>) =>
  words[lang][key].replace(/\{\{(\w+)\}\}/g, (_, k: string) => String(params[k] ?? ''));

export const events: CommandGroup = {
  name: 'events',
  summary: 'The event catalogue and test events',
  commands: [
    {
      name: 'catalogue',
      summary: 'Every event family and topic of the apps on this host',
      options: {
        family: { type: 'string', value: 'prefix|name', description: 'Only this family (its prefix or display name)' },
        pattern: { type: 'string', value: 'pattern', description: 'Only topics a subscription pattern reaches (`*` leaves out audit.*)' },
        company: { type: 'string', value: 'id', description: 'Mark families installed in this company' },
        installed: { type: 'boolean', description: 'With --company: only installed families' },
      },
      examples: ['diwan events catalogue --family crm', 'diwan events catalogue --pattern "invoice.*" --json'],
      async run(ctx) {
        const svc = await ctx.services({ apps: true });
        const companyId = ctx.opts.company ? (await companyOf(ctx, svc)).id : undefined;
        const data = await svc.catalogue.catalogue(companyId, {
          lang: ctx.lang,
          family: ctx.opts.family as string | undefined,
          pattern: ctx.opts.pattern as string | undefined,
          installedOnly: ctx.opts.installed === true,
        });
        const detailed = data.families.length <= 3;
        const rows = detailed
          ? data.families.flatMap((f) => f.topics.map((t) => ({ topic: t.topic, owner: t.owner, description: t.description })))
          : data.families.map((f) => ({ family: f.family, prefix: `${f.prefix}.*`, owner: f.owner, count: f.count, installed: companyId ? (f.installed ? 'yes' : 'no') : '' }));
        const columns = detailed
          ? ([{ key: 'topic', label: 'TOPIC' }, { key: 'owner', label: 'APP' }, { key: 'description', label: 'DESCRIPTION' }] as const)
          : ([{ key: 'family', label: 'FAMILY' }, { key: 'prefix', label: 'PATTERN' }, { key: 'owner', label: 'APP' }, { key: 'count', label: 'EVENTS' }, { key: 'installed', label: 'INSTALLED' }] as const);
        return { data, text: `${table(rows, [...columns], ctx.lang)}\n${say(ctx.lang, 'totals', data.totals)}` };
      },
    },
    {
      name: 'trigger',
      summary: "Emit a topic's example payload, marked as a test, to the company's matching webhook endpoints",
      args: [{ name: 'topic', description: 'An exact topic, e.g. crm.lead.created', required: true }],
      options: { company: companyOption },
      async run(ctx) {
        const svc = await ctx.services({ apps: true });
        const company = await companyOf(ctx, svc);
        const ev = await svc.catalogue.trigger(company.id, String(ctx.args.topic), ctx.actor);
        const data = { id: ev.id, topic: ev.topic, test: true, companyId: company.id, createdAt: ev.createdAt, data: ev.data };
        return { data, text: say(ctx.lang, 'queued', { id: ev.id, topic: ev.topic, company: company.id }) };
      },
    },
  ],
};
