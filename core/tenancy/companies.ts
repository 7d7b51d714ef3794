// Companies (tenants). Every other row carries a company id.
import type { CompaniesRepo } from '../storage/repos/companies.ts';
import type { ChangeFeed } from '../storage/changes.ts';
import type { Clock } from '../kernel/clock.ts';
import type { Actor } from '../kernel/actor.ts';
import type { UnitOfWork } from '../audit/unit-of-work.ts';
import { newId, isoNow } from '../kernel/ids.ts';
import { DiwanError, type ErrorDetail } from '../kernel/errors/diwan-error.ts';
import type { Lang, Translator } from '../kernel/i18n/i18n.ts';
import type { CompanyRow } from '../storage/repos/companies.ts';
import { applyProfilePatch, profileOf, profileProblems, profileProperties, type CompanyProfile } from './company-profile.ts';

/** A company and its seller's profile (what its tax invoices name). */
export interface Company extends CompanyProfile {
  id: string;
  name: string;
  currency: string;
  createdAt: string;
}

export const companySchema = {
  title: 'Company',
  type: 'object',
  additionalProperties: false,
  required: ['id', 'name', 'currency', 'createdAt', 'vatRate'],
  properties: {
    id: { type: 'string', pattern: '^co_[0-9a-z]+$' },
    name: { type: 'string' },
    currency: { type: 'string', description: 'ISO 4217 code; amounts are rounded to its minor units' },
    createdAt: { type: 'string', format: 'date-time' },
    ...profileProperties,
  },
} as const;

const fromRow = ({ profile, ...row }: CompanyRow): Company => ({ ...row, ...profileOf(profile) });

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
      return fromRow({ ...row, profile: null });
    });
  }

  /**
   * Changes the name and the seller's profile (`patch` has passed `profilePatchSchema`: the
   * route's, or the CLI's check): its forms, every problem at once in `lang`; stored and audited
   * in the request's unit of work.
   */
  async update(id: string, patch: Record<string, unknown>, scope: { actor: Actor; requestId?: string | null; lang: Lang; tr: Translator }): Promise<Company> {
    return this.uow.run({ companyId: id, actor: scope.actor, appId: 'core', requestId: scope.requestId ?? null }, async (w) => {
      const row = await this.repo.get(id);
      if (!row) throw new DiwanError('NOT_FOUND', [{ resource: 'companies', id }]);
      const before = fromRow(row);
      const nextProfile = applyProfilePatch(profileOf(row.profile), patch);
      const problems = profileProblems(nextProfile, scope.lang, scope.tr);
      const name = typeof patch.name === 'string' ? patch.name.trim() : row.name;
      if (!name) problems.push({ in: 'body', pointer: '/name', rule: 'minLength', message: scope.tr.t(scope.lang, 'rule.minLength', { field: 'name', count: 1 }) });
      if (problems.length) throw new DiwanError('VALIDATION_ERROR', problems, { summary: String(problems[0].message) });
      await this.repo.update(id, name, JSON.stringify(nextProfile));
      await this.changes.bump('companies');
      this.cache.delete(id);
      const after: Company = { id, name, currency: row.currency, createdAt: row.createdAt, ...nextProfile };
      await w.audit({ action: 'update', resource: 'companies', resourceId: id, before, after });
      return after;
    });
  }

  async get(id: string): Promise<Company | undefined> {
    let c = this.cache.get(id);
    if (!c) {
      const row = await this.repo.get(id);
      c = row && fromRow(row);
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

  async list(): Promise<Company[]> {
    return (await this.repo.list()).map(fromRow);
  }
}
