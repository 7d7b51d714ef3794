// Companies (tenants). Every other row in the database carries a company id.
import { eq, sql } from 'drizzle-orm';
import type { Drizzle } from '../db/connection.ts';
import { companies } from '../db/schema.ts';
import { newId, isoNow } from '../ids.ts';
import { fieldError } from '../errors/diwan-error.ts';

export interface Company {
  id: string;
  name: string;
  currency: string;
  createdAt: string;
}

export const companySchema = {
  type: 'object',
  required: ['id', 'name', 'currency', 'createdAt'],
  properties: {
    id: { type: 'string', pattern: '^co_[0-9a-z]+$' },
    name: { type: 'string' },
    currency: { type: 'string', description: 'ISO 4217 code; amounts are rounded to its minor units' },
    createdAt: { type: 'string', format: 'date-time' },
  },
} as const;

/** Minor-unit digits of an ISO 4217 currency, or undefined if Intl does not know it. */
export function currencyDigits(code: string): number | undefined {
  if (!/^[A-Z]{3}$/.test(code)) return undefined;
  try {
    return new Intl.NumberFormat('en', { style: 'currency', currency: code }).resolvedOptions().maximumFractionDigits;
  } catch {
    return undefined;
  }
}

export class Companies {
  // Read on every request: a prepared statement and a cache, not a query built each time.
  private cache = new Map<string, Company>();
  private byId;

  constructor(
    private orm: Drizzle,
    private now: () => number,
  ) {
    this.byId = orm.select().from(companies).where(eq(companies.id, sql.placeholder('id'))).prepare();
  }

  /** Forget cached companies (another process may have written). */
  invalidate(): void {
    this.cache.clear();
  }

  create(input: { name: string; currency?: string }): Company {
    const name = input.name?.trim();
    if (!name || name.length > 200) throw fieldError('/name', 'minLength', 'name must have 1 to 200 characters');
    const currency = (input.currency ?? 'USD').toUpperCase();
    if (currencyDigits(currency) === undefined) {
      throw fieldError('/currency', 'format', 'currency must be an ISO 4217 code', { value: input.currency });
    }
    const row = { id: newId('co'), name, currency, createdAt: isoNow(this.now()) };
    this.orm.insert(companies).values(row).run();
    return row;
  }

  get(id: string): Company | undefined {
    let c = this.cache.get(id);
    if (!c) {
      c = this.byId.get({ id });
      if (c) this.cache.set(id, c);
    }
    return c;
  }

  list(): Company[] {
    return this.orm.select().from(companies).orderBy(companies.createdAt).all();
  }
}
