// Settings → Developers in the browser, in English and in Arabic, signed in as a person (an
// Admin): create an API key with a role up to their own (shown once, copied, then used against
// the API; its creator shown), register an endpoint on a loopback receiver, send a test event
// and see it delivered in the log; register one with custom headers and ed25519 signing (a
// header the host sets refused on its field, then the delivery carrying the header and a `v1a`
// signature that verifies with the public key the endpoint's page shows, without the secret);
// the audit log filtered by resource and by the person.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { verifySignature, verifyStandardSignature } from '../../sdk/verify-signature.ts';
import { describeBrowser, launchBrowser, openPage, shot, signIn, startConsoleHost, type ConsoleHost, type Lang, type TestPerson } from './harness.ts';

describeBrowser('web console: Settings → Developers', () => {
  let h: ConsoleHost;
  let browser: Browser;
  let admin: TestPerson;
  let receiver: http.Server;
  let hookUrl: string;
  const received: { url: string; headers: http.IncomingHttpHeaders; body: string }[] = [];

  beforeAll(async () => {
    receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        received.push({ url: req.url ?? '', headers: req.headers, body });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true,"by":"test receiver"}');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
    [h, browser] = await Promise.all([startConsoleHost({ allowLoopbackWebhooks: true }), launchBrowser()]);
    admin = await h.person('Admin', { name: 'Faisal Admin' });
  });
  afterAll(async () => {
    await browser?.close();
    await h?.close();
    await new Promise((r) => receiver?.close(r));
  });

  for (const lang of ['en', 'ar'] as Lang[]) {
    it(`${lang}: creates an API key with a role and scopes, copies it once, and the key works against the API`, async () => {
      const { context, page } = await openPage(browser, lang, { clipboard: true });
      try {
        await signIn(page, h, admin);
        // Settings is in the header, one click from anywhere.
        await page.locator('header.topbar a.settings-link[href="/settings/developers/api-keys"]').click();
        await page.locator('main table').waitFor();
        await page.locator('main .page-actions button.primary').click();
        // Nobody creates a key above their own role: an Admin is offered no Owner.
        expect(await page.locator('#f-role option').evaluateAll((o) => o.map((x) => (x as HTMLOptionElement).value))).toEqual(['Viewer', 'Member', 'Manager', 'Admin']);
        await page.locator('#f-name').fill(`customers reader ${lang}`);
        await page.locator('#f-role').selectOption('Member');
        await page.locator('fieldset label.check input').first().uncheck();
        await page.locator('label.check', { hasText: /^\s*customers\s*$/ }).locator('input').check();
        await shot(page, `api-key-new-${lang}`);
        await page.locator('form.panel button[type="submit"]').click();

        const dialog = page.locator('dialog[open]');
        await dialog.waitFor();
        const shown = await dialog.locator('#secret-value').inputValue();
        expect(shown).toMatch(/^dwk_[0-9a-z]{16}_[0-9a-z]{32}$/);
        await dialog.locator('.copy button').click();
        await dialog.locator('.copy [role="status"]', { hasText: /./ }).waitFor();
        const copied = await page.evaluate(() => navigator.clipboard.readText());
        expect(copied).toBe(shown);
        await shot(page, `api-key-shown-once-${lang}`);
        await dialog.locator('.actions button.primary').click();
        await expect.poll(() => page.locator('dialog[open]').count()).toBe(0);
        // Never shown again: not in the page, not in the list.
        expect(await page.content()).not.toContain(shown.split('_')[2]);
        const keyId = shown.split('_')[1];
        await expect.poll(() => page.locator('main tbody').textContent()).toContain(`dwk_${keyId}_…`);
        // Its creator is the person; the keys the operator made say so.
        await expect.poll(() => page.locator('main tbody tr', { hasText: `dwk_${keyId}_…` }).locator('td.creator').textContent()).toBe(admin.name);
        expect(await page.locator('main tbody tr', { hasText: 'Owner key' }).locator('td.creator').textContent()).toBe(lang === 'ar' ? 'سطر الأوامر أو مفتاح' : 'CLI or a key');

        const call = (path: string) => fetch(`${h.url}${path}`, { headers: { authorization: `Bearer ${copied}`, 'x-company-id': h.companyId } });
        expect((await call('/api/v1/customers')).status).toBe(200);
        expect((await call('/api/v1/invoices')).status).toBe(403); // outside its scopes
        expect((await call('/api/v1/api-keys')).status).toBe(403); // above its role
        await page.reload();
        await expect.poll(() => page.locator('main tbody tr', { hasText: `dwk_${keyId}_…` }).textContent()).not.toContain(lang === 'ar' ? 'أبدًا' : 'Never');
        // A table wider than the page scrolls inside its frame; the page itself does not.
        expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
        await shot(page, `api-keys-${lang}`);

        // Revoke it from the list.
        await page.locator('main tbody tr', { hasText: `dwk_${keyId}_…` }).locator('button.danger').click();
        await page.locator('dialog[open] button.danger').click();
        await expect.poll(async () => (await call('/api/v1/customers')).status).toBe(401);
      } finally {
        await context.close();
      }
    });

    it(`${lang}: registers an endpoint with a custom header and ed25519 signing; the delivery carries both`, async () => {
      const { context, page } = await openPage(browser, lang);
      try {
        await signIn(page, h, admin, '/settings/developers/webhooks');
        await page.locator('main .page-actions button.primary').click();
        await page.locator('#f-url').fill(`${hookUrl}?v1a=${lang}`);
        const family = page.locator('fieldset.topics details', { hasText: 'invoice.*' });
        await family.locator('summary').click();
        await family.locator('label.check').first().locator('input').check();
        // A line without a colon is refused here; a header the host sets, by the host, on the same field, in this language.
        const headers = page.locator('#f-headers');
        await headers.fill('x-team billing');
        await page.locator('form.panel button[type="submit"]').click();
        await expect.poll(() => page.locator('#f-headers-error').textContent()).toBe(lang === 'ar' ? 'كل سطر بالشكل "name: value"؛ السطر 1 ليس كذلك.' : 'Each line is "name: value"; not line 1.');
        await headers.fill('x-team: billing\nx-service-signature: forged');
        await page.locator('form.panel button[type="submit"]').click();
        await page.locator('#f-headers-error').waitFor();
        expect(await headers.getAttribute('aria-invalid')).toBe('true');
        await headers.fill(`x-team: billing ${lang}`);
        await page.locator('#f-asymmetric').check();
        await shot(page, `webhook-new-v1a-${lang}`);
        await page.locator('form.panel button[type="submit"]').click();
        const dialog = page.locator('dialog[open]');
        await dialog.waitFor();
        await dialog.locator('.actions button.primary').click();

        // The endpoint's page shows the header and the public key; a test event goes out with both.
        await page.locator('#test-topic').waitFor();
        expect(await page.locator('.endpoint-headers').textContent()).toContain(`x-team: billing ${lang}`);
        const publicKey = (await page.locator('.endpoint-public-key code').textContent())!.trim();
        expect(publicKey).not.toBe('');
        const before = received.length;
        await page.locator('form.inline button[type="submit"]').first().click();
        await page.locator('[role="status"].banner-success').waitFor();
        await expect.poll(() => received.slice(before).some((r) => r.url.endsWith(`v1a=${lang}`)), { timeout: 15_000 }).toBe(true);
        const got = received.slice(before).find((r) => r.url.endsWith(`v1a=${lang}`))!;
        expect(got.headers['x-team']).toBe(`billing ${lang}`);
        expect(got.headers['webhook-signature']).toMatch(/(^| )v1a,/);
        const verified = verifyStandardSignature(
          got.body,
          { id: got.headers['webhook-id'] as string, timestamp: got.headers['webhook-timestamp'] as string, signature: got.headers['webhook-signature'] as string },
          [],
          { publicKeys: publicKey },
        );
        expect(verified.ok).toBe(true);
        await shot(page, `webhook-v1a-${lang}`);
      } finally {
        await context.close();
      }
    });

    it(`${lang}: registers a webhook endpoint on a loopback receiver, sends a test event and sees it delivered`, async () => {
      const { context, page } = await openPage(browser, lang);
      try {
        await signIn(page, h, admin, '/settings/developers/webhooks');
        await page.locator('main .page-actions button.primary').click();
        await page.locator('#f-url').fill(`${hookUrl}?lang=${lang}`);
        await page.locator('#f-description').fill(`test receiver ${lang}`);
        // The picker lists the families of the catalogue with their events, in this language.
        const family = page.locator('fieldset.topics details', { hasText: 'invoice.*' });
        await family.locator('summary').click();
        await family.locator('label.check').first().locator('input').check();
        await expect.poll(() => page.locator('#topics-chosen').textContent()).toContain('invoice.*');
        await shot(page, `webhook-new-${lang}`);
        await page.locator('form.panel button[type="submit"]').click();

        const dialog = page.locator('dialog[open]');
        await dialog.waitFor();
        const secret = await dialog.locator('#secret-value').inputValue();
        expect(secret).toMatch(/^whsec_/);
        await dialog.locator('.actions button.primary').click();

        // The endpoint's page: send a test event, then watch the log.
        await page.locator('#test-topic').waitFor();
        const before = received.length;
        await page.locator('form.inline button[type="submit"]').first().click();
        await page.locator('[role="status"].banner-success').waitFor();
        const delivered = page.locator('tr.delivery[data-state="delivered"]');
        await delivered.first().waitFor({ timeout: 15_000 });
        await delivered.first().locator('button[aria-expanded]').click();
        const attempts = page.locator('table.attempts');
        await attempts.waitFor();
        expect(await attempts.textContent()).toContain('test receiver');
        await expect.poll(() => attempts.locator('tbody td').nth(2).textContent()).toBe(new Intl.NumberFormat(lang === 'ar' ? 'ar' : 'en').format(200));
        await shot(page, `webhook-log-${lang}`);

        // The test event reaches every endpoint of the company that subscribes to it: this one's is signed with its secret.
        const got = received.slice(before).find((r) => r.url.endsWith(`lang=${lang}`));
        expect(got).toBeTruthy();
        expect(verifySignature(got!.body, got!.headers['x-service-signature'] as string, secret).ok).toBe(true);
        expect(JSON.parse(got!.body)).toMatchObject({ test: true });
      } finally {
        await context.close();
      }
    });
  }

  it('ar: the audit log filtered by resource and by a person shows the keys that person created from the console', async () => {
    // Two keys: one by the Admin (a person), one by the Admin key; only the person's is shown.
    const byPerson = await h.host.keys.create({ companyId: h.companyId, actor: { type: 'user', id: admin.id }, appId: 'core' }, { role: 'Viewer', scopes: ['*'], name: 'by the person' }, { kind: 'user', id: admin.id, role: 'Admin', scopes: ['*'] });
    const adminKeyId = h.keys.Admin.split('_')[1];
    await fetch(`${h.url}/api/v1/api-keys`, { method: 'POST', headers: { authorization: `Bearer ${h.keys.Admin}`, 'x-company-id': h.companyId, 'content-type': 'application/json' }, body: JSON.stringify({ role: 'Viewer', scopes: ['*'], name: 'by a key' }) });
    const { context, page } = await openPage(browser, 'ar');
    try {
      await signIn(page, h, admin, '/settings/developers/audit-log');
      await page.locator('#f-resource').fill('api-keys');
      await page.locator('#f-actorType').selectOption('user');
      // The actor filter knows the company's people by name.
      await page.locator('#f-actorId option', { hasText: admin.name }).waitFor({ state: 'attached' });
      await page.locator('#f-actorId').selectOption(admin.id);
      await page.locator('form.panel button[type="submit"]').click();
      await expect.poll(() => page.url()).toContain('actorType=user');
      expect(page.url()).toContain('resource=api-keys');
      const rows = page.locator('main tbody tr');
      await expect.poll(() => page.locator('main tbody').textContent()).toContain(byPerson.record.id);
      // The list before the filter also holds that key: wait until the filtered one has replaced it
      // (a full run on a loaded machine read the rows in between: a row named no person).
      await expect.poll(async () => (await rows.allTextContents()).every((t) => t.includes(admin.name) && !t.includes(adminKeyId))).toBe(true);
      for (const text of await rows.allTextContents()) {
        expect(text).toContain('api-keys');
        expect(text).toContain(admin.name);
        expect(text).not.toContain(adminKeyId);
      }
      await shot(page, 'audit-log-ar');
    } finally {
      await context.close();
    }
  });
});
