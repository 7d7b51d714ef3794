import type { Db } from '../db.ts';
import { inList } from '../dialect.ts';

export interface EndpointRecord {
  id: string;
  companyId: string;
  url: string;
  topics: string[];
  description: string | null;
  enabled: boolean;
  /** Sealed (encrypted) by the webhooks domain; the repository never sees a secret in clear. */
  secret: string;
  previousSecret: string | null;
  /** Unix ms until which the previous secret still signs. */
  previousSecretUntil: number | null;
  secretRotatedAt: string | null;
  createdAt: string;
  updatedAt: string;
  /** `failing` (the host disabled it) or `manual`; null while enabled. */
  disabledReason: string | null;
  disabledAt: string | null;
  disabledDetail: string | null;
  /** Unix ms of the first failed attempt since the last success; null while healthy. */
  failingSince: number | null;
  /** Attempts in flight at once; null: the host default. */
  maxInFlight: number | null;
  /** Deliveries started per second; null: no throttle. */
  ratePerSecond: number | null;
  /** Headers sent with every delivery; null: none. */
  headers: Record<string, string> | null;
  /** The ed25519 signing key, sealed like the secrets; null: no asymmetric signature. */
  signingKey: string | null;
  /** Its public key (`whpk_…`). */
  publicKey: string | null;
}

/** What the health check reads of an endpoint after a failed attempt. */
export interface EndpointHealthRow {
  id: string;
  companyId: string;
  url: string;
  enabled: boolean;
  failingSince: number | null;
}

interface Raw {
  id: string;
  company_id: string;
  url: string;
  topics: string;
  description: string | null;
  enabled: number;
  secret: string;
  previous_secret: string | null;
  previous_secret_until: number | null;
  secret_rotated_at: string | null;
  created_at: string;
  updated_at: string;
  disabled_reason: string | null;
  disabled_at: string | null;
  disabled_detail: string | null;
  failing_since: number | null;
  max_in_flight: number | null;
  rate_per_second: number | null;
  headers: string | null;
  signing_key: string | null;
  public_key: string | null;
}

const numOrNull = (v: unknown) => (v === null || v === undefined ? null : Number(v));

const toRecord = (r: Raw): EndpointRecord => ({
  id: r.id, companyId: r.company_id, url: r.url, topics: JSON.parse(r.topics) as string[], description: r.description,
  enabled: Number(r.enabled) === 1, secret: r.secret, previousSecret: r.previous_secret,
  previousSecretUntil: r.previous_secret_until === null ? null : Number(r.previous_secret_until),
  secretRotatedAt: r.secret_rotated_at, createdAt: r.created_at, updatedAt: r.updated_at,
  disabledReason: r.disabled_reason, disabledAt: r.disabled_at, disabledDetail: r.disabled_detail, failingSince: numOrNull(r.failing_since),
  maxInFlight: numOrNull(r.max_in_flight), ratePerSecond: numOrNull(r.rate_per_second),
  headers: r.headers == null ? null : (JSON.parse(r.headers) as Record<string, string>), signingKey: r.signing_key ?? null, publicKey: r.public_key ?? null,
});

const values = (e: EndpointRecord) => [
  e.url, JSON.stringify(e.topics), e.description, e.enabled ? 1 : 0, e.secret, e.previousSecret, e.previousSecretUntil, e.secretRotatedAt,
  e.createdAt, e.updatedAt, e.disabledReason, e.disabledAt, e.disabledDetail, e.failingSince, e.maxInFlight, e.ratePerSecond,
  e.headers === null ? null : JSON.stringify(e.headers), e.signingKey, e.publicKey, e.companyId, e.id,
];

/** Ends endpoints' failing streaks: guarded, so that it writes nothing for one already healthy. */
export function healthyStatement(ids: readonly string[]): { sql: string; params: unknown[] } {
  const list = inList(ids);
  return { sql: `UPDATE webhook_endpoints SET failing_since = NULL WHERE id IN ${list.sql} AND failing_since IS NOT NULL`, params: list.params };
}

export class WebhookEndpointsRepo {
  constructor(private db: Db) {}

