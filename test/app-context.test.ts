// What the SDK gives an app besides its documents (issue 25): the host's clock (driven in tests),
// a logger bound to the app, the company and the request, and the app's settings in the company,
// declared in its manifest and changed by the Owner over the API.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Host } from '../core/host.ts';
import { ManualClock } from '../core/kernel/clock.ts';
import { checkManifest } from '../core/apps/manifest-check.ts';
import { buildServices } from '../core/services.ts';
import { buildHost } from './db.ts';
import { ARABIC, authHeaders, createKey, expectError } from './helpers.ts';
import { tempDir } from './fixtures.ts';
import { ledgerManifest, ledgerSource } from './ledger-app.ts';

describe('the app context: clock, logger, settings', () => {
  let host: Host;
  let root: string;
  let companyId: string;
  let owner: Record<string, string>;
  let admin: Record<string, string>;
  const clock = new ManualClock(Date.UTC(2026, 2, 1, 21, 30));

  beforeAll(async () => {
    root = tempDir();
    host = await buildHost({ sources: [ledgerSource(root)], clock, config: { rateLimitPerMinute: 0 } });
    companyId = (await host.createCompany({ name: 'Ledger Co', apps: ['ledger'] })).company.id;
    owner = { ...authHeaders((await createKey(host, companyId, { role: 'Owner' })).key, companyId), 'content-type': 'application/json' };
    admin = { ...authHeaders((await createKey(host, companyId, { role: 'Admin' })).key, companyId), 'content-type': 'application/json' };
  });

  afterAll(async () => {
    await host.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  const today = async () => (await host.app.inject({ method: 'GET', url: '/api/v1/ledger/today', headers: owner })).json().data;

  it("gives the app the host's clock, which a test drives", async () => {
    expect(await today()).toMatchObject({ today: '2026-03-01', now: '2026-03-01T21:30:00.000Z' });
    clock.advance(3 * 3600_000);
    expect((await today()).today).toBe('2026-03-02');
  });

  it('answers the declared defaults until the Owner sets values, which the app then reads', async () => {
    const get = await host.app.inject({ method: 'GET', url: '/api/v1/apps/ledger/settings', headers: admin });
    expect(get.json().data).toEqual({ roundingPlaces: 2, postingMode: 'final' });
    expect((await today()).settings).toEqual({ roundingPlaces: 2, postingMode: 'final' });

    const patch = await host.app.inject({ method: 'PATCH', url: '/api/v1/apps/ledger/settings', headers: owner, payload: { roundingPlaces: 3 } });
    expect(patch.statusCode).toBe(200);
    expect(patch.json().data).toEqual({ roundingPlaces: 3, postingMode: 'final' });
    expect((await today()).settings).toEqual({ roundingPlaces: 3, postingMode: 'final' });

    const audit = await host.audit.list(companyId, { page: 1, pageSize: 5, resource: 'apps', action: 'settings' });
    expect(audit.data[0]).toMatchObject({ resource: 'apps', resourceId: 'ledger', action: 'settings', before: { roundingPlaces: 2 }, after: { roundingPlaces: 3 } });
  });

  it('refuses a wrong value, listing every problem in the caller’s language, and changes nothing', async () => {
    const res = await host.app.inject({
      method: 'PATCH', url: '/api/v1/apps/ledger/settings', headers: { ...owner, 'accept-language': 'ar' },
      payload: { roundingPlaces: 9, postingMode: 'maybe', currency: 'SAR' },
    });
    const err = expectError(res, 400, 'VALIDATION_ERROR');
    expect(err.details.map((d) => d.pointer).sort()).toEqual(['/currency', '/postingMode', '/roundingPlaces']);
    expect(err.message).toMatch(ARABIC);
    expect((await today()).settings).toEqual({ roundingPlaces: 3, postingMode: 'final' });
  });

  it('leaves changing settings to the Owner, and knows no settings of an app the company lacks', async () => {
    expectError(await host.app.inject({ method: 'PATCH', url: '/api/v1/apps/ledger/settings', headers: admin, payload: { roundingPlaces: 1 } }), 403, 'FORBIDDEN');
    expectError(await host.app.inject({ method: 'GET', url: '/api/v1/apps/payroll/settings', headers: owner }), 404, 'NOT_FOUND');
  });

  it('refuses at validation a manifest whose setting default its own type refuses', () => {
    const m = ledgerManifest();
    m.settings = [{ name: 'roundingPlaces', type: 'integer', minimum: 0, maximum: 4, default: 7, label: { en: 'Places', ar: 'المنازل' } }];
    expect(checkManifest(m).problems).toEqual([expect.objectContaining({ pointer: '/settings/0/default', rule: 'default' })]);
  });

  it('logs what the app logs with its app, company and request', async () => {
    const lines: { obj: object; msg: string }[] = [];
    const logger = { info: (obj: object, msg: string) => lines.push({ obj, msg }), warn() {}, error() {} };
    const s = await buildServices({ dbFile: ':memory:', config: { dataDir: root }, sources: [ledgerSource(tempDir())], logger }, { apps: true });
    try {
      const { company } = await s.createCompany({ name: 'Logs Co', apps: ['ledger'] });
      const ctx = s.runtime.contextFor('ledger', { company, actor: { type: 'cli', id: 'operator' }, lang: 'en', requestId: 'req-7' });
      ctx.log.info('posted', { entries: 2 });
      expect(lines).toEqual([{ obj: { entries: 2, app: 'ledger', company: company.id, requestId: 'req-7' }, msg: 'posted' }]);
    } finally {
      await s.close();
    }
  });
});
