// A small e-invoicing app for the submission tests (test/zatca-submission-jobs.test.ts): issuing
// an invoice sets `zatcaStatus: pending` and enqueues a `submit` job (keyed by the invoice);
// the job submits the issued XML to ZATCA with the zatca module's client (clearance for a
// standard invoice, reporting for a simplified one), writes the outcome on the invoice
// (`reported`, `cleared` with the cleared XML, `rejected` with ZATCA's messages; warnings kept)
// and emits `einv.invoice.<outcome>`. What ZATCA asks to try again (a 5xx, a 429, a time-out, a
// refused CSID) is thrown, and the job retries on the host's ladder. The gateway and the CSID are
// the app's settings here; the invoicing app keeps them with the company's onboarding.
import path from 'node:path';
import type { Manifest } from '../manifests/manifest.schema.ts';
import type { AppSource } from '../core/apps/app-source.ts';
import { REPO_ROOT } from '../core/apps/app-source.ts';
import { bi, writeApp } from './fixtures.ts';

const outcome = (name: string, en: string, ar: string) => ({
  topic: `einv.invoice.${name}`, description: bi(en, ar),
  source: { on: 'operation', operation: 'job submit' },
  payload: {
    type: 'object', additionalProperties: false, required: ['invoiceId', 'uuid', 'messages'],
    properties: { invoiceId: { type: 'string' }, uuid: { type: 'string' }, messages: { type: 'array', items: { type: 'string' } } },
  },
  example: { invoiceId: 'einv_1', uuid: '3cf5ee18-ee25-44ea-a444-2c37ba7f28be', messages: [] },
});

export function einvoiceManifest(): Manifest {
  return {
    id: 'einv', version: '1.0.0', host: '^0.1.0',
    name: bi('E-invoices', 'الفواتير الإلكترونية'), description: bi('Invoices submitted to ZATCA', 'فواتير تُرسل إلى هيئة الزكاة'),
    strings: {
      en: { title: 'E-invoices', 'state.draft': 'Draft', 'state.issued': 'Issued' },
      ar: { title: 'الفواتير الإلكترونية', 'state.draft': 'مسودة', 'state.issued': 'صادرة' },
    },
    settings: [
      { name: 'zatcaBaseUrl', type: 'string', default: 'https://gw-fatoora.zatca.gov.sa/e-invoicing/simulation', label: bi('ZATCA gateway', 'بوابة الهيئة') },
      { name: 'csidToken', type: 'string', maxLength: 4000, default: '', label: bi('CSID token', 'رمز شهادة التشفير') },
      { name: 'csidSecret', type: 'string', default: '', label: bi('CSID secret', 'سر شهادة التشفير') },
      { name: 'zatcaTimeoutMs', type: 'integer', minimum: 100, default: 20000, label: bi('ZATCA time-out (ms)', 'مهلة الهيئة (مللي ثانية)') },
    ],
    documentTypes: [{
      name: 'invoice', resource: 'einvoices', idPrefix: 'einv', label: bi('E-invoice', 'فاتورة إلكترونية'), labelPlural: bi('E-invoices', 'الفواتير الإلكترونية'),
      fields: [
        { name: 'number', type: 'string', required: true, maxLength: 40, label: bi('Number', 'الرقم') },
        { name: 'kind', type: 'enum', values: ['standard', 'simplified'], required: true, label: bi('Kind', 'النوع') },
        { name: 'uuid', type: 'string', required: true, maxLength: 36, label: bi('UUID', 'المعرّف الفريد') },
        { name: 'invoiceHash', type: 'string', required: true, maxLength: 64, label: bi('Invoice hash', 'تجزئة الفاتورة') },
        { name: 'xml', type: 'string', required: true, maxLength: 200000, label: bi('XML', 'ملف XML') },
        { name: 'zatcaStatus', type: 'enum', values: ['pending', 'reported', 'cleared', 'rejected'], filterable: true, label: bi('ZATCA status', 'حالة الهيئة') },
        { name: 'zatcaMessages', type: 'string', maxLength: 8000, label: bi('ZATCA messages', 'رسائل الهيئة') },
        { name: 'clearedXml', type: 'string', maxLength: 200000, label: bi('Cleared XML', 'ملف XML المعتمد') },
      ],
      states: ['draft', 'issued'], initialState: 'draft',
      transitions: [{ name: 'issue', label: bi('Issue', 'إصدار'), from: ['draft'], to: 'issued', set: { zatcaStatus: "'pending'" } }],
    }],
    eventFamilies: [{
      family: 'einv', prefix: 'einv', label: bi('E-invoices', 'الفواتير الإلكترونية'),
      topics: [
        { topic: 'einv.invoice.issued', description: bi('An invoice was issued.', 'صدرت فاتورة.'), source: { on: 'transition', type: 'invoice', transition: 'issue' } },
        outcome('reported', 'ZATCA accepted the report of a simplified invoice.', 'قبلت الهيئة الإبلاغ عن فاتورة مبسطة.'),
        outcome('cleared', 'ZATCA cleared a standard invoice.', 'اعتمدت الهيئة فاتورة ضريبية.'),
        outcome('rejected', 'ZATCA rejected an invoice.', 'رفضت الهيئة فاتورة.'),
      ],
    }],
  } as Manifest;
}

export const einvoiceServer = (zatcaModule: string) => `
import { defineApp } from 'diwan/sdk';
import { submitInvoice, outcomeOf } from ${JSON.stringify(zatcaModule)};

export default defineApp({
  id: 'einv',
  hooks: {
    invoice: {
      async afterTransition(doc, transition, ctx) {
        if (transition === 'issue') await ctx.jobs.enqueue('submit', { invoiceId: doc.id }, { key: 'submit:' + doc.id });
      },
    },
  },
  jobs: {
    async submit({ invoiceId }, ctx) {
      const invoices = ctx.docs('invoice');
      const inv = await invoices.get(invoiceId);
      // Settled by an earlier attempt whose own end was lost: nothing to do.
      if (!inv || inv.zatcaStatus !== 'pending') return;
      const s = await ctx.settings.get();
      const result = await submitInvoice(inv.kind, { uuid: inv.uuid, invoiceHash: inv.invoiceHash, xml: inv.xml }, {
        baseUrl: s.zatcaBaseUrl, credentials: { binarySecurityToken: s.csidToken, secret: s.csidSecret },
        lang: ctx.lang, timeoutMs: s.zatcaTimeoutMs, signal: ctx.signal,
      });
      const o = outcomeOf(result);
      // A 5xx, a 429, a time-out, a refused CSID: the job tries again later.
      if (!o.settled) throw new Error(o.retry);
      await invoices.update(invoiceId, {
        zatcaStatus: o.zatcaStatus,
        ...(o.messages.length ? { zatcaMessages: o.messages.join('\\n') } : {}),
        ...(o.clearedXml !== undefined ? { clearedXml: o.clearedXml } : {}),
      });
      await ctx.events.emit('einv.invoice.' + o.zatcaStatus, { invoiceId, uuid: inv.uuid, messages: o.messages });
    },
  },
});
`;

export function einvoiceSource(root: string): AppSource {
  return writeApp(root, einvoiceManifest(), einvoiceServer(path.join(REPO_ROOT, 'apps-installed/invoicing/zatca/index.ts')));
}
