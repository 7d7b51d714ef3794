// Effects on a dependency's documents, through the API alone: a pharmacy's batches and
// dispensings keep the ecommerce product's stock (a dispensing short of stock is refused whole),
// a rental's pick-up takes its items out of stock and its return puts them back, and approved
// timesheet hours count on their project. Who may: the operation that fires the effect is the
// gate (a Viewer moves no stock). An author's app creates ecommerce's product. Then the manifests
// refused at validate and at install. SQLite,
// and PostgreSQL's pool (vitest.config.ts's `onPostgres`).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import type { Host } from '../core/host.ts';
import type { Manifest } from '../manifests/manifest.schema.ts';
import { firstPartyManifests, firstPartySources, REPO_ROOT } from '../core/apps/app-source.ts';
import { checkManifest } from '../core/apps/manifest-check.ts';
import { ManualClock } from '../core/kernel/clock.ts';
import { validateApp } from '../cli/app-author.ts';
import { buildHost } from './db.ts';
import { ARABIC, count, createCompany, createCustomer, created, expectError, ok, type Client, type TestCompany } from './helpers.ts';
import { bi, tempDir, writeApp } from './fixtures.ts';

const APPS = ['invoicing', 'employees', 'ecommerce', 'emr', 'pharmacy', 'rental', 'projects', 'timesheets'];

/** An author's app (not in the catalogue, so its effect on ecommerce is typed at install): a listing creates its product. */
const listingsManifest = (): Manifest => ({
  id: 'listings', version: '1.0.0', host: '^0.1.0', dependencies: { ecommerce: '^2.0.0' },
  name: bi('Listings', 'القوائم'), description: bi('A listing opens its product', 'القائمة تنشئ منتجها'),
  strings: { en: { title: 'Listings' }, ar: { title: 'القوائم' } },
  documentTypes: [{
    name: 'listing', resource: 'listings', idPrefix: 'lst', label: bi('Listing', 'قائمة'), labelPlural: bi('Listings', 'القوائم'),
    fields: [
      { name: 'title', type: 'string', required: true, maxLength: 100, label: bi('Title', 'العنوان') },
      { name: 'sku', type: 'string', required: true, maxLength: 40, label: bi('SKU', 'رمز الصنف') },
      { name: 'price', type: 'money', required: true, minimum: 0, label: bi('Price', 'السعر') },
      { name: 'opening', type: 'number', minimum: 0, label: bi('Opening stock', 'الرصيد الافتتاحي') },
    ],
    createEffects: [{ create: 'ecommerce/product', values: { name: 'doc.title', sku: 'doc.sku', kind: "'goods'", price: 'doc.price', active: 'true', stockQuantity: 'doc.opening' } }],
  }],
}) as Manifest;

let host: Host;
let co: TestCompany;
let api: Client;
let employeeId: string;

beforeAll(async () => {
  const sources = [...firstPartySources().filter((s) => APPS.includes(s.manifest.id)), writeApp(tempDir(), listingsManifest())];
  host = await buildHost({ sources, clock: new ManualClock(Date.UTC(2026, 2, 7, 10)), config: { rateLimitPerMinute: 0 } });
  co = await createCompany(host, { currency: 'SAR', apps: [...APPS, 'listings'] });
  api = co.as();
  employeeId = (await created(api.post('/api/v1/employees', { fullName: 'Reem Al-Dosari', jobTitle: 'Pharmacist', joinDate: '2022-01-01' }))).id;
});
afterAll(() => host.close());

const get = async (url: string) => (await ok(api.get(url))) as Record<string, unknown> & { id: string; state: string };
const stock = async (productId: string) => (await get(`/api/v1/products/${productId}`)).stockQuantity;
const product = async (name: string, sku: string, stockQuantity?: number) =>
  (await created(api.post('/api/v1/products', { name, sku, kind: 'goods', price: 50, active: true, ...(stockQuantity === undefined ? {} : { stockQuantity }) }))).id;
const audits = (resource: string, action: string) => count(host, 'SELECT count(*) FROM audit_log WHERE company_id = ? AND resource = ? AND action = ?', co.company.id, resource, action);