  async insert(e: EndpointRecord): Promise<void> {
    await this.db.run(
      `INSERT INTO webhook_endpoints (url, topics, description, enabled, secret, previous_secret, previous_secret_until, secret_rotated_at,
         created_at, updated_at, disabled_reason, disabled_at, disabled_detail, failing_since, max_in_flight, rate_per_second,
         headers, signing_key, public_key, company_id, id)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      values(e),
    );
  }

  /** Writes every field of the record (the caller read it in the same transaction). */
  async update(e: EndpointRecord): Promise<void> {
    await this.db.run(
      `UPDATE webhook_endpoints SET url = ?, topics = ?, description = ?, enabled = ?, secret = ?, previous_secret = ?,
         previous_secret_until = ?, secret_rotated_at = ?, created_at = ?, updated_at = ?, disabled_reason = ?, disabled_at = ?,
         disabled_detail = ?, failing_since = ?, max_in_flight = ?, rate_per_second = ?, headers = ?, signing_key = ?, public_key = ?
       WHERE company_id = ? AND id = ?`,
      values(e),
    );
  }

  async get(companyId: string, id: string): Promise<EndpointRecord | undefined> {
    const r = await this.db.get<Raw>('SELECT * FROM webhook_endpoints WHERE company_id = ? AND id = ?', [companyId, id]);
    return r && toRecord(r);
  }

  async list(companyId: string, page: number, pageSize: number): Promise<{ total: number; rows: EndpointRecord[] }> {
    const total = (await this.db.get<{ n: number }>('SELECT count(*) AS n FROM webhook_endpoints WHERE company_id = ?', [companyId]))!.n;
    const rows = await this.db.all<Raw>('SELECT * FROM webhook_endpoints WHERE company_id = ? ORDER BY seq LIMIT ? OFFSET ?', [companyId, pageSize, (page - 1) * pageSize]);
    return { total: Number(total), rows: rows.map(toRecord) };
  }

  /** Enabled endpoints of a company with their patterns: the dispatcher's index. */
  async enabledOf(companyId: string): Promise<{ id: string; topics: string[]; createdAt: string }[]> {
    const rows = await this.db.all<{ id: string; topics: string; created_at: string }>(
      'SELECT id, topics, created_at FROM webhook_endpoints WHERE company_id = ? AND enabled = 1 ORDER BY seq',
      [companyId],
    );
    return rows.map((r) => ({ id: r.id, topics: JSON.parse(r.topics) as string[], createdAt: r.created_at }));
  }

  /** Deletes the endpoint with its delivery log. */
  async remove(companyId: string, id: string): Promise<void> {
    await this.db.run('DELETE FROM webhook_attempts WHERE company_id = ? AND delivery_id IN (SELECT id FROM webhook_deliveries WHERE endpoint_id = ? AND company_id = ?)', [companyId, id, companyId]);
    await this.db.run('DELETE FROM webhook_deliveries WHERE endpoint_id = ? AND company_id = ?', [id, companyId]);
    await this.db.run('DELETE FROM webhook_endpoints WHERE id = ? AND company_id = ?', [id, companyId]);
  }

  /** Every endpoint id of a company, enabled or not. */
  async idsOf(companyId: string): Promise<string[]> {
    return (await this.db.all<{ id: string }>('SELECT id FROM webhook_endpoints WHERE company_id = ? ORDER BY seq', [companyId])).map((r) => r.id);
  }

  /** Successes: the endpoints are healthy again (no write for those that already were); one statement. */
  async markHealthy(ids: string[]): Promise<void> {
    if (!ids.length) return;
    const { sql, params } = healthyStatement(ids);
    await this.db.run(sql, params);
  }

  /**
   * A failure at `atMs`: starts the failing streak unless one runs (or, `restart`, a success in the
   * same batch came before it); answers the endpoint as it now stands.
   */
  async markFailing(id: string, atMs: number, restart = false): Promise<EndpointHealthRow | undefined> {
    await this.db.run(`UPDATE webhook_endpoints SET failing_since = ? WHERE id = ?${restart ? '' : ' AND failing_since IS NULL'}`, [atMs, id]);
    const r = await this.db.get<{ id: string; company_id: string; url: string; enabled: number; failing_since: number | null }>(
      'SELECT id, company_id, url, enabled, failing_since FROM webhook_endpoints WHERE id = ?',
      [id],
    );
    return r && { id: r.id, companyId: r.company_id, url: r.url, enabled: Number(r.enabled) === 1, failingSince: numOrNull(r.failing_since) };
  }

  /** Every stored secret (and signing key), for re-sealing under a new key. */
  async sealed(): Promise<{ id: string; secret: string; previousSecret: string | null; signingKey: string | null }[]> {
    return this.db.all('SELECT id, secret, previous_secret AS "previousSecret", signing_key AS "signingKey" FROM webhook_endpoints ORDER BY seq');
  }

  /** Stores re-sealed values; the signing key is left as it is when `signingKey` is undefined. */
  async reseal(id: string, secret: string, previousSecret: string | null, signingKey?: string | null): Promise<void> {
    if (signingKey === undefined) {
      await this.db.run('UPDATE webhook_endpoints SET secret = ?, previous_secret = ? WHERE id = ?', [secret, previousSecret, id]);
    } else {
      await this.db.run('UPDATE webhook_endpoints SET secret = ?, previous_secret = ?, signing_key = ? WHERE id = ?', [secret, previousSecret, signingKey, id]);
    }
  }
}
