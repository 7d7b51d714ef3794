// Each page's foot: its number of the whole in both languages, and the document's number, so
// a loose page of a long invoice is still placed.
import { drawLine, type TextStyle } from './text-line.ts';
import type { InvoiceView } from './invoice-view.ts';
import { LABELS } from './labels.ts';
import { COLORS, LEFT, PAGE, WIDTH } from './sheet.ts';
import type PDFKit from 'pdfkit';

/** Needs a document made with `bufferPages`, so that every page is still open. */
export function drawFooters(doc: PDFKit.PDFDocument, view: InvoiceView): void {
  const { start, count } = doc.bufferedPageRange();
  const style: TextStyle = { font: 'regular', size: 7.5, color: COLORS.muted };
  const y = PAGE.height - PAGE.margin - 10;
  const third = WIDTH / 3;
  for (let i = start; i < start + count; i++) {
    doc.switchToPage(i);
    const n = i - start + 1;
    drawLine(doc, `${LABELS.page.en} ${n} ${LABELS.of.en} ${count}`, { x: LEFT, y, width: third }, 'left', style);
    drawLine(doc, view.number, { x: LEFT + third, y, width: third }, 'center', style);
    drawLine(doc, `${LABELS.page.ar} ${n} ${LABELS.of.ar} ${count}`, { x: LEFT + 2 * third, y, width: third }, 'right', style);
  }
}
