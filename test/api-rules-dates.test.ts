// Rules that read dates, the host's clock, states and presence, through the API (the stays lab,
// test/rules-gaps-app.ts): days between dates and a date so many days on, `today` from the host's
// clock (driven here), `has()` telling a number left out from a 0, uniqueness that a cancelled
// document gives up, an effect whose `check` and `when` read its target's state, and a distinct
// count of child documents. On SQLite,
// and again on PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Host } from '../core/host.ts';
import type { Manifest } from '../manifests/manifest.schema.ts';
import { ManualClock } from '../core/kernel/clock.ts';
import { checkManifest } from '../core/apps/manifest-check.ts';
import { buildHost } from './db.ts';
import { createCompany, expectError, type TestCompany } from './helpers.ts';
import { tempDir } from './fixtures.ts';
import { staysManifest, staysSource } from './rules-gaps-app.ts';

describe('rules over dates, the clock, states and presence', () => {
  let host: Host;
  let co: TestCompany;
  const clock = new ManualClock(Date.UTC(2026, 2, 1, 9));

  beforeAll(async () => {
    host = await buildHost({ sources: [staysSource(tempDir())], clock, config: { rateLimitPerMinute: 0 } });
    co = await createCompany(host, { apps: ['stays-lab'] });
  });
  afterAll(() => host.close());

  const room = async (name = 'Room 1') => (await co.as().post('/api/v1/rooms', { name })).json().data as { id: string };
  const stay = async (roomId: string, over: Record<string, unknown> = {}) => {
    const res = await co.as().post('/api/v1/stays', { roomId, slot: 'week 10', startDate: '2026-03-02', endDate: '2026-03-06', ...over });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data as Record<string, unknown> & { id: string };
  };

  it('counts nights from the dates, across the end of February, and dues a week after the start', async () => {
    const r = await room();
    expect(await stay(r.id)).toMatchObject({ nights: 4, dueDate: '2026-03-09', overdue: false });
    expect(await stay(r.id, { slot: 'feb', startDate: '2026-02-26', endDate: '2026-03-02' })).toMatchObject({ nights: 4, dueDate: '2026-03-05' });
    // A due date sent stays.
    expect((await stay(r.id, { slot: 'x', dueDate: '2026-04-01' })).dueDate).toBe('2026-04-01');
  });

  it("reads today from the host's clock: overdue once the clock passes the due date", async () => {
    const r = await room();
    const s = await stay(r.id, { slot: 'late' });
    expect(s.overdue).toBe(false);
    clock.set(Date.UTC(2026, 2, 10, 8));
    const res = await co.as().patch(`/api/v1/stays/${s.id}`, { endDate: '2026-03-07' });
    expect(res.json().data).toMatchObject({ nights: 5, overdue: true });
    clock.set(Date.UTC(2026, 2, 1, 9));
  });

  it('tells a deposit left out from a deposit of 0 (has() on a number)', async () => {
    const r = await room();
    const s = await stay(r.id, { slot: 'no deposit' });
    expect(s.deposit).toBeUndefined();
    expect((await stay(r.id, { slot: 'deposit', deposit: 250.5 })).deposit).toBe(250.5);
    const e = expectError(await co.as().post('/api/v1/stays', { roomId: r.id, slot: 'zero', startDate: '2026-03-02', endDate: '2026-03-06', deposit: 0 }, { 'accept-language': 'ar' }), 400, 'VALIDATION_ERROR');
    expect(e.details).toEqual([expect.objectContaining({ pointer: '/deposit', rule: 'validation', message: 'التأمين إما متروك وإما أكثر من صفر' })]);
  });

  it('frees a slot when its stay is cancelled, and holds it again when the stay is booked again', async () => {
    const r = await room();
    const first = await stay(r.id, { slot: 'week 12' });
    const e = expectError(await co.as().post('/api/v1/stays', { roomId: r.id, slot: 'week 12', startDate: '2026-03-16', endDate: '2026-03-20' }), 409, 'CONFLICT');
    expect(e.details[0]).toMatchObject({ reason: 'unique', field: 'slot', other: first.id, within: 'roomId' });
    expect((await co.as().post(`/api/v1/stays/${first.id}/cancel`)).statusCode).toBe(200);
    const second = await stay(r.id, { slot: 'week 12', startDate: '2026-03-16', endDate: '2026-03-20' });
    // Booked again, the first would hold the slot the second holds now.
    const again = expectError(await co.as().post(`/api/v1/stays/${first.id}/rebook`), 409, 'CONFLICT');
    expect(again.details[0]).toMatchObject({ reason: 'unique', field: 'slot', other: second.id });
    // Another room's slot of the same name is another slot.
    await stay((await room('Room 2')).id, { slot: 'week 12' });
  });

  it("checks in only to a free room, and frees it on check-out only while it is occupied (the target's state)", async () => {
    const r = await room('Suite');
    const a = await stay(r.id, { slot: 'a' });
    const b = await stay(r.id, { slot: 'b' });
    expect((await co.as().post(`/api/v1/stays/${a.id}/checkIn`)).json().data.state).toBe('in');
    expect((await co.as().get(`/api/v1/rooms/${r.id}`)).json().data.state).toBe('occupied');
    const e = expectError(await co.as().post(`/api/v1/stays/${b.id}/checkIn`), 400, 'VALIDATION_ERROR');
    expect(e.details[0]).toMatchObject({ pointer: '/roomId', rule: 'effectCheck', message: 'The room is not free' });
    expect((await co.as().get(`/api/v1/stays/${b.id}`)).json().data.state).toBe('booked');
    // Closed meanwhile: checking out leaves the room as it is (the effect's `when` does not hold).
    await co.as().post(`/api/v1/rooms/${r.id}/close`);
    expect((await co.as().post(`/api/v1/stays/${a.id}/checkOut`)).json().data.state).toBe('out');
    expect((await co.as().get(`/api/v1/rooms/${r.id}`)).json().data.state).toBe('closed');
    // An occupied room is freed.
    const r2 = await room('Room 3');
    const c = await stay(r2.id, { slot: 'c' });
    await co.as().post(`/api/v1/stays/${c.id}/checkIn`);
    await co.as().post(`/api/v1/stays/${c.id}/checkOut`);
    expect((await co.as().get(`/api/v1/rooms/${r2.id}`)).json().data.state).toBe('free');
  });

  it('counts the different guests of a room: a second stay of a guest adds none, a cancelled stay counts out only its last', async () => {
    const r = await room('Family room');
    const guests = async () => (await co.as().get(`/api/v1/rooms/${r.id}`)).json().data.guests;
    const a = await stay(r.id, { slot: '1', guest: 'Aisha' });
    const b = await stay(r.id, { slot: '2', guest: 'Aisha' });
    await stay(r.id, { slot: '3', guest: 'Badr' });
    await stay(r.id, { slot: '4' });
    expect(await guests()).toBe(2);
    await co.as().post(`/api/v1/stays/${a.id}/cancel`);
    expect(await guests()).toBe(2);
    await co.as().post(`/api/v1/stays/${b.id}/cancel`);
    expect(await guests()).toBe(1);
    // Booked again under another name: a new guest.
    await co.as().post(`/api/v1/stays/${b.id}/rebook`);
    expect(await guests()).toBe(2);
    await co.as().patch(`/api/v1/stays/${b.id}`, { guest: 'Badr' });
    expect(await guests()).toBe(1);
    // Written at the same time, five stays of one new guest count once.
    await Promise.all(['5', '6', '7', '8', '9'].map((slot) => co.as().post('/api/v1/stays', { roomId: r.id, slot, guest: 'Chadi', startDate: '2026-03-02', endDate: '2026-03-03' })));
    expect(await guests()).toBe(2);
  });

  it('refuses uniqueExceptIn without uniqueness or naming a state the type does not have, and a distinct count of a field the child does not have', () => {
    const m = structuredClone(staysManifest()) as Manifest & { documentTypes: { fields: Record<string, unknown>[] }[] };
    const slot = m.documentTypes[1].fields[2];
    slot.uniqueExceptIn = ['cancelled', 'gone'];
    delete slot.uniqueWithin;
    (m.documentTypes[0].fields[1].aggregate as Record<string, unknown>).field = 'nope';
    expect(checkManifest(m).problems.map((p) => [p.pointer, p.rule])).toEqual([
      ['/documentTypes/1/fields/2/uniqueExceptIn', 'unique'],
      ['/documentTypes/1/fields/2/uniqueExceptIn/1', 'state'],
      ['/documentTypes/0/fields/1/aggregate/field', 'field'],
    ]);
  });
});
