// Settings → Apps for an Owner (the upgrade's dry-run plan shown before confirming, disable and
// enable), a document type with every field type, and an axe-core check of the main pages in
// both languages (the sign-in, one-time link, invitation and members pages among them): no
// serious or critical violation.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import AxeBuilder from '@axe-core/playwright';
import { libraryManifest, tempDir, writeApp } from '../fixtures.ts';
import { SHOTS, describeBrowser, launchBrowser, openPage, shot, signIn, startConsoleHost, type ConsoleHost, type Lang, type TestPerson } from './harness.ts';
import { CLI_ACTOR } from '../../core/kernel/actor.ts';

async function serious(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']).options({ resultTypes: ['violations'] })
    // The console has no cross-origin frames: one axe.run in the page, no extra page for finishing the run.
    .setLegacyMode(true)
    .analyze();
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
}

describeBrowser('web console: apps and accessibility', () => {
  let h: ConsoleHost;
  let browser: Browser;
  let owner: TestPerson;
  const root = tempDir('diwan-console-apps-');

  beforeAll(async () => {
    [h, browser] = await Promise.all([startConsoleHost({ sources: [writeApp(root, libraryManifest())], allowLoopbackWebhooks: true }), launchBrowser()]);
    // Something in every list: a customer, an invoice, a book, an endpoint.
    const headers = { authorization: `Bearer ${h.keys.Owner}`, 'x-company-id': h.companyId, 'content-type': 'application/json' };
    const post = async (path: string, body: unknown) => (await (await fetch(`${h.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) })).json()).data;
    const customer = await post('/api/v1/customers', { name: 'Acme', email: 'ap@acme.example' });
    await post('/api/v1/invoices', { customerId: customer.id, date: '2026-11-01', dueDate: '2026-11-30', lines: [{ description: 'Audit', quantity: 3, unitPrice: 250 }] });
    await post('/api/v1/books', { title: 'Season of Migration to the North', pages: 169, genre: 'novel', published: '1966-01-01', price: 45.5, available: true });
    await post('/api/v1/webhook-endpoints', { url: 'http://127.0.0.1:9/diwan', topics: ['invoice.*'], description: 'Accounting' });
    owner = await h.person('Owner', { name: 'Noura Owner' });
    await h.person('Member', { name: 'Hind Member' });
    await h.invite('waiting@invited.example', 'Viewer');
  });
  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  it('en: an Owner upgrades an app after seeing its plan, disables and enables it', async () => {
    const v2 = libraryManifest('1.1.0', {
      documentTypes: [...libraryManifest().documentTypes!, { name: 'shelf', resource: 'shelves', idPrefix: 'sh', label: { en: 'Shelf', ar: 'رف' }, fields: [{ name: 'code', type: 'string', required: true, label: { en: 'Code', ar: 'الرمز' } }] }],
    });
    await h.host.runtime.load(writeApp(root, v2), { replacing: true });
    const { context, page } = await openPage(browser, 'en');
    try {
      await signIn(page, h, owner);
      const toApps = async () => {
        await page.locator('header.topbar a.settings-link').click();
        await page.locator('nav#nav a[href="/settings/apps"]').click();
      };
      // The launcher's list of apps, reached without reloading the page.
      const appLinks = async () => {
        await page.locator('header.topbar a.brand').click();
        await page.locator('main .launcher-grid').waitFor();
        return page.locator('nav#nav a[href="/a/library"]').count();
      };
      await toApps();
      const card = page.locator('li.card', { hasText: 'Library' });
      await card.locator('button', { hasText: 'Upgrade' }).click();
      const dialog = page.locator('dialog[open]');
      await dialog.waitFor();
      expect(await dialog.textContent()).toContain('1.0.0');
      expect(await dialog.textContent()).toContain('+ shelf');
      await shot(page, 'apps-upgrade-plan-en');
      await dialog.locator('button.primary').click();
      await page.locator('[role="status"].banner-success').waitFor();
      await expect.poll(() => card.textContent()).toContain('1.1.0');
      // The new type is in the workspace at once: the app's menu opens it.
      expect(await appLinks()).toBe(1);
      await page.locator('nav#nav a[href="/a/library"]').click();
      await page.locator('nav#nav a[href="/d/shelves"]').waitFor();

      await toApps();
      await card.locator('button', { hasText: 'Disable' }).click();
      await page.locator('dialog[open] button.danger').click();
      await page.locator('[role="status"].banner-success').waitFor();
      expect(await appLinks()).toBe(0);
      await toApps();
      await card.locator('button', { hasText: 'Enable' }).click();
      await page.locator('[role="status"].banner-success').waitFor();
      await expect.poll(() => card.textContent()).toContain('Enabled');
      await shot(page, 'apps-en');
      expect(await appLinks()).toBe(1);
    } finally {
      await context.close();
    }
  });

  // axe takes about a second a page here, so each page is checked in one language: the pages
  // where layout or wording differ most (lists, forms, tables) in Arabic, the others in English.
  const check = async (page: Page, found: Record<string, string[]>, name: string) => {
    const v = await serious(page);
    if (v.length) found[name] = v;
  };

  it('en: sign-in, the one-time link, the invitation, home, the invoice form with errors, API keys, a new webhook and apps have no serious or critical axe violations', async () => {
    const { context, page } = await openPage(browser, 'en');
    const found: Record<string, string[]> = {};
    try {
      await page.goto(`${h.url}/signin`);
      await page.locator('input[name="email"]').waitFor();
      await check(page, found, 'sign-in');
      const { token } = await h.host.people.createWithLink({ companyId: h.companyId, actor: CLI_ACTOR, appId: 'core' }, { email: 'linked@people.example', name: 'Linked', role: 'Viewer' });
      await page.goto(`${h.url}/signin#${token}`);
      await page.locator('input[name="new-password"]').waitFor();
      await page.locator('input[name="new-password"]').fill('short');
      await page.locator('input[name="repeat-password"]').fill('short');
      await page.locator('form button[type="submit"]').click();
      await page.locator('#f-password-error').waitFor();
      await check(page, found, 'one-time link with an error');
      await page.goto(`${h.url}${await h.invite('a11y@invited.example', 'Member')}`);
      await page.locator('input[name="name"]').waitFor();
      await check(page, found, 'invitation (new account)');
      await page.locator('input[name="account"][value="existing"]').check();
      await check(page, found, 'invitation (existing account)');
      await signIn(page, h, owner);
      await page.locator('main .launcher-grid').waitFor();
      await check(page, found, 'home');
      await page.keyboard.press('Control+K');
      await page.locator('#palette-input').fill('inv');
      await page.locator('#palette-list [role="option"]').first().waitFor();
      await check(page, found, 'palette');
      await page.keyboard.press('Escape');
      await page.goto(`${h.url}/d/invoices/new`);
      await page.locator('form.doc-form button[type="submit"]').click();
      await page.locator('[role="alert"]').waitFor();
      // The alert announces the refusal; focus moves to the first field in error.
      await page.waitForFunction(() => document.activeElement?.getAttribute('aria-invalid') === 'true');
      expect(await page.evaluate(() => document.activeElement?.id)).toBe(await page.locator('[aria-invalid="true"]').first().getAttribute('id'));
      await check(page, found, 'invoice form with errors');
      await page.goto(`${h.url}/settings/developers/api-keys`);
      await page.locator('main table').waitFor();
      await page.locator('main .page-actions button.primary').click();
      await page.locator('fieldset label.check input').first().uncheck();
      await check(page, found, 'API keys with the create form');
      await page.goto(`${h.url}/settings/developers/webhooks`);
      await page.locator('main table').waitFor();
      await shot(page, 'webhooks-en');
      await page.locator('main .page-actions button.primary').click();
      await page.locator('fieldset.topics details summary').first().click();
      await check(page, found, 'webhooks with the create form');
      await page.goto(`${h.url}/settings/apps`);
      await page.locator('li.card').first().waitFor();
      await check(page, found, 'apps');
      expect(found).toEqual({});
    } finally {
      await context.close();
    }
  });

  it('ar: the invoice list and detail, a form with every field type, a webhook endpoint, the audit log, the members and the person menu have no serious or critical axe violations', async () => {
    const { context, page } = await openPage(browser, 'ar');
    const found: Record<string, string[]> = {};
    try {
      if (SHOTS) {
        const { token } = await h.host.people.createWithLink({ companyId: h.companyId, actor: CLI_ACTOR, appId: 'core' }, { email: 'linked-ar@people.example', name: 'مرتبط', role: 'Viewer' });
        await page.goto(`${h.url}/signin#${token}`);
        await page.locator('input[name="new-password"]').waitFor();
        await shot(page, 'signin-link-ar');
      }
      await signIn(page, h, owner, '/d/invoices');
      await page.locator('main tbody tr').first().waitFor();
      await page.locator('details.filters summary').click();
      await check(page, found, 'invoice list');
      await shot(page, 'invoice-list-filters-ar');
      await page.locator('main tbody th a').first().click();
      await page.locator('dl.fields').waitFor();
      await check(page, found, 'invoice detail');
      await page.goto(`${h.url}/d/books/new`);
      await page.locator('#f-genre').waitFor();
      await check(page, found, 'book form (every field type)');
      await shot(page, 'book-form-ar');
      await page.goto(`${h.url}/settings/developers/webhooks`);
      await page.locator('main tbody th a').first().click();
      await page.locator('#test-topic').waitFor();
      await check(page, found, 'webhook endpoint');
      await shot(page, 'webhook-endpoint-ar');
      await page.goto(`${h.url}/settings/developers/audit-log`);
      await page.locator('main tbody tr').first().waitFor();
      await check(page, found, 'audit log');
      await page.goto(`${h.url}/settings/members`);
      await page.locator('table.invitations tbody tr').first().waitFor();
      await page.locator('main .page-actions button.primary').click();
      await page.locator('header button.person').click();
      await page.locator('#person-menu').waitFor();
      await check(page, found, 'members with the invite form, and the person menu');
      expect(found).toEqual({});
    } finally {
      await context.close();
    }
  });
});
