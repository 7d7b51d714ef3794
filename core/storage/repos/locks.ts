import type { Db } from '../db.ts';

/** Named locks held to the end of the writing transaction (a uniqueness check and its insert). */
export class LocksRepo {
  constructor(private db: Db) {}

  /**
   * Holds `name` until the current transaction ends (begun here in a lazy unit of work), waiting
   * while another transaction holds it. Where writes are serial (SQLite) beginning is enough.
   */
  async hold(name: string): Promise<void> {
    const sql = this.db.dialect.lock;
    const take = async () => {
      if (sql) await this.db.get(sql, [name]);
    };
    await (this.db.inTransaction() ? take() : this.db.transaction(take));
  }
}
