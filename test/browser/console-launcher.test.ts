// Apps as apps, in English and in Arabic: an Owner signs in to a launcher of the company's
// installed apps (with what waits for them and the latest documents), opens an app whose
// menu holds only its own entries, reads a state badge in the page's language, finds a
// document by its number with the palette (Ctrl+K), and no page scrolls sideways from
// 360 px to 1,920 px (the launcher, an app, a list, a form, a document, every Settings page).
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { firstPartySources } from '../../core/apps/app-source.ts';
import { describeBrowser, launchBrowser, openPage, shot, signIn, startConsoleHost, type ConsoleHost, type Lang, type TestPerson } from './harness.ts';

/** Screenshots for a person to look at, when DIWAN_LAUNCHER_SHOTS names a folder. */
const SHOTS = process.env.DIWAN_LAUNCHER_SHOTS;
async function look(page: Page, name: string): Promise<void> {
  if (!SHOTS) return;
  fs.mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), animations: 'disabled' });
}

/** What scrolls sideways: the page itself, or any element that clips its own content. */
function overflow(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const out: string[] = [];
    const root = document.documentElement;
    if (root.scrollWidth > root.clientWidth) out.push(`page ${root.scrollWidth} > ${root.clientWidth}`);
    for (const el of document.querySelectorAll<HTMLElement>('header.topbar, main, main *')) {
      const style = getComputedStyle(el);
      // Visually hidden text (1 px boxes for screen readers) clips on purpose.
      if (!/(auto|scroll|hidden)/.test(style.overflowX) || el.closest('dialog') || el.clientWidth <= 1) continue;
      if (el.scrollWidth > el.clientWidth + 1) out.push(`${el.tagName.toLowerCase()}.${el.className} ${el.scrollWidth} > ${el.clientWidth}`);
    }
    return out;
  });
}

const WIDTHS = [360, 768, 1366, 1920];

