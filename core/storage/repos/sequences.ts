import type { Db } from '../db.ts';

/** Gap-free counters per company and key (an invoice's number, a naming series). */
export class SequencesRepo {
  constructor(private db: Db) {}

  /**
   * The key's next number (1 first), taken inside the caller's transaction: one statement that
   * inserts or increments the row and holds its lock to the commit, so concurrent writers take
   * turns (no duplicate) and a rollback gives the number back (no gap). Outside a transaction it
   * begins one (a lazy unit of work's first write begins it).
   */
  async next(companyId: string, key: string): Promise<number> {
    const take = async () => {
      const row = await this.db.get<{ value: number | string }>(
        'INSERT INTO sequences (company_id, key, value) VALUES (?, ?, 1) ON CONFLICT (company_id, key) DO UPDATE SET value = sequences.value + 1 RETURNING value',
        [companyId, key],
      );
      return Number(row!.value);
    };
    return this.db.inTransaction() ? take() : this.db.transaction(take);
  }

  /** The key's last number given (0 when none was). */
  async current(companyId: string, key: string): Promise<number> {
    const row = await this.db.get<{ value: number | string }>('SELECT value FROM sequences WHERE company_id = ? AND key = ?', [companyId, key]);
    return row ? Number(row.value) : 0;
  }
}
