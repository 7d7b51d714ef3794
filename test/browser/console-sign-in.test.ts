// The sign-in page before any session exists: the console asks who is signed in without a
// request that fails, so the browser's console logs no 401 (issue 29), in either language.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { describeBrowser, launchBrowser, openPage, startConsoleHost, type ConsoleHost } from './harness.ts';

describeBrowser('web console: the sign-in page', () => {
  let h: ConsoleHost;
  let browser: Browser;

  beforeAll(async () => {
    [h, browser] = await Promise.all([startConsoleHost(), launchBrowser()]);
  });
  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  it.each(['en', 'ar'] as const)('%s: opens with no failed request and nothing logged as an error', async (lang) => {
    const { context, page } = await openPage(browser, lang);
    try {
      const failed: string[] = [];
      const errors: string[] = [];
      page.on('response', (res) => {
        if (res.status() >= 400) failed.push(`${res.status()} ${res.url()}`);
      });
      page.on('console', (m) => {
        if (m.type() === 'error') errors.push(m.text());
      });
      const asked = page.waitForResponse((res) => res.url().endsWith('/api/v1/session/current'));
      await page.goto(`${h.url}/`);
      expect((await asked).status()).toBe(200);
      await page.locator('form input[name="email"]').waitFor();
      expect(failed).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
