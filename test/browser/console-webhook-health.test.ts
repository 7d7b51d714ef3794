// Webhook health in the browser, in English and in Arabic, signed in as a person (an Admin):
// an endpoint on a loopback receiver that answers 500 fails its deliveries, and the list and the
// endpoint's page say since when; the host's clock moves on five days and more, the retry fails
// again and the host disables the endpoint (the real health path: the failure that finds the
// streak as old as DIWAN_WEBHOOK_DISABLE_AFTER disables it); the list and the page say "disabled
// by the host" with what the host saw; the receiver answers 200 again, "Enable again" (which says
// what happens to the deliveries), a new event is delivered and the endpoint is healthy. Then the
// per-endpoint limits with the API's refusals next to the fields, and the list at a glance (a
// failing, a host-disabled and a hand-disabled endpoint among healthy ones) in both languages, at
// a phone's width too, with no serious or critical axe violation.
//
// The host's clock runs behind the real one and jumps forward: P0 (ten days ago) → P1 (five days
// later) → P2 (five days later again, three hours ago) → now. Each jump is longer than the five
// days, so each journey sees its endpoint disabled; the last state is at the real time, where the
// browser's "… ago" agrees with the host.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import AxeBuilder from '@axe-core/playwright';
import { describeBrowser, launchBrowser, openPage, shot, signIn, startConsoleHost, type ConsoleHost, type Lang, type TestPerson } from './harness.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const P0 = -(10 * DAY + 5 * HOUR);
const P1 = -(5 * DAY + 4 * HOUR);
const P2 = -3 * HOUR;

/** The real time moved by `offset` (ms): the host's clock, driven by the test. */
const clock = { offset: P0, now: () => Date.now() + clock.offset };

