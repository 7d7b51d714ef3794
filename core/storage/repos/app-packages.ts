// App packages the operator added: stored whole, so that every process serving the host loads
// the same bytes (and a restart or another machine needs no shared folder).
import type { Db } from '../db.ts';

export interface AppPackageRow {
  appId: string;
  version: string;
  hash: string;
  manifest: string;
  bytes: Buffer;
  createdAt: string;
}

export class AppPackagesRepo {
  constructor(private db: Db) {}

  async put(p: AppPackageRow): Promise<void> {
    await this.db.run('DELETE FROM app_packages WHERE app_id = ?', [p.appId]);
    await this.db.run('INSERT INTO app_packages (app_id, version, hash, manifest, bytes, created_at) VALUES (?, ?, ?, ?, ?, ?)', [
      p.appId, p.version, p.hash, p.manifest, p.bytes, p.createdAt,
    ]);
  }

  /** What is stored, without the bytes: enough to tell what changed. */
  list(): Promise<{ appId: string; version: string; hash: string }[]> {
    return this.db.all('SELECT app_id AS "appId", version, hash FROM app_packages ORDER BY app_id');
  }

  async get(appId: string): Promise<AppPackageRow | undefined> {
    const r = await this.db.get<AppPackageRow>(
      'SELECT app_id AS "appId", version, hash, manifest, bytes, created_at AS "createdAt" FROM app_packages WHERE app_id = ?',
      [appId],
    );
    return r && { ...r, bytes: Buffer.from(r.bytes) };
  }

  async remove(appId: string): Promise<void> {
    await this.db.run('DELETE FROM app_packages WHERE app_id = ?', [appId]);
  }
}
