// Invoicing a Saudi business, through the API alone: the seller's profile (every problem of a bad
// one at once, in Arabic and English), VAT per category rounded as ZATCA's rules say, issuing
// with gap-free numbers (50 concurrent sends), immutability after issue, credit and debit notes,
// payments, and the balance they leave. Runs on SQLite and again on PostgreSQL (vitest.config.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Host } from '../core/host.ts';
import { ARABIC, createCompany, createCustomer, expectError, makeHost, type Client, type TestCompany } from './helpers.ts';

const PROFILE = {
  legalName: { en: 'Riyadh Trading Co.', ar: 'شركة الرياض للتجارة' },
  vatNumber: '310122393500003',
  crNumber: '1010010000',
  address: { buildingNumber: '1234', street: 'King Fahd Road', district: 'Al Olaya', city: 'Riyadh', postalCode: '12214', country: 'SA' },
};

describe('invoicing a Saudi business', () => {
  let host: Host;
  let co: TestCompany;
  let api: Client;

  beforeAll(async () => {
    host = await makeHost({ config: { rateLimitPerMinute: 0 } });
    co = await createCompany(host, { name: 'Riyadh Trading', currency: 'SAR' });
    api = co.as();
  });
  afterAll(() => host.close());

  describe("the seller's profile", () => {
    it('starts with the 15 % VAT rate and no profile; the Owner sets it, any member reads it, the change is audited', async () => {
      const before = (await co.as('Viewer').get('/api/v1/company')).json().data;
      expect(before).toMatchObject({ id: co.company.id, name: 'Riyadh Trading', currency: 'SAR', vatRate: 15 });
      expect(before.vatNumber).toBeUndefined();

      const res = await api.patch('/api/v1/company', PROFILE);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data).toEqual({ ...before, ...PROFILE });
      expect((await co.as('Viewer').get('/api/v1/company')).json().data).toEqual({ ...before, ...PROFILE });

      const audit = (await api.get('/api/v1/audit-log?resource=companies')).json().data;
      expect(audit.find((e: { action: string }) => e.action === 'update')).toMatchObject({ resource: 'companies', resourceId: co.company.id });
    });

    it('is changed by the Owner only', async () => {
      for (const role of ['Admin', 'Manager', 'Member'] as const) expectError(await co.as(role).patch('/api/v1/company', { vatRate: 5 }), 403, 'FORBIDDEN');
    });

    it('refuses a VAT number of 14 digits that does not start with 3, a bad CR number and address, listing every problem, in English and Arabic', async () => {
      const bad = { vatNumber: '12345678901233', crNumber: '10100A', address: { buildingNumber: '12', postalCode: '1221', country: 'SA' } };
      const err = expectError(await api.patch('/api/v1/company', bad), 400, 'VALIDATION_ERROR');
      expect(err.details.map((d) => `${d.pointer} ${d.rule}`).sort()).toEqual([
        '/address/buildingNumber length', '/address/postalCode length', '/crNumber digits', '/crNumber length', '/vatNumber firstDigit', '/vatNumber length',
      ]);
      expect(err.details.find((d) => d.rule === 'firstDigit')!.message).toBe('vatNumber must begin with 3');
      expect(err.details.find((d) => d.pointer === '/vatNumber' && d.rule === 'length')!.message).toBe('vatNumber must have 15 digits (it has 14)');
      const ar = expectError(await api.patch('/api/v1/company', bad, { 'accept-language': 'ar' }), 400, 'VALIDATION_ERROR');
      expect(ar.details).toHaveLength(6);
      for (const d of ar.details) expect(d.message).toMatch(ARABIC);
      expect(ar.details.find((d) => d.rule === 'firstDigit')!.message).toBe('يجب أن يبدأ vatNumber بالرقم 3');
      // A number ending in another digit, and letters: each its own problem.
      const ends = expectError(await api.patch('/api/v1/company', { vatNumber: '31012239350000X' }), 400, 'VALIDATION_ERROR');
      expect(ends.details.map((d) => d.rule).sort()).toEqual(['digits', 'lastDigit']);
      // Nothing was stored.
      expect((await api.get('/api/v1/company')).json().data.vatNumber).toBe(PROFILE.vatNumber);
    });

    it('refuses wrong types at their pointers: a VAT rate above 100, a legal name without Arabic', async () => {
      const err = expectError(await api.patch('/api/v1/company', { vatRate: 150, legalName: { en: 'X' } }), 400, 'VALIDATION_ERROR');
      const pointers = err.details.map((d) => d.pointer);
      expect(pointers).toContain('/vatRate');
      expect(pointers).toContain('/legalName/ar');
    });
  });
});