describeBrowser('web console: launcher, app menus, palette, every width', () => {
  let h: ConsoleHost;
  let browser: Browser;
  let owner: TestPerson;
  const employeeId: { id?: string; number?: string } = {};
  const states: Record<Lang, Record<string, string>> = { en: {}, ar: {} };
  const names: Record<Lang, Record<string, string>> = { en: {}, ar: {} };

  beforeAll(async () => {
    const sources = firstPartySources().filter((s) => ['employees', 'crm'].includes(s.manifest.id));
    [h, browser] = await Promise.all([startConsoleHost({ sources }), launchBrowser()]);
    owner = await h.person('Owner', { name: 'Maha Owner' });
    const headers = { authorization: `Bearer ${h.keys.Member}`, 'x-company-id': h.companyId, 'content-type': 'application/json' };
    const post = async (p: string, body?: unknown) => {
      const res = await fetch(`${h.url}${p}`, { method: 'POST', headers, body: JSON.stringify(body ?? {}) });
      const json = await res.json();
      if (!res.ok) throw new Error(`${p}: ${JSON.stringify(json)}`);
      return json.data;
    };
    // Her number comes from the employees' series (EMP-00001 for the company's first).
    const nadia = await post('/api/v1/employees', { fullName: 'Nadia Saleh', jobTitle: 'Accountant', joinDate: '2026-01-04' });
    [employeeId.id, employeeId.number] = [nadia.id, nadia.employeeNumber];
    // An opportunity waits for whoever may mark it won or lost.
    const lead = await post('/api/v1/leads', { title: 'Warehouse fit-out' });
    await post(`/api/v1/leads/${lead.id}/convert`);
    for (const lang of ['en', 'ar'] as const) {
      const get = async (p: string) => (await (await fetch(`${h.url}${p}`, { headers: { ...headers, 'accept-language': lang } })).json()).data;
      for (const d of await get('/api/v1/document-types')) for (const s of d.states) states[lang][`${d.resource}.${s.name}`] = s.label;
      for (const a of await get('/api/v1/apps?installed=true')) names[lang][a.id] = a.name;
    }
  });
  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  for (const lang of ['en', 'ar'] as Lang[]) {
    it(`${lang}: the launcher shows the installed apps; an app's menu holds only its entries; a badge reads in ${lang}; the palette finds a document by its number`, async () => {
      const { context, page } = await openPage(browser, lang, { width: 1366 });
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      try {
        await signIn(page, h, owner);
        expect(await page.getAttribute('html', 'dir')).toBe(lang === 'ar' ? 'rtl' : 'ltr');
        const tiles = page.locator('main .launcher-grid a.app-tile');
        await tiles.first().waitFor();
        expect((await tiles.evaluateAll((as) => as.map((a) => a.getAttribute('href')))).sort()).toEqual(['/a/crm', '/a/employees', '/a/invoicing']);
        expect(await page.locator('main a.app-tile[href="/a/crm"] .app-tile-name').textContent()).toBe(names[lang].crm);
        // What waits: the opportunity, its state in the page's language.
        const waiting = page.locator('main .waiting-list a[href="/d/leads?state=opportunity"]');
        await waiting.waitFor();
        expect(await waiting.locator('.badge').textContent()).toBe(states[lang]['leads.opportunity']);
        await page.locator(`main .recent-list a[href="/d/employees/${employeeId.id}"]`).waitFor();
        // Settings is one click away, in the header.
        expect(await page.locator('header.topbar a.settings-link').getAttribute('href')).toBe('/settings/developers/api-keys');
        await look(page, `launcher-1366-${lang}`);
        await shot(page, `launcher-${lang}`);

        await page.locator('main a.app-tile[href="/a/employees"]').click();
        await page.locator('main .app-entries').first().waitFor();
        const navLinks = await page.locator('nav#nav a').evaluateAll((as) => as.map((a) => a.getAttribute('href')));
        expect(navLinks.sort()).toEqual(['/', '/a/employees', '/d/departments', '/d/employees']);
        await look(page, `app-menu-1366-${lang}`);
        await shot(page, `app-menu-${lang}`);

        await page.locator('nav#nav a[href="/d/employees"]').click();
        const badge = page.locator('main tbody .badge.state-onboarding').first();
        await badge.waitFor();
        expect(await badge.textContent()).toBe(states[lang]['employees.onboarding']);
        expect(states[lang]['employees.onboarding']).toBe(lang === 'ar' ? 'قيد التهيئة' : 'Onboarding');

        await page.keyboard.press('Control+K');
        const input = page.locator('dialog.palette #palette-input');
        await input.waitFor();
        await look(page, `palette-empty-1366-${lang}`);
        await input.fill(names[lang].crm.slice(0, 6));
        await page.locator('#palette-list [role="option"]', { hasText: names[lang].crm }).first().waitFor();
        // The app's name finds the app and its menu's entries.
        expect(await page.locator('#palette-list [role="option"] .palette-label').allTextContents()).toEqual(
          expect.arrayContaining([names[lang].crm, lang === 'ar' ? 'مسار المبيعات' : 'Pipeline']),
        );
        await input.fill(employeeId.number!);
        const found = page.locator('#palette-list [role="option"]', { hasText: 'Nadia Saleh' });
        await found.waitFor();
        await look(page, `palette-1366-${lang}`);
        await shot(page, `palette-${lang}`);
        await page.keyboard.press('Enter');
        await page.waitForURL(`**/d/employees/${employeeId.id}`);
        await page.locator('dl.fields').waitFor();
        expect(await page.locator('dialog.palette[open]').count()).toBe(0);
        expect(errors).toEqual([]);
      } finally {
        await context.close();
      }
    });

    it(`${lang}: no page scrolls sideways from 360 to 1,920 px, and the header keeps to one row on a phone`, async () => {
      const { context, page } = await openPage(browser, lang, { width: 1366 });
      try {
        await signIn(page, h, owner);
        const pages: [string, string][] = [
          ['/', 'main .launcher-grid'],
          ['/a/crm', 'main .app-entries'],
          ['/d/employees', 'main tbody tr'],
          ['/d/employees/new', 'form.doc-form'],
          [`/d/employees/${employeeId.id}`, 'dl.fields'],
          ['/settings/developers/api-keys', 'main tbody tr'],
          ['/settings/developers/webhooks', 'main h1'],
          ['/settings/developers/audit-log', 'main tbody tr'],
          ['/settings/members', 'main tbody tr'],
          ['/settings/apps', 'main li.card'],
        ];
        // Moved between in the page (as its links do), which keeps the 40 visits quick.
        const go = (p: string) => page.evaluate((to) => (history.pushState(null, '', to), dispatchEvent(new PopStateEvent('popstate'))), p);
        await page.locator('main .launcher-grid').waitFor();
        for (const width of WIDTHS) {
          await page.setViewportSize({ width, height: 800 });
          for (const [p, ready] of pages) {
            await go(p);
            await page.locator(ready).first().waitFor();
            expect(await overflow(page), `${p} at ${width} px`).toEqual([]);
            if (width === 360 || width === 1366) await look(page, `${p.replace(/\W+/g, '-')}-${width}-${lang}`);
          }
          const bar = await page.locator('header.topbar').boundingBox();
          expect(bar!.height, `header at ${width} px`).toBeLessThan(64);
        }
        // The phone's width: the launcher, an app's menu (opened) and the palette.
        await page.setViewportSize({ width: 390, height: 800 });
        await page.goto(`${h.url}/`);
        await page.locator('main .launcher-grid').waitFor();
        await look(page, `launcher-390-${lang}`);
        await page.goto(`${h.url}/a/crm`);
        await page.locator('button.menu-toggle').click();
        await page.locator('nav#nav.open a[href="/d/leads"]').waitFor();
        expect(await page.locator('nav#nav a[href="/d/employees"]').count()).toBe(0);
        expect(await overflow(page)).toEqual([]);
        await look(page, `app-menu-390-${lang}`);
        await page.locator('header.topbar button.search').click();
        await page.locator('dialog.palette #palette-input').fill(lang === 'ar' ? 'عميل' : 'lead');
        await page.locator('#palette-list [role="option"]').first().waitFor();
        await look(page, `palette-390-${lang}`);
      } finally {
        await context.close();
      }
    });
  }
});
