// Checking a manifest's expressions: every problem with its JSON pointer (what `diwan app
// validate` lists and install refuses), and the exact helpers the rules call.
import { describe, expect, it } from 'vitest';
import { checkManifest } from '../manifest-check.ts';
import { buildRules, rulesRead } from './document-rules.ts';
import { celActivation, computeInto, brokenRules } from './evaluate.ts';
import { createTranslator } from '../../kernel/i18n/i18n.ts';
import { validManifest } from '../app-source.ts';
import { rulesManifest } from '../../../test/rules-app.ts';
import { addDays, addYears, daysBetween, yearsBetween, divRound, roundHalfAway, scaled, scaledByText, timesRound } from './decimal.ts';
import { toMinor } from './values.ts';
import { random } from '../../../test/rule-samples.ts';
import type { Manifest } from '../../../manifests/manifest.schema.ts';

type Mutable = Record<string, any>;

/** The rules app with one change made to its order type. */
function withOrder(change: (order: Mutable) => void): Manifest {
  const m = structuredClone(rulesManifest()) as Mutable;
  change(m.documentTypes[0]);
  return m as Manifest;
}
const problems = (m: Manifest) => checkManifest(m).problems.map((p) => [p.pointer, p.rule]);
const field = (order: Mutable, name: string) => order.fields.find((f: { name: string }) => f.name === name);

