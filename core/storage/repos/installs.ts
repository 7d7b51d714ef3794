// A company's installed apps and the app migrations it has run.
import type { Db } from '../db.ts';

export interface InstallRecord {
  companyId: string;
  appId: string;
  version: string;
  state: 'enabled' | 'disabled' | 'uninstalled';
  /** What the company installed: the manifest and the routes it served, for upgrade plans. */
  snapshot: unknown;
  installedAt: string;
  updatedAt: string;
}

/** An install without its snapshot: what serving requests needs (state and version). */
export type InstallSummary = Omit<InstallRecord, 'snapshot'>;

interface Raw {
  company_id: string;
  app_id: string;
  version: string;
  state: InstallRecord['state'];
  manifest: string;
  installed_at: string;
  updated_at: string;
}

const toRecord = (r: Raw): InstallRecord => ({
  companyId: r.company_id, appId: r.app_id, version: r.version, state: r.state,
  snapshot: JSON.parse(r.manifest), installedAt: r.installed_at, updatedAt: r.updated_at,
});

export class InstallsRepo {
  constructor(private db: Db) {}

  async ofCompany(companyId: string): Promise<InstallRecord[]> {
    return (await this.db.all<Raw>('SELECT * FROM company_apps WHERE company_id = ?', [companyId])).map(toRecord);
  }

  /** A company's installs without their snapshots (a manifest each: read and parsed only where needed). */
  async summaries(companyId: string): Promise<InstallSummary[]> {
    const rows = await this.db.all<Omit<Raw, 'manifest'>>(
      'SELECT company_id, app_id, version, state, installed_at, updated_at FROM company_apps WHERE company_id = ?',
      [companyId],
    );
    return rows.map((r) => ({ companyId: r.company_id, appId: r.app_id, version: r.version, state: r.state, installedAt: r.installed_at, updatedAt: r.updated_at }));
  }

  /** The snapshots a company's installs recorded, by app id (one app's with `appId`). */
  async snapshots(companyId: string, appId?: string): Promise<Map<string, unknown>> {
    const rows = appId
      ? await this.db.all<Pick<Raw, 'app_id' | 'manifest'>>('SELECT app_id, manifest FROM company_apps WHERE company_id = ? AND app_id = ?', [companyId, appId])
      : await this.db.all<Pick<Raw, 'app_id' | 'manifest'>>('SELECT app_id, manifest FROM company_apps WHERE company_id = ?', [companyId]);
    return new Map(rows.map((r) => [r.app_id, JSON.parse(r.manifest)]));
  }

  /** Insert or replace the company's row for the app (one statement: two processes writing at once cannot both insert). */
  async put(r: InstallRecord): Promise<void> {
    await this.db.run(
      `INSERT INTO company_apps (company_id, app_id, version, state, manifest, installed_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (company_id, app_id) DO UPDATE SET version = excluded.version, state = excluded.state, manifest = excluded.manifest,
         installed_at = excluded.installed_at, updated_at = excluded.updated_at`,
      [r.companyId, r.appId, r.version, r.state, JSON.stringify(r.snapshot), r.installedAt, r.updatedAt],
    );
  }

  async setState(companyId: string, appId: string, state: InstallRecord['state'], at: string): Promise<void> {
    await this.db.run('UPDATE company_apps SET state = ?, updated_at = ? WHERE company_id = ? AND app_id = ?', [state, at, companyId, appId]);
  }

  async remove(companyId: string, appId: string): Promise<void> {
    await this.db.run('DELETE FROM company_apps WHERE company_id = ? AND app_id = ?', [companyId, appId]);
    await this.db.run('DELETE FROM app_migrations WHERE company_id = ? AND app_id = ?', [companyId, appId]);
    await this.db.run('DELETE FROM app_settings WHERE company_id = ? AND app_id = ?', [companyId, appId]);
    await this.db.run('DELETE FROM app_secrets WHERE company_id = ? AND app_id = ?', [companyId, appId]);
    // The app's counters (keyed `<app>/<key>`: see SequencesRepo) go with its documents.
    const prefix = `${appId}/`;
    await this.db.run('DELETE FROM sequences WHERE company_id = ? AND substr(key, 1, ?) = ?', [companyId, prefix.length, prefix]);
  }

  async migrationsRun(companyId: string, appId: string): Promise<Set<string>> {
    const rows = await this.db.all<{ id: string }>('SELECT migration_id AS id FROM app_migrations WHERE company_id = ? AND app_id = ?', [companyId, appId]);
    return new Set(rows.map((r) => r.id));
  }

  async migrationRan(companyId: string, appId: string, migrationId: string, at: string): Promise<void> {
    await this.db.run('INSERT INTO app_migrations (company_id, app_id, migration_id, applied_at) VALUES (?, ?, ?, ?)', [companyId, appId, migrationId, at]);
  }

  /** What a company set of an app's settings ({} when nothing). */
  async settings(companyId: string, appId: string): Promise<Record<string, unknown>> {
    const row = await this.db.get<{ data: string }>('SELECT data FROM app_settings WHERE company_id = ? AND app_id = ?', [companyId, appId]);
    return row ? (JSON.parse(row.data) as Record<string, unknown>) : {};
  }

  async putSettings(companyId: string, appId: string, data: Record<string, unknown>, at: string): Promise<void> {
    await this.db.run(
      'INSERT INTO app_settings (company_id, app_id, data, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (company_id, app_id) DO UPDATE SET data = excluded.data, updated_at = excluded.updated_at',
      [companyId, appId, JSON.stringify(data), at],
    );
  }
}
