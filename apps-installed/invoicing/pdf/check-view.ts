// What the renderer cannot print right is refused before a page is drawn: an amount with a
// fraction is one in major units (it would print 100 times too small), and an instant that does
// not parse would print as "Invalid Date". The caller is code, so a RangeError naming the field.
import type { InvoiceView } from './invoice-view.ts';

const LINE_AMOUNTS = ['unitPrice', 'net', 'tax', 'total'] as const;
const BREAKDOWN_AMOUNTS = ['taxable', 'tax'] as const;
const TOTALS = ['subtotal', 'taxTotal', 'total'] as const;

export function checkView(view: InvoiceView): void {
  const wrong: string[] = [];
  const amount = (pointer: string, v: unknown) => {
    if (!Number.isSafeInteger(v)) wrong.push(`${pointer} (${String(v)})`);
  };
  view.lines.forEach((line, i) => LINE_AMOUNTS.forEach((k) => amount(`/lines/${i}/${k}`, line[k])));
  view.taxBreakdown.forEach((b, i) => BREAKDOWN_AMOUNTS.forEach((k) => amount(`/taxBreakdown/${i}/${k}`, b[k])));
  TOTALS.forEach((k) => amount(`/${k}`, view[k]));
  if (wrong.length) throw new RangeError(`amounts must be integers in the currency's minor units: ${wrong.join(', ')}`);
  if (Number.isNaN(Date.parse(view.issuedAt))) throw new RangeError(`issuedAt is not an ISO 8601 instant: ${view.issuedAt}`);
  if (!view.qr) throw new RangeError('qr is empty: the QR code must carry ZATCA\'s TLV');
}