describe('checking the rules of a manifest', () => {
  it('accepts the rules app as written', () => {
    expect(checkManifest(rulesManifest()).problems).toEqual([]);
  });

  it('lists every broken expression with its pointer, at once', () => {
    const m = withOrder((o) => {
      field(o, 'total').compute = 'doc.subtotal -';                 // does not parse
      field(o, 'vat').compute = 'doc.customer + 1';                  // string + int
      field(o, 'subtotal').compute = 'doc.customer';                 // a money field given a string
      o.validations[0].rule = 'doc.discountPercent';                 // not a bool
      o.validations[1].field = 'nope';
      o.transitions[0].guard.rule = 'input.reason == "x"';           // send declares no input
      o.transitions[2].set = { nope: '1', total: '1', notes: 'input.note + 1' };
    });
    expect(problems(m)).toEqual([
      ['/documentTypes/0/fields/4/compute', 'expressionType'],
      ['/documentTypes/0/fields/5/compute', 'expression'],
      ['/documentTypes/0/fields/6/compute', 'expressionType'],
      ['/documentTypes/0/validations/0/rule', 'expressionType'],
      ['/documentTypes/0/validations/1/field', 'field'],
      ['/documentTypes/0/transitions/0/guard/rule', 'expressionType'],
      ['/documentTypes/0/transitions/2/set/nope', 'field'],
      ['/documentTypes/0/transitions/2/set/total', 'computed'],
      ['/documentTypes/0/transitions/2/set/notes', 'expressionType'],
    ]);
    const subtotal = checkManifest(m).problems.find((p) => p.pointer === '/documentTypes/0/fields/4/compute')!;
    expect(subtotal.message).toContain('a money field needs int, the expression gives string');
  });

  it('refuses a computed field that reads itself through others, and an unknown field', () => {
    const m = withOrder((o) => {
      field(o, 'subtotal').compute = 'doc.total + 1';
      field(o, 'discount').compute = 'doc.nothing';
    });
    expect(problems(m)).toContainEqual(['/documentTypes/0/fields/4/compute', 'computeCycle']);
    expect(problems(m)).toContainEqual(['/documentTypes/0/fields/3/compute', 'expressionType']);
  });

  it('refuses locks in states the type does not have, and an expression too long to keep cheap', () => {
    const m = withOrder((o) => {
      o.lockedIn = ['archived'];
      field(o, 'customer').lockedIn = ['gone'];
    });
    expect(problems(m)).toEqual([
      ['/documentTypes/0/lockedIn', 'state'],
      ['/documentTypes/0/fields/0/lockedIn', 'state'],
    ]);
    expect(problems(withOrder((o) => void (field(o, 'vat').compute = `${'1 + '.repeat(600)}1`)))).toEqual([['/documentTypes/0/fields/6/compute', 'maxLength']]);
    // Within the length, a deeply nested expression is refused by the parser's limits.
    const deep = problems(withOrder((o) => void (field(o, 'vat').compute = `${'('.repeat(40)}1${')'.repeat(40)}`)));
    expect(deep).toEqual([['/documentTypes/0/fields/6/compute', 'expression']]);
  });

  it('checks the rules of lines, defaults, references and topic conditions, each problem at its pointer', () => {
    const m = structuredClone(rulesManifest()) as Mutable;
    const [order, book] = m.documentTypes;
    field(order, 'lines').fields[2].compute = 'line.unitPrice + line.nope';          // a line has no such field
    field(order, 'lines').fields[0].compute = 'doc.total > 0 ? 1.0 : 2.0';            // a line is computed before the document
    field(order, 'notes').default = 'ref.bookId.limit';                               // a string field given money
    field(order, 'total').default = '1';                                              // computed: no default
    order.validations[2].each = 'customer';                                           // not a lines field
    order.validations[3].rule = 'doc.number >= ref.bookId.nothing';                   // the book has no such field
    m.eventFamilies[0].topics[0].source.when.rule = 'doc.committed';                  // not a bool
    m.eventFamilies[0].topics.push({ ...m.eventFamilies[0].topics[0], topic: 'ruleslab.book.other', source: { type: 'book', on: 'update', when: { rule: 'ref.x.y' } } });
    expect(problems(m as Manifest)).toEqual([
      ['/documentTypes/0/fields/1/fields/0/compute', 'computeOrder'],
      ['/documentTypes/0/fields/1/fields/2/compute', 'expressionType'],
      ['/documentTypes/0/fields/5/default', 'default'],
      ['/documentTypes/0/fields/9/default', 'expressionType'],
      ['/documentTypes/0/validations/2/each', 'field'],
      ['/documentTypes/0/validations/3/rule', 'expressionType'],
      ['/eventFamilies/0/topics/0/source/when/rule', 'expressionType'],
      ['/eventFamilies/0/topics/1/source/when/rule', 'ref'],
    ]);
    // The book's aggregate cannot also be computed.
    field(book, 'committed').compute = 'doc.limit';
    expect(problems(m as Manifest)).toContainEqual(['/documentTypes/1/fields/5/compute', 'computed']);
  });

  it('refuses aggregates that do not add up: another type, a field that does not name the parent, a sum of text, a count in money, unknown states', () => {
    const m = structuredClone(rulesManifest()) as Mutable;
    const book = m.documentTypes[1];
    const committed = field(book, 'committed');
    const orders = field(book, 'orders');
    committed.aggregate = { type: 'order', via: 'customer', op: 'sum', field: 'notes', states: ['gone'] };
    orders.type = 'money';
    expect(problems(m as Manifest)).toEqual([
      ['/documentTypes/1/fields/5/aggregate/via', 'reference'],
      ['/documentTypes/1/fields/5/aggregate/field', 'field'],
      ['/documentTypes/1/fields/5/aggregate/states', 'state'],
      ['/documentTypes/1/fields/6/aggregate', 'aggregateType'],
    ]);
    committed.aggregate = { type: 'nothing', via: 'bookId', op: 'sum', field: 'total' };
    orders.type = 'integer';
    orders.aggregate.field = 'total';
    expect(problems(m as Manifest)).toEqual([
      ['/documentTypes/1/fields/5/aggregate/type', 'reference'],
      ['/documentTypes/1/fields/6/aggregate/field', 'unexpected'],
    ]);
  });

  it('refuses such a manifest at install (MANIFEST_INVALID)', () => {
    const m = withOrder((o) => void (field(o, 'total').compute = 'doc.subtotal +'));
    expect(() => validManifest(m)).toThrow(expect.objectContaining({ code: 'MANIFEST_INVALID' }));
  });
});

