// `diwan companies create|list|update`: tenants, created with their apps in one audited
// transaction. Creating installs apps, so it loads them; listing reads the database only;
// updating changes the name and the seller's profile (as PATCH /api/v1/company does).
import { say, table, UsageError } from '../output.ts';
import { companyOf, companyOption, type CommandGroup } from './command.ts';

export const companies: CommandGroup = {
  name: 'companies',
  summary: 'Create, list and update companies (tenants)',
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
      name: 'update',
      summary: "Change a company's name or its seller's profile (legal name, VAT number, CR number, address, VAT rate)",
      options: {
        company: companyOption,
        name: { type: 'string', value: 'name', description: 'The company name' },
        'legal-name-en': { type: 'string', value: 'text', description: 'The legal name in English (with --legal-name-ar)' },
        'legal-name-ar': { type: 'string', value: 'text', description: 'The legal name in Arabic (with --legal-name-en)' },
        'vat-number': { type: 'string', value: 'digits', description: "VAT registration number: 15 digits, the first and the last 3 ('' clears it)" },
        'cr-number': { type: 'string', value: 'digits', description: "Commercial registration number: 10 digits ('' clears it)" },
        'vat-rate': { type: 'string', value: 'percent', description: 'The standard VAT rate in percent (default 15)' },
        address: { type: 'string', value: 'json', description: 'The address as JSON: {"buildingNumber","street","district","city","postalCode","country"}' },
      },
      examples: [
        'diwan companies update --company co_… --legal-name-en "Riyadh Trading Co." --legal-name-ar "شركة الرياض للتجارة" --vat-number 310122393500003',
        `diwan companies update --company co_… --address '{"buildingNumber":"1234","street":"King Fahd Road","district":"Al Olaya","city":"Riyadh","postalCode":"12214","country":"SA"}' --json`,
      ],
      async run(ctx) {
        const { opts, actor, lang } = ctx;
        const patch: Record<string, unknown> = {};
        if (opts.name !== undefined) patch.name = String(opts.name);
        const en = opts['legal-name-en'];
        const ar = opts['legal-name-ar'];
        if (en !== undefined || ar !== undefined) patch.legalName = { en, ar };
        for (const [opt, field] of [['vat-number', 'vatNumber'], ['cr-number', 'crNumber']] as const) {
          if (opts[opt] !== undefined) patch[field] = opts[opt] === '' ? null : String(opts[opt]);
        }
        if (opts['vat-rate'] !== undefined) patch.vatRate = Number(opts['vat-rate']);
        if (opts.address !== undefined) {
          try {
            patch.address = JSON.parse(String(opts.address));
          } catch {
            throw new UsageError('--address', 'json', say(lang, 'usage.json', { name: '--address' }), { value: opts.address });
          }
        }
        const svc = await ctx.services({ apps: true });
        const company = await companyOf(ctx, svc);
        // Its types first, as the route's schema checks them (loaded here only: the light commands do not load ajv).
        const [{ check, compileFor }, { profilePatchSchema }] = await Promise.all([import('../../core/kernel/validation.ts'), import('../../core/tenancy/company-profile.ts')]);
        check(compileFor('body', profilePatchSchema), patch, 'body', lang, svc.tr);
        const data = await svc.companies.update(company.id, patch, { actor, lang, tr: svc.tr });
        return { data, text: say(lang, 'companies.updated', { ...data, vatNumber: data.vatNumber ?? '-', vatRate: data.vatRate }) };
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
