// Signing secrets sealed at rest with keys kept outside the data folder (core/kernel/secret-box.ts).
// Opening a sealer also seals what an older host left in clear, and re-seals what an older key
// sealed, in one transaction.
import type { Storage } from '../storage/open.ts';
import { HostRing, isEncrypted, type HostRingOptions } from '../kernel/secret-box.ts';
import { resealSecrets, type SecretSealer } from './endpoints.ts';

export type SealerOptions = HostRingOptions;

export async function openSealer(storage: Pick<Storage, 'db' | 'endpoints'>, opts: SealerOptions = {}): Promise<SecretSealer> {
  const ring = new HostRing(opts);
  await storage.db.transaction(() => resealSecrets(storage.endpoints, ring.current, isEncrypted));
  return { seal: (s, id) => ring.encrypt(s, id), open: (s, id) => ring.decrypt(s, id) };
}
