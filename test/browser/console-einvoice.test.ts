// The e-invoice in the console, in English and in Arabic. In Settings → Company the Owner
// onboards the company with ZATCA (its gateway the local stand-in, test/zatca-stand-in.ts): a
// refused OTP is shown beside its field, then the portal's OTP onboards it and the state shows
// the gateway and the certificate; a Member reads the state without the form. The company then
// issues a standard invoice ZATCA clears with a warning, one it rejects, and a credit note it
// clears: each issued document's page offers its PDF and XML (the cleared XML once cleared),
// saved under the document's number, and shows its ZATCA status and ZATCA's messages; a draft
// offers neither.
import fs from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { clearedOf, REJECTION, startZatcaStandIn, WARNING, type StandIn } from '../zatca-stand-in.ts';
import { describeBrowser, launchBrowser, openPage, shot, signIn, startConsoleHost, type ConsoleHost, type Lang, type TestPerson } from './harness.ts';

type Option = { value: string; label: string };
interface FieldMeta { name: string; label: string; options?: Option[]; fields?: FieldMeta[] }

describeBrowser('web console: e-invoices', () => {
  let h: ConsoleHost;
  let browser: Browser;
  let zatca: StandIn;
  let owner: TestPerson;
  let member: TestPerson;
  const docs: Record<'cleared' | 'rejected' | 'draft' | 'credit', { id: string; number?: number }> = {} as never;
  const xml: Record<string, string> = {};
  const fields: Record<Lang, Record<string, FieldMeta>> = { en: {}, ar: {} };

  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${h.url}${path}`, {
      method, headers: { authorization: `Bearer ${h.keys.Owner}`, 'x-company-id': h.companyId, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined,
    });
    expect(res.status, path).toBeLessThan(300);
    return path.endsWith('/xml') ? res.text() : (await res.json()).data;
  };

  beforeAll(async () => {
    [h, browser, zatca] = await Promise.all([startConsoleHost(), launchBrowser(), startZatcaStandIn()]);
    owner = await h.person('Owner', { name: 'Noura Owner' });
    member = await h.person('Member', { name: 'Huda Member' });
    await call('PATCH', '/api/v1/company', {
      legalName: { en: 'Noura Trading Co', ar: 'شركة نورة التجارية' }, vatNumber: '310122393500003', crNumber: '1010010000',
      address: { buildingNumber: '1234', street: 'King Fahd Road', district: 'Al Olaya', city: 'Riyadh', postalCode: '12214', country: 'SA' },
    });
    await call('PATCH', '/api/v1/apps/invoicing/settings', { zatcaBaseUrl: zatca.url });
    for (const lang of ['en', 'ar'] as const) {
      const res = await fetch(`${h.url}/api/v1/document-types`, { headers: { authorization: `Bearer ${h.keys.Viewer}`, 'x-company-id': h.companyId, 'accept-language': lang } });
      const invoices = ((await res.json()).data as { resource: string; fields: FieldMeta[] }[]).find((d) => d.resource === 'invoices')!;
      fields[lang] = Object.fromEntries(invoices.fields.map((f) => [f.name, f]));
    }
  });
  afterAll(async () => {
    await browser?.close();
    await h?.close();
    await zatca?.close();
  });

  let issued: Promise<void> | undefined;
  /** Once: the company onboarded (by the first test, else here), and its documents issued and answered by ZATCA. */
  const ready = () => (issued ??= (async () => {
    if (!(await call('GET', '/api/v1/company/zatca')).onboarded) await call('POST', '/api/v1/company/zatca/onboard', { otp: zatca.onboarding.otp });
    const buyer = await call('POST', '/api/v1/customers', { name: 'Al Noor Trading', legalNameAr: 'شركة النور للتجارة', vatNumber: '300000000000003' });
    const invoice = () => call('POST', '/api/v1/invoices', { customerId: buyer.id, date: '2026-11-28', dueDate: '2026-12-28', lines: [{ description: 'Office chairs', quantity: 2, unitPrice: 450 }] });
    docs.draft = await invoice();
    // ZATCA clears the first with a warning and rejects the second; the credit note (standard too) is cleared.
    zatca.next('warn', 'reject');
    for (const k of ['cleared', 'rejected'] as const) {
      const { id } = await invoice();
      docs[k] = await call('POST', `/api/v1/invoices/${id}/send`, {});
      xml[k] = await call('GET', `/api/v1/invoices/${id}/xml`);
    }
    docs.credit = await call('POST', '/api/v1/credit-notes', { invoiceId: docs.cleared.id, reason: 'One chair returned', lines: [{ description: 'Office chairs', quantity: 1, unitPrice: 450 }] });
    // The host's worker may have taken some already; what is left runs now.
    const settled = async () => (await Promise.all([docs.cleared, docs.rejected, docs.credit].map((d) => call('GET', `/api/v1/${d === docs.credit ? 'credit-notes' : 'invoices'}/${d.id}`)))).map((d) => d.zatcaStatus);
    for (let i = 0; i < 100 && (await settled()).includes('pending'); i++) {
      await h.host.jobRunner.runDue();
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(await settled()).toEqual(['cleared', 'rejected', 'cleared']);
  })());

  it('en: the Owner onboards the company in Settings → Company; a refused OTP is shown beside its field', async () => {
    const { context, page } = await openPage(browser, 'en');
    try {
      await signIn(page, h, owner, '/settings/company');
      const state = page.locator('#zatca-state');
      await expect.poll(() => state.textContent()).toBe("Not onboarded: documents are issued without ZATCA's stamp and are not sent to ZATCA.");
      await page.locator('input[name="otp"]').fill('999999');
      await page.locator('#zatca-title ~ form button[type="submit"]').click();
      await expect.poll(() => page.locator('#f-otp-error').textContent()).toMatch(/^ZATCA refused the OTP \(Invalid-OTP: The provided OTP is invalid\)/);
      expect(await page.locator('#f-otp').getAttribute('aria-invalid')).toBe('true');
      await shot(page, 'company-zatca-otp-refused-en');

      await page.locator('input[name="otp"]').fill(zatca.onboarding.otp);
      await page.locator('select[name="gateway"]').selectOption('simulation');
      await page.locator('#zatca-title ~ form button[type="submit"]').click();
      await page.locator('#zatca-title ~ [role="status"].banner-success').waitFor();
      await expect.poll(() => state.textContent()).toMatch(/^Onboarded on .+, with ZATCA’s Simulation gateway\. Certificate \d+, valid until .+\.$/);
      expect(await page.locator('#zatca-title ~ form button[type="submit"]').textContent()).toBe('Onboard again');
      expect(zatca.onboarding.production).toHaveLength(1);
      await shot(page, 'company-zatca-onboarded-en');
    } finally {
      await context.close();
    }
  });

  it('ar: the onboarding reads in Arabic; a Member sees the state without the form', async () => {
    await ready();
    for (const who of [owner, member]) {
      const { context, page } = await openPage(browser, 'ar');
      try {
        await signIn(page, h, who, '/settings/company');
        await expect.poll(() => page.locator('#zatca-state').textContent()).toMatch(/^رُبطت في .+ عبر بوابة الهيئة: المحاكاة\. الشهادة \d+ صالحة حتى .+\.$/);
        expect(await page.locator('#zatca-title').textContent()).toBe('الفوترة الإلكترونية لدى هيئة الزكاة والضريبة والجمارك');
        if (who === owner) expect(await page.locator('#zatca-title ~ form button[type="submit"]').textContent()).toBe('إعادة الربط');
        else {
          expect(await page.locator('input[name="otp"]').count()).toBe(0);
          expect(await page.locator('#zatca-title ~ p.muted').textContent()).toBe('لا يربط الشركة بالهيئة إلا المالك.');
        }
      } finally {
        await context.close();
      }
    }
  });

  const status = (lang: Lang, value: string) => fields[lang].zatcaStatus.options!.find((o) => o.value === value)!.label;
  const messageType = (lang: Lang, value: string) => fields[lang].zatcaMessages.fields!.find((f) => f.name === 'type')!.options!.find((o) => o.value === value)!.label;
  /** The text of a field's value on the document page. */
  const shown = (page: Page, lang: Lang, field: string) => page.locator('dl.fields > div').filter({ has: page.locator('dt', { hasText: fields[lang][field].label }) }).locator('dd').textContent();
  /** Clicks a download button; answers the file's name and content. */
  async function save(page: Page, name: 'pdf' | 'xml'): Promise<{ file: string; bytes: Buffer }> {
    const [d] = await Promise.all([page.waitForEvent('download'), page.locator(`main button[data-download="${name}"]`).click()]);
    return { file: d.suggestedFilename(), bytes: fs.readFileSync((await d.path())!) };
  }

  for (const lang of ['en', 'ar'] as Lang[]) {
    it(`${lang}: an issued invoice's page offers its PDF and cleared XML and shows ZATCA's status and warnings; a rejected one its errors; a draft offers no file`, async () => {
      await ready();
      const { context, page } = await openPage(browser, lang);
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      try {
        await signIn(page, h, member, `/d/invoices/${docs.cleared.id}`);
        await page.locator('dl.fields').waitFor();
        const number = `INV-${String(docs.cleared.number).padStart(6, '0')}`;
        expect(await page.locator('main button[data-download="pdf"]').textContent()).toBe(lang === 'ar' ? 'تنزيل PDF' : 'Download PDF');
        expect(await page.locator('main button[data-download="xml"]').textContent()).toBe(lang === 'ar' ? 'تنزيل XML' : 'Download XML');
        expect(await shown(page, lang, 'zatcaStatus')).toBe(status(lang, 'cleared'));
        const warnings = await shown(page, lang, 'zatcaMessages');
        expect(warnings).toContain(messageType(lang, 'warning'));
        expect(warnings).toContain(WARNING.code);
        expect(warnings).toContain(WARNING.message);
        await shot(page, `invoice-zatca-cleared-${lang}`);

        const x = await save(page, 'xml');
        expect(x.file).toBe(`${number}.xml`);
        expect(x.bytes.toString('utf8')).toBe(clearedOf(xml.cleared));
        const pdf = await save(page, 'pdf');
        expect(pdf.file).toBe(`${number}.pdf`);
        expect(pdf.bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');

        await page.goto(`${h.url}/d/invoices/${docs.rejected.id}`);
        await expect.poll(() => shown(page, lang, 'zatcaStatus')).toBe(status(lang, 'rejected'));
        const problems = await shown(page, lang, 'zatcaMessages');
        expect(problems).toContain(messageType(lang, 'error'));
        for (const m of REJECTION) expect(problems).toContain(m.code);
        // Rejected, it is given as issued.
        expect((await save(page, 'xml')).bytes.toString('utf8')).toBe(xml.rejected);
        await shot(page, `invoice-zatca-rejected-${lang}`);

        await page.goto(`${h.url}/d/credit-notes/${docs.credit.id}`);
        await expect.poll(() => page.locator('main button[data-download]').count()).toBe(2);
        await expect.poll(() => page.locator('dl.fields').textContent()).toContain(status(lang, 'cleared'));

        await page.goto(`${h.url}/d/invoices/${docs.draft.id}`);
        await page.locator('dl.fields').waitFor();
        expect(await page.locator('main button[data-download]').count()).toBe(0);
        expect(errors).toEqual([]);
      } finally {
        await context.close();
      }
    });
  }
});
