// The bilingual tax invoice (or credit / debit note) as a PDF, from plain data alone.
import PDFDocument from 'pdfkit';
import { checkView } from './check-view.ts';
import { asSource, fontFaces, registerFonts } from './fonts.ts';
import { drawFooters } from './footer.ts';
import { drawHeader } from './header.ts';
import type { InvoiceView } from './invoice-view.ts';
import { TITLES } from './labels.ts';
import { drawLines } from './lines-table.ts';
import { drawParties } from './parties.ts';
import { qrPng } from './qr-image.ts';
import { PAGE, type Sheet } from './sheet.ts';
import { drawBreakdown, drawTotals } from './totals.ts';

/** The document as PDF bytes; a view it cannot print right is refused with a RangeError (check-view.ts). */
export async function renderInvoicePdf(view: InvoiceView): Promise<Buffer> {
  checkView(view);
  const qrImage = await qrPng(view.qr);
  const title = TITLES[view.kind];
  const doc = new PDFDocument({
    size: 'A4',
    margin: PAGE.margin,
    bufferPages: true,
    // Not PDFKit's default Helvetica, whose metrics it would read from its own data files.
    font: asSource(fontFaces().regular) as string,
    lang: 'ar-SA',
    displayTitle: true,
    info: {
      Title: `${title.en} ${view.number} / ${title.ar}`,
      Author: view.seller.name.en,
      // The issue instant, not the moment of rendering: the same document renders the same.
      CreationDate: new Date(view.issuedAt),
    },
  });
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('data', (c: Buffer) => chunks.push(c));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });
  registerFonts(doc);
  const sheet: Sheet = { doc, y: PAGE.margin };
  drawHeader(sheet, view, qrImage);
  drawParties(sheet, view.seller, view.buyer);
  drawLines(sheet, view);
  drawBreakdown(sheet, view);
  drawTotals(sheet, view);
  drawFooters(doc, view);
  doc.end();
  return done;
}
