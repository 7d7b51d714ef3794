// `diwan keys create|list|revoke`: API keys of a company. Creating and revoking write their
// audit row in the same transaction, as the API routes do; a listing never holds a full key.
import { ROLES } from '../../core/identity/roles.ts';
import { record, say, table } from '../output.ts';
import { companyOf, companyOption, type CommandGroup } from './command.ts';

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
      run(ctx) {
        const { host, opts, actor, lang } = ctx;
        const company = companyOf(ctx);
        const created = host.storage.sqlite.transaction(() => {
          const c = host.keys.create({
            companyId: company.id,
            role: String(opts.role),
            scopes: String(opts.scopes).split(','),
            name: opts.name as string | undefined,
            expiresAt: opts.expires as string | undefined,
          });
          host.audit.record({ companyId: company.id, actor, appId: 'core', action: 'create', resource: 'api-keys', resourceId: c.record.id, after: c.record });
          return c;
        }).immediate();
        const data = { ...created.record, key: created.key };
        return { data, text: `${say(lang, 'keys.created', { id: data.id, company: company.id, role: data.role })}\n\n  ${data.key}\n\n${record(created.record as never)}` };
      },
    },
    {
      name: 'list',
      summary: "List a company's API keys (never their secrets)",
      options: { company: companyOption },
      run(ctx) {
        const data = ctx.host.keys.list(companyOf(ctx).id);
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
              ])
            : say(ctx.lang, 'keys.none'),
        };
      },
    },
    {
      name: 'revoke',
      summary: 'Revoke an API key',
      args: [{ name: 'keyId', required: true, description: 'The key id (the part after dwk_)' }],
      options: { company: companyOption },
      run(ctx) {
        const { host, actor } = ctx;
        const company = companyOf(ctx);
        const id = String(ctx.args.keyId);
        const data = host.storage.sqlite.transaction(() => {
          const before = host.keys.get(company.id, id);
          const after = host.keys.revoke(company.id, id);
          host.audit.record({ companyId: company.id, actor, appId: 'core', action: 'revoke', resource: 'api-keys', resourceId: id, before, after });
          return after;
        }).immediate();
        return { data, text: say(ctx.lang, 'keys.revoked', { id, at: data.revokedAt }) };
      },
    },
  ],
};