describe('pharmacy: batches and dispensings keep the product\'s stock', () => {
  let amoxicillin: string;
  let l100: string;
  let l101: string;
  let body: (items: { batchId: string; quantity: number }[]) => Record<string, unknown>;

  beforeAll(async () => {
    amoxicillin = await product('Amoxicillin 500 mg capsules', 'AMX-500');
    const patientId = (await created(api.post('/api/v1/patients', { fullName: 'Noura Al-Harbi' }))).id;
    const prescriptionId = (await created(api.post('/api/v1/prescriptions', { patientId, prescriberId: employeeId, prescribedOn: '2026-03-01', items: [{ medication: 'Amoxicillin 500', quantity: 21 }] }))).id;
    body = (items) => ({ prescriptionId, patientId, pharmacistId: employeeId, dispensedOn: '2026-03-02', items });
  });

  it('receiving 60 and 40 puts 100 in stock; dispensing 21, then 30 + 30 from two batches, leaves 19', async () => {
    l100 = (await created(api.post('/api/v1/medicine-batches', { productId: amoxicillin, lotNumber: 'L-100', expiryDate: '2027-06-30', receivedOn: '2026-03-01', quantityOnHand: 60 }))).id;
    expect(await stock(amoxicillin)).toBe(60);
    l101 = (await created(api.post('/api/v1/medicine-batches', { productId: amoxicillin, lotNumber: 'L-101', expiryDate: '2027-09-30', receivedOn: '2026-03-01', quantityOnHand: 40 }))).id;
    expect(await stock(amoxicillin)).toBe(100);
    // On hand moves with the product's stock only: a batch's quantity or product is not edited.
    expectError(await api.patch(`/api/v1/medicine-batches/${l100}`, { quantityOnHand: 500 }), 409, 'CONFLICT');
    expectError(await api.patch(`/api/v1/medicine-batches/${l100}`, { productId: await product('Paracetamol 500 mg', 'PCM-500') }), 409, 'CONFLICT');

    const before = await audits('products', 'update');
    expect(await created(api.post('/api/v1/dispensings', body([{ batchId: l100, quantity: 21 }])))).toMatchObject({ state: 'dispensed', totalQuantity: 21 });
    expect((await get(`/api/v1/medicine-batches/${l100}`)).quantityOnHand).toBe(39);
    expect(await stock(amoxicillin)).toBe(79);
    // The product's write is audited as any of its updates is, the caller its actor.
    expect(await audits('products', 'update')).toBe(before + 1);
    expect(await audits('medicine-batches', 'draw')).toBe(1);

    await created(api.post('/api/v1/dispensings', body([{ batchId: l100, quantity: 30 }, { batchId: l101, quantity: 30 }])));
    expect((await get(`/api/v1/medicine-batches/${l100}`)).quantityOnHand).toBe(9);
    expect((await get(`/api/v1/medicine-batches/${l101}`)).quantityOnHand).toBe(10);
    expect(await stock(amoxicillin)).toBe(19);
  });

  it('a dispensing of 10 from a batch holding 9 is refused whole, naming the effect and the line; nothing moves', async () => {
    const dispensings = (await api.get('/api/v1/dispensings')).json().total;
    const e = expectError(await api.post('/api/v1/dispensings', body([{ batchId: l101, quantity: 5 }, { batchId: l100, quantity: 10 }])), 400, 'VALIDATION_ERROR');
    expect(e.details[0]).toMatchObject({ pointer: '/quantityOnHand', effect: 0, effectLine: 1, effectOn: 'batchId' });
    expect(e.message).toContain('Not enough on hand in this batch');
    // The first line's draw (5 from L-101) is undone with the rest.
    expect((await api.get('/api/v1/dispensings')).json().total).toBe(dispensings);
    expect((await get(`/api/v1/medicine-batches/${l100}`)).quantityOnHand).toBe(9);
    expect((await get(`/api/v1/medicine-batches/${l101}`)).quantityOnHand).toBe(10);
    expect(await stock(amoxicillin)).toBe(19);
    const ar = expectError(await api.post('/api/v1/dispensings', body([{ batchId: l100, quantity: 10 }]), { 'accept-language': 'ar' }), 400, 'VALIDATION_ERROR');
    expect(ar.message).toMatch(ARABIC);
  });

  it('a batch that has it, of a product that does not (a count found 5): ecommerce\'s own rule refuses, and the dispensing is not stored', async () => {
    await ok(api.patch(`/api/v1/products/${amoxicillin}`, { stockQuantity: 5 }));
    const dispensings = (await api.get('/api/v1/dispensings')).json().total;
    const e = expectError(await api.post('/api/v1/dispensings', body([{ batchId: l101, quantity: 8 }])), 400, 'VALIDATION_ERROR');
    expect(e.details[0]).toMatchObject({ pointer: '/stockQuantity', effect: 0, effectLine: 0 });
    expect(e.message).toContain('Not enough in stock');
    expect((await api.get('/api/v1/dispensings')).json().total).toBe(dispensings);
    expect((await get(`/api/v1/medicine-batches/${l101}`)).quantityOnHand).toBe(10);
    expect(await stock(amoxicillin)).toBe(5);
    await ok(api.patch(`/api/v1/products/${amoxicillin}`, { stockQuantity: 19 }));
  });

  it('disposing a batch takes what was left of it out of stock; a recalled batch dispenses nothing', async () => {
    await ok(api.post(`/api/v1/medicine-batches/${l100}/dispose`));
    expect((await get(`/api/v1/medicine-batches/${l100}`)).quantityOnHand).toBe(0);
    expect(await stock(amoxicillin)).toBe(10);
    await ok(api.post(`/api/v1/medicine-batches/${l101}/recall`, { recallClass: 'class_2', recallRef: 'SFDA-2026-14', reason: 'Contamination' }));
    const e = expectError(await api.post('/api/v1/dispensings', body([{ batchId: l101, quantity: 1 }])), 409, 'CONFLICT');
    expect(e.details[0]).toMatchObject({ reason: 'transition', transition: 'draw', state: 'recalled', effect: 0 });
    expect(await stock(amoxicillin)).toBe(10);
  });

  it('a batch received by mistake and deleted takes its 15 out of stock again; a disposed batch is kept, locked', async () => {
    const l102 = (await created(api.post('/api/v1/medicine-batches', { productId: amoxicillin, lotNumber: 'L-102', expiryDate: '2027-12-31', receivedOn: '2026-03-05', quantityOnHand: 15 }))).id;
    expect(await stock(amoxicillin)).toBe(25);
    expect((await api.delete(`/api/v1/medicine-batches/${l102}`)).statusCode).toBe(200);
    expect(await stock(amoxicillin)).toBe(10);
    expect(expectError(await api.delete(`/api/v1/medicine-batches/${l100}`), 409, 'CONFLICT').details[0]).toMatchObject({ reason: 'locked', state: 'disposed' });
    expect(await stock(amoxicillin)).toBe(10);
  });

  it('a Viewer, who may not dispense, moves no stock', async () => {
    const batch = (await created(api.post('/api/v1/medicine-batches', { productId: amoxicillin, lotNumber: 'L-102', expiryDate: '2027-12-31', quantityOnHand: 12 }))).id;
    expect(await stock(amoxicillin)).toBe(22);
    expectError(await co.as('Viewer').post('/api/v1/dispensings', body([{ batchId: batch, quantity: 2 }])), 403, 'FORBIDDEN');
    expectError(await co.as('Viewer').post(`/api/v1/medicine-batches/${batch}/draw`, { quantity: 2 }), 403, 'FORBIDDEN');
    expect(await stock(amoxicillin)).toBe(22);
    // A Member, who may dispense, draws through the app's grant; the product's audit entry names the Member.
    const d = await created(co.as('Member').post('/api/v1/dispensings', body([{ batchId: batch, quantity: 2 }])));
    expect(await stock(amoxicillin)).toBe(20);
    const actor = async (resource: string, id: string) =>
      (await host.storage.db.all<{ actor_id: string }>('SELECT actor_id FROM audit_log WHERE company_id = ? AND resource = ? AND resource_id = ? ORDER BY seq DESC', [co.company.id, resource, id]))[0].actor_id;
    expect(await actor('products', amoxicillin)).toBe(await actor('dispensings', d.id));
    expect(await actor('products', amoxicillin)).not.toBe(await actor('medicine-batches', l100));
  });
});

