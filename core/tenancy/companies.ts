// Companies (tenants). Every other row carries a company id.
import type { CompaniesRepo } from '../storage/repos/companies.ts';
import type { ChangeFeed } from '../storage/changes.ts';
import type { Clock } from '../kernel/clock.ts';
import type { Actor } from '../kernel/actor.ts';
import type { UnitOfWork } from '../audit/unit-of-work.ts';
import { newId, isoNow } from '../kernel/ids.ts';
import { DiwanError, type ErrorDetail } from '../kernel/errors/diwan-error.ts';

export interface Company {
  id: string;
  name: string;
  currency: string;
  createdAt: string;
}

export const companySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'name', 'currency', 'createdAt'],
  properties: {
    id: { type: 'string', pattern: '^co_[0-9a-z]+$' },
    name: { type: 'string' },
    currency: { type: 'string', description: 'ISO 4217 code; amounts are rounded to its minor units' },
    createdAt: { type: 'string', format: 'date-time' },
  },
} as const;

const digitsCache = new Map<string, number | undefined>();

/** Minor-unit digits of an ISO 4217 currency, or undefined if Intl does not know it. */
export function currencyDigits(code: string): number | undefined {
  if (digitsCache.has(code)) return digitsCache.get(code);
  let digits: number | undefined;
  if (/^[A-Z]{3}$/.test(code)) {
    try {
      digits = new Intl.NumberFormat('en', { style: 'currency', currency: code }).resolvedOptions().maximumFractionDigits;
    } catch {
      digits = undefined;
    }
  }
  digitsCache.set(code, digits);
  return digits;
}

export class Companies {
  // Read on every request: cached, and dropped when any process writes companies.
  private cache = new Map<string, Company>();

  constructor(
    private repo: CompaniesRepo,
    private changes: ChangeFeed,
    private uow: UnitOfWork,
    private clock: Clock,
  ) {
    changes.on('companies', () => this.cache.clear());
  }

  /** Checks the input, listing every problem. */
  static check(input: { name?: unknown; currency?: unknown }): { name: string; currency: string } {
    const details: ErrorDetail[] = [];
    const name = typeof input.name === 'string' ? input.name.trim() : '';
    if (!name || name.length > 200) details.push({ in: 'body', pointer: '/name', rule: 'length', message: 'name must have 1 to 200 characters' });
    const currency = (typeof input.currency === 'string' ? input.currency : 'USD').toUpperCase();
    if (currencyDigits(currency) === undefined) details.push({ in: 'body', pointer: '/currency', rule: 'format', message: 'currency must be an ISO 4217 code', value: input.currency });
    if (details.length) throw new DiwanError('VALIDATION_ERROR', details, { summary: details.map((d) => d.message).join('; ') });
    return { name, currency };
  }

  /** Creates the company, audited as `actor`'s act in it (joining the caller's unit of work, if any). */
  async create(input: { name: string; currency?: string }, actor: Actor): Promise<Company> {
    const { name, currency } = Companies.check(input);
    const row = { id: newId('co'), name, currency, createdAt: isoNow(this.clock.now()) };
    return this.uow.run({ companyId: row.id, actor, appId: 'core' }, async (w) => {
      await this.repo.insert(row);
      await this.changes.bump('companies');
      await w.audit({ action: 'create', resource: 'companies', resourceId: row.id, after: row });
      return row;
    });
  }

  async get(id: string): Promise<Company | undefined> {
    let c = this.cache.get(id);
    if (!c) {
      c = await this.repo.get(id);
      if (c) this.cache.set(id, c);
    }
    return c;
  }

  /** The company, or NOT_FOUND. */
  async require(id: string): Promise<Company> {
    const c = await this.get(id);
    if (!c) throw new DiwanError('NOT_FOUND', [{ resource: 'companies', id }]);
    return c;
  }

  list(): Promise<Company[]> {
    return this.repo.list();
  }
}
