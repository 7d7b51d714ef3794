// A small app for the rules added after the first 79 apps (test/api-rules-dates.test.ts): stays in
// rooms. A stay counts its nights from its dates (`daysBetween`), takes a due date a week after it
// starts (`addDays`), is overdue when the host's date (`today`) is past it, holds its slot in its
// room unless cancelled (`uniqueExceptIn`), takes a deposit that is either left out or more than 0
// (`has()` on a number), occupies its room on check-in only if the room is free, and frees it on
// check-out only if it is still occupied (`target.state` in an effect's `check` and `when`). A
// room counts its different guests (a distinct count).
import type { Manifest } from '../manifests/manifest.schema.ts';
import type { AppSource } from '../core/apps/app-source.ts';
import { bi, writeApp } from './fixtures.ts';

export function staysManifest(): Manifest {
  return {
    id: 'stays-lab', version: '1.0.0', host: '^0.1.0',
    name: bi('Stays lab', 'مختبر الإقامات'), description: bi('Stays in rooms, with dates and states in their rules', 'إقامات في غرف بقواعد تقرأ التواريخ والحالات'),
    strings: {
      en: { title: 'Stays lab', 'state.free': 'Free', 'state.occupied': 'Occupied', 'state.closed': 'Closed', 'state.booked': 'Booked', 'state.in': 'In', 'state.out': 'Out', 'state.cancelled': 'Cancelled' },
      ar: { title: 'مختبر الإقامات', 'state.free': 'متاحة', 'state.occupied': 'مشغولة', 'state.closed': 'مغلقة', 'state.booked': 'محجوزة', 'state.in': 'مقيم', 'state.out': 'غادر', 'state.cancelled': 'ملغاة' },
    },
    documentTypes: [{
      name: 'room', resource: 'rooms', idPrefix: 'rm', label: bi('Room', 'غرفة'), labelPlural: bi('Rooms', 'الغرف'),
      fields: [
        { name: 'name', type: 'string', required: true, maxLength: 50, label: bi('Name', 'الاسم') },
        { name: 'guests', type: 'integer', aggregate: { type: 'stay', via: 'roomId', op: 'countDistinct', field: 'guest', states: ['booked', 'in', 'out'] },
          label: bi('Guests', 'النزلاء'), description: bi('The different guests of its stays that are not cancelled', 'النزلاء المختلفون في إقاماتها غير الملغاة') },
      ],
      states: ['free', 'occupied', 'closed'], initialState: 'free',
      transitions: [
        { name: 'occupy', from: ['free'], to: 'occupied', label: bi('Occupy', 'إشغال') },
        { name: 'release', from: ['occupied'], to: 'free', label: bi('Release', 'إخلاء') },
        { name: 'close', from: ['free', 'occupied'], to: 'closed', label: bi('Close', 'إغلاق') },
      ],
    }, {
      name: 'stay', resource: 'stays', idPrefix: 'sty', label: bi('Stay', 'إقامة'), labelPlural: bi('Stays', 'الإقامات'),
      fields: [
        { name: 'roomId', type: 'reference', to: 'room', required: true, label: bi('Room', 'الغرفة') },
        { name: 'guest', type: 'string', maxLength: 100, label: bi('Guest', 'النزيل') },
        { name: 'slot', type: 'string', required: true, maxLength: 20, uniqueWithin: 'roomId', uniqueExceptIn: ['cancelled'], label: bi('Slot', 'الفترة') },
        { name: 'startDate', type: 'date', required: true, label: bi('From', 'من') },
        { name: 'endDate', type: 'date', required: true, label: bi('To', 'إلى') },
        { name: 'nights', type: 'integer', compute: 'daysBetween(doc.startDate, doc.endDate)', label: bi('Nights', 'الليالي') },
        { name: 'dueDate', type: 'date', default: 'addDays(doc.startDate, 7)', label: bi('Due', 'الاستحقاق') },
        { name: 'overdue', type: 'boolean', compute: 'has(doc.dueDate) && today > doc.dueDate', label: bi('Overdue', 'متأخر') },
        { name: 'deposit', type: 'money', label: bi('Deposit', 'التأمين') },
      ],
      validations: [
        { rule: 'doc.endDate > doc.startDate', field: 'endDate', message: bi('A stay ends after it starts', 'تنتهي الإقامة بعد بدايتها') },
        { rule: '!has(doc.deposit) || doc.deposit > 0', field: 'deposit', message: bi('A deposit is left out or more than 0', 'التأمين إما متروك وإما أكثر من صفر') },
      ],
      states: ['booked', 'in', 'out', 'cancelled'], initialState: 'booked',
      transitions: [
        { name: 'checkIn', from: ['booked'], to: 'in', label: bi('Check in', 'تسجيل الدخول'),
          effects: [{ target: 'roomId', transition: 'occupy', check: { rule: 'target.state == "free"', field: 'roomId', message: bi('The room is not free', 'الغرفة غير متاحة') } }] },
        { name: 'checkOut', from: ['in'], to: 'out', label: bi('Check out', 'تسجيل الخروج'),
          effects: [{ target: 'roomId', transition: 'release', when: 'target.state == "occupied"' }] },
        { name: 'cancel', from: ['booked'], to: 'cancelled', label: bi('Cancel', 'إلغاء') },
        { name: 'rebook', from: ['cancelled'], to: 'booked', label: bi('Book again', 'إعادة الحجز') },
      ],
    }],
  };
}

export function staysSource(root: string): AppSource {
  return writeApp(root, staysManifest());
}