describe('rental: a pick-up takes its items out of stock, the return puts them back', () => {
  let customerId: string;
  let tent: string;
  let chairs: string;
  const agreement = (lines: { productId: string; quantity: number }[]) =>
    created(api.post('/api/v1/rental-agreements', { customerId, pickupDate: '2026-03-01', returnDate: '2026-03-05', lines: lines.map((l) => ({ ...l, dailyRate: 150 })) }));
  const reserved = async (lines: { productId: string; quantity: number }[]) => {
    const a = await agreement(lines);
    await ok(api.post(`/api/v1/rental-agreements/${a.id}/reserve`));
    return a.id;
  };

  beforeAll(async () => {
    customerId = (await createCustomer(api, 'Al-Waha Events')).id;
    tent = await product('Party tent 6 × 12 m', 'TENT-612', 5);
    chairs = await product('Set of 50 chairs', 'CHR-50', 2);
  });

  it('5 tents and 2 chair sets; reserving takes nothing, picking up 3 tents and 2 sets leaves 2 and 0; the return gives them back', async () => {
    const a = await reserved([{ productId: tent, quantity: 3 }, { productId: chairs, quantity: 2 }]);
    expect([await stock(tent), await stock(chairs)]).toEqual([5, 2]);
    await ok(api.post(`/api/v1/rental-agreements/${a}/pickUp`));
    expect([await stock(tent), await stock(chairs)]).toEqual([2, 0]);

    // 3 tents when 2 are in: refused at the line, the agreement stays reserved.
    const b = await reserved([{ productId: tent, quantity: 3 }]);
    const e = expectError(await api.post(`/api/v1/rental-agreements/${b}/pickUp`), 400, 'VALIDATION_ERROR');
    expect(e.details[0]).toMatchObject({ pointer: '/lines/0/quantity', rule: 'effectCheck', effect: 0, effectLine: 0 });
    expect(e.message).toContain('Not enough of this item in stock');
    const ar = expectError(await api.post(`/api/v1/rental-agreements/${b}/pickUp`, undefined, { 'accept-language': 'ar' }), 400, 'VALIDATION_ERROR');
    expect(ar.message).toContain('لا يكفي المخزون من هذا الصنف');
    expect((await get(`/api/v1/rental-agreements/${b}`)).state).toBe('reserved');

    // 2 tents (there are 2) and a chair set (there is none): the tents taken by the first line are put back.
    const c = await reserved([{ productId: tent, quantity: 2 }, { productId: chairs, quantity: 1 }]);
    expect(expectError(await api.post(`/api/v1/rental-agreements/${c}/pickUp`), 400, 'VALIDATION_ERROR').details[0]).toMatchObject({ pointer: '/lines/1/quantity', effectLine: 1 });
    expect([await stock(tent), await stock(chairs)]).toEqual([2, 0]);
    expect((await get(`/api/v1/rental-agreements/${c}`)).state).toBe('reserved');

    await ok(api.post(`/api/v1/rental-agreements/${a}/markReturned`, { returnCondition: 'good' }));
    expect([await stock(tent), await stock(chairs)]).toEqual([5, 2]);
    await ok(api.post(`/api/v1/rental-agreements/${b}/pickUp`));
    expect(await stock(tent)).toBe(2);
  });
});

