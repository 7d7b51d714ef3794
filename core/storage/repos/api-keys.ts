import type { Db } from '../db.ts';

export interface ApiKeyRow {
  id: string;
  companyId: string;
  name: string;
  role: string;
  scopes: string[];
  secretHash: string;
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
  lastUsedAt: string | null;
  createdBy: string | null;
}

type Raw = Omit<ApiKeyRow, 'scopes'> & { scopes: string };

const COLUMNS = `id, company_id AS "companyId", name, role, scopes, secret_hash AS "secretHash", created_at AS "createdAt",
  expires_at AS "expiresAt", revoked_at AS "revokedAt", last_used_at AS "lastUsedAt", created_by AS "createdBy"`;

const parse = (r: Raw | undefined): ApiKeyRow | undefined => r && { ...r, scopes: JSON.parse(r.scopes) as string[] };

export class ApiKeysRepo {
  constructor(private db: Db) {}

  async insert(k: ApiKeyRow): Promise<void> {
    await this.db.run(
      `INSERT INTO api_keys (id, company_id, name, role, scopes, secret_hash, created_at, expires_at, revoked_at, last_used_at, created_by)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [k.id, k.companyId, k.name, k.role, JSON.stringify(k.scopes), k.secretHash, k.createdAt, k.expiresAt, k.revokedAt, k.lastUsedAt, k.createdBy],
    );
  }

  /** By id alone: what authentication looks up (the id is the key's public half). */
  async byId(id: string): Promise<ApiKeyRow | undefined> {
    return parse(await this.db.get<Raw>(`SELECT ${COLUMNS} FROM api_keys WHERE id = ?`, [id]));
  }

  async get(companyId: string, id: string): Promise<ApiKeyRow | undefined> {
    return parse(await this.db.get<Raw>(`SELECT ${COLUMNS} FROM api_keys WHERE company_id = ? AND id = ?`, [companyId, id]));
  }

  async list(companyId: string): Promise<ApiKeyRow[]> {
    const rows = await this.db.all<Raw>(`SELECT ${COLUMNS} FROM api_keys WHERE company_id = ? ORDER BY created_at, id`, [companyId]);
    return rows.map((r) => parse(r)!);
  }

  async revoke(companyId: string, id: string, at: string): Promise<void> {
    await this.db.run('UPDATE api_keys SET revoked_at = ? WHERE company_id = ? AND id = ? AND revoked_at IS NULL', [at, companyId, id]);
  }

  async touch(id: string, at: string): Promise<void> {
    await this.db.run('UPDATE api_keys SET last_used_at = ? WHERE id = ?', [at, id]);
  }
}