describe('evaluating the rules of lines', () => {
  it('computes each line, reports a line that cannot be computed at its own pointer, and checks each line', () => {
    const m = structuredClone(rulesManifest()) as Mutable;
    // The unit price of one piece: the line's amount divided by its whole quantity (a quantity of 0 cannot be divided by).
    m.documentTypes[0].fields[1].fields[2].compute = 'fraction(line.unitPrice, 1, int(line.quantity))';
    const dt = m.documentTypes[0];
    const { rules, problems } = buildRules(dt, '', { targets: (to) => m.documentTypes.find((d: Mutable) => d.name === to)?.fields });
    expect(problems).toEqual([]);
    const s = { digits: 2, today: '2026-01-15', lang: 'ar' as const, tr: createTranslator() };
    const doc: Mutable = { customer: 'Acme', lines: [{ quantity: 4, unitPrice: 10 }, { quantity: 0, unitPrice: 5 }, { quantity: 2000, unitPrice: 1 }] };
    const a = celActivation(rules!, dt, doc, s);
    const computed = computeInto(rules!, doc, a, s);
    expect(doc.lines[0].amount).toBe(2.5);
    expect(computed[0]).toMatchObject({ pointer: '/lines/1/amount', rule: 'compute', computed: true });
    // What reads the missing amount cannot be computed either: each is named.
    expect(computed.map((p) => p.pointer)).toEqual(['/lines/1/amount', '/subtotal', '/discount', '/total', '/vat']);
    expect(String(computed[0].message)).toMatch(/[\u0600-\u06FF]/);
    expect(brokenRules(rules!, dt, a, s).map((p) => p.pointer)).toEqual(['/lines', '/lines/2/quantity']);
  });
});

describe('which rules read a parent\'s aggregates', () => {
  const rulesOf = (change: (book: Mutable) => void = () => {}) => {
    const m = structuredClone(rulesManifest()) as Mutable;
    change(m.documentTypes[1]);
    return buildRules(m.documentTypes[1], '').rules!;
  };

  it('follows the computed fields that read them; a count no rule reads moves alone', () => {
    // `available` reads `committed`, and a validation does: both are evaluated again.
    expect(rulesRead(rulesOf(), ['committed'])).toBe(true);
    expect(rulesRead(rulesOf(), ['orders'])).toBe(false);
    // Only through a computed field: `available` reads it, nothing reads `available`.
    expect(rulesRead(rulesOf((b) => b.validations.splice(0, 1)), ['committed'])).toBe(true);
    expect(rulesRead(rulesOf((b) => { b.validations.splice(0, 1); b.fields.pop(); }), ['committed'])).toBe(false);
    // `doc` read by a key could read anything.
    expect(rulesRead(rulesOf((b) => b.validations.push({ rule: 'doc["name"] != ""', message: b.validations[0].message })), ['orders'])).toBe(true);
  });
});

