// `diwan apps …`: what apps the host offers, and each company's install state and lifecycle
// steps; every command here loads the apps. Code enters the host only
// here: `apps install <file|folder>` verifies a package and stores it in the database
// (`svc.installPackage`), from where a server running on the same data loads it within a
// second (it hears the `packages` change); with `--company` it is then installed there.
import fs from 'node:fs';
import type { UpgradePlan } from '../../core/apps/lifecycle.ts';
import { UsageError, record, say, table } from '../output.ts';
import { companyOf, companyOption, type Command, type CommandContext, type CommandGroup } from './command.ts';

const APP_ID = /^[a-z][a-z0-9-]{1,39}$/;

/** An argument is a path when it exists on disk or cannot be an app id. */
const isPath = (arg: string) => fs.existsSync(arg) || !APP_ID.test(arg);

const PLAN_PARTS = ['permissions', 'routes', 'documentTypes', 'fields', 'topics'] as const;

/** Whether the plan changes anything: a part, a migration, or the version alone. */
export function planChangesAnything(plan: UpgradePlan): boolean {
  if (plan.from !== plan.to || plan.migrations.length) return true;
  return PLAN_PARTS.some((key) => {
    const d: { added: string[]; removed: string[]; changed?: unknown[] } = plan[key];
    return d.added.length > 0 || d.removed.length > 0 || (d.changed?.length ?? 0) > 0;
  });
}

/** The plan for people: `+` added, `-` removed, `~` changed (a field's declaration, a permission's lowest role). */
export function planText(ctx: Pick<CommandContext, 'lang'>, plan: UpgradePlan): string {
  const lines = [say(ctx.lang, 'apps.plan', { id: plan.appId, from: plan.from, to: plan.to })];
  let any = false;
  for (const key of PLAN_PARTS) {
    const d: { added: string[]; removed: string[]; changed?: (string | { permission: string; from: string; to: string })[] } = plan[key];
    const changed = (d.changed ?? []).map((c) => (typeof c === 'string' ? c : `${c.permission}: ${c.from} → ${c.to}`));
    if (!d.added.length && !d.removed.length && !changed.length) continue;
    any = true;
    lines.push(`  ${key}:`, ...d.added.map((x) => `    + ${x}`), ...d.removed.map((x) => `    - ${x}`), ...changed.map((x) => `    ~ ${x}`));
  }
  if (plan.migrations.length) {
    any = true;
    lines.push('  migrations:', ...plan.migrations.map((m) => `    > ${m}`));
  }
  if (!any) lines.push(`  ${say(ctx.lang, plan.from === plan.to ? 'apps.nothing' : 'apps.versionOnly')}`);
  return lines.join('\n');
}

const appArg = [{ name: 'id', required: true, description: 'The app id' }];

const step = (name: 'enable' | 'disable' | 'uninstall' | 'purge', summary: string): Command => ({
  name,
  summary,
  args: appArg,
  options: { company: companyOption },
  async run(ctx) {
    const svc = await ctx.services({ apps: true });
    const company = await companyOf(ctx, svc);
    const id = String(ctx.args.id);
    const data: unknown = await svc.lifecycle[name](company.id, id, ctx.actor, { lang: ctx.lang });
    const text =
      name === 'purge'
        ? say(ctx.lang, 'apps.purged', { id, company: company.id, count: (data as { documentsRemoved: number }).documentsRemoved })
        : say(ctx.lang, 'apps.state', { id, company: company.id, state: (data as { state: string } | null)?.state });
    return { data, text };
  },
});

