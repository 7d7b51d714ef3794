import type { Db } from '../db.ts';

export interface IdempotentReply {
  requestHash: string;
  status: number;
  body: string;
}

export class IdempotencyRepo {
  constructor(private db: Db) {}

  get(companyId: string, principalId: string, key: string): Promise<IdempotentReply | undefined> {
    return this.db.get<IdempotentReply>(
      'SELECT request_hash AS "requestHash", status, body FROM idempotency_keys WHERE company_id = ? AND key_id = ? AND idem_key = ?',
      [companyId, principalId, key],
    );
  }

  async put(companyId: string, principalId: string, key: string, reply: IdempotentReply, at: string): Promise<void> {
    await this.db.run(
      'INSERT INTO idempotency_keys (company_id, key_id, idem_key, request_hash, status, body, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      [companyId, principalId, key, reply.requestHash, reply.status, reply.body, at],
    );
  }
}
