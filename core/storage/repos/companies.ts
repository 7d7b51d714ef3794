import type { Db } from '../db.ts';

export interface CompanyRow {
  id: string;
  name: string;
  currency: string;
  createdAt: string;
  /** The seller's profile as JSON text (null until one is set). */
  profile: string | null;
}

const COLUMNS = 'id, name, currency, created_at AS "createdAt", profile';

export class CompaniesRepo {
  constructor(private db: Db) {}

  async insert(c: Omit<CompanyRow, 'profile'>): Promise<void> {
    await this.db.run('INSERT INTO companies (id, name, currency, created_at) VALUES (?, ?, ?, ?)', [c.id, c.name, c.currency, c.createdAt]);
  }

  get(id: string): Promise<CompanyRow | undefined> {
    return this.db.get<CompanyRow>(`SELECT ${COLUMNS} FROM companies WHERE id = ?`, [id]);
  }

  async update(id: string, name: string, profile: string): Promise<void> {
    await this.db.run('UPDATE companies SET name = ?, profile = ? WHERE id = ?', [name, profile, id]);
  }

  list(): Promise<CompanyRow[]> {
    return this.db.all<CompanyRow>(`SELECT ${COLUMNS} FROM companies ORDER BY created_at, id`);
  }
}
