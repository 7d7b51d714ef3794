// API keys: `dwk_<id>_<secret>`. Only a SHA-256 of the secret is stored: the secret is 160
// random bits, so a fast hash is enough (a slow KDF is for low-entropy passwords), and the
// lookup by id plus a constant-time compare of the hashes leaks nothing through timing.
import { createHash, timingSafeEqual } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import type { Drizzle } from '../db/connection.ts';
import { apiKeys } from '../db/schema.ts';
import { randomToken, isoNow } from '../ids.ts';
import { DiwanError, fieldError } from '../errors/diwan-error.ts';
import { isRole, type Role } from './roles.ts';
import type { Principal } from './principal.ts';

export interface ApiKeyRecord {
  id: string;
  companyId: string;
  name: string;
  role: Role;
  scopes: string[];
  /** What can be shown of the key: its id part, never the secret. */
  hint: string;
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
  lastUsedAt: string | null;
}

export const apiKeySchema = {
  type: 'object',
  required: ['id', 'companyId', 'name', 'role', 'scopes', 'hint', 'createdAt', 'expiresAt', 'revokedAt', 'lastUsedAt'],
  properties: {
    id: { type: 'string' },
    companyId: { type: 'string' },
    name: { type: 'string' },
    role: { type: 'string', enum: ['Viewer', 'Member', 'Manager', 'Admin', 'Owner'] },
    scopes: { type: 'array', items: { type: 'string' } },
    hint: { type: 'string', description: 'The key with its secret masked' },
    createdAt: { type: 'string', format: 'date-time' },
    expiresAt: { type: ['string', 'null'], format: 'date-time' },
    revokedAt: { type: ['string', 'null'], format: 'date-time' },
    lastUsedAt: { type: ['string', 'null'], format: 'date-time' },
  },
} as const;

const KEY_PATTERN = /^dwk_([0-9a-z]{16})_([0-9a-z]{32})$/;
const sha256 = (s: string) => createHash('sha256').update(s).digest();
/** Last-used time is written at most this often per key, not on every request. */
const LAST_USED_EVERY_MS = 60_000;

type Row = typeof apiKeys.$inferSelect;

const toRecord = (r: Row): ApiKeyRecord => ({
  id: r.id,
  companyId: r.companyId,
  name: r.name,
  role: r.role as Role,
  scopes: r.scopes,
  hint: `dwk_${r.id}_…`,
  createdAt: r.createdAt,
  expiresAt: r.expiresAt,
  revokedAt: r.revokedAt,
  lastUsedAt: r.lastUsedAt,
});

export type AuthFailure = 'missing' | 'malformed' | 'unknown' | 'revoked' | 'expired';

export class ApiKeys {
  private cache = new Map<string, Row>();
  private lastUsedWritten = new Map<string, number>();

  constructor(
    private orm: Drizzle,
    private now: () => number,
  ) {}

  /** Forget cached keys (another process may have revoked one). */
  invalidate(): void {
    this.cache.clear();
  }

  create(input: { companyId: string; role: string; scopes: string[]; name?: string; expiresAt?: string | null }): {
    record: ApiKeyRecord;
    key: string;
  } {
    if (!isRole(input.role)) {
      throw fieldError('/role', 'enum', 'role must be one of Viewer, Member, Manager, Admin, Owner', {
        allowed: ['Viewer', 'Member', 'Manager', 'Admin', 'Owner'],
      });
    }
    const scopes = [...new Set(input.scopes.map((s) => s.trim()).filter(Boolean))];
    if (scopes.length === 0) throw fieldError('/scopes', 'minItems', 'scopes must name at least one resource, or *');
    const bad = scopes.find((s) => s !== '*' && !/^[a-z][a-z0-9-]*$/.test(s));
    if (bad) throw fieldError('/scopes', 'pattern', `scope "${bad}" is not a resource name or *`);
    let expiresAt: string | null = null;
    if (input.expiresAt) {
      const t = Date.parse(input.expiresAt);
      if (!Number.isFinite(t)) throw fieldError('/expiresAt', 'format', 'expiresAt must be a date-time');
      if (t <= this.now()) throw fieldError('/expiresAt', 'minimum', 'expiresAt must be in the future');
      expiresAt = isoNow(t);
    }
    const id = randomToken(16);
    const secret = randomToken(32);
    const row: Row = {
      id,
      companyId: input.companyId,
      name: input.name?.trim() || `key ${id.slice(0, 6)}`,
      role: input.role,
      scopes,
      secretHash: sha256(secret).toString('hex'),
      createdAt: isoNow(this.now()),
      expiresAt,
      revokedAt: null,
      lastUsedAt: null,
    };
    this.orm.insert(apiKeys).values(row).run();
    return { record: toRecord(row), key: `dwk_${id}_${secret}` };
  }

  list(companyId: string): ApiKeyRecord[] {
    return this.orm.select().from(apiKeys).where(eq(apiKeys.companyId, companyId)).orderBy(apiKeys.createdAt).all().map(toRecord);
  }

  get(companyId: string, id: string): ApiKeyRecord | undefined {
    const row = this.orm.select().from(apiKeys).where(and(eq(apiKeys.companyId, companyId), eq(apiKeys.id, id))).get();
    return row && toRecord(row);
  }

  revoke(companyId: string, id: string): ApiKeyRecord {
    const existing = this.get(companyId, id);
    if (!existing) throw new DiwanError('NOT_FOUND', [{ resource: 'api-keys', id }]);
    if (!existing.revokedAt) {
      this.orm
        .update(apiKeys)
        .set({ revokedAt: isoNow(this.now()) })
        .where(and(eq(apiKeys.companyId, companyId), eq(apiKeys.id, id)))
        .run();
    }
    this.cache.delete(id);
    return this.get(companyId, id)!;
  }

  /** Checks a bearer value; never says more than the failure class. */
  authenticate(bearer: string | undefined): Principal | AuthFailure {
    if (!bearer) return 'missing';
    const m = KEY_PATTERN.exec(bearer);
    if (!m) return 'malformed';
    const [, id, secret] = m;
    let row = this.cache.get(id);
    if (!row) {
      row = this.orm.select().from(apiKeys).where(eq(apiKeys.id, id)).get();
      if (!row) return 'unknown';
      this.cache.set(id, row);
    }
    const stored = Buffer.from(row.secretHash, 'hex');
    if (!timingSafeEqual(stored, sha256(secret))) return 'unknown';
    const now = this.now();
    if (row.revokedAt) return 'revoked';
    if (row.expiresAt && Date.parse(row.expiresAt) <= now) return 'expired';
    this.touch(id, now);
    return { keyId: id, companyId: row.companyId, role: row.role as Role, scopes: row.scopes };
  }

  private touch(id: string, now: number): void {
    const last = this.lastUsedWritten.get(id) ?? 0;
    if (now - last < LAST_USED_EVERY_MS) return;
    this.lastUsedWritten.set(id, now);
    this.orm.update(apiKeys).set({ lastUsedAt: isoNow(now) }).where(eq(apiKeys.id, id)).run();
  }
}
