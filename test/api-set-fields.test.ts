// What a transition's `set` gives a read-only field is the document's from then on: a later
// edit of another field keeps it (only computed fields are computed again on an update). A
// purchase request approved with the approved amount keeps that amount when its notes change.
// On SQLite, and again on PostgreSQL (vitest.config.ts's `onPostgres`).
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Manifest } from '../manifests/manifest.schema.ts';
import type { Host } from '../core/host.ts';
import { buildHost } from './db.ts';
import { createCompany, expectError, type TestCompany } from './helpers.ts';
import { bi, tempDir, writeApp } from './fixtures.ts';

const manifest: Manifest = {
  id: 'set-lab', version: '1.0.0', host: '^0.1.0',
  name: bi('Set lab', 'مختبر التعيين'), description: bi('Requests approved with an amount', 'طلبات تُعتمد بمبلغ'),
  strings: { en: { title: 'Set lab', 'state.draft': 'Draft', 'state.approved': 'Approved' }, ar: { title: 'مختبر التعيين', 'state.draft': 'مسودة', 'state.approved': 'معتمد' } },
  documentTypes: [{
    name: 'request', resource: 'purchase-requests', idPrefix: 'prq', label: bi('Purchase request', 'طلب شراء'),
    fields: [
      { name: 'item', type: 'string', required: true, maxLength: 100, label: bi('Item', 'الصنف'), lockedIn: ['approved'] },
      { name: 'amount', type: 'money', required: true, minimum: 0, label: bi('Amount', 'المبلغ'), lockedIn: ['approved'] },
      { name: 'notes', type: 'string', maxLength: 500, label: bi('Notes', 'ملاحظات') },
      { name: 'approvedAmount', type: 'money', readOnly: true, label: bi('Approved amount', 'المبلغ المعتمد') },
      { name: 'remaining', type: 'money', compute: 'doc.amount - doc.approvedAmount', label: bi('Not approved', 'غير المعتمد') },
    ],
    states: ['draft', 'approved'], initialState: 'draft',
    transitions: [{
      name: 'approve', from: ['draft'], to: 'approved', label: bi('Approve', 'اعتماد'),
      input: [{ name: 'amount', type: 'money', required: true, minimum: 0, label: bi('Amount approved', 'المبلغ المعتمد') }],
      guard: { rule: 'input.amount <= doc.amount', message: bi('More than was asked for cannot be approved', 'لا يُعتمد أكثر من المطلوب') },
      set: { approvedAmount: 'input.amount' },
    }],
  }],
};

let host: Host;
let co: TestCompany;

beforeAll(async () => {
  host = await buildHost({ sources: [writeApp(tempDir(), manifest)], config: { rateLimitPerMinute: 0 } });
  co = await createCompany(host, { currency: 'SAR', apps: ['set-lab'] });
});
afterAll(() => host.close());

it('keeps the approved amount (4,250.50 of 5,000) through a later edit of the notes, and computes what was not approved', async () => {
  const api = co.as();
  const req = (await api.post('/api/v1/purchase-requests', { item: 'Office chairs', amount: 5_000 })).json().data;
  expect(req.remaining).toBe(5_000);
  expectError(await api.post(`/api/v1/purchase-requests/${req.id}/approve`, { amount: 5_000.01 }), 409, 'CONFLICT');
  const approved = (await api.post(`/api/v1/purchase-requests/${req.id}/approve`, { amount: 4_250.5 })).json().data;
  expect(approved).toMatchObject({ state: 'approved', approvedAmount: 4_250.5, remaining: 749.5 });
  const edited = await api.patch(`/api/v1/purchase-requests/${req.id}`, { notes: 'Deliver to the second floor' });
  expect(edited.statusCode, edited.body).toBe(200);
  expect(edited.json().data).toMatchObject({ notes: 'Deliver to the second floor', approvedAmount: 4_250.5, remaining: 749.5 });
  // Still the transition's to give: a client that sends it is refused.
  expectError(await api.patch(`/api/v1/purchase-requests/${req.id}`, { approvedAmount: 5_000 }), 400, 'VALIDATION_ERROR');
});
