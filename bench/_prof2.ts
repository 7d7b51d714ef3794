import { buildHost } from '../core/host.ts';
import { firstPartySources } from '../core/apps/app-source.ts';
import { DocType } from '../core/apps/doc-type.ts';
const APPS = ['employees', 'payroll', 'invoicing'];
const acc: Record<string, number> = {};
for (const m of ['refreshAggregates', 'create', 'applyRules', 'checkReferences', 'stored', 'write', 'followAggregates', 'emit', 'checkUnique', 'runEffects', 'hook'] as const) {
  const orig = (DocType.prototype as any)[m];
  (DocType.prototype as any)[m] = function (...a: unknown[]) {
    const t0 = performance.now();
    const r = orig.apply(this, a);
    if (r instanceof Promise) return r.finally(() => { acc[m] = (acc[m] ?? 0) + performance.now() - t0; });
    acc[m] = (acc[m] ?? 0) + performance.now() - t0;
    return r;
  };
}
const host = await buildHost({ dbFile: ':memory:', sources: firstPartySources().filter((s) => APPS.includes(s.manifest.id)), logger: false, config: { rateLimitPerMinute: 0 } });
const { company } = await host.createCompany({ name: 'Bench', currency: 'SAR', apps: APPS });
const { key } = await host.keys.create({ companyId: company.id, actor: { type: 'cli', id: 'bench' }, appId: 'core' }, { role: 'Owner', scopes: ['*'] });
const headers = { authorization: `Bearer ${key}`, 'x-company-id': company.id, 'content-type': 'application/json' };
const post = async (url: string, body: unknown) => (await host.app.inject({ method: 'POST', url, headers, payload: JSON.stringify(body) })).json().data.id as string;
const employeeId = await post('/api/v1/employees', { fullName: 'Bench', jobTitle: 'Clerk', joinDate: '2020-01-01' });
const runId = await post('/api/v1/payroll-runs', { period: '2026-01', periodStart: '2026-01-01', periodEnd: '2026-01-31', payDate: '2026-01-27' });
const slip = JSON.stringify({ runId, employeeId, basicSalary: 10_000, housingAllowance: 2_500, transportAllowance: 500, socialInsurance: 975 });
const N = Number(process.argv[2] ?? 4000);
for (let pass = 0; pass < 2; pass++) {
  for (const k of Object.keys(acc)) delete acc[k];
  const t0 = performance.now();
  for (let i = 0; i < N; i++) {
    const r = await host.app.inject({ method: 'POST', url: '/api/v1/payslips', headers, payload: slip });
    if (r.statusCode !== 201) throw new Error(r.body);
  }
  console.log('per create µs', ((performance.now() - t0) * 1000 / N).toFixed(0), Object.entries(acc).map(([k, v]) => `${k}=${(v * 1000 / N).toFixed(1)}`).join(' '));
}
await host.close();
const T = (globalThis as any).__T;
console.log(Object.entries(T).map(([k, v]) => `${k}=${((v as number) * 1000 / (2 * N)).toFixed(1)}`).join(' '));