export const apps: CommandGroup = {
  name: 'apps',
  summary: 'Apps on the host and in each company: install, enable, disable, upgrade, uninstall, purge',
  commands: [
    {
      name: 'available',
      summary: 'The apps this host offers (first-party and installed packages)',
      async run(ctx) {
        const { lang } = ctx;
        const svc = await ctx.services({ apps: true });
        const data = svc.runtime.list().map((a) => ({
          id: a.manifest.id,
          version: a.manifest.version,
          name: a.manifest.name[lang],
          description: a.manifest.description[lang],
          origin: a.source.origin,
          dependencies: a.manifest.dependencies ?? {},
        }));
        return { data, text: table(data.map((d) => ({ ...d, dependencies: Object.entries(d.dependencies).map(([k, v]) => `${k}@${v}`) })), [
          { key: 'id', label: 'ID' }, { key: 'version', label: 'VERSION' }, { key: 'origin', label: 'ORIGIN' }, { key: 'name', label: 'NAME' }, { key: 'dependencies', label: 'NEEDS' },
        ], lang) };
      },
    },
    {
      name: 'list',
      summary: 'Every available app and its state in the company',
      options: { company: companyOption, installed: { type: 'boolean', description: 'Only the apps installed (enabled or disabled)' } },
      async run(ctx) {
        const { lang } = ctx;
        const svc = await ctx.services({ apps: true });
        const company = await companyOf(ctx, svc);
        const installs = await svc.runtime.installs(company.id);
        const data = svc.runtime
          .list()
          .map((a) => {
            const row = installs.get(a.manifest.id);
            return {
              id: a.manifest.id,
              name: a.manifest.name[lang],
              version: a.manifest.version,
              installedVersion: row?.version ?? null,
              state: row?.state ?? 'not_installed',
              upgradeAvailable: !!row && row.state !== 'uninstalled' && row.version !== a.manifest.version,
              dependencies: a.manifest.dependencies ?? {},
            };
          })
          .filter((a) => !ctx.opts.installed || a.state === 'enabled' || a.state === 'disabled');
        return { data, text: table(data, [
          { key: 'id', label: 'ID' }, { key: 'state', label: 'STATE' }, { key: 'installedVersion', label: 'INSTALLED' }, { key: 'version', label: 'AVAILABLE' },
          { key: 'upgradeAvailable', label: 'UPGRADE' }, { key: 'name', label: 'NAME' },
        ], lang) };
      },
    },
    {
      name: 'install',
      summary: 'Install an app into a company: an available app id, a .diwan.tgz package or an app folder (packed first)',
      args: [{ name: 'app', required: true, description: 'An app id, a package file or an app source folder' }],
      options: {
        company: { ...companyOption, required: false, description: 'The company to install it into (optional for a package: it is then only made available)' },
        'no-deps': { type: 'boolean', description: 'Refuse rather than install missing dependencies' },
      },
      examples: ['diwan apps install invoicing --company co_…', 'diwan apps install ./crm-1.2.0.diwan.tgz --company co_…', 'diwan apps install ./my-app'],
      async run(ctx) {
        const { lang } = ctx;
        const arg = String(ctx.args.app);
        const lines: string[] = [];
        let appId = arg;
        let pkg: Record<string, unknown> | undefined;
        if (!isPath(arg) && ctx.opts.company === undefined) {
          throw new UsageError('--company', 'required', say(lang, 'usage.required', { name: '--company' }));
        }
        const svc = await ctx.services({ apps: true });
        if (isPath(arg)) {
          const p = await svc.installPackage(arg);
          appId = p.manifest.id;
          pkg = {
            id: appId, version: p.manifest.version, hash: p.hash, replaced: p.replaced, previousVersion: p.previousVersion ?? null,
            dir: svc.runtime.get(appId)?.source.dir ?? null, ...(p.packedFrom ? { packedFrom: p.packedFrom } : {}),
          };
          lines.push(say(lang, 'apps.packaged', { id: appId, version: p.manifest.version, hash: p.hash, replaced: p.replaced ? say(lang, 'apps.replacedNote') : '' }));
          lines.push(say(lang, 'apps.liveNote'));
        }
        if (ctx.opts.company === undefined) return { data: { package: pkg, installed: [], app: null }, text: lines.join('\n') };

        const company = await companyOf(ctx, svc);
        const row = await svc.runtime.install(company.id, appId);
        if (pkg && row && row.state !== 'uninstalled') {
          // Already in the company: a newer package is an upgrade, which has its own dry run.
          lines.push(say(lang, 'apps.upgradeNote', { id: appId, company: company.id, installed: row.version }));
          return { data: { package: pkg, installed: [], app: { appId, version: row.version, state: row.state }, upgradeAvailable: row.version !== pkg.version }, text: lines.join('\n') };
        }
        const r = await svc.lifecycle.install(company.id, appId, ctx.actor, { withDependencies: !ctx.opts['no-deps'], lang });
        lines.push(say(lang, 'apps.installed', { company: company.id, apps: r.installed.join(', ') }));
        return { data: { ...(pkg ? { package: pkg } : {}), ...r }, text: lines.join('\n') };
      },
    },
    step('enable', 'Enable an installed app'),
    step('disable', 'Disable an app: its routes answer APP_NOT_ENABLED in the company'),
    step('uninstall', 'Uninstall an app; its data is kept until purge'),
    step('purge', "Delete an uninstalled app's data from the company"),
    {
      name: 'upgrade',
      summary: 'Show the upgrade plan (dry run) of an app to the available version; apply it with --yes',
      args: appArg,
      options: { company: companyOption, yes: { type: 'boolean', short: 'y', description: 'Apply the plan shown' } },
      async run(ctx) {
        const svc = await ctx.services({ apps: true });
        const company = await companyOf(ctx, svc);
        const id = String(ctx.args.id);
        const plan = await svc.lifecycle.upgradePlan(company.id, id);
        // Already at the available version, nothing to migrate: no plan to offer or apply.
        if (!planChangesAnything(plan)) return { data: { plan, applied: false }, text: say(ctx.lang, 'apps.nothingToApply', { id }) };
        if (!ctx.opts.yes) return { data: { plan, applied: false }, text: `${planText(ctx, plan)}\n${say(ctx.lang, 'apps.planConfirm')}` };
        const r = await svc.lifecycle.upgrade(company.id, id, ctx.actor, { expectTo: plan.to, lang: ctx.lang });
        return { data: { ...r, applied: true }, text: `${planText(ctx, r.plan)}\n${say(ctx.lang, 'apps.planApplied', { id, to: r.plan.to })}\n${record(r.app as never)}` };
      },
    },
  ],
};
