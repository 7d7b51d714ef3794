// Effects on related documents, naming series and unique fields, through the API alone with the
// stories practitioners tell: an admission occupies its bed and its discharge frees it (one bed,
// one patient); a cheque book of 25 leaves loses one per cheque and says it runs low when fewer
// than 5 are left; a 21-day annual allocation is drawn on by approved leave and given back when
// it is cancelled. Then atomicity (a failing effect changes nothing, records nothing, emits
// nothing), concurrency, and manifests refused at validate. SQLite, and PostgreSQL's pool.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import type { Host } from '../core/host.ts';
import { firstPartyManifests, firstPartySources, REPO_ROOT } from '../core/apps/app-source.ts';
import { checkManifest } from '../core/apps/manifest-check.ts';
import { buildHost } from './db.ts';
import { count, createCompany, expectError, type Client, type TestCompany } from './helpers.ts';
import { tempDir } from './fixtures.ts';
import { effectsSource } from './effects-app.ts';

const APPS = ['employees', 'emr', 'hospital', 'invoicing', 'cheques', 'time-off'];

describe('effects, naming series and unique fields', () => {
  let host: Host;
  let co: TestCompany;
  let api: Client;

  beforeAll(async () => {
    host = await buildHost({ sources: [...firstPartySources().filter((s) => APPS.includes(s.manifest.id)), effectsSource(tempDir())], config: { rateLimitPerMinute: 0 } });
    co = await createCompany(host, { currency: 'SAR', apps: [...APPS, 'effects-lab'] });
    api = co.as();
  });
  afterAll(() => host.close());

  async function created(res: Promise<Awaited<ReturnType<Client['post']>>>): Promise<Record<string, unknown> & { id: string }> {
    const r = await res;
    expect(r.statusCode, r.body).toBe(201);
    return r.json().data;
  }
  const ok = async (res: Promise<Awaited<ReturnType<Client['post']>>>) => {
    const r = await res;
    expect(r.statusCode, r.body).toBe(200);
    return r.json().data as Record<string, unknown> & { id: string; state: string };
  };
  const doc = async (url: string) => (await api.get(url)).json().data as Record<string, unknown> & { state: string };
  const audits = (resource: string, action: string) => count(host, 'SELECT count(*) FROM audit_log WHERE company_id = ? AND resource = ? AND action = ?', co.company.id, resource, action);
  const events = (topic: string) => count(host, 'SELECT count(*) FROM outbox WHERE company_id = ? AND topic = ?', co.company.id, topic);

  describe('hospital: an admission occupies its bed', () => {
    let wardId: string;
    let patientId: string;
    let doctorId: string;
    const bed = async (number: string, ward = wardId) => (await created(api.post('/api/v1/hospital-beds', { wardId: ward, number }))).id;
    const admit = (bedId: string, over: Record<string, unknown> = {}) =>
      api.post('/api/v1/admissions', { patientId, wardId, bedId, attendingId: doctorId, admissionType: 'emergency', admittedOn: '2026-03-10', ...over });

    beforeAll(async () => {
      wardId = (await created(api.post('/api/v1/wards', { name: 'Medical ward 3', wardType: 'general' }))).id;
      patientId = (await created(api.post('/api/v1/patients', { fullName: 'Khalid Al-Otaibi' }))).id;
      doctorId = (await created(api.post('/api/v1/employees', { fullName: 'Dr. Huda Al-Qahtani', jobTitle: 'Physician', joinDate: '2020-05-01' }))).id;
    });

    it('admits to bed 12, numbered ADM-2026-00001; a second admission to the same bed is refused, naming the effect', async () => {
      const b12 = await bed('12');
      const a = await created(admit(b12));
      expect(a).toMatchObject({ state: 'admitted', admissionNumber: 'ADM-2026-00001' });
      expect((await doc(`/api/v1/hospital-beds/${b12}`)).state).toBe('occupied');
      const e = expectError(await admit(b12), 409, 'CONFLICT');
      expect(e.details[0]).toMatchObject({ reason: 'transition', transition: 'occupy', state: 'occupied', effect: 0, effectOn: 'bedId' });
      expect(e.message).toContain('effect 0 (bedId → occupy)');
      const ar = expectError(await admit(b12, {}), 409, 'CONFLICT');
      expect(ar.details[0].effect).toBe(0);
      // Refused whole: no admission, no number taken (the next one is 00002), no audit entry or event of it.
      expect((await api.get(`/api/v1/admissions?bedId=${b12}`)).json().total).toBe(1);
      expect(await audits('admissions', 'create')).toBe(1);
      expect(await events('hospital.admission.created')).toBe(1);
      const b14 = await bed('14');
      expect((await created(admit(b14))).admissionNumber).toBe('ADM-2026-00002');
      // The number is the series': a client cannot type it.
      expectError(await admit(await bed('15'), { admissionNumber: 'ADM-1' }), 400, 'VALIDATION_ERROR');
    });

    it('refuses a bed of another ward, in both languages', async () => {
      const icu = (await created(api.post('/api/v1/wards', { name: 'ICU', wardType: 'icu' }))).id;
      const icuBed = await bed('ICU-1', icu);
      const e = expectError(await admit(icuBed), 400, 'VALIDATION_ERROR');
      expect(e.details[0]).toMatchObject({ pointer: '/bedId', rule: 'effectCheck', effect: 0, message: "The bed is not in the admission's ward" });
      const ar = expectError(await admit(icuBed, {}).then(async () => api.post('/api/v1/admissions', { patientId, wardId, bedId: icuBed, attendingId: doctorId, admissionType: 'elective', admittedOn: '2026-03-10' }, { 'accept-language': 'ar' })), 400, 'VALIDATION_ERROR');
      expect(ar.details[0].message).toBe('السرير ليس في جناح التنويم');
      expect((await doc(`/api/v1/hospital-beds/${icuBed}`)).state).toBe('available');
    });

    it('discharge stores its type and date and sends the bed to cleaning; the bed can then be admitted again once ready', async () => {
      const b20 = await bed('20');
      const a = await created(admit(b20));
      expectError(await api.post(`/api/v1/admissions/${a.id}/discharge`, {}), 400, 'VALIDATION_ERROR');
      const d = await ok(api.post(`/api/v1/admissions/${a.id}/discharge`, { dischargeType: 'home', dischargedOn: '2026-03-14' }));
      expect(d).toMatchObject({ state: 'discharged', dischargeType: 'home', dischargedOn: '2026-03-14' });
      expect((await doc(`/api/v1/hospital-beds/${b20}`)).state).toBe('cleaning');
      expectError(await admit(b20), 409, 'CONFLICT');
      await ok(api.post(`/api/v1/hospital-beds/${b20}/ready`));
      expect((await created(admit(b20, { admittedOn: '2026-03-15' }))).state).toBe('admitted');
    });

    it('a transfer frees the old bed and occupies the new one; to an occupied bed it is refused and nothing moves', async () => {
      const [b30, b31, b32] = [await bed('30'), await bed('31'), await bed('32')];
      const a = await created(admit(b30));
      await created(admit(b32));
      const t = await ok(api.post(`/api/v1/admissions/${a.id}/transfer`, { toBedId: b31 }));
      expect(t).toMatchObject({ state: 'admitted', bedId: b31, previousBedId: b30 });
      expect((await doc(`/api/v1/hospital-beds/${b30}`)).state).toBe('cleaning');
      expect((await doc(`/api/v1/hospital-beds/${b31}`)).state).toBe('occupied');
      const e = expectError(await api.post(`/api/v1/admissions/${a.id}/transfer`, { toBedId: b32 }), 409, 'CONFLICT');
      expect(e.details[0]).toMatchObject({ effect: 1, transition: 'occupy' });
      expect((await doc(`/api/v1/admissions/${a.id}`)).bedId).toBe(b31);
      expect((await doc(`/api/v1/hospital-beds/${b31}`)).state).toBe('occupied');
      // The bed changes only by a transfer.
      expectError(await api.patch(`/api/v1/admissions/${a.id}`, { bedId: b30 }), 409, 'CONFLICT');
    });

    it('a discharge whose bed cannot be released rolls back whole: no state change, no audit entry, no event', async () => {
      const b40 = await bed('40');
      const a = await created(admit(b40));
      // Someone released the bed by hand: the discharge's effect (occupied → cleaning) now fails.
      await ok(api.post(`/api/v1/hospital-beds/${b40}/release`));
      const [auditsBefore, eventsBefore] = [await audits('admissions', 'discharge'), await events('hospital.admission.discharged')];
      const e = expectError(await api.post(`/api/v1/admissions/${a.id}/discharge`, { dischargeType: 'home', dischargedOn: '2026-03-12' }), 409, 'CONFLICT');
      expect(e.details[0]).toMatchObject({ effect: 0, effectOn: 'bedId', reason: 'transition', transition: 'release', state: 'cleaning' });
      const after = await doc(`/api/v1/admissions/${a.id}`);
      expect(after.state).toBe('admitted');
      expect(after.dischargeType).toBeUndefined();
      expect(await audits('admissions', 'discharge')).toBe(auditsBefore);
      expect(await events('hospital.admission.discharged')).toBe(eventsBefore);
    });

    it('an admission deleted (entered by mistake) releases its bed; a discharged one cannot be deleted', async () => {
      const b60 = await bed('60');
      const a = await created(admit(b60));
      expect((await api.delete(`/api/v1/admissions/${a.id}`)).statusCode).toBe(200);
      expect((await doc(`/api/v1/hospital-beds/${b60}`)).state).toBe('cleaning');
      await ok(api.post(`/api/v1/hospital-beds/${b60}/ready`));
      const again = await created(admit(b60));
      await ok(api.post(`/api/v1/admissions/${again.id}/discharge`, { dischargeType: 'home', dischargedOn: '2026-03-20' }));
      expect(expectError(await api.delete(`/api/v1/admissions/${again.id}`), 409, 'CONFLICT').details[0]).toMatchObject({ reason: 'locked', state: 'discharged' });
    });

    it('a delete whose bed cannot be released is refused whole: the admission, its audit trail and the bed stay as they were', async () => {
      const b61 = await bed('61');
      const a = await created(admit(b61));
      await ok(api.post(`/api/v1/hospital-beds/${b61}/release`));
      const deletes = await audits('admissions', 'delete');
      const e = expectError(await api.delete(`/api/v1/admissions/${a.id}`), 409, 'CONFLICT');
      expect(e.details[0]).toMatchObject({ effect: 0, effectOn: 'bedId', reason: 'transition', transition: 'release', state: 'cleaning' });
      expect((await doc(`/api/v1/admissions/${a.id}`)).state).toBe('admitted');
      expect(await audits('admissions', 'delete')).toBe(deletes);
      expect((await doc(`/api/v1/hospital-beds/${b61}`)).state).toBe('cleaning');
    });

    it('a bed an admission names, and a ward with beds, are not deleted from under them; once nothing names them they are', async () => {
      const b62 = await bed('62');
      const a = await created(admit(b62));
      const e = expectError(await api.delete(`/api/v1/hospital-beds/${b62}`), 409, 'CONFLICT');
      expect(e.details).toEqual([expect.objectContaining({ reason: 'referenced', resource: 'admissions', id: a.id, field: 'bedId' })]);
      expect(e.message).toContain(`admissions ${a.id} (bedId)`);
      const ar = expectError(await api.delete(`/api/v1/hospital-beds/${b62}`, { 'accept-language': 'ar' }), 409, 'CONFLICT');
      expect(ar.message).toContain('احذفها أو غيّرها أولًا');
      const ward = (await created(api.post('/api/v1/wards', { name: 'Short stay', wardType: 'general' }))).id;
      const lone = await bed('1', ward);
      expect(expectError(await api.delete(`/api/v1/wards/${ward}`), 409, 'CONFLICT').details[0]).toMatchObject({ reason: 'referenced', resource: 'hospital-beds', id: lone, field: 'wardId' });
      expect((await api.delete(`/api/v1/hospital-beds/${lone}`)).statusCode).toBe(200);
      expect((await api.delete(`/api/v1/wards/${ward}`)).statusCode).toBe(200);
      expect((await doc(`/api/v1/hospital-beds/${b62}`)).state).toBe('occupied');
    });

    it('two admissions to one bed at once: one is admitted, the other refused', async () => {
      const b50 = await bed('50');
      const answers = await Promise.all([admit(b50), admit(b50), admit(b50)]);
      expect(answers.map((r) => r.statusCode).sort()).toEqual([201, 409, 409]);
      expect((await api.get(`/api/v1/admissions?bedId=${b50}`)).json().total).toBe(1);
    });
  });

  describe('cheques: issuing uses a leaf of the book', () => {
    const book = (over: Record<string, unknown> = {}) =>
      created(api.post('/api/v1/cheque-books', { bankName: 'Al Rajhi Bank', bankAccount: 'SA0380000000608010167519', firstNumber: '000101', lastNumber: '000125', leaves: 25, ...over }));
    const issue = (bookId: string, chequeNumber: string) =>
      api.post('/api/v1/issued-cheques', { bookId, chequeNumber, payeeName: 'Saudi Electricity Co.', amount: 1_250.75, chequeDate: '2026-03-01' });

    it('a book of 25 leaves: 21 cheques leave 4, and cheques.book.low fires once, when the leaves left fall under 5', async () => {
      const b = await book();
      expect(b).toMatchObject({ leaves: 25, leavesRemaining: 25 });
      const low = await events('cheques.book.low');
      for (let n = 101; n <= 120; n++) await created(issue(b.id, `000${n}`));
      expect(await doc(`/api/v1/cheque-books/${b.id}`)).toMatchObject({ leavesUsed: 20, leavesRemaining: 5 });
      expect(await events('cheques.book.low')).toBe(low);
      await created(issue(b.id, '000121'));
      expect(await doc(`/api/v1/cheque-books/${b.id}`)).toMatchObject({ leavesUsed: 21, leavesRemaining: 4 });
      expect(await events('cheques.book.low')).toBe(low + 1);
      await created(issue(b.id, '000122'));
      expect(await events('cheques.book.low')).toBe(low + 1);
      // Nobody types the leaves left (computed) or used (the cheques' to count).
      expectError(await api.patch(`/api/v1/cheque-books/${b.id}`, { leavesRemaining: 2 }), 400, 'VALIDATION_ERROR');
      expectError(await api.patch(`/api/v1/cheque-books/${b.id}`, { leavesUsed: 0 }), 400, 'VALIDATION_ERROR');
    });

    it('a cheque number once per book and inside its range; the same number in another book is fine', async () => {
      const b = await book();
      const first = await created(issue(b.id, '000105'));
      const dup = expectError(await issue(b.id, '000105'), 409, 'CONFLICT');
      expect(dup.details[0]).toMatchObject({ reason: 'unique', field: 'chequeNumber', pointer: '/chequeNumber', within: 'bookId', other: first.id });
      expect(dup.message).toContain(first.id);
      const out = expectError(await issue(b.id, '000126'), 400, 'VALIDATION_ERROR');
      expect(out.details[0]).toMatchObject({ pointer: '/chequeNumber', rule: 'effectCheck', message: "The cheque number is outside its book's range" });
      expectError(await issue(b.id, '000100'), 400, 'VALIDATION_ERROR');
      const other = await book({ firstNumber: '000101', lastNumber: '000110', leaves: 10 });
      await created(issue(other.id, '000105'));
      expect(await doc(`/api/v1/cheque-books/${b.id}`)).toMatchObject({ leavesUsed: 1 });
      // A book whose leaves do not match its range is refused.
      const e = expectError(await api.post('/api/v1/cheque-books', { bankName: 'SNB', bankAccount: 'SA44', firstNumber: '000001', lastNumber: '000025', leaves: 50 }), 400, 'VALIDATION_ERROR');
      expect(e.details[0]).toMatchObject({ pointer: '/leaves' });
    });

    it('a closed book issues nothing: the effect on the locked book is refused, and no cheque, audit entry or event is left', async () => {
      const b = await book();
      await ok(api.post(`/api/v1/cheque-books/${b.id}/close`));
      const [cheques, issuedEvents, audited] = [await count(host, 'SELECT count(*) FROM doc_cheques_issuedcheque WHERE company_id = ?', co.company.id), await events('cheques.payable.issued'), await audits('issued-cheques', 'create')];
      const e = expectError(await issue(b.id, '000101'), 409, 'CONFLICT');
      expect(e.details[0]).toMatchObject({ reason: 'locked', state: 'closed', effect: 0, effectOn: 'bookId' });
      expect(e.message).toMatch(/effect 0 \(bookId: set leavesUsed\) failed/);
      expect(await count(host, 'SELECT count(*) FROM doc_cheques_issuedcheque WHERE company_id = ?', co.company.id)).toBe(cheques);
      expect(await events('cheques.payable.issued')).toBe(issuedEvents);
      expect(await audits('issued-cheques', 'create')).toBe(audited);
      const after = await doc(`/api/v1/cheque-books/${b.id}`);
      expect(after).toMatchObject({ leavesRemaining: 25 });
      expect(after.leavesUsed ?? 0).toBe(0);
    });

    it('the last leaf is the last: the book says it is exhausted, and a third cheque of a two-leaf book is refused', async () => {
      const b = await book({ firstNumber: '000001', lastNumber: '000002', leaves: 2 });
      const exhausted = await events('cheques.book.exhausted');
      await created(issue(b.id, '000001'));
      await created(issue(b.id, '000002'));
      expect(await doc(`/api/v1/cheque-books/${b.id}`)).toMatchObject({ leavesUsed: 2, leavesRemaining: 0 });
      expect(await events('cheques.book.exhausted')).toBe(exhausted + 1);
      expectError(await issue(b.id, '000003'), 400, 'VALIDATION_ERROR');
    });

    it('a cheque deleted before it is printed gives its leaf back; a printed one is locked: voided, never deleted or edited', async () => {
      const b = await book();
      const typo = await created(issue(b.id, '000101'));
      const kept = await created(issue(b.id, '000102'));
      expect(await doc(`/api/v1/cheque-books/${b.id}`)).toMatchObject({ leavesUsed: 2, leavesRemaining: 23 });
      expect((await api.delete(`/api/v1/issued-cheques/${typo.id}`)).statusCode).toBe(200);
      expect(await doc(`/api/v1/cheque-books/${b.id}`)).toMatchObject({ leavesUsed: 1, leavesRemaining: 24 });
      // The number is free again: the cheque is written anew on the same leaf.
      await created(issue(b.id, '000101'));
      await ok(api.post(`/api/v1/issued-cheques/${kept.id}/print`));
      expect(expectError(await api.delete(`/api/v1/issued-cheques/${kept.id}`), 409, 'CONFLICT').details[0]).toMatchObject({ reason: 'locked', state: 'printed' });
      expectError(await api.patch(`/api/v1/issued-cheques/${kept.id}`, { amount: 9_999 }), 409, 'CONFLICT');
      expect((await ok(api.post(`/api/v1/issued-cheques/${kept.id}/void`))).state).toBe('voided');
      expect(await doc(`/api/v1/cheque-books/${b.id}`)).toMatchObject({ leavesUsed: 2, leavesRemaining: 23 });
    });

    it('concurrent cheques: the same number twice at once is issued once; ten different ones use exactly ten leaves', async () => {
      const b = await book();
      const same = await Promise.all([issue(b.id, '000111'), issue(b.id, '000111')]);
      expect(same.map((r) => r.statusCode).sort()).toEqual([201, 409]);
      const ten = await Promise.all(Array.from({ length: 10 }, (_, i) => issue(b.id, `0001${String(i).padStart(2, '0')}`.replace('000100', '000112'))));
      for (const r of ten) expect(r.statusCode, r.body).toBe(201);
      expect(await doc(`/api/v1/cheque-books/${b.id}`)).toMatchObject({ leavesUsed: 11, leavesRemaining: 14 });
    });
  });

  describe('time off: approved leave draws on the allocation', () => {
    let employeeId: string;
    let allocationId: string;
    const leave = (startDate: string, endDate: string, over: Record<string, unknown> = {}) =>
      created(api.post('/api/v1/leave-requests', { employeeId, leaveType: 'annual', startDate, endDate, allocationId, ...over }));

    beforeAll(async () => {
      employeeId = (await created(api.post('/api/v1/employees', { fullName: 'Noura Al-Shehri', jobTitle: 'Analyst', joinDate: '2023-01-01' }))).id;
      const alloc = await created(api.post('/api/v1/leave-allocations', { employeeId, leaveType: 'annual', validFrom: '2026-01-01', validTo: '2026-12-31', days: 21 }));
      expect(alloc).toMatchObject({ days: 21, daysLeft: 21 });
      allocationId = (await ok(api.post(`/api/v1/leave-allocations/${alloc.id}/approve`))).id;
    });

    it('21 days: approving 5 leaves 16, 10 more leave 6; 7 more are refused; cancelling the 10 gives them back', async () => {
      const first = await leave('2026-02-01', '2026-02-05');
      await ok(api.post(`/api/v1/leave-requests/${first.id}/approve`));
      expect(await doc(`/api/v1/leave-allocations/${allocationId}`)).toMatchObject({ daysTaken: 5, daysLeft: 16 });
      const second = await leave('2026-04-01', '2026-04-10');
      await ok(api.post(`/api/v1/leave-requests/${second.id}/approve`));
      expect(await doc(`/api/v1/leave-allocations/${allocationId}`)).toMatchObject({ daysTaken: 15, daysLeft: 6 });
      // 7 days when 6 are left: refused when asked for.
      const asked = expectError(await api.post('/api/v1/leave-requests', { employeeId, leaveType: 'annual', startDate: '2026-07-01', endDate: '2026-07-07', allocationId }), 400, 'VALIDATION_ERROR');
      expect(asked.details[0]).toMatchObject({ pointer: '/days', rule: 'effectCheck', message: 'The leave is longer than the days left of the allocation' });
      // Two requests of 4 days each fit when asked for; approving both would take 8 of the 6: the second approval is refused.
      const third = await leave('2026-07-01', '2026-07-04');
      const fourth = await leave('2026-08-02', '2026-08-05');
      await ok(api.post(`/api/v1/leave-requests/${third.id}/approve`));
      const e = expectError(await api.post(`/api/v1/leave-requests/${fourth.id}/approve`), 400, 'VALIDATION_ERROR');
      expect(e.details[0]).toMatchObject({ pointer: '/daysLeft', message: 'The leave exceeds the days left of the allocation', effect: 0, effectOn: 'allocationId' });
      expect((await doc(`/api/v1/leave-requests/${fourth.id}`)).state).toBe('to_approve');
      expect(await doc(`/api/v1/leave-allocations/${allocationId}`)).toMatchObject({ daysTaken: 19, daysLeft: 2 });
      // Cancelling the approved 10 days gives them back; the 4 days then fit.
      await ok(api.post(`/api/v1/leave-requests/${second.id}/cancel`));
      expect(await doc(`/api/v1/leave-allocations/${allocationId}`)).toMatchObject({ daysTaken: 9, daysLeft: 12 });
      await ok(api.post(`/api/v1/leave-requests/${fourth.id}/approve`));
      expect(await doc(`/api/v1/leave-allocations/${allocationId}`)).toMatchObject({ daysTaken: 13, daysLeft: 8 });
      // A request cancelled before approval never drew anything, and gives nothing back.
      const fifth = await leave('2026-09-01', '2026-09-02');
      await ok(api.post(`/api/v1/leave-requests/${fifth.id}/cancel`));
      expect(await doc(`/api/v1/leave-allocations/${allocationId}`)).toMatchObject({ daysTaken: 13, daysLeft: 8 });
    });

    it("annual leave needs an allocation, and another employee's allocation does not do", async () => {
      const none = await leave('2026-05-03', '2026-05-04', { allocationId: undefined });
      const e = expectError(await api.post(`/api/v1/leave-requests/${none.id}/approve`), 409, 'CONFLICT');
      expect(e.details[0]).toMatchObject({ reason: 'guard' });
      const other = (await created(api.post('/api/v1/employees', { fullName: 'Fahad Al-Dosari', jobTitle: 'Driver', joinDate: '2024-01-01' }))).id;
      const wrong = expectError(await api.post('/api/v1/leave-requests', { employeeId: other, leaveType: 'annual', startDate: '2026-05-03', endDate: '2026-05-04', allocationId }), 400, 'VALIDATION_ERROR');
      expect(wrong.details[0]).toMatchObject({ pointer: '/allocationId', rule: 'effectCheck', message: "The allocation is not the employee's for this leave type and dates" });
      // Nor one of another year.
      expectError(await api.post('/api/v1/leave-requests', { employeeId, leaveType: 'annual', startDate: '2027-01-03', endDate: '2027-01-04', allocationId }), 400, 'VALIDATION_ERROR');
    });
  });

  describe('a naming series given at a transition, a field unique in the company, a create effect', () => {
    it('a voucher is numbered when posted, from its date, gap-free per year; posting files its receipt', async () => {
      const v = (date: string, over: Record<string, unknown> = {}) => created(api.post('/api/v1/vouchers', { date, amount: 500, ...over }));
      const a = await v('2026-01-05');
      expect(a.number).toBeUndefined();
      const b = await v('2026-02-01');
      const c = await v('2027-01-03');
      expect((await ok(api.post(`/api/v1/vouchers/${b.id}/post`))).number).toBe('PV-2026-0001');
      expect((await ok(api.post(`/api/v1/vouchers/${c.id}/post`))).number).toBe('PV-2027-0001');
      expect((await ok(api.post(`/api/v1/vouchers/${a.id}/post`))).number).toBe('PV-2026-0002');
      const receipts = (await api.get(`/api/v1/receipts?voucherId=${a.id}`)).json().data;
      expect(receipts).toEqual([expect.objectContaining({ amount: 500, note: 'for PV-2026-0002' })]);
      // A posting whose effect fails (a receipt of 0 is refused) takes no number: the next is 0003.
      const zero = await v('2026-03-01', { amount: 0 });
      const e = expectError(await api.post(`/api/v1/vouchers/${zero.id}/post`), 400, 'VALIDATION_ERROR');
      expect(e.details[0]).toMatchObject({ pointer: '/amount', effect: 0, effectOn: 'receipt' });
      expect((await doc(`/api/v1/vouchers/${zero.id}`)).number).toBeUndefined();
      expect((await ok(api.post(`/api/v1/vouchers/${(await v('2026-03-02')).id}/post`))).number).toBe('PV-2026-0003');
      // The number stays through an update.
      expect((await ok(api.patch(`/api/v1/vouchers/${a.id}`, { reference: 'kept' }).then((r) => r))).number).toBe('PV-2026-0002');
    });

    it('effects that loop (a ping creates a pong, which creates a ping…) are stopped, and nothing is kept', async () => {
      const e = expectError(await api.post('/api/v1/pings', { n: 1 }), 500, 'APP_ERROR');
      expect(JSON.stringify(e.details)).toContain('effectDepth');
      expect((await api.get('/api/v1/pings')).json().total).toBe(0);
      expect((await api.get('/api/v1/pongs')).json().total).toBe(0);
    });

    it('a reference once per company, also when two creates race', async () => {
      const first = await created(api.post('/api/v1/vouchers', { date: '2026-01-01', amount: 1, reference: 'TRX-77' }));
      const e = expectError(await api.post('/api/v1/vouchers', { date: '2026-01-01', amount: 1, reference: 'TRX-77' }, { 'accept-language': 'ar' }), 409, 'CONFLICT');
      expect(e.details[0]).toMatchObject({ reason: 'unique', field: 'reference', other: first.id });
      expect(e.message).toMatch(/[\u0600-\u06FF]/);
      const second = await created(api.post('/api/v1/vouchers', { date: '2026-01-01', amount: 1, reference: 'TRX-78' }));
      expectError(await api.patch(`/api/v1/vouchers/${second.id}`, { reference: 'TRX-77' }), 409, 'CONFLICT');
      await ok(api.patch(`/api/v1/vouchers/${first.id}`, { reference: 'TRX-77', amount: 2 }));
      const race = await Promise.all(Array.from({ length: 4 }, () => api.post('/api/v1/vouchers', { date: '2026-01-01', amount: 1, reference: 'TRX-99' })));
      expect(race.map((r) => r.statusCode).sort()).toEqual([201, 409, 409, 409]);
    });
  });
});

