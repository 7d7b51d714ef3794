// The invoice's lines: what was sold, how many, at what price, the VAT on each and its total.
// Amounts are printed without the currency (the header says it); the table's header is drawn
// again at the top of every page the lines run onto.
import { formatAmount, formatNumber, formatRate } from './formats.ts';
import type { InvoiceView } from './invoice-view.ts';
import { LABELS } from './labels.ts';
import { LEFT, type Sheet } from './sheet.ts';
import { tableHeader, tableRow, type Column } from './table.ts';

const COLUMNS: Column[] = [
  { label: LABELS.lineNo, width: 20, align: 'center' },
  { label: LABELS.description, width: 157, align: 'auto', wraps: true },
  { label: LABELS.quantity, width: 42, align: 'right' },
  { label: LABELS.unitPrice, width: 64, align: 'right' },
  { label: LABELS.net, width: 70, align: 'right' },
  { label: LABELS.rate, width: 40, align: 'center' },
  { label: LABELS.tax, width: 60, align: 'right' },
  { label: LABELS.lineTotal, width: 70, align: 'right' },
];

export function drawLines(sheet: Sheet, view: InvoiceView): void {
  const amount = (minor: number) => formatAmount(minor, view.currency);
  const previous = sheet.onNewPage;
  sheet.onNewPage = () => tableHeader(sheet, LEFT, COLUMNS);
  tableHeader(sheet, LEFT, COLUMNS);
  view.lines.forEach((line, i) =>
    tableRow(sheet, LEFT, COLUMNS, [
      String(i + 1),
      line.description,
      formatNumber(line.quantity),
      amount(line.unitPrice),
      amount(line.net),
      `${line.taxCategory} ${formatRate(line.taxRate)}`,
      amount(line.tax),
      amount(line.total),
    ]),
  );
  sheet.onNewPage = previous;
  sheet.y += 14;
}
