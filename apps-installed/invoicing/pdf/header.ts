// The top of the first page: the seller's name as letterhead, the title in both languages, the
// document's number and dates (Gregorian with Umm al-Qura beside it), the note's reference, and
// the QR code at the right.
import { drawLine } from './text-line.ts';
import { issueDates } from './formats.ts';
import type { InvoiceView } from './invoice-view.ts';
import { LABELS, TITLES } from './labels.ts';
import { bilingualRow } from './rows.ts';
import { band, COLORS, LEFT, WIDTH, type Sheet } from './sheet.ts';

const QR_SIZE = 112;

export function drawHeader(sheet: Sheet, view: InvoiceView, qrImage: Buffer): void {
  const { doc } = sheet;
  const half = WIDTH / 2 - 6;
  const name = { font: 'bold', size: 13, color: COLORS.accent } as const;
  drawLine(doc, view.seller.name.en, { x: LEFT, y: sheet.y, width: half }, 'left', name);
  drawLine(doc, view.seller.name.ar, { x: LEFT + WIDTH - half, y: sheet.y, width: half }, 'right', name);
  sheet.y += 24;

  const title = TITLES[view.kind];
  band(doc, LEFT, sheet.y, WIDTH, 30, COLORS.accent);
  const titleStyle = { font: 'bold', size: 15, color: '#ffffff' } as const;
  drawLine(doc, title.en, { x: LEFT + 10, y: sheet.y + 6, width: half - 10 }, 'left', titleStyle);
  drawLine(doc, title.ar, { x: LEFT + WIDTH - half, y: sheet.y + 6, width: half - 10 }, 'right', titleStyle);
  sheet.y += 40;

  const top = sheet.y;
  doc.image(qrImage, LEFT + WIDTH - QR_SIZE, top, { width: QR_SIZE, height: QR_SIZE });
  const info = { x: LEFT, width: WIDTH - QR_SIZE - 16, labelWidth: 92 };
  const dates = issueDates(view.issuedAt);
  const note = view.kind === 'credit' || view.kind === 'debit';
  bilingualRow(sheet, note ? LABELS.noteNumber : LABELS.invoiceNumber, view.number, { ...info, bold: true });
  bilingualRow(sheet, LABELS.issueDate, dates.gregorian, info);
  bilingualRow(sheet, LABELS.hijriDate, [dates.hijriEn, dates.hijriAr], info);
  if (view.reference) {
    bilingualRow(sheet, LABELS.originalInvoice, view.reference.invoiceNumber, info);
    bilingualRow(sheet, LABELS.reason, view.reference.reason, { ...info, wraps: true });
  }
  bilingualRow(sheet, LABELS.currency, view.currency, info);
  sheet.y = Math.max(sheet.y, top + QR_SIZE) + 12;
}
