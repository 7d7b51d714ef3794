// `diwan keys create|list|revoke`: API keys of a company, through the identity domain, which
// writes each audit row in the write's transaction (as for the API routes); the operator holds
// every role and scope. A listing never holds a full key. No app is involved: no host is built.
import { ROLES } from '../../core/identity/roles.ts';
import { record, say, table } from '../output.ts';
import { companyOf, companyOption, scopeOf, type CommandGroup } from './command.ts';

export const keys: CommandGroup = {
  name: 'keys',
  summary: 'Create, list and revoke API keys',
  commands: [
    {
      name: 'create',
      summary: 'Create an API key; the full key is printed this once',
      options: {
        company: companyOption,
        role: { type: 'string', value: 'role', required: true, choices: ROLES, description: `The key's role: ${ROLES.join(', ')}` },
        scopes: { type: 'string', value: "'*'|res,res", required: true, description: "Resources the key may touch, comma-separated, or '*' for all" },
        name: { type: 'string', value: 'name', description: 'A name to recognise the key by' },
        expires: { type: 'string', value: 'ISO date-time', description: 'When the key stops working' },
      },
      examples: ["diwan keys create --company co_… --role Owner --scopes '*' --name ci"],
      async run(ctx) {
        const { opts, lang } = ctx;
        const services = await ctx.services();
        const company = await companyOf(ctx, services);
        const created = await services.keys.create(scopeOf(ctx, company.id), {
          role: String(opts.role),
          scopes: String(opts.scopes).split(','),
          name: opts.name as string | undefined,
          expiresAt: opts.expires as string | undefined,
        });
        const data = { ...created.record, key: created.key };
        return { data, text: `${say(lang, 'keys.created', { id: data.id, company: company.id, role: data.role })}\n\n  ${data.key}\n\n${record(created.record as never)}` };
      },
    },
    {
      name: 'list',
      summary: "List a company's API keys (never their secrets)",
      options: { company: companyOption },
      async run(ctx) {
        const services = await ctx.services();
        const data = await services.keys.list((await companyOf(ctx, services)).id);
        return {
          data,
          text: data.length
            ? table(data as never, [
                { key: 'id', label: 'ID' },
                { key: 'name', label: 'NAME' },
                { key: 'role', label: 'ROLE' },
                { key: 'scopes', label: 'SCOPES' },
                { key: 'hint', label: 'KEY' },
                { key: 'createdAt', label: 'CREATED' },
                { key: 'expiresAt', label: 'EXPIRES' },
                { key: 'revokedAt', label: 'REVOKED' },
                { key: 'lastUsedAt', label: 'LAST USED' },
              ], ctx.lang)
            : say(ctx.lang, 'keys.none'),
        };
      },
    },
    {
      name: 'revoke',
      summary: 'Revoke an API key (a key already revoked stays as it was)',
      args: [{ name: 'keyId', required: true, description: 'The key id (the part after dwk_)' }],
      options: { company: companyOption },
      async run(ctx) {
        const services = await ctx.services();
        const company = await companyOf(ctx, services);
        const id = String(ctx.args.keyId);
        // The domain revokes and audits once; a second revoke changes and records nothing, and
        // answers the key as it is. Say which it was rather than report a revocation again.
        const before = await services.keys.get(company.id, id);
        const after = await services.keys.revoke(scopeOf(ctx, company.id), id);
        const alreadyRevoked = !!before?.revokedAt;
        return {
          data: { ...after, alreadyRevoked },
          text: say(ctx.lang, alreadyRevoked ? 'keys.alreadyRevoked' : 'keys.revoked', { id, at: after.revokedAt }),
        };
      },
    },
  ],
};
