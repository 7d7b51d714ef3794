// `diwan secrets rotate-key`: a new sealing key for the secrets kept at rest (webhook signing
// secrets), added to the key file with the old ones kept, and every sealed secret re-sealed with
// it in one transaction. A running server reads the new ring the first time it meets a secret
// sealed with a key it has not loaded (core/host.ts), so no restart is needed.
import { DiwanError } from '../../core/kernel/errors/diwan-error.ts';
import type { CommandGroup } from './command.ts';

export const secrets: CommandGroup = {
  name: 'secrets',
  summary: 'The keys that seal secrets at rest',
  commands: [
    {
      name: 'rotate-key',
      summary: 'Add a new sealing key (older keys kept, to open older copies) and re-seal every stored secret with it',
      examples: ['diwan secrets rotate-key --json'],
      async run(ctx) {
        // Loaded here: every command module loads on every run, and these are not light.
        const { isEncrypted, loadSecretBox, rotate } = await import('../../core/kernel/secret-box.ts');
        const { resealSecrets } = await import('../../core/webhooks/endpoints.ts');
        let rotated: ReturnType<typeof rotate>;
        try {
          rotated = rotate();
        } catch (e) {
          // No key file (keys set in DIWAN_SECRET_KEY, or none made yet): say so plainly.
          if (e instanceof Error && 'reason' in e) throw new DiwanError('CONFLICT', [{ reason: 'no_key_file', message: e.message }], { reason: e.message });
          throw e;
        }
        const services = await ctx.services();
        const { box } = loadSecretBox(process.env, { create: false });
        const resealed = await services.storage.db.transaction(() => resealSecrets(services.storage.endpoints, box, isEncrypted));
        const data = { keyId: rotated.keyId, keyFile: rotated.file, keyIds: rotated.keyIds, resealed };
        return {
          data,
          text: `New sealing key ${rotated.keyId} in ${rotated.file} (${rotated.keyIds.length} keys kept).\n${resealed} stored secret${resealed === 1 ? '' : 's'} re-sealed with it. Keep a backup of the key file: without it the secrets cannot be read.`,
        };
      },
    },
  ],
};