describe('timesheets: approved hours count on the project', () => {
  it('7.5 and 8 hours approved make 15.5; a rejected entry counts nothing; reopening the 7.5 leaves 8; a Viewer approves nothing', async () => {
    const projectId = (await created(api.post('/api/v1/projects', { name: 'ERP rollout' }))).id;
    const approverId = (await created(api.post('/api/v1/employees', { fullName: 'Omar Al-Qahtani', jobTitle: 'PM', joinDate: '2020-01-01' }))).id;
    const submitted = async (hours: number, date: string) => {
      const e = await created(api.post('/api/v1/timesheet-entries', { employeeId, projectId, date, hours }));
      await ok(api.post(`/api/v1/timesheet-entries/${e.id}/submit`));
      return e.id;
    };
    const hours = async () => (await get(`/api/v1/projects/${projectId}`)).approvedHours ?? 0;
    const [a, b, c] = [await submitted(7.5, '2026-03-02'), await submitted(8, '2026-03-03'), await submitted(6.25, '2026-03-04')];
    expectError(await co.as('Viewer').post(`/api/v1/timesheet-entries/${a}/approve`, { approverId }), 403, 'FORBIDDEN');
    expect(await hours()).toBe(0);
    await ok(api.post(`/api/v1/timesheet-entries/${a}/approve`, { approverId }));
    expect(await hours()).toBe(7.5);
    await ok(api.post(`/api/v1/timesheet-entries/${b}/approve`, { approverId }));
    await ok(api.post(`/api/v1/timesheet-entries/${c}/reject`, { reason: 'Not on this project' }));
    expect(await hours()).toBe(15.5);
    // Reopening is a manager's: a Member cannot, and the hours stay.
    expectError(await co.as('Member').post(`/api/v1/timesheet-entries/${a}/reopen`), 403, 'FORBIDDEN');
    await ok(api.post(`/api/v1/timesheet-entries/${a}/reopen`));
    expect(await hours()).toBe(8);
    // A client cannot type the hours: they are the timesheets'.
    expectError(await api.patch(`/api/v1/projects/${projectId}`, { approvedHours: 100 }), 400, 'VALIDATION_ERROR');
  });
});

