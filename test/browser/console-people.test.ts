// People in the browser: the first Owner's one-time link (a password set, then in), password
// change and sign-out from the person's menu; Settings → Members (roles within one's own, an
// invitation link shown once and copied, open invitations, a role changed, a member removed);
// a person in two companies switching between them in the shell and nowhere else; a session
// cookie refused for a company its person is not a member of.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { CLI_ACTOR } from '../../core/kernel/actor.ts';
import { PASSWORD, describeBrowser, launchBrowser, openPage, sessionCookie, shot, signIn, startConsoleHost, type ConsoleHost } from './harness.ts';

describeBrowser('web console: people', () => {
  let h: ConsoleHost;
  let browser: Browser;
  let second: { id: string; name: string };
  let third: { id: string; name: string };

  beforeAll(async () => {
    [h, browser] = await Promise.all([startConsoleHost(), launchBrowser()]);
    second = (await h.host.createCompany({ name: 'Zahra Foods', currency: 'AED', apps: ['invoicing'] })).company;
    third = (await h.host.createCompany({ name: 'Other Holding', apps: ['invoicing'] })).company;
  });
  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  const api = (path: string, cookie: string, company: string, init: { method?: string; csrf?: string; body?: unknown } = {}) =>
    fetch(`${h.url}${path}`, {
      method: init.method ?? 'GET',
      headers: { cookie, 'x-company-id': company, ...(init.csrf ? { 'x-csrf-token': init.csrf } : {}), ...(init.body ? { 'content-type': 'application/json' } : {}) },
      body: init.body ? JSON.stringify(init.body) : undefined,
    });

  it('en: the first Owner opens the one-time link, sets a password and is in; changes it; signs out, which ends the session', async () => {
    const { token } = await h.host.people.createWithLink({ companyId: h.companyId, actor: CLI_ACTOR, appId: 'core' }, { email: 'noura@owner.example', name: 'Noura Al-Harbi', role: 'Owner' });
    const { context, page } = await openPage(browser, 'en');
    try {
      await page.goto(`${h.url}/signin#${token}`);
      await page.locator('input[name="new-password"]').waitFor();
      // The token leaves the address at once.
      expect(page.url()).toBe(`${h.url}/signin`);
      await shot(page, 'signin-link-en');
      await page.locator('input[name="new-password"]').fill(PASSWORD);
      await page.locator('input[name="repeat-password"]').fill(`${PASSWORD}?`);
      await page.locator('form button[type="submit"]').click();
      await expect.poll(() => page.locator('#f-repeat-error').textContent()).toBe('The two passwords differ.');
      await page.locator('input[name="repeat-password"]').fill(PASSWORD);
      await page.locator('form button[type="submit"]').click();
      await page.locator('header.topbar').waitFor();
      expect(await page.locator('header button.person').textContent()).toContain('Noura Al-Harbi');
      expect(await page.locator('header .company').textContent()).toBe('Noura Trading Co');
      // An Owner sees every settings page, from Settings in the header.
      await page.locator('header.topbar a.settings-link').click();
      for (const href of ['/settings/developers/api-keys', '/settings/members', '/settings/apps']) await page.locator(`nav#nav a[href="${href}"]`).waitFor();
      await page.locator('nav#nav a[href="/settings/members"]').click();
      await page.locator('table.members tbody tr', { hasText: 'noura@owner.example' }).waitFor();
      await shot(page, 'members-en');

      // The link worked once.
      const again = await fetch(`${h.url}/api/v1/session/link`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token, password: PASSWORD }) });
      expect(again.status).toBe(401);

      // Password change from the person's menu.
      await page.locator('header button.person').click();
      await page.locator('#person-menu').waitFor();
      await shot(page, 'person-menu-en');
      await page.locator('#person-menu button', { hasText: 'Change password' }).click();
      const dialog = page.locator('dialog[open]');
      await dialog.locator('input[name="current-password"]').fill('not my password');
      await dialog.locator('input[name="new-password"]').fill(`${PASSWORD} 2`);
      await dialog.locator('input[name="repeat-password"]').fill(`${PASSWORD} 2`);
      await dialog.locator('button[type="submit"]').click();
      await expect.poll(() => dialog.locator('#f-currentPassword-error').textContent()).toBeTruthy();
      await dialog.locator('input[name="current-password"]').fill(PASSWORD);
      await dialog.locator('button[type="submit"]').click();
      await page.locator('.toast [role="status"]').waitFor();
      expect(await page.locator('dialog[open]').count()).toBe(0);

      // Sign out: the page goes to sign-in, and the session's cookie no longer works anywhere.
      const cookie = await sessionCookie(context);
      expect((await api('/api/v1/company', cookie, h.companyId)).status).toBe(200);
      await page.locator('header button.person').click();
      await page.locator('#person-menu button', { hasText: 'Sign out' }).click();
      await page.locator('input[name="email"]').waitFor();
      expect(new URL(page.url()).pathname).toBe('/signin');
      expect((await api('/api/v1/company', cookie, h.companyId)).status).toBe(401);
      expect((await context.cookies()).find((c) => c.name === '__Host-diwan-session')).toBeUndefined();
      await page.goto(`${h.url}/d/invoices`);
      await page.locator('input[name="email"]').waitFor();
      expect(page.url()).toContain('/signin?next=%2Fd%2Finvoices');
      await shot(page, 'sign-in-en');

      // The new password signs in, the old one does not.
      await page.locator('input[name="email"]').fill('noura@owner.example');
      await page.locator('input[name="password"]').fill(PASSWORD);
      await page.locator('form button[type="submit"]').click();
      await page.locator('[role="alert"]').waitFor();
      await page.locator('input[name="password"]').fill(`${PASSWORD} 2`);
      await page.locator('form button[type="submit"]').click();
      await page.locator('header.topbar').waitFor();
      await expect.poll(() => new URL(page.url()).pathname).toBe('/d/invoices');
    } finally {
      await context.close();
    }
  });

  it('ar: an Admin invites with a role up to their own, copies the link shown once, sees the invitation, changes a role and removes a member', async () => {
    const admin = await h.person('Admin');
    const { context, page } = await openPage(browser, 'ar', { clipboard: true });
    try {
      await signIn(page, h, admin, '/settings/members');
      await page.locator('table.members tbody tr').first().waitFor();
      expect(await page.locator('table.members tbody tr', { hasText: admin.email }).textContent()).toContain('(أنت)');
      await page.locator('main .page-actions button.primary').click();
      // No Owner among the roles an Admin may give.
      expect(await page.locator('#f-role option').evaluateAll((o) => o.map((x) => (x as HTMLOptionElement).value))).toEqual(['Viewer', 'Member', 'Manager', 'Admin']);
      await page.locator('#f-email').fill('layla@invited.example');
      await page.locator('#f-role').selectOption('Manager');
      await shot(page, 'members-invite-ar');
      await page.locator('form.panel button[type="submit"]').click();
      const dialog = page.locator('dialog[open]');
      await dialog.waitFor();
      const link = await dialog.locator('#secret-value').inputValue();
      expect(link).toMatch(/\/invite#[0-9a-z]{40}$/);
      await dialog.locator('.copy button').click();
      await dialog.locator('.copy [role="status"]', { hasText: /./ }).waitFor();
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(link);
      await shot(page, 'members-link-ar');
      await dialog.locator('.actions button.primary').click();
      expect(await page.content()).not.toContain(link.split('#')[1]);
      const open = page.locator('table.invitations tbody tr', { hasText: 'layla@invited.example' });
      await open.waitFor();
      expect(await open.textContent()).toContain('مدير');
      expect(await open.textContent()).toContain(admin.name);

      // Layla joins (through the API here; the invitation page has its own journeys), and is listed.
      const joined = await fetch(`${h.url}/api/v1/invitations/accept`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: link.split('#')[1], name: 'ليلى', password: PASSWORD }) });
      expect(joined.status).toBe(201);
      const layla = { cookie: String(joined.headers.get('set-cookie')).split(';')[0] };
      await page.reload();
      const row = page.locator('table.members tbody tr', { hasText: 'layla@invited.example' });
      await row.waitFor();
      expect(await page.locator('table.invitations').count()).toBe(0);
      await shot(page, 'members-ar');

      // Her role, within the Admin's own; an Owner's row is out of reach.
      const owner = await h.person('Owner');
      await page.reload();
      await row.waitFor();
      expect(await page.locator('table.members tbody tr', { hasText: owner.email }).locator('select, button').count()).toBe(0);
      await row.locator('select').selectOption('Member');
      await page.locator('[role="status"].banner-success').waitFor();
      await expect.poll(async () => (await (await api('/api/v1/session', layla.cookie, h.companyId)).json()).data.companies[0].role).toBe('Member');

      // Removed: her session no longer works in this company.
      await row.locator('button.danger').click();
      await page.locator('dialog[open] button.danger').click();
      await expect.poll(() => row.count()).toBe(0);
      expect((await api('/api/v1/company', layla.cookie, h.companyId)).status).toBe(403);
    } finally {
      await context.close();
    }
  });

  it('en: an invited person joins a second company with their account, sees only their two companies, switches in the shell, and their cookie is refused elsewhere', async () => {
    const omar = await h.person('Member', { name: 'Omar Haddad' });
    const invite = await h.invite(omar.email, 'Manager', second.id);
    const { context, page } = await openPage(browser, 'en');
    try {
      await signIn(page, h, omar);
      expect(await page.locator('header .company').textContent()).toBe('Noura Trading Co');
      expect(await page.locator('#company-switch').count()).toBe(0);

      await page.goto(`${h.url}${invite}`);
      await page.locator('form.panel [role="status"]').waitFor();
      expect(page.url()).toBe(`${h.url}/invite`);
      await page.locator('input[name="account"][value="existing"]').check();
      await page.locator('input[name="password"]').fill(omar.password);
      await page.locator('form button[type="submit"]').click();

      // In the company just joined, with its role; the switch offers his two companies only.
      const switcher = page.locator('#company-switch');
      await switcher.waitFor();
      await expect.poll(() => switcher.inputValue()).toBe(second.id);
      expect(await switcher.locator('option').allTextContents()).toEqual(['Noura Trading Co', 'Zahra Foods']);
      await page.locator('main h1', { hasText: 'Zahra Foods' }).waitFor();
      await page.locator('header button.person').click();
      expect(await page.locator('#person-menu').textContent()).toContain('Manager in Zahra Foods');
      await page.locator('header button.person').click();
      await shot(page, 'company-switch-en');

      await switcher.selectOption(h.companyId);
      await page.locator('main h1', { hasText: 'Noura Trading Co' }).waitFor();
      await page.locator('main a.app-tile[href="/a/invoicing"]').click();
      await page.locator('nav#nav a[href="/d/invoices"]').click();
      await page.locator('main table, main p.empty').first().waitFor();

      // From inside the page: the cookie rides along, and only the person's companies answer.
      const status = (company: string) =>
        page.evaluate(async (c) => (await fetch('/api/v1/company', { headers: { 'x-company-id': c } })).status, company);
      expect(await status(h.companyId)).toBe(200);
      expect(await status(second.id)).toBe(200);
      expect(await status(third.id)).toBe(403);
      const cookie = await sessionCookie(context);
      const forced = await api('/api/v1/customers', cookie, third.id);
      expect(forced.status).toBe(403);
      expect((await forced.json()).error.details[0]).toMatchObject({ reason: 'company' });
      const session = (await (await api('/api/v1/session', cookie, h.companyId)).json()).data;
      expect(session.companies.map((c: { id: string; role: string }) => `${c.id}:${c.role}`).sort()).toEqual([`${h.companyId}:Member`, `${second.id}:Manager`].sort());

      // Signed in again elsewhere in this browser (a new cookie, a new CSRF token): the page
      // goes on as the same person with the new session's token.
      const again = await page.evaluate(async (b) => (await fetch('/api/v1/session', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(b) })).status, { email: omar.email, password: omar.password });
      expect(again).toBe(201);
      expect(await sessionCookie(context)).not.toBe(cookie);
      await page.locator('nav#nav a[href="/d/customers"]').click();
      await page.locator('main a[href="/d/customers/new"]').click();
      await page.locator('#f-name').fill('Omar Customer');
      await page.locator('form.doc-form button[type="submit"]').click();
      await page.locator('main h1', { hasText: 'Omar Customer' }).waitFor();
    } finally {
      await context.close();
    }
  });
});
