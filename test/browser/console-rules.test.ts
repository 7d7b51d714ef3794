// The console follows the manifest's rules, in English and in Arabic: a payslip form shows its
// net pay computed as the figures are typed (10,000 + 2,500 − 975 = 11,525) and a broken rule
// beside the field it concerns, in the page's language, before anything is saved; a transition
// that takes input (a lead marked lost needs its reason) asks for it in a dialog, refuses it
// empty beside the field, and runs with it, keeping the reason on the lead.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { firstPartySources } from '../../core/apps/app-source.ts';
import { describeBrowser, launchBrowser, openPage, signIn, startConsoleHost, type ConsoleHost, type Lang, type TestPerson } from './harness.ts';

interface TypeMeta {
  resource: string;
  states: { name: string; label: string }[];
  transitions: { name: string; label: string }[];
}

describeBrowser('web console: forms follow the rules', () => {
  let h: ConsoleHost;
  let browser: Browser;
  let manager: TestPerson;
  const meta: Record<string, Record<string, TypeMeta>> = {};
  const leads: Record<Lang, string> = { en: '', ar: '' };

  beforeAll(async () => {
    const sources = firstPartySources().filter((s) => ['employees', 'payroll', 'crm'].includes(s.manifest.id));
    [h, browser] = await Promise.all([startConsoleHost({ sources }), launchBrowser()]);
    manager = await h.person('Manager', { name: 'Rana Manager' });
    const headers = { authorization: `Bearer ${h.keys.Manager}`, 'x-company-id': h.companyId, 'content-type': 'application/json' };
    const post = async (p: string, body: unknown) => {
      const res = await fetch(`${h.url}${p}`, { method: 'POST', headers, body: JSON.stringify(body) });
      const json = await res.json();
      if (!res.ok) throw new Error(`${p}: ${JSON.stringify(json)}`);
      return json.data;
    };
    await post('/api/v1/employees', { fullName: 'Sara Al-Harbi', jobTitle: 'Accountant', joinDate: '2019-01-01' });
    await post('/api/v1/payroll-runs', { period: '2026-01', periodStart: '2026-01-01', periodEnd: '2026-01-31', payDate: '2026-01-27' });
    for (const lang of ['en', 'ar'] as const) {
      leads[lang] = (await post('/api/v1/leads', { title: `Warehouse fit-out (${lang})` })).id;
      const res = await fetch(`${h.url}/api/v1/document-types`, { headers: { ...headers, 'accept-language': lang } });
      meta[lang] = Object.fromEntries(((await res.json()).data as TypeMeta[]).map((d) => [d.resource, d]));
    }
  });
  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  const money = (page: Page, amount: number) => page.evaluate(([a, c]) => new Intl.NumberFormat(document.documentElement.lang, { style: 'currency', currency: c }).format(a), [amount, h.currency] as const);

  for (const lang of ['en', 'ar'] as Lang[]) {
    it(`${lang}: the payslip form computes net pay as it is typed and shows a broken rule beside its field`, async () => {
      const { context, page } = await openPage(browser, lang);
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      try {
        await signIn(page, h, manager, '/d/payslips/new');
        await page.locator('form.doc-form').waitFor();
        await page.locator('#f-runId').fill('2026');
        await page.locator('[role="option"]', { hasText: '2026-01' }).click();
        await page.locator('#f-employeeId').fill('Sara');
        await page.locator('[role="option"]', { hasText: 'Sara Al-Harbi' }).click();
        await page.locator('#f-basicSalary').fill('10000');
        await page.locator('#f-housingAllowance').fill('2500');
        await page.locator('#f-socialInsurance').fill('975');
        // Nothing saved yet: the host computes it on a dry run as typing pauses.
        const net = page.locator('section.computed #computed-netPay');
        await expect.poll(() => net.textContent()).toContain(await money(page, 11_525));

        // Deductions above the pay break the manifest's rule: its message, in the page's language, beside net pay.
        await page.locator('#f-otherDeductions').fill('20000');
        await expect.poll(() => net.locator('.field-error').textContent()).toBe(
          lang === 'ar' ? 'لا يجوز أن تتجاوز الاستقطاعات الأجر: سيكون صافي الراتب سالبًا' : 'Deductions cannot exceed the pay: the net pay would be negative',
        );
        await page.locator('#f-otherDeductions').fill('100');
        await expect.poll(() => net.textContent()).toContain(await money(page, 11_425));
        expect(await net.locator('.field-error').count()).toBe(0);

        await page.locator('form.doc-form button[type="submit"]').click();
        await expect.poll(() => page.locator('dl.fields').textContent()).toContain(await money(page, 11_425));
        expect(errors).toEqual([]);
      } finally {
        await context.close();
      }
    });

    it(`${lang}: marking a lead lost asks for the reason, refuses it empty beside the field, and runs with it`, async () => {
      const { context, page } = await openPage(browser, lang);
      try {
        await signIn(page, h, manager, `/d/leads/${leads[lang]}`);
        const markLost = meta[lang].leads.transitions.find((x) => x.name === 'markLost')!.label;
        await page.locator('main .page-actions button', { hasText: markLost }).click();
        const dialog = page.locator('dialog[open]');
        await dialog.waitFor();
        await dialog.locator('button.primary').click();
        await expect.poll(() => dialog.locator('#f-reason-error').isVisible()).toBe(true);
        // The reasons are offered with the app's labels in the page's language.
        const price = await dialog.locator('#f-reason option[value="price"]').textContent();
        expect(price).not.toBe('price');
        await dialog.locator('#f-reason').selectOption('price');
        await dialog.locator('button.primary').click();
        const lost = meta[lang].leads.states.find((s) => s.name === 'lost')!.label;
        await expect.poll(() => page.locator('main .badge').first().textContent()).toBe(lost);
        // Kept as the lead's lost reason.
        expect(await page.locator('dl.fields').textContent()).toContain(price!);
      } finally {
        await context.close();
      }
    });
  }
});