/** Waits (at most 15 s) for `ok` to hold, outside a test. */
async function until(ok: () => Promise<boolean>): Promise<void> {
  for (const end = Date.now() + 15_000; !(await ok()); ) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function serious(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']).options({ resultTypes: ['violations'] }).setLegacyMode(true).analyze();
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
}

interface Ep {
  id: string;
  url: string;
  enabled: boolean;
  disabledReason: string | null;
  disabledDetail: string | null;
  failingSince: string | null;
  maxInFlight: number | null;
  ratePerSecond: number | null;
}

describeBrowser('web console: webhook health', () => {
  let h: ConsoleHost;
  let browser: Browser;
  let admin: TestPerson;
  let receiver: http.Server;
  let base: string;
  /** Status the receiver answers per path (200 unless set). */
  const answers = new Map<string, number>([['/erp', 500], ['/accounting', 500], ['/payments', 500], ['/reports', 503]]);
  const got: { path: string; status: number; body: string }[] = [];
  const eps: Record<'crm' | 'warehouse' | 'erp', Ep> = {} as never;

  const call = async <T = Ep>(method: string, path: string, body?: unknown, lang = 'en'): Promise<T> => {
    const res = await fetch(`${h.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${h.keys.Admin}`, 'x-company-id': h.companyId, 'accept-language': lang, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = await res.json();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json.data as T;
  };
  const endpoint = (id: string, lang?: string) => call('GET', `/api/v1/webhook-endpoints/${id}`, undefined, lang);
  const register = (path: string, topics: string[], description: string) => call('POST', '/api/v1/webhook-endpoints', { url: `${base}${path}`, topics, description });
  /** Moves the host's clock and wakes the delivery worker (the retries now due go out). */
  const jumpTo = (offset: number) => {
    clock.offset = offset;
    h.host.webhooks.dispatcher.wake(true);
  };
  const attemptsOf = (path: string) => got.filter((g) => g.path === path).length;

  beforeAll(async () => {
    receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const path = new URL(req.url ?? '/', 'http://receiver').pathname;
        const status = answers.get(path) ?? 200;
        got.push({ path, status, body });
        res.writeHead(status, { 'content-type': 'application/json' }).end(status === 200 ? '{"ok":true}' : '{"error":"the receiver is down"}');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    [h, browser] = await Promise.all([
      startConsoleHost({
        allowLoopbackWebhooks: true,
        clock,
        // Five days of failing disable an endpoint (the default, said here so that the environment cannot change it); a
        // session outlives the clock's jumps.
        config: { webhookDisableAfterSeconds: 5 * 86_400, sessionIdleSeconds: 30 * 86_400 },
      }),
      launchBrowser(),
    ]);
    admin = await h.person('Admin', { name: 'Faisal Admin' });
    // The company's other endpoints: a healthy one, one disabled by hand, one failing since P0 (the host disables it at P1 and it stays so).
    eps.crm = await register('/crm', ['customer.*'], 'CRM sync');
    eps.warehouse = await register('/warehouse', ['invoice.sent'], 'Old warehouse');
    eps.erp = await register('/erp', ['invoice.voided'], 'Legacy ERP');
    await call('PATCH', `/api/v1/webhook-endpoints/${eps.warehouse.id}`, { enabled: false });
    await call('POST', `/api/v1/webhook-endpoints/${eps.crm.id}/test`, {});
    await call('POST', `/api/v1/webhook-endpoints/${eps.erp.id}/test`, {});
    await until(async () => attemptsOf('/crm') + attemptsOf('/erp') === 2 && (await endpoint(eps.erp.id)).failingSince !== null);
  });
  afterAll(async () => {
    await browser?.close();
    await h?.close();
    await new Promise((r) => receiver?.close(r));
  });

  const journeys: { lang: Lang; path: string; topic: string; description: string; from: number; to: number }[] = [
    { lang: 'en', path: '/accounting', topic: 'invoice.created', description: 'Accounting', from: P0, to: P1 },
    { lang: 'ar', path: '/payments', topic: 'invoice.paid', description: 'المدفوعات', from: P1, to: P2 },
  ];
  for (const j of journeys) {
    const en = j.lang === 'en';
    it(`${j.lang}: an endpoint whose receiver answers 500 is failing, then disabled by the host; enabled again, it delivers and is healthy`, async () => {
      expect(clock.offset).toBe(j.from);
      const ep = await register(j.path, [j.topic], j.description);
      const { context, page } = await openPage(browser, j.lang);
      try {
        await signIn(page, h, admin, `/settings/developers/webhooks/${ep.id}`);
        const panel = page.locator('section.health-panel');
        await expect.poll(() => panel.getAttribute('data-health')).toBe('healthy');

        // A test event: the receiver answers 500, the delivery waits for its retry, the endpoint is failing.
        await page.locator('form.inline button[type="submit"]').first().click();
        await page.locator('[role="status"].banner-success').waitFor();
        await page.locator('tr.delivery[data-state="pending"]').first().waitFor({ timeout: 15_000 });
        await expect.poll(() => panel.getAttribute('data-health'), { timeout: 15_000 }).toBe('failing');
        expect(await panel.textContent()).toContain(en ? 'No delivery has succeeded since' : 'لم ينجح أي تسليم منذ');
        expect(attemptsOf(j.path)).toBe(1);

        // The list: this endpoint is failing, since when; the notice at the top counts it.
        await page.locator('p.crumbs a').click();
        const row = page.locator('main tbody tr', { hasText: ep.url });
        await expect.poll(() => row.getAttribute('data-health')).toBe('failing');
        expect(await row.locator('td.health').textContent()).toContain(en ? 'Failing' : 'تُخفق');
        expect(await row.locator('td.health time').getAttribute('datetime')).toBe((await endpoint(ep.id)).failingSince);
        expect(await page.locator('.health-notice').textContent()).toMatch(en ? /(is|are) failing/ : /تُخفق/);

        // Five days and more later, the retry fails again: the host disables the endpoint.
        jumpTo(j.to);
        await expect.poll(async () => (await endpoint(ep.id)).disabledReason, { timeout: 15_000 }).toBe('failing');
        const disabled = await endpoint(ep.id, j.lang);
        expect(disabled.disabledDetail).toContain('HTTP 500');
        expect(attemptsOf(j.path)).toBe(2);
        await page.reload();
        await expect.poll(() => row.getAttribute('data-health')).toBe('disabled-failing');
        expect(await row.locator('td.health').textContent()).toContain(en ? 'Disabled by the host' : 'عطّلها الخادم');
        const notice = page.locator('.health-notice');
        expect(await notice.getAttribute('class')).toContain('banner-error');
        expect(await notice.textContent()).toContain(en ? 'The host disabled' : 'عطّل الخادم');
        expect(await notice.locator(`a[href="/settings/developers/webhooks/${ep.id}"]`).count()).toBe(1);

        // Its page: disabled by the host, when, and what the host saw, in the page's language.
        await row.locator('th a').click();
        await expect.poll(() => panel.getAttribute('data-health')).toBe('disabled-failing');
        expect(await panel.locator('.disabled-detail').textContent()).toBe(disabled.disabledDetail);
        expect(disabled.disabledDetail).toContain(en ? 'no successful delivery since' : 'لا تسليم ناجحًا منذ');
        expect(await panel.textContent()).toContain(en ? 'The host disabled this endpoint on' : 'عطّل الخادم نقطة الاستقبال هذه في');
        // No plain "Enable" in the toolbar: enabling again goes through the explanation.
        expect(await page.locator('.toolbar button', { hasText: en ? /^Disable$/ : /^عطّل$/ }).count()).toBe(0);

        // The receiver is fixed; "Enable again" says what happens to the deliveries, then deliveries resume.
        answers.set(j.path, 200);
        await panel.locator('button.enable-again').click();
        const dialog = page.locator('dialog[open]');
        await dialog.waitFor();
        // The retry scheduled when the endpoint was disabled is waiting.
        await dialog.locator('.pending-count').waitFor();
        expect(await dialog.textContent()).toContain(en ? 'Deliveries resume' : 'تُستأنف التسليمات');
        expect(await dialog.locator('.pending-count').textContent()).toContain(en ? '1 delivery is waiting' : 'تسليم واحد ينتظر');
        await dialog.locator('button.primary').click();
        await page.locator('[role="status"].banner-success', { hasText: en ? 'enabled again' : 'مرة أخرى' }).waitFor();
        await expect.poll(() => panel.getAttribute('data-health')).toBe('healthy');

        // A new event is delivered.
        await page.locator('form.inline button[type="submit"]').first().click();
        await page.locator('tr.delivery[data-state="delivered"]').first().waitFor({ timeout: 15_000 });
        expect(got.filter((g) => g.path === j.path).at(-1)?.status).toBe(200);
        expect(await endpoint(ep.id)).toMatchObject({ enabled: true, disabledReason: null, disabledDetail: null, failingSince: null });
        await page.locator('p.crumbs a').click();
        await expect.poll(() => row.getAttribute('data-health')).toBe('healthy');
      } finally {
        await context.close();
      }
    });
  }

  it('ar: the limits of an endpoint, with the API’s refusals next to the fields in Arabic', async () => {
    const { context, page } = await openPage(browser, 'ar');
    try {
      await signIn(page, h, admin, `/settings/developers/webhooks/${eps.crm.id}`);
      await page.locator('dd.limit-maxInFlight', { hasText: 'الإعداد الافتراضي للخادم' }).waitFor();
      expect(await page.locator('dd.limit-ratePerSecond').textContent()).toBe('بلا حدّ');
      await page.locator('.toolbar button', { hasText: 'غيّر الحدود' }).click();
      await page.locator('#f-maxInFlight').fill('0');
      await page.locator('#f-ratePerSecond').fill('20000');
      await page.locator('form.limits button[type="submit"]').click();
      await page.locator('#f-maxInFlight-error').waitFor();
      expect(await page.locator('#f-maxInFlight-error').textContent()).toMatch(/[\u0600-\u06FF]/);
      expect(await page.locator('#f-ratePerSecond-error').textContent()).toMatch(/[\u0600-\u06FF]/);
      expect(await page.locator('#f-maxInFlight').getAttribute('aria-invalid')).toBe('true');
      const a11y = await serious(page);
      expect(a11y).toEqual([]);
      await page.locator('#f-maxInFlight').fill('2');
      await page.locator('#f-ratePerSecond').fill('5');
      await page.locator('form.limits button[type="submit"]').click();
      await page.locator('[role="status"].banner-success').waitFor();
      expect(await endpoint(eps.crm.id)).toMatchObject({ maxInFlight: 2, ratePerSecond: 5 });
      const ar = new Intl.NumberFormat('ar');
      await expect.poll(() => page.locator('dd.limit-maxInFlight').textContent()).toBe(ar.format(2));
      expect(await page.locator('dd.limit-ratePerSecond').textContent()).toBe(ar.format(5));
      // Empty: back to the defaults.
      await page.locator('.toolbar button', { hasText: 'غيّر الحدود' }).click();
      await page.locator('#f-maxInFlight').fill('');
      await page.locator('#f-ratePerSecond').fill('');
      await page.locator('form.limits button[type="submit"]').click();
      await page.locator('dd.limit-maxInFlight', { hasText: 'الإعداد الافتراضي للخادم' }).waitFor();
      expect(await endpoint(eps.crm.id)).toMatchObject({ maxInFlight: null, ratePerSecond: null });
    } finally {
      await context.close();
    }
  });

  it('the list at a glance in both languages and at a phone’s width, and a host-disabled endpoint’s page: no serious or critical axe violations', async () => {
    // One more endpoint starts failing three hours ago; the clock comes to the real time.
    expect(clock.offset).toBe(P2);
    const reports = await register('/reports', ['invoice.updated'], 'Reporting');
    await call('POST', `/api/v1/webhook-endpoints/${reports.id}/test`, {});
    await expect.poll(async () => (await endpoint(reports.id)).failingSince, { timeout: 15_000 }).not.toBeNull();
    jumpTo(0);
    // Its retry goes out now and fails: three hours of failing leave it enabled.
    await expect.poll(() => attemptsOf('/reports'), { timeout: 15_000 }).toBe(2);
    expect(await endpoint(reports.id)).toMatchObject({ enabled: true });

    const found: Record<string, string[]> = {};
    for (const lang of ['en', 'ar'] as Lang[]) {
      const { context, page } = await openPage(browser, lang);
      try {
        await signIn(page, h, admin, '/settings/developers/webhooks');
        await page.locator('main tbody tr').first().waitFor();
        const health = await page.locator('main tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-health')));
        expect(health).toEqual(['healthy', 'disabled-manual', 'disabled-failing', 'healthy', 'healthy', 'failing']);
        const notice = page.locator('.health-notice');
        await notice.waitFor();
        expect(await notice.locator('p').allTextContents()).toEqual(
          lang === 'en'
            ? [
                'The host disabled 1 endpoint after it failed for too long: nothing is delivered to it until it is enabled again.',
                '1 endpoint is failing: no delivery to it has succeeded since the time shown.',
              ]
            : [
                'عطّل الخادم نقطة استقبال واحدة بعد أن طال إخفاقها: لن يُسلَّم إليها شيء حتى تُفعَّل مرة أخرى.',
                'نقطة استقبال واحدة تُخفق: لم ينجح أي تسليم إليها منذ الوقت المبيَّن.',
              ],
        );
        // "3 hours ago" as the browser says it in this language.
        const ago = await page.evaluate((l) => new Intl.RelativeTimeFormat(l, { numeric: 'auto' }).format(-3, 'hour'), lang);
        expect(await page.locator('tr[data-health="failing"] td.health').textContent()).toContain(ago);
        const v = await serious(page);
        if (v.length) found[`list ${lang}`] = v;
        await shot(page, `webhooks-health-${lang}`);
      } finally {
        await context.close();
      }
    }

    // At a phone's width: the notice and the health fit; the table scrolls in its frame, the page does not.
    const phone = await openPage(browser, 'ar', { width: 375 });
    try {
      await signIn(phone.page, h, admin, '/settings/developers/webhooks');
      await phone.page.locator('.health-notice').waitFor();
      expect(await phone.page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
      const box = await phone.page.locator('.health-notice').boundingBox();
      expect(box!.x).toBeGreaterThanOrEqual(0);
      expect(box!.x + box!.width).toBeLessThanOrEqual(375);
      await shot(phone.page, 'webhooks-health-ar-375');
    } finally {
      await phone.context.close();
    }

    // The page of the endpoint the host disabled at P1 (five days ago), and its "Enable again" explanation.
    const { context, page } = await openPage(browser, 'en');
    try {
      await signIn(page, h, admin, `/settings/developers/webhooks/${eps.erp.id}`);
      const panel = page.locator('section.health-panel[data-health="disabled-failing"]');
      await panel.waitFor();
      expect(await panel.textContent()).toContain('(5 days ago)');
      expect(await panel.locator('.disabled-detail').textContent()).toMatch(/^no successful delivery since .* \(12\d h; the limit is 432000 s\); last attempt: HTTP 500$/);
      await page.locator('tr.delivery').first().waitFor();
      let v = await serious(page);
      if (v.length) found['disabled endpoint'] = v;
      await shot(page, 'webhook-disabled-en');
      await panel.locator('button.enable-again').click();
      await page.locator('dialog[open] .pending-count').waitFor();
      v = await serious(page);
      if (v.length) found['enable again dialog'] = v;
      await page.locator('dialog[open] .actions button:not(.primary)').click();
      expect(await endpoint(eps.erp.id)).toMatchObject({ enabled: false, disabledReason: 'failing' });
    } finally {
      await context.close();
    }
    expect(found).toEqual({});
  });
});
