// The page's geometry and a cursor that moves down it, starting a new page when a block would
// not fit (a long invoice's lines run on; the table header is drawn again by `onNewPage`).
import type PDFKit from 'pdfkit';

/** A4 in points, with 36 pt (1.27 cm) margins. */
export const PAGE = { width: 595.28, height: 841.89, margin: 36 } as const;
export const LEFT = PAGE.margin;
export const WIDTH = PAGE.width - 2 * PAGE.margin;
/** Below this the footer (page numbers) is written. */
const BOTTOM = PAGE.height - PAGE.margin - 20;

export const COLORS = { ink: '#111111', muted: '#555555', rule: '#c4c9d0', band: '#eef1f5', accent: '#1f4e79' } as const;

export interface Sheet {
  doc: PDFKit.PDFDocument;
  y: number;
  /** Runs at the top of each page this cursor adds. */
  onNewPage?: () => void;
}

/** Starts a new page unless `height` more points fit on this one. */
export function ensureRoom(sheet: Sheet, height: number): void {
  if (sheet.y + height <= BOTTOM) return;
  sheet.doc.addPage();
  sheet.y = PAGE.margin;
  sheet.onNewPage?.();
}

/** A horizontal rule across `[x, x + width]` at `y`. */
export function rule(doc: PDFKit.PDFDocument, x: number, y: number, width: number, color: string = COLORS.rule): void {
  doc.save().moveTo(x, y).lineTo(x + width, y).lineWidth(0.6).strokeColor(color).stroke().restore();
}

/** A filled band behind a header or a total. */
export function band(doc: PDFKit.PDFDocument, x: number, y: number, width: number, height: number, color: string = COLORS.band): void {
  doc.save().rect(x, y, width, height).fill(color).restore();
}