describe('the exact helpers', () => {
  it('rounds half away from zero, on the decimal a number was written as', () => {
    expect([roundHalfAway(2.5), roundHalfAway(-2.5), roundHalfAway(2.4999), roundHalfAway(1.005 * 1000)]).toEqual([3n, -3n, 2n, 1005n]);
    expect(timesRound(10010n, 3)).toBe(30030n);
    expect(timesRound(30035n, 12.5, 100n)).toBe(3754n);       // 12.5 % of 300.35 = 37.54375
    expect(timesRound(1000n, 15.5, 100n)).toBe(155n);
    expect(divRound(4_500_000n, 3n) * 2n).toBe(3_000_000n);
    expect(divRound(-5n, 2n)).toBe(-3n);
    expect(daysBetween('2026-02-27', '2026-03-02')).toBe(3n);   // across the end of February
    expect(daysBetween('2026-03-02', '2026-02-27')).toBe(-3n);
    // Amounts to minor units: the common case (no more decimals than the currency) and the rest, on the decimal text.
    expect([toMinor(0.29, 2), toMinor(11_525, 2), toMinor(1234.5, 3), toMinor(5, 0)]).toEqual([29n, 1_152_500n, 1_234_500n, 5n]);
    expect([toMinor(1.005, 2), toMinor(-2.675, 2), toMinor(0.125, 2)]).toEqual([101n, -268n, 13n]);
  });

  it('counts years as an anniversary does: 29 February gives 28 February in a year without one, as ERPNext and dateutil do', () => {
    expect(addYears('2021-07-01', 5n)).toBe('2026-07-01');
    expect(addYears('2026-07-01', -5n)).toBe('2021-07-01');
    expect(addYears('2026-07-01', 0n)).toBe('2026-07-01');
    // relativedelta(years=n) from 2024-02-29: +1 → 2025-02-28, +4 → 2028-02-29, −1 → 2023-02-28.
    expect([addYears('2024-02-29', 1n), addYears('2024-02-29', 4n), addYears('2024-02-29', -1n), addYears('2020-02-29', 5n)]).toEqual(['2025-02-28', '2028-02-29', '2023-02-28', '2025-02-28']);
    // 1900 and 2100 are not leap years, 2000 is.
    expect([addYears('1896-02-29', 4n), addYears('1996-02-29', 4n), addYears('2096-02-29', 4n)]).toEqual(['1900-02-28', '2000-02-29', '2100-02-28']);
    expect(addYears('2024-02-28', 1n)).toBe('2025-02-28');
    expect(addYears('2024-12-31', 1n)).toBe('2025-12-31');
    // Not a date (Date.parse alone would roll 30 February into March), or a year past 9999: an error, as daysBetween's.
    for (const bad of ['nope', '', '2025-02-29', '2024-02-30', '2024-13-01', '2024-2-1', '2024-02-01T00:00:00Z', '+002024-02-01'])
      expect(() => addYears(bad, 1n), bad).toThrow(RangeError);
    expect(() => addYears('9999-01-01', 1n)).toThrow(RangeError);
    expect(() => addYears('2024-01-01', -2025n)).toThrow(RangeError);
    expect(() => addYears('2024-01-01', 10n ** 30n)).toThrow(RangeError);
    expect(() => daysBetween('nope', '2024-01-01')).toThrow(RangeError);
    // daysBetween and addDays refuse the same impossible dates (Date.parse alone counts 30 February as 1 March).
    for (const bad of ['2025-02-29', '2024-02-30', '2024-04-31', '2024-13-01', '2024-2-1', '2024-02-01T00:00:00Z', '+002024-02-01']) {
      expect(() => daysBetween(bad, '2024-01-01'), bad).toThrow(RangeError);
      expect(() => daysBetween('2024-01-01', bad), bad).toThrow(RangeError);
      expect(() => addDays(bad, 1n), bad).toThrow(RangeError);
    }
    expect([addDays('2024-02-28', 1n), addDays('2024-03-01', -1n), addDays('2025-02-28', 1n), addDays('2025-12-31', 1n)]).toEqual(['2024-02-29', '2024-02-29', '2025-03-01', '2026-01-01']);
    expect(() => addDays('9999-12-31', 1n)).toThrow(RangeError);
    // Years as service counts them: anniversaries passed, then the days after the last one over 365.
    expect([yearsBetween('2019-01-01', '2026-01-01'), yearsBetween('2020-02-29', '2025-02-28'), yearsBetween('2020-02-29', '2024-02-29'), yearsBetween('2024-06-01', '2024-06-01')]).toEqual([7, 5, 4, 0]);
    expect(yearsBetween('2021-03-15', '2026-09-15')).toBe(5 + 184 / 365);
    expect(yearsBetween('2024-12-31', '2025-12-30')).toBe(364 / 365);
    expect(yearsBetween('2026-01-01', '2025-01-01')).toBe(-1);
    expect(() => yearsBetween('2025-02-29', '2026-01-01')).toThrow(RangeError);
    expect(() => addDays('2024-01-01', 10n ** 12n)).toThrow(RangeError);
  });

  it('reads a double as its decimal text does, without making the text when it has few decimals', () => {
    const r = random(5);
    const xs = [0, -0, 1, -1, 0.1, 0.15, 1.005, -2.675, 4.999, 0.30000000000000004, 1e-9, 5e-324, 2 ** 49, 2 ** 50, 1e14 - 0.01, 1e300];
    for (let i = 0; i < 30_000; i++) xs.push(Math.floor(r() * 10 ** Math.floor(r() * 16)) / 10 ** Math.floor(r() * 10) * (r() < 0.3 ? -1 : 1), r() * 10 ** (r() * 16 - 4));
    const differ = xs.filter((x) => {
      const a = scaled(x);
      const b = scaledByText(x);
      return a.int !== b.int || a.scale !== b.scale;
    });
    expect(differ).toEqual([]);
    expect(scaled(12.5)).toEqual({ int: 125n, scale: 1 });
  });
});
