// `diwan users create`: the operator makes a person a member of a company (creating the person,
// or adding the one who already has that email) and prints a one-time sign-in link, shown this
// once: `<DIWAN_PUBLIC_URL>/signin#<token>`. Opening it, the person chooses a password and is
// in; from then on they invite the others from the console. The write and its audit row (actor
// `cli:operator`) are one transaction, in the identity domain.
// Like every command module this one is loaded on every run: it imports from core only light
// values (the role names, the error class) and types.
import type { Lang } from '../../core/kernel/i18n/i18n.ts';
import { ROLES } from '../../core/identity/roles.ts';
import { DiwanError } from '../../core/kernel/errors/diwan-error.ts';
import { record } from '../output.ts';
import { companyOption, type CommandContext, type CommandGroup } from './command.ts';

const words: Record<Lang, { created: string; added: string; link: string }> = {
  en: {
    created: '{{name}} <{{email}}> is now {{role}} of {{company}}.',
    added: '{{name}} <{{email}}> already had an account, and is now {{role}} of {{company}}.',
    link: 'Send them this one-time sign-in link. It works once, until {{expiresAt}}, and is shown only now:',
  },
  ar: {
    created: 'أصبح {{name}} <{{email}}> بدور {{role}} في {{company}}.',
    added: 'لدى {{name}} <{{email}}> حساب من قبل، وأصبح بدور {{role}} في {{company}}.',
    link: 'أرسل إليه رابط الدخول هذا. يعمل مرة واحدة حتى {{expiresAt}}، ولا يُعرض إلا الآن:',
  },
};
const say = (lang: Lang, key: keyof (typeof words)['en'], params: Record<string, unknown>) =>
  words[lang][key].replace(/\{\{(\w+)\}\}/g, (_, k: string) => String(params[k] ?? ''));

export const users: CommandGroup = {
  name: 'users',
  summary: 'Add people to a company, with a one-time sign-in link',
  commands: [
    {
      name: 'create',
      summary: "Make a person a member of a company (creating them if new) and print a one-time sign-in link",
      options: {
        email: { type: 'string', value: 'email', required: true, description: "The person's email (their sign-in name)" },
        name: { type: 'string', value: 'name', required: true, description: "The person's name, as the console shows it" },
        company: companyOption,
        role: { type: 'string', value: 'role', choices: ROLES, description: `Their role in the company: ${ROLES.join(', ')} (default Owner)` },
      },
      examples: ['diwan users create --email noura@example.com --name "Noura Al-Harbi" --company co_…', 'diwan users create --email sara@example.com --name Sara --company co_… --role Admin --json'],
      async run(ctx) {
        const { opts, lang } = ctx;
        const svc = await ctx.services();
        const companyId = String(opts.company);
        const company = await svc.companies.get(companyId);
        if (!company) throw new DiwanError('NOT_FOUND', [{ resource: 'companies', id: companyId }]);
        const role = typeof opts.role === 'string' ? opts.role : 'Owner';
        const r = await svc.people.createWithLink({ companyId, actor: ctx.actor, appId: 'core' }, { email: String(opts.email), name: String(opts.name), role });
        const link = `${svc.config.publicUrl}/signin#${r.token}`;
        const data = { person: r.person, link, expiresAt: r.expiresAt };
        const params = { name: r.person.name, email: r.person.email, role, company: `${company.name} (${company.id})`, expiresAt: r.expiresAt };
        return {
          data,
          text: `${say(lang, r.created ? 'created' : 'added', params)}\n${say(lang, 'link', params)}\n\n  ${link}\n\n${record({ id: r.person.id, email: r.person.email, name: r.person.name, role, company: company.id })}`,
        };
      },
    },
  ],
};
