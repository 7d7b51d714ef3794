// A small app that declares one of each rule kind, for the rules' tests (test/api-rules.test.ts):
// computed fields read in dependency order (discount before the subtotal it is computed from),
// a computed field of each line (its amount, which the subtotal sums), validations over fields,
// lines and each line, a guarded transition, one limited to managers, one taking input that it
// stores, one whose `set` breaks a bound, and locks by state. Orders may belong to a book (a
// second type): a rule reads the book through `ref` (the order's number within the book's
// range), a default takes the book's discount, the book aggregates its orders (the total
// committed, their count), refuses what would pass its limit, and an event fires when a book is
// nearly spent (a rule over the aggregate).
import type { Manifest } from '../manifests/manifest.schema.ts';
import type { AppSource } from '../core/apps/app-source.ts';
import { bi, writeApp } from './fixtures.ts';

const reasons = ['price', 'timing', 'other'];

export function rulesManifest(): Manifest {
  return {
    id: 'rules-lab', version: '1.0.0', host: '^0.1.0',
    name: bi('Rules lab', 'مختبر القواعد'), description: bi('Orders with rules of every kind', 'طلبات بقواعد من كل نوع'),
    strings: {
      en: { title: 'Rules lab', 'state.draft': 'Draft', 'state.sent': 'Sent', 'state.closed': 'Closed', 'state.lost': 'Lost', 'state.open': 'Open' },
      ar: { title: 'مختبر القواعد', 'state.draft': 'مسودة', 'state.sent': 'مرسل', 'state.closed': 'مغلق', 'state.lost': 'خاسر', 'state.open': 'مفتوح' },
    },
    documentTypes: [{
      name: 'order', resource: 'orders', idPrefix: 'ord', label: bi('Order', 'طلب'), labelPlural: bi('Orders', 'الطلبات'),
      fields: [
        { name: 'customer', type: 'string', required: true, maxLength: 100, label: bi('Customer', 'العميل'), lockedIn: ['sent'] },
        { name: 'lines', type: 'lines', minItems: 1, maxItems: 50, label: bi('Lines', 'البنود'), fields: [
          { name: 'quantity', type: 'number', required: true, minimum: 0, label: bi('Quantity', 'الكمية') },
          { name: 'unitPrice', type: 'money', required: true, minimum: 0, label: bi('Unit price', 'سعر الوحدة') },
          { name: 'amount', type: 'money', compute: 'times(line.unitPrice, line.quantity)', label: bi('Amount', 'المبلغ'), description: bi('Quantity × unit price', 'الكمية × سعر الوحدة') },
        ] },
        { name: 'discountPercent', type: 'number', minimum: 0, maximum: 100, default: 'ref.bookId.discountPercent', label: bi('Discount %', 'نسبة الخصم') },
        { name: 'discount', type: 'money', required: true, compute: 'percent(doc.subtotal, doc.discountPercent)', label: bi('Discount', 'الخصم') },
        { name: 'subtotal', type: 'money', required: true, compute: 'sum(doc.lines.map(l, l.amount))', label: bi('Subtotal', 'المجموع الفرعي') },
        { name: 'total', type: 'money', required: true, compute: 'doc.subtotal - doc.discount', label: bi('Total', 'الإجمالي'), description: bi('Subtotal − discount', 'المجموع الفرعي − الخصم') },
        { name: 'vat', type: 'money', compute: 'percent(doc.total, 15)', label: bi('VAT', 'ضريبة القيمة المضافة') },
        { name: 'startDate', type: 'date', label: bi('Start', 'البداية') },
        { name: 'endDate', type: 'date', label: bi('End', 'النهاية') },
        { name: 'notes', type: 'string', maxLength: 500, label: bi('Notes', 'ملاحظات') },
        { name: 'probability', type: 'integer', minimum: 0, maximum: 100, label: bi('Probability', 'الاحتمال') },
        { name: 'lostReason', type: 'enum', values: reasons, label: bi('Lost reason', 'سبب الخسارة') },
        { name: 'bookId', type: 'reference', to: 'book', filterable: true, label: bi('Book', 'الدفتر') },
        { name: 'number', type: 'integer', minimum: 1, label: bi('Number', 'الرقم') },
      ],
      validations: [
        { rule: 'doc.endDate >= doc.startDate', field: 'endDate', message: bi('The order cannot end before it starts', 'لا يجوز أن ينتهي الطلب قبل بدايته') },
        { rule: 'doc.lines.all(l, l.quantity > 0.0)', field: 'lines', message: bi('Every line needs a quantity', 'يلزم لكل بند كمية') },
        { each: 'lines', rule: 'line.quantity <= 1000.0', field: 'quantity', message: bi('At most 1,000 of a line', 'لا تزيد كمية البند على 1000') },
        { rule: '!has(ref.bookId) || (doc.number >= ref.bookId.firstNumber && doc.number <= ref.bookId.lastNumber)', field: 'number',
          message: bi("The number is outside the book's range", 'الرقم خارج نطاق الدفتر') },
      ],
      states: ['draft', 'sent', 'closed', 'lost'], initialState: 'draft',
      lockedIn: ['closed', 'lost'],
      transitions: [
        { name: 'send', from: ['draft'], to: 'sent', label: bi('Send', 'إرسال'), guard: { rule: 'doc.total > 0', message: bi('An order with nothing to pay cannot be sent', 'لا يرسل طلب لا مبلغ فيه') } },
        { name: 'approve', from: ['draft'], to: 'sent', label: bi('Approve', 'اعتماد'), roles: ['Manager'],
          input: [{ name: 'relatedId', type: 'reference', to: 'order', label: bi('Related order', 'طلب مرتبط') }] },
        { name: 'close', from: ['sent'], to: 'closed', label: bi('Close', 'إغلاق'),
          input: [{ name: 'note', type: 'string', required: true, minLength: 1, maxLength: 500, label: bi('Note', 'ملاحظة') }],
          set: { notes: 'input.note', probability: '100' } },
        { name: 'lose', from: ['draft', 'sent'], to: 'lost', label: bi('Lose', 'خسارة'),
          input: [{ name: 'reason', type: 'enum', values: reasons, required: true, label: bi('Reason', 'السبب') }],
          set: { lostReason: 'input.reason', probability: '0' } },
        { name: 'boom', from: ['draft'], to: 'closed', label: bi('Boom', 'انفجار'), set: { probability: 'int(doc.discountPercent) * 1000' } },
        { name: 'reserve', from: ['draft'], to: 'sent', label: bi('Reserve', 'حجز'),
          guard: { rule: 'has(ref.bookId) && ref.bookId.available >= doc.total', message: bi('Only an order its book can still cover is reserved', 'لا يُحجز إلا طلب يغطيه دفتره') },
          set: { notes: '"Reserved in " + ref.bookId.name' } },
      ],
    }, {
      name: 'book', resource: 'books', idPrefix: 'bk', label: bi('Book', 'دفتر'), labelPlural: bi('Books', 'الدفاتر'),
      fields: [
        { name: 'name', type: 'string', required: true, maxLength: 100, label: bi('Name', 'الاسم') },
        { name: 'firstNumber', type: 'integer', required: true, minimum: 1, label: bi('First number', 'الرقم الأول') },
        { name: 'lastNumber', type: 'integer', required: true, minimum: 1, label: bi('Last number', 'الرقم الأخير') },
        { name: 'limit', type: 'money', required: true, minimum: 0, label: bi('Limit', 'الحد') },
        { name: 'discountPercent', type: 'number', required: true, minimum: 0, maximum: 100, default: '10.0', label: bi('Discount %', 'نسبة الخصم') },
        { name: 'committed', type: 'money', aggregate: { type: 'order', via: 'bookId', op: 'sum', field: 'total', states: ['sent', 'closed'] },
          label: bi('Committed', 'الملتزم به'), description: bi('The totals of its sent and closed orders', 'مجاميع طلباته المرسلة والمغلقة') },
        { name: 'orders', type: 'integer', aggregate: { type: 'order', via: 'bookId', op: 'count', states: ['draft', 'sent', 'closed'] },
          label: bi('Orders', 'الطلبات'), description: bi('Its orders that are not lost', 'طلباته غير الخاسرة') },
        { name: 'available', type: 'money', compute: 'doc.limit - doc.committed', label: bi('Available', 'المتاح') },
      ],
      validations: [
        { rule: 'doc.committed <= doc.limit', field: 'committed', message: bi("The book's limit would be passed", 'سيتجاوز الدفتر حدّه') },
        { rule: 'doc.lastNumber >= doc.firstNumber', field: 'lastNumber', message: bi('The range ends before it starts', 'ينتهي النطاق قبل بدايته') },
      ],
      states: ['open', 'closed'], initialState: 'open',
      lockedIn: ['closed'],
      transitions: [
        { name: 'close', from: ['open'], to: 'closed', label: bi('Close', 'إغلاق') },
      ],
    }],
    eventFamilies: [{
      family: 'rules lab', prefix: 'ruleslab', label: bi('Rules lab', 'مختبر القواعد'),
      topics: [{
        topic: 'ruleslab.book.nearlySpent', description: bi('Nine tenths of a book are committed', 'التُزم بتسعة أعشار الدفتر'),
        source: { type: 'book', on: 'change', field: 'committed', when: { rule: 'doc.committed * 10 >= doc.limit * 9' } },
      }],
    }],
  };
}

export function rulesSource(root: string): AppSource {
  return writeApp(root, rulesManifest());
}
