// `diwan permissions`: the role × permission matrix of the host and its available apps.
import { ROLES } from '../../core/identity/roles.ts';
import { table } from '../output.ts';
import type { CommandGroup } from './command.ts';

export const permissions: CommandGroup = {
  name: 'permissions',
  summary: 'The role × permission matrix (core and every available app)',
  commands: [
    {
      name: '',
      summary: 'The role × permission matrix (core and every available app)',
      async run(ctx) {
        const { lang } = ctx;
        const svc = await ctx.services({ apps: true });
        const data = svc.permissions.matrix().map((m) => ({ ...m, lowestRole: svc.permissions.get(m.permission)?.role, description: svc.permissions.get(m.permission)?.description?.[lang] ?? null }));
        const rows = data.map((m) => ({ permission: m.permission, owner: m.owner, ...Object.fromEntries(ROLES.map((r) => [r, m.roles[r] ? '✓' : '·'])) }));
        // The owning app is headed APP: "OWNER" beside the Owner role read as that role.
        return { data, text: table(rows, [{ key: 'permission', label: 'PERMISSION' }, { key: 'owner', label: 'APP' }, ...ROLES.map((r) => ({ key: r, label: r }))], lang) };
      },
    },
  ],
};
