import type { Db } from '../db.ts';

export interface SealedSecretRow {
  companyId: string;
  appId: string;
  name: string;
  /** Sealed (core/kernel/secret-box.ts): this repo never sees a clear value. */
  value: string;
}

/** Apps' secrets per company, app and name, stored as the caller sealed them. */
export class AppSecretsRepo {
  constructor(private db: Db) {}

  async get(companyId: string, appId: string, name: string): Promise<string | undefined> {
    const row = await this.db.get<{ value: string }>('SELECT value FROM app_secrets WHERE company_id = ? AND app_id = ? AND name = ?', [companyId, appId, name]);
    return row?.value;
  }

  async set(companyId: string, appId: string, name: string, sealed: string, at: string): Promise<void> {
    await this.db.run(
      'INSERT INTO app_secrets (company_id, app_id, name, value, updated_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (company_id, app_id, name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at',
      [companyId, appId, name, sealed, at],
    );
  }

  /** True when there was one to delete. */
  async delete(companyId: string, appId: string, name: string): Promise<boolean> {
    return (await this.db.run('DELETE FROM app_secrets WHERE company_id = ? AND app_id = ? AND name = ?', [companyId, appId, name])).changes > 0;
  }

  /** Every sealed value (re-sealing after a key rotation). */
  async all(): Promise<SealedSecretRow[]> {
    return this.db.all<SealedSecretRow>('SELECT company_id AS "companyId", app_id AS "appId", name, value FROM app_secrets ORDER BY company_id, app_id, name');
  }
}
