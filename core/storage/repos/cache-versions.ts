import type { Db } from '../db.ts';

export class CacheVersionsRepo {
  constructor(private db: Db) {}

  /** Moves the scope's version on (inside the writing transaction) and answers the new version. */
  async bump(scope: string): Promise<number> {
    const row = await this.db.get<{ version: number }>(
      'INSERT INTO cache_versions (scope, version) VALUES (?, 1) ON CONFLICT (scope) DO UPDATE SET version = cache_versions.version + 1 RETURNING version',
      [scope],
    );
    // Where processes are told rather than asking (PostgreSQL), tell them: delivered at the commit.
    if (this.db.dialect.notifyChange) await this.db.get(this.db.dialect.notifyChange, [scope]);
    return Number(row!.version);
  }

  async all(): Promise<Map<string, number>> {
    const rows = await this.db.all<{ scope: string; version: number }>('SELECT scope, version FROM cache_versions');
    return new Map(rows.map((r) => [r.scope, Number(r.version)]));
  }
}
