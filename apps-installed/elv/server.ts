// The ELV app: surveys, designs, bills of quantities, systems, devices, tests, faults and
// device credentials are document types declared in its manifest. This bundle is the
// credential vault: a credential document holds the username and access level (it is what
// events carry), while its secret sits in a credentialSecret document that only an Owner can
// read through the generic API. Two routes store and reveal secrets; revealing one is audited
// and emits elv.credential.revealed with who and why.
import { defineApp, route, AppError, type AppContext, type Doc } from 'diwan/sdk';

const idParams = { type: 'object', required: ['id'], properties: { id: { type: 'string', maxLength: 64 } } } as const;

async function credentialOf(ctx: AppContext, id: string): Promise<Doc> {
  const credential = await ctx.docs('credential').get(id);
  if (!credential) throw new AppError('NOT_FOUND', [{ resource: 'elv-credentials', id }]);
  return credential;
}

async function secretOf(ctx: AppContext, credentialId: string): Promise<Doc | undefined> {
  const r = await ctx.docs('credentialSecret').list({ pageSize: 1, filters: { credentialId } });
  return r.data[0];
}

export default defineApp({
  id: 'elv',
  hooks: {
    credential: {
      // A credential's secret goes with it.
      async afterDelete(doc: Doc, ctx: AppContext) {
        const secret = await secretOf(ctx, doc.id);
        if (secret) await ctx.docs('credentialSecret').remove(secret.id);
      },
    },
  },
  routes: [
    route({
      method: 'PUT',
      url: '/elv/credentials/:id/secret',
      permission: 'elv-credentials:update',
      summary: 'Store or replace the secret of a device credential',
      description:
        'Stores the secret the first time; afterwards replaces it and sets the credential\'s lastRotatedOn to today, which emits elv.credential.rotated. The secret is never returned.',
      schema: {
        params: idParams,
        body: { type: 'object', additionalProperties: false, required: ['secret'], properties: { secret: { type: 'string', minLength: 1, maxLength: 500 } } },
        response: { 200: { type: 'object', required: ['data'], properties: { data: { type: 'object', additionalProperties: true } } } },
      },
      errors: ['CONFLICT'],
      async handler(req, ctx) {
        const { id } = req.params;
        const { secret } = req.body;
        const credential = await credentialOf(ctx, id);
        if (credential.state !== 'active') throw new AppError('CONFLICT', [{ reason: 'credential_retired', id }]);
        const existing = await secretOf(ctx, id);
        if (!existing) {
          await ctx.docs('credentialSecret').create({ credentialId: id, secret });
          await ctx.audit.record({ action: 'update', resource: 'elv-credentials', resourceId: id, after: { secret: 'stored' } });
          return { body: { data: credential } };
        }
        await ctx.docs('credentialSecret').update(existing.id, { secret });
        await ctx.audit.record({ action: 'update', resource: 'elv-credentials', resourceId: id, after: { secret: 'rotated' } });
        const today = ctx.clock.today();
        const updated = await ctx.docs('credential').update(id, { lastRotatedOn: today });
        return { body: { data: updated } };
      },
    }),
    route({
      method: 'POST',
      url: '/elv/credentials/:id/reveal',
      permission: 'elv-credentials:reveal',
      summary: 'Reveal the secret of a device credential, stating why',
      schema: {
        params: idParams,
        body: { type: 'object', additionalProperties: false, required: ['purpose'], properties: { purpose: { type: 'string', minLength: 3, maxLength: 500 } } },
        response: {
          200: {
            type: 'object',
            required: ['data'],
            properties: {
              data: {
                type: 'object',
                required: ['credentialId', 'username', 'secret'],
                properties: { credentialId: { type: 'string' }, username: { type: 'string' }, secret: { type: 'string' } },
              },
            },
          },
        },
      },
      errors: ['CONFLICT'],
      async handler(req, ctx) {
        const { id } = req.params;
        const { purpose } = req.body;
        const credential = await credentialOf(ctx, id);
        if (credential.state !== 'active') throw new AppError('CONFLICT', [{ reason: 'credential_retired', id }]);
        const secret = await secretOf(ctx, id);
        if (!secret) throw new AppError('CONFLICT', [{ reason: 'no_secret_stored', id }]);
        const device = await ctx.docs('device').get(credential.deviceId as string);
        if (!device) throw new AppError('CONFLICT', [{ reason: 'device_missing', id, deviceId: credential.deviceId }]);
        // Audit row and event both record the reveal; neither carries the secret.
        await ctx.audit.record({ action: 'reveal', resource: 'elv-credentials', resourceId: id, after: { purpose } });
        await ctx.events.emit('elv.credential.revealed', {
          credentialId: id,
          deviceId: device.id,
          projectId: device.projectId as string,
          revealedBy: ctx.actor.id,
          revealedAt: ctx.clock.iso(),
          purpose,
        });
        return { body: { data: { credentialId: id, username: credential.username as string, secret: secret.secret as string } } };
      },
    }),
  ],
});
