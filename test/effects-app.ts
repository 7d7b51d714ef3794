// A small app for what the three first-party apps of test/api-effects.test.ts do not show: a
// naming series given at a transition (a voucher gets its number when posted, from its date), a
// field unique in the company, and a `create` effect (posting a voucher files a receipt for it).
import type { Manifest } from '../manifests/manifest.schema.ts';
import type { AppSource } from '../core/apps/app-source.ts';
import { bi, writeApp } from './fixtures.ts';

export function effectsManifest(): Manifest {
  return {
    id: 'effects-lab', version: '1.0.0', host: '^0.1.0',
    name: bi('Effects lab', 'مختبر الآثار'), description: bi('Vouchers numbered when posted', 'سندات تُرقَّم عند ترحيلها'),
    strings: { en: { title: 'Effects lab', 'state.draft': 'Draft', 'state.posted': 'Posted' }, ar: { title: 'مختبر الآثار', 'state.draft': 'مسودة', 'state.posted': 'مرحّل' } },
    documentTypes: [{
      name: 'voucher', resource: 'vouchers', idPrefix: 'vch', label: bi('Voucher', 'سند'), labelPlural: bi('Vouchers', 'السندات'),
      fields: [
        { name: 'number', type: 'string', readOnly: true, label: bi('Number', 'الرقم') },
        { name: 'reference', type: 'string', unique: true, maxLength: 40, label: bi('Reference', 'المرجع') },
        { name: 'date', type: 'date', required: true, label: bi('Date', 'التاريخ') },
        { name: 'amount', type: 'money', required: true, minimum: 0, label: bi('Amount', 'المبلغ') },
      ],
      naming: { field: 'number', format: 'PV-{YYYY}-{####}', on: 'post', date: 'date' },
      states: ['draft', 'posted'], initialState: 'draft',
      transitions: [{
        name: 'post', from: ['draft'], to: 'posted', label: bi('Post', 'ترحيل'),
        effects: [{ create: 'receipt', values: { voucherId: 'id', amount: 'doc.amount', note: "'for ' + doc.number" } }],
      }],
    }, {
      name: 'receipt', resource: 'receipts', idPrefix: 'rcp', label: bi('Receipt', 'إيصال'), labelPlural: bi('Receipts', 'الإيصالات'),
      fields: [
        { name: 'voucherId', type: 'reference', to: 'voucher', required: true, filterable: true, label: bi('Voucher', 'السند') },
        { name: 'amount', type: 'money', required: true, minimum: 1, label: bi('Amount', 'المبلغ') },
        { name: 'note', type: 'string', maxLength: 100, label: bi('Note', 'ملاحظة') },
      ],
    }, {
      // Each creates the other: a loop only running it shows (the host stops it).
      name: 'ping', resource: 'pings', idPrefix: 'png', label: bi('Ping', 'نداء'), labelPlural: bi('Pings', 'النداءات'),
      fields: [{ name: 'n', type: 'integer', required: true, label: bi('N', 'العدد') }],
      createEffects: [{ create: 'pong', values: { n: 'doc.n + 1' } }],
    }, {
      name: 'pong', resource: 'pongs', idPrefix: 'pog', label: bi('Pong', 'رد'), labelPlural: bi('Pongs', 'الردود'),
      fields: [{ name: 'n', type: 'integer', required: true, label: bi('N', 'العدد') }],
      createEffects: [{ create: 'ping', values: { n: 'doc.n + 1' } }],
    }],
  } as Manifest;
}

export function effectsSource(root: string): AppSource {
  return writeApp(root, effectsManifest());
}
