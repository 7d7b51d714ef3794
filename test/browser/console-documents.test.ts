// Journeys through the generated document pages, in English and in Arabic: a Member signs in,
// opens the app from the menu, creates a customer and an invoice through the forms, sends the
// invoice, sees the list with money formatted; a Viewer joins through an invitation link, sees
// no create button and is refused (403) when forcing the request; the invoicing app's own page
// uses the person's session.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { PASSWORD, describeBrowser, launchBrowser, openPage, sessionCookie, shot, signIn, startConsoleHost, type ConsoleHost, type Lang, type TestPerson } from './harness.ts';

interface TypeMeta {
  resource: string;
  label: string;
  labelPlural: string;
  states: { name: string; label: string }[];
  transitions: { name: string; label: string }[];
}

describeBrowser('web console: documents', () => {
  let h: ConsoleHost;
  let browser: Browser;
  let member: TestPerson;
  const meta: Record<string, Record<string, TypeMeta>> = {};

  beforeAll(async () => {
    [h, browser] = await Promise.all([startConsoleHost(), launchBrowser()]);
    member = await h.person('Member', { name: 'Huda Member' });
    // One invoice from the start, so each journey stands on its own.
    const headers = { authorization: `Bearer ${h.keys.Member}`, 'x-company-id': h.companyId, 'content-type': 'application/json' };
    const post = async (path: string, body: unknown) => (await (await fetch(`${h.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) })).json()).data;
    const customer = await post('/api/v1/customers', { name: 'Seed Customer' });
    await post('/api/v1/invoices', { customerId: customer.id, date: '2026-10-01', dueDate: '2026-10-31', lines: [{ description: 'Retainer', quantity: 1, unitPrice: 500 }] });
    for (const lang of ['en', 'ar'] as const) {
      const res = await fetch(`${h.url}/api/v1/document-types`, { headers: { authorization: `Bearer ${h.keys.Viewer}`, 'x-company-id': h.companyId, 'accept-language': lang } });
      meta[lang] = Object.fromEntries(((await res.json()).data as TypeMeta[]).map((d) => [d.resource, d]));
    }
  });
  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  /** Money as the page's own Intl formats it for the page's language. */
  const money = (page: Page, amount: number) => page.evaluate(([a, c]) => new Intl.NumberFormat(document.documentElement.lang, { style: 'currency', currency: c }).format(a), [amount, h.currency] as const);

  for (const lang of ['en', 'ar'] as Lang[]) {
    it(`${lang}: signs in, opens invoicing from the menu, creates a customer and an invoice, sends it, lists it with money formatted`, async () => {
      const { context, page } = await openPage(browser, lang);
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      try {
        await page.goto(`${h.url}/`);
        await page.locator('input[name="email"]').waitFor();
        expect(await page.getAttribute('html', 'dir')).toBe(lang === 'ar' ? 'rtl' : 'ltr');
        expect(await page.getAttribute('html', 'lang')).toBe(lang);
        if (lang === 'ar') await shot(page, 'sign-in-ar');
        await signIn(page, h, member);
        await page.locator('main .launcher-grid').waitFor();
        await shot(page, `home-${lang}`);
        await page.locator('main a.app-tile[href="/a/invoicing"]').click();

        const customerName = lang === 'ar' ? 'مؤسسة نورة التجارية' : 'Noura Trading';
        // The menu's entry opens the customers list.
        await page.locator('nav#nav a[href="/d/customers"]').click();
        await expect.poll(() => page.locator('main h1').textContent()).toBe(meta[lang].customers.labelPlural);
        await page.locator('main a[href="/d/customers/new"]').click();
        await page.locator('#f-name').fill(customerName);
        await page.locator('#f-email').fill('ap@noura.example');
        await page.locator('form.doc-form button[type="submit"]').click();
        await expect.poll(() => page.locator('main h1').textContent()).toBe(customerName);
        await page.locator('[role="status"].banner-success').waitFor();

        // The invoice form: an empty submit shows each error next to its field.
        await page.locator('nav#nav a[href="/d/invoices"]').click();
        await page.locator('main a[href="/d/invoices/new"]').click();
        await page.locator('form.doc-form').waitFor();
        await page.locator('form.doc-form button[type="submit"]').click();
        await page.locator('[role="alert"]').waitFor();
        await expect.poll(() => page.locator('#f-customerId-error').isVisible()).toBe(true);
        expect(await page.locator('#f-customerId').getAttribute('aria-invalid')).toBe('true');
        expect(await page.locator('#f-lines-0-quantity-error').isVisible()).toBe(true);
        await shot(page, `invoice-form-errors-${lang}`);

        await page.locator('#f-customerId').fill(customerName.slice(0, 5));
        await page.locator('[role="option"]', { hasText: customerName }).click();
        await page.locator('#f-date').fill('2026-11-01');
        await page.locator('#f-dueDate').fill('2026-11-30');
        await page.locator('#f-lines-0-description').fill(lang === 'ar' ? 'تدقيق' : 'Audit');
        await page.locator('#f-lines-0-quantity').fill('2');
        await page.locator('#f-lines-0-unitPrice').fill('1150.5');
        await page.locator('fieldset.lines > button').click();
        await page.locator('#f-lines-1-description').fill(lang === 'ar' ? 'سفر' : 'Travel');
        await page.locator('#f-lines-1-quantity').fill('1');
        await page.locator('#f-lines-1-unitPrice').fill('99');
        await page.locator('form.doc-form button[type="submit"]').click();

        // The detail page: draft, then sent through the transition button.
        const invoices = meta[lang].invoices;
        const state = (name: string) => invoices.states.find((s) => s.name === name)!.label;
        await expect.poll(() => page.locator('main .badge').first().textContent()).toBe(state('draft'));
        // 2 × 1,150.50 + 99 = 2,400.00 before VAT; with 15 % VAT (360.00) the invoice totals 2,760.00.
        const subtotal = await money(page, 2400);
        const total = await money(page, 2760);
        expect(await page.locator('dl.fields').textContent()).toContain(subtotal);
        expect(await page.locator('dl.fields').textContent()).toContain(total);
        const send = invoices.transitions.find((x) => x.name === 'send')!.label;
        await page.locator('main .page-actions button', { hasText: send }).click();
        // A send can take more than the poll's default second while other files' hosts load the two cores.
        await expect.poll(() => page.locator('main .badge').first().textContent(), { timeout: 10_000 }).toBe(state('sent'));
        await expect.poll(() => page.locator('main .page-actions button', { hasText: send }).count()).toBe(0);
        await shot(page, `invoice-detail-${lang}`);

        // The list: the invoice with its customer's name, its total formatted, its state.
        await page.locator('main .crumbs a').click();
        const row = page.locator('main tbody tr').first();
        await expect.poll(() => row.textContent()).toContain(total);
        await expect.poll(() => row.textContent()).toContain(customerName);
        expect(await row.textContent()).toContain(state('sent'));
        await shot(page, `invoice-list-${lang}`);

        // A full load of a page, signed in, shows its data. (How fast is measured by
        // bench/console.ts against a static page in the same run, not timed here.)
        await page.goto(`${h.url}/d/invoices`);
        await expect.poll(() => page.locator('main tbody tr').first().textContent()).toContain(total);

        // Filter by state through the filter form.
        await page.locator('details.filters summary').click();
        await page.locator('#f-filter-state').selectOption('paid');
        await page.locator('details.filters button[type="submit"]').click();
        await page.locator('main p.empty').waitFor();
        expect(page.url()).toContain('state=paid');
        expect(errors).toEqual([]);
      } finally {
        await context.close();
      }
    });

    it(`${lang}: a Viewer joins with an invitation link, sees no create, edit or transition buttons, and is refused (403) when forcing a create`, async () => {
      const email = `viewer-${lang}@invited.example`;
      const link = await h.invite(email, 'Viewer');
      const { context, page } = await openPage(browser, lang);
      try {
        await page.goto(`${h.url}${link}`);
        await page.locator('input[name="name"]').waitFor();
        if (lang === 'en') await shot(page, 'invite-en');
        await page.locator('input[name="name"]').fill(lang === 'ar' ? 'سارة المشاهدة' : 'Sara Viewer');
        await page.locator('input[name="new-password"]').fill(PASSWORD);
        await page.locator('input[name="repeat-password"]').fill(PASSWORD);
        if (lang === 'ar') await shot(page, 'invite-ar');
        await page.locator('form button[type="submit"]').click();
        await page.locator('header.topbar').waitFor();
        // Of Settings, a Viewer reads the company's profile (a tax invoice names it) and nothing else.
        const settings = await page.locator('a[href^="/settings"]').evaluateAll((as) => [...new Set(as.map((a) => a.getAttribute('href')))]);
        expect(settings).toEqual(['/settings/company']);
        await page.locator('main a.app-tile[href="/a/invoicing"]').click();
        await page.locator('nav#nav a[href="/d/invoices"]').click();
        await page.locator('main table, main p.empty').first().waitFor();
        expect(await page.locator('main a[href="/d/invoices/new"]').count()).toBe(0);
        await page.locator('main tbody th a').first().click();
        await page.locator('dl.fields').waitFor();
        expect(await page.locator('main .page-actions button, main .page-actions a').count()).toBe(0);

        await page.goto(`${h.url}/d/customers/new`);
        await page.locator('#f-name').fill('Forced');
        await page.locator('form.doc-form button[type="submit"]').click();
        const alert = page.locator('[role="alert"]');
        await alert.waitFor();
        // Forced from outside the console, with the Viewer's own cookie and CSRF token.
        const cookie = await sessionCookie(context);
        const csrf = (await (await fetch(`${h.url}/api/v1/session`, { headers: { cookie } })).json()).data.csrfToken;
        const api = await fetch(`${h.url}/api/v1/customers`, {
          method: 'POST',
          headers: { cookie, 'x-csrf-token': csrf, 'x-company-id': h.companyId, 'accept-language': lang, 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'Forced' }),
        });
        expect(api.status).toBe(403);
        const body = await api.json();
        expect(body.error.details[0]).toMatchObject({ permission: 'customers:create', reason: 'role' });
        expect(await alert.textContent()).toContain(body.error.message);
        expect(await alert.textContent()).toContain('FORBIDDEN');
        await shot(page, `viewer-forbidden-${lang}`);
      } finally {
        await context.close();
      }
    });
  }

  it("ar: an app's own web bundle mounts in the shell with the language and the company, and writes with the person's session", async () => {
    const headers = { authorization: `Bearer ${h.keys.Member}`, 'x-company-id': h.companyId, 'content-type': 'application/json' };
    const customer = (await (await fetch(`${h.url}/api/v1/customers`, { method: 'POST', headers, body: JSON.stringify({ name: 'Bundle Customer' }) })).json()).data;
    const draft = (await (await fetch(`${h.url}/api/v1/invoices`, { method: 'POST', headers, body: JSON.stringify({ customerId: customer.id, date: '2026-11-02', dueDate: '2026-12-02', lines: [{ description: 'Bundle', quantity: 1, unitPrice: 10 }] }) })).json()).data;
    const { context, page } = await openPage(browser, 'ar');
    try {
      await signIn(page, h, member, '/a/invoicing');
      const frame = page.locator('iframe.app-frame');
      await frame.waitFor();
      const src = String(await frame.getAttribute('src'));
      expect(src).toContain('/apps/invoicing/');
      expect(src).toContain('lang=ar');
      expect(src).toContain(`company=${h.companyId}`);
      const inner = page.frameLocator('iframe.app-frame');
      await expect.poll(() => inner.locator('h1').textContent()).toBe('الفوترة');
      expect(await inner.locator('html').getAttribute('dir')).toBe('rtl');
      await expect.poll(() => inner.locator('#invoices li').count()).toBeGreaterThan(0);
      // No key in the page's storage: the bundle's requests ride on the session cookie, and its
      // write carries the CSRF token the shell handed it.
      expect(await page.evaluate(() => JSON.stringify({ ...sessionStorage }))).toBe('{}');
      await inner.locator(`#invoices li[data-id="${draft.id}"] button`).click();
      await expect.poll(() => inner.locator('#status').textContent()).toContain(draft.id);
      await expect.poll(() => inner.locator(`#invoices li[data-id="${draft.id}"]`).textContent()).toContain('sent');
      const audit = await fetch(`${h.url}/api/v1/audit-log?resource=invoices&resourceId=${draft.id}&action=send`, { headers: { authorization: `Bearer ${h.keys.Owner}`, 'x-company-id': h.companyId } });
      expect((await audit.json()).data[0].actor).toEqual({ type: 'user', id: member.id });
    } finally {
      await context.close();
    }
  });

  it('ar at 375 px: the menu folds behind a button, nothing overflows, the language switch works', async () => {
    const { context, page } = await openPage(browser, 'ar', { width: 375 });
    try {
      await signIn(page, h, member, '/d/invoices');
      await page.locator('main table').waitFor();
      const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      expect(await overflow()).toBeLessThanOrEqual(0);
      expect(await page.locator('nav#nav').isVisible()).toBe(false);
      await shot(page, 'invoice-list-ar-375');
      await page.locator('.menu-toggle').click();
      expect(await page.locator('.menu-toggle').getAttribute('aria-expanded')).toBe('true');
      await page.locator('nav#nav a[href="/d/invoices"]').waitFor();
      await shot(page, 'menu-ar-375');
      await page.locator('nav#nav a[href="/d/invoices"]').click();
      await page.locator('main tbody th a').first().click();
      await page.locator('dl.fields').waitFor();
      expect(await overflow()).toBeLessThanOrEqual(0);
      // A title without a title field is the type and the id, one long word that wraps rather
      // than widening the page: an id of wide letters would not fit at 375 px.
      await page.locator('main h1').evaluate((el) => (el.textContent = `${el.textContent!.split(' ')[0]} inv_${'w'.repeat(30)}`));
      expect(await overflow()).toBeLessThanOrEqual(0);
      await shot(page, 'invoice-detail-ar-375');
      await page.goto(`${h.url}/d/invoices/new`);
      await page.locator('form.doc-form').waitFor();
      expect(await overflow()).toBeLessThanOrEqual(0);
      await shot(page, 'invoice-form-ar-375');

      // English from the switch, remembered on the next load.
      await page.locator('header button.lang').click();
      await expect.poll(() => page.getAttribute('html', 'dir')).toBe('ltr');
      await page.reload();
      await page.locator('form.doc-form').waitFor();
      expect(await page.getAttribute('html', 'lang')).toBe('en');
      expect(await page.locator('main h1').textContent()).toBe('New Invoice');
    } finally {
      await context.close();
    }
  });
});
