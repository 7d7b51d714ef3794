// Signing secrets sealed at rest with keys kept outside the data folder (core/kernel/secret-box.ts).
// Opening a sealer also seals what an older host left in clear, and re-seals what an older key
// sealed, in one transaction.
import type { Storage } from '../storage/open.ts';
import { SecretBox, SecretBoxError, generateKey, isEncrypted, loadSecretBox } from '../kernel/secret-box.ts';
import { resealSecrets, type SecretSealer } from './endpoints.ts';

export interface SealerOptions {
  /** A ring of the caller's (tests); else DIWAN_SECRET_KEY or the key file. */
  box?: SecretBox;
  /** A throwaway host (`:memory:`) without DIWAN_SECRET_KEY gets a throwaway ring instead of the key file. */
  throwaway?: boolean;
}

export async function openSealer(storage: Pick<Storage, 'db' | 'endpoints'>, opts: SealerOptions = {}): Promise<SecretSealer> {
  const given = opts.box;
  let box = given ?? (opts.throwaway && !process.env.DIWAN_SECRET_KEY ? new SecretBox([generateKey()]) : loadSecretBox().box);
  await storage.db.transaction(() => resealSecrets(storage.endpoints, box, isEncrypted));
  return {
    seal: (s, id) => box.encrypt(s, id),
    open: (s, id) => {
      try {
        return box.decrypt(s, id);
      } catch (err) {
        // `diwan secrets rotate-key` re-sealed with a key this process has not read yet: read the ring again once.
        if (!(err instanceof SecretBoxError) || err.reason !== 'unknown_key' || given) throw err;
        box = loadSecretBox(process.env, { create: false }).box;
        return box.decrypt(s, id);
      }
    },
  };
}
