// The VAT per category (what each rate taxes and the VAT it bears, with the reason a zero-rated
// or exempt amount bears none), then the document's totals with the currency.
import { formatAmount, formatMoney, formatRate } from './formats.ts';
import type { InvoiceView } from './invoice-view.ts';
import { CATEGORIES, LABELS } from './labels.ts';
import { bilingualRow, ROW_HEIGHT } from './rows.ts';
import { band, ensureRoom, LEFT, WIDTH, type Sheet } from './sheet.ts';
import { tableHeader, tableRow, type Column } from './table.ts';

const COLUMNS: Column[] = [
  { label: LABELS.category, width: 223, align: 'auto', wraps: true },
  { label: LABELS.rate, width: 80, align: 'center' },
  { label: LABELS.taxable, width: 110, align: 'right' },
  { label: LABELS.taxAmount, width: 110, align: 'right' },
];

export function drawBreakdown(sheet: Sheet, view: InvoiceView): void {
  // The heading stays with the table's header and first row.
  ensureRoom(sheet, ROW_HEIGHT + 70);
  bilingualRow(sheet, LABELS.breakdown, '', { x: LEFT, width: WIDTH, labelWidth: WIDTH / 2, bold: true, size: 9 });
  tableHeader(sheet, LEFT, COLUMNS);
  for (const b of view.taxBreakdown) {
    const name = CATEGORIES[b.category];
    tableRow(sheet, LEFT, COLUMNS, [
      [`${b.category} · ${name.en}`, name.ar, ...(b.exemptionReason ? [b.exemptionReason] : [])],
      formatRate(b.rate),
      formatAmount(b.taxable, view.currency),
      formatAmount(b.tax, view.currency),
    ]);
  }
  sheet.y += 14;
}

export function drawTotals(sheet: Sheet, view: InvoiceView): void {
  // The three rows stay together on one page.
  ensureRoom(sheet, 3 * ROW_HEIGHT + 8);
  const row = { x: LEFT, width: WIDTH, labelWidth: 190, size: 9 };
  bilingualRow(sheet, LABELS.subtotal, formatMoney(view.subtotal, view.currency), row);
  bilingualRow(sheet, LABELS.taxTotal, formatMoney(view.taxTotal, view.currency), row);
  band(sheet.doc, LEFT, sheet.y, WIDTH, ROW_HEIGHT + 2);
  sheet.y += 1;
  bilingualRow(sheet, LABELS.total, formatMoney(view.total, view.currency), { ...row, bold: true, size: 10 });
}