describe('bad effects, series and unique fields are refused at validate', () => {
  const manifest = (app: string) => JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'manifests', `${app}.json`), 'utf8'));
  const typeIndex = (m: { documentTypes: { name: string }[] }, name: string) => m.documentTypes.findIndex((d) => d.name === name);
  const catalogue = firstPartyManifests();
  const problems = (m: unknown) => checkManifest(m, { manifestOf: (id) => catalogue.get(id) }).problems;

  it('the first-party manifests pass', () => {
    for (const app of ['hospital', 'cheques', 'time-off']) expect(problems(manifest(app))).toEqual([]);
  });

  it('an unknown target field, an unknown transition, a missing required input', () => {
    const m = manifest('hospital');
    const i = typeIndex(m, 'admission');
    m.documentTypes[i].createEffects = [{ target: 'cotId', transition: 'occupy' }, { target: 'bedId', transition: 'sleep' }, { target: 'patientId', transition: 'admit' }, { create: 'admission', values: { diagnosis: "'again'" } }];
    const t = m.documentTypes[i].transitions.findIndex((x: { name: string }) => x.name === 'transfer');
    m.documentTypes[i].transitions[t].effects = [{ target: 'bedId', transition: 'occupy', input: { toBedId: 'doc.bedId' } }];
    const p = problems(m);
    expect(p).toEqual(expect.arrayContaining([
      expect.objectContaining({ pointer: `/documentTypes/${i}/createEffects/0/target`, rule: 'effectTarget' }),
      expect.objectContaining({ pointer: `/documentTypes/${i}/createEffects/1/transition`, rule: 'effectTransition' }),
      // patientId is emr's (a dependency): typed against emr's patient, which has no transition admit.
      expect.objectContaining({ pointer: `/documentTypes/${i}/createEffects/2/transition`, rule: 'effectTransition' }),
      expect.objectContaining({ pointer: `/documentTypes/${i}/createEffects/3/create`, rule: 'effectLoop' }),
      expect.objectContaining({ pointer: `/documentTypes/${i}/createEffects/3/values`, rule: 'required' }),
      expect.objectContaining({ pointer: `/documentTypes/${i}/transitions/${t}/effects/0/input/toBedId`, rule: 'field' }),
    ]));
  });

  it('a `set` of the wrong type, a computed field set, an expression that does not type-check', () => {
    const m = manifest('cheques');
    const i = typeIndex(m, 'issuedCheque');
    m.documentTypes[i].createEffects = [
      { target: 'bookId', set: { leavesUsed: "'one more'" } },
      { target: 'bookId', set: { leavesRemaining: 'target.leavesRemaining - 1' } },
      { target: 'bookId', set: { leavesUsed: 'target.pages + 1' } },
      { target: 'bookId', transition: 'close', set: { leavesUsed: '1' } },
    ];
    const p = problems(m);
    const at = `/documentTypes/${i}/createEffects`;
    expect(p).toEqual(expect.arrayContaining([
      expect.objectContaining({ pointer: `${at}/0/set/leavesUsed`, rule: 'expressionType', message: expect.stringContaining('needs int') }),
      expect.objectContaining({ pointer: `${at}/1/set/leavesRemaining`, rule: 'field', message: expect.stringContaining('computed') }),
      expect.objectContaining({ pointer: `${at}/2/set/leavesUsed`, rule: 'expressionType' }),
      expect.objectContaining({ pointer: `${at}/3`, rule: 'effect' }),
    ]));
  });

  it('a series on a field that is not read-only, with two numbers; unique within a field that is no reference', () => {
    const m = manifest('hospital');
    const i = typeIndex(m, 'admission');
    m.documentTypes[i].naming = { field: 'diagnosis', format: 'ADM-{#####}-{##}', on: 'admit' };
    m.documentTypes[i].fields.find((f: { name: string }) => f.name === 'diagnosis').uniqueWithin = 'admittedOn';
    const p = problems(m).map((x) => `${x.pointer} ${x.rule}`);
    expect(p).toEqual(expect.arrayContaining([
      `/documentTypes/${i}/naming/field namingField`,
      `/documentTypes/${i}/naming/format namingFormat`,
      `/documentTypes/${i}/naming/on transition`,
      expect.stringMatching(new RegExp(`^/documentTypes/${i}/fields/\\d+/uniqueWithin field$`)),
    ]));
  });
});