describe("an author's app creates a dependency's document", () => {
  it('a listing of 12 tents at 45.50 opens product TENT-L with 12 in stock; a second listing of the SKU is refused by ecommerce, and not stored', async () => {
    const l = await created(api.post('/api/v1/listings', { title: 'Camping tent', sku: 'TENT-L', price: 45.5, opening: 12 }));
    expect(l.id).toMatch(/^lst_/);
    const all = (await api.get('/api/v1/products')).json().data as Record<string, unknown>[];
    expect(all.filter((p) => p.sku === 'TENT-L')).toEqual([expect.objectContaining({ name: 'Camping tent', price: 45.5, stockQuantity: 12 })]);
    const e = expectError(await api.post('/api/v1/listings', { title: 'Tent again', sku: 'TENT-L', price: 10 }), 409, 'CONFLICT');
    expect(e.details[0]).toMatchObject({ reason: 'unique', field: 'sku', effect: 0, effectOn: 'ecommerce/product' });
    expect((await api.get('/api/v1/listings')).json().total).toBe(1);
  });
});

describe('effects on a dependency, refused at validate and at install', () => {
  const catalogue = firstPartyManifests();
  const manifest = (app: string) => JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'manifests', `${app}.json`), 'utf8'));
  const typeIndex = (m: Manifest, name: string) => m.documentTypes!.findIndex((d) => d.name === name);
  const problems = (m: unknown) => checkManifest(m, { manifestOf: (id) => catalogue.get(id) }).problems;

  it('an effect on an app that is no dependency is refused at its pointer, a target as a create', () => {
    const m = manifest('pharmacy');
    const i = typeIndex(m, 'dispensing');
    m.documentTypes[i].fields.push({ name: 'customerId', type: 'reference', to: 'invoicing/customer', label: bi('Customer', 'العميل') });
    m.documentTypes[i].createEffects = [{ target: 'customerId', set: { name: "'x'" } }, { create: 'invoicing/invoice', values: { customerId: 'doc.customerId' } }];
    expect(problems(m)).toEqual(expect.arrayContaining([
      expect.objectContaining({ pointer: `/documentTypes/${i}/createEffects/0/target`, rule: 'effectTarget', message: expect.stringContaining('does not depend on') }),
      expect.objectContaining({ pointer: `/documentTypes/${i}/createEffects/1/create`, rule: 'effectTarget', message: expect.stringContaining('does not depend on') }),
    ]));
  });

  it("a dependency's type types the effect: an unknown field, a wrong type, an unknown transition or type", () => {
    const m = manifest('rental');
    const i = typeIndex(m, 'agreement');
    const t = m.documentTypes[i].transitions.findIndex((x: { name: string }) => x.name === 'pickUp');
    m.documentTypes[i].transitions[t].effects = [
      { forEach: 'lines', target: 'productId', set: { stockQuantity: 'target.stock - 1.0' } },
      { forEach: 'lines', target: 'productId', set: { stock: '1.0', name: 'line.quantity' } },
      { forEach: 'lines', target: 'productId', transition: 'ship' },
      { create: 'ecommerce/warehouse', values: { name: "'x'" } },
      { forEach: 'lines', target: 'customerId', set: { name: "'x'" } },
      { forEach: 'items', target: 'productId', set: { name: "'x'" } },
      { create: 'ecommerce/product', values: { name: "'Tent ' + doc.agreementNumber" } },
    ];
    const at = `/documentTypes/${i}/transitions/${t}/effects`;
    expect(problems(m)).toEqual(expect.arrayContaining([
      expect.objectContaining({ pointer: `${at}/0/set/stockQuantity` }),
      expect.objectContaining({ pointer: `${at}/1/set/stock`, rule: 'field' }),
      expect.objectContaining({ pointer: `${at}/1/set/name`, rule: 'expressionType' }),
      expect.objectContaining({ pointer: `${at}/2/transition`, rule: 'effectTransition' }),
      expect.objectContaining({ pointer: `${at}/3/create`, rule: 'effectTarget', message: expect.stringContaining('ecommerce has no document type') }),
      expect.objectContaining({ pointer: `${at}/4/target`, rule: 'effectTarget' }),
      expect.objectContaining({ pointer: `${at}/5/forEach`, rule: 'field' }),
      // A product needs its SKU, kind and price: the create gives only a name.
      expect.objectContaining({ pointer: `${at}/6/values`, rule: 'required', message: 'product needs sku' }),
    ]));
  });

  /** An app of an author's own depending on ecommerce, whose effect reads a field the product does not have. */
  const stockLab = (): Manifest => ({
    id: 'stock-lab', version: '1.0.0', host: '^0.1.0', dependencies: { ecommerce: '^2.0.0' },
    name: bi('Stock lab', 'مختبر المخزون'), description: bi('Write-offs', 'الشطب'),
    strings: { en: { title: 'Stock lab' }, ar: { title: 'مختبر المخزون' } },
    documentTypes: [{
      name: 'writeOff', resource: 'write-offs', idPrefix: 'wof', label: bi('Write-off', 'شطب'), labelPlural: bi('Write-offs', 'الشطب'),
      fields: [
        { name: 'productId', type: 'reference', to: 'ecommerce/product', required: true, label: bi('Product', 'المنتج') },
        { name: 'quantity', type: 'number', required: true, label: bi('Quantity', 'الكمية') },
      ],
      createEffects: [{ target: 'productId', set: { stockQuantity: 'target.onHand - doc.quantity' } }],
    }],
  }) as Manifest;

  it('without the dependency\'s manifest the effect is left to install, which refuses it at its pointer; `diwan app validate` types it from the catalogue', async () => {
    expect(checkManifest(stockLab()).problems).toEqual([]);
    const root = tempDir();
    const source = writeApp(root, stockLab());
    const v = await validateApp(source.dir);
    expect(v.ok).toBe(false);
    expect(v.problems).toEqual([expect.objectContaining({ pointer: '/documentTypes/0/createEffects/0/set/stockQuantity' })]);
    // Installed beside ecommerce (this file's host has it loaded), typed against its product.
    await expect(host.runtime.load(source)).rejects.toMatchObject({
      code: 'MANIFEST_INVALID',
      details: [expect.objectContaining({ pointer: '/documentTypes/0/createEffects/0/set/stockQuantity' })],
    });
    expect(host.runtime.get('stock-lab')).toBeUndefined();
  });
});
