// Apps' secrets (`ctx.secrets`): short values an app keeps for a company (a private key, an API
// secret), sealed with the host's secret box (core/kernel/secret-box.ts, the ring that seals the
// webhook secrets) and bound, as the cipher's additional data, to their company, app and name: a
// row copied to another company or app does not open. Values are never logged, and no route of
// the host answers them; `diwan secrets rotate-key` re-seals them with the new key, and a host
// re-seals at boot what an older key of its ring sealed.
import { HostRing, type HostRingOptions, type SecretBox } from '../kernel/secret-box.ts';
import type { AppSecretsRepo } from '../storage/repos/app-secrets.ts';
import type { Clock } from '../kernel/clock.ts';
import { isoNow } from '../kernel/ids.ts';

export type AppSecretsOptions = HostRingOptions;

/** The additional data a value is sealed with: where it belongs. */
const contextOf = (companyId: string, appId: string, name: string) => `app-secret:${companyId}:${appId}:${name}`;

export class AppSecrets {
  private readonly ring: HostRing;

  constructor(
    private readonly repo: AppSecretsRepo,
    private readonly clock: Clock,
    opts: AppSecretsOptions = {},
  ) {
    this.ring = new HostRing(opts);
  }

  async get(companyId: string, appId: string, name: string): Promise<string | undefined> {
    const sealed = await this.repo.get(companyId, appId, name);
    return sealed === undefined ? undefined : this.ring.decrypt(sealed, contextOf(companyId, appId, name));
  }

  async set(companyId: string, appId: string, name: string, value: string): Promise<void> {
    await this.repo.set(companyId, appId, name, this.ring.encrypt(value, contextOf(companyId, appId, name)), isoNow(this.clock.now()));
  }

  delete(companyId: string, appId: string, name: string): Promise<boolean> {
    return this.repo.delete(companyId, appId, name);
  }

  /**
   * At boot, as the webhook sealer does: re-seals with the current key what an older key sealed
   * (a new key put first in DIWAN_SECRET_KEY). The ring is read only when there is a secret.
   */
  async resealStale(transaction: <T>(fn: () => Promise<T>) => Promise<T>): Promise<number> {
    const rows = await this.repo.all();
    if (!rows.length) return 0;
    const box = this.ring.current;
    return rows.some((r) => box.needsReencrypt(r.value)) ? transaction(() => resealAppSecrets(this.repo, box)) : 0;
  }
}

/** Re-seals with the ring's current key every app secret an older key sealed; answers how many. Run inside a transaction. */
export async function resealAppSecrets(repo: AppSecretsRepo, box: SecretBox): Promise<number> {
  let count = 0;
  for (const row of await repo.all()) {
    if (!box.needsReencrypt(row.value)) continue;
    const context = contextOf(row.companyId, row.appId, row.name);
    await repo.set(row.companyId, row.appId, row.name, box.encrypt(box.decrypt(row.value, context), context), new Date().toISOString());
    count++;
  }
  return count;
}
