// What the ZATCA tests share: the sellers' profiles, and a host whose company is onboarded with
// ZATCA through the API against the stand-in (test/zatca-stand-in.ts), with a driven clock and
// a jobs ladder of the test's choosing.
import fs from 'node:fs';
import path from 'node:path';
import { buildHost, type Host } from '../core/host.ts';
import { ManualClock } from '../core/kernel/clock.ts';
import { REPO_ROOT } from '../core/apps/app-source.ts';
import type { JobsConfig } from '../core/apps/jobs.ts';
import type { Location, TestDatabase } from './db.ts';
import { createCompany, invoicingSources, type Client, type TestCompany } from './helpers.ts';
import { startZatcaStandIn, type StandIn } from './zatca-stand-in.ts';

const ADDRESS = { buildingNumber: '1234', street: 'King Fahd Road', district: 'Al Olaya', city: 'Riyadh', postalCode: '12214', country: 'SA' };

/** A seller whose e-invoices the tests issue (PATCH /api/v1/company). */
export const RIYADH_TRADING = { legalName: { en: 'Riyadh Trading Co.', ar: 'شركة الرياض للتجارة' }, vatNumber: '310122393500003', crNumber: '1010010000', address: ADDRESS };
export const OFFICE_SUPPLIES = { ...RIYADH_TRADING, legalName: { en: 'Riyadh Office Supplies Co', ar: 'شركة الرياض للأدوات المكتبية' } };

export interface ZatcaCompany {
  root: string;
  loc: Location;
  host: Host;
  co: TestCompany;
  api: Client;
  zatca: StandIn;
  clock: ManualClock;
  /** Onboards (again) as the Owner does, with a new OTP from the portal each time. */
  onboard(c?: Client): Promise<void>;
  close(): Promise<void>;
}

/** A host on `db` with the office-supplies company, its gateway the stand-in, onboarded. */
export async function zatcaCompany(db: TestDatabase, prefix: string, jobs: Partial<JobsConfig>): Promise<ZatcaCompany> {
  // Inside the repository, so that a child process resolves the app's `diwan/sdk` import.
  fs.mkdirSync(path.join(REPO_ROOT, '.tmp'), { recursive: true });
  const root = fs.mkdtempSync(path.join(REPO_ROOT, '.tmp', prefix));
  const loc = await db.location();
  const zatca = await startZatcaStandIn();
  const clock = new ManualClock(Date.now());
  const host = await buildHost({
    ...(loc.url ? { databaseUrl: loc.url } : { dbFile: loc.file }),
    sources: invoicingSources(), clock, config: { dataDir: path.join(root, 'data'), rateLimitPerMinute: 0 },
    jobs: { ...jobs, random: () => 0.5 },
  });
  const co = await createCompany(host, { name: 'Riyadh Office Supplies' });
  const api = co.as();
  const ok = (res: { statusCode: number; body: string }, what: string) => {
    if (res.statusCode !== 200) throw new Error(`${what}: ${res.statusCode} ${res.body}`);
  };
  ok(await api.patch('/api/v1/company', OFFICE_SUPPLIES), 'the seller profile');
  ok(await api.patch('/api/v1/apps/invoicing/settings', { zatcaBaseUrl: zatca.url }), 'the gateway');
  let otps = 0;
  const onboard = async (c: Client = api) => {
    zatca.onboarding.otp = String(100_000 + ++otps);
    ok(await c.post('/api/v1/company/zatca/onboard', { otp: zatca.onboarding.otp, gateway: 'simulation' }), 'onboarding');
  };
  await onboard();
  return {
    root, loc, host, co, api, zatca, clock, onboard,
    async close() {
      await host.close();
      await zatca.close();
      await loc.drop();
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
}
