// Drawing a line that may mix Arabic and English: its runs (bidi-runs.ts) placed in visual
// order, as PDF text is, shaped whole by PDFKit (an empty feature list: else it lays out word by
// word). For text extraction in logical order:
// - a line with Arabic is a Span whose ActualText is the logical string (Acrobat reads that);
// - extractors that read the glyphs (pdf.js, poppler) reverse what they take for right-to-left
//   text, so a ligature's ToUnicode entry is written in visual order (else lam-alef would come
//   out alef-lam), and in a left-to-right line each embedded right-to-left part is its own
//   marked-content item, which pdf.js reverses alone (it guesses one direction per item, and a
//   line like "Office chair كرسي مكتب" would otherwise read as right-to-left, parts swapped).
import type PDFKit from 'pdfkit';
import { hasRtl, visualRuns } from './bidi-runs.ts';
import type { FontName } from './fonts.ts';

export interface TextStyle {
  font: FontName;
  size: number;
  color?: string;
}

/** An empty feature list makes PDFKit shape a run whole (without it, it lays out word by word). */
const WHOLE = { lineBreak: false, features: [] as PDFKit.Mixins.OpenTypeFeatures[] };

function useStyle(doc: PDFKit.PDFDocument, style: TextStyle): void {
  doc.font(style.font).fontSize(style.size).fillColor(style.color ?? '#111111');
}

/** The width of a line in points. */
export function measure(doc: PDFKit.PDFDocument, text: string, style: TextStyle): number {
  useStyle(doc, style);
  return visualRuns(text).runs.reduce((w, r) => w + doc.widthOfString(r.feed, WHOLE), 0);
}

/** PDFKit's embedded font: the parts the ToUnicode fix needs (not in its public types). */
interface EmbeddedFont {
  layout(text: string, features: unknown[]): { glyphs: { id: number; codePoints: number[] }[] };
  subset: { includeGlyph(id: number): number };
  unicode: number[][];
}

/** A reversed run's ligatures (lam-alef) map to their characters in visual order; see the header. */
function visualOrderLigatures(doc: PDFKit.PDFDocument, feed: string): void {
  const font = (doc as unknown as { _font: EmbeddedFont })._font;
  for (const glyph of font.layout(feed, []).glyphs) {
    if (glyph.codePoints.length > 1) font.unicode[font.subset.includeGlyph(glyph.id)] = [...glyph.codePoints].reverse();
  }
}

export type Align = 'left' | 'right' | 'center';

/**
 * Draws one line with its top at `y`, aligned in the box `[x, x + width]`; a line too wide for
 * the box is drawn smaller, down to 70 % of its size, then clipped by the box's edge.
 */
export function drawLine(
  doc: PDFKit.PDFDocument, text: string, box: { x: number; y: number; width: number }, align: Align, style: TextStyle,
): void {
  if (!text) return;
  const { runs, base } = visualRuns(text);
  useStyle(doc, style);
  let widths = runs.map((r) => doc.widthOfString(r.feed, WHOLE));
  const natural = widths.reduce((a, b) => a + b, 0);
  const size = natural > box.width ? Math.max(style.size * 0.7, (style.size * box.width) / natural) : style.size;
  if (size !== style.size) {
    useStyle(doc, { ...style, size });
    widths = widths.map((w) => (w * size) / style.size);
  }
  const total = (natural * size) / style.size;
  let cx = align === 'left' ? box.x : align === 'right' ? box.x + box.width - total : box.x + (box.width - total) / 2;
  const rtl = hasRtl(text);
  // A left-to-right line with Arabic in it: one item per part (see the header).
  const parts = base === 0 && rtl;
  doc.save();
  doc.rect(box.x - 1, box.y - size, box.width + 2, size * 3).clip();
  if (rtl) doc.markContent('Span', base === 1 ? { actual: text, lang: 'ar' } : { actual: text });
  runs.forEach((run, i) => {
    // A part is a run at the line's own level, or the embedded runs between two such.
    const opens = parts && (i === 0 || run.level === base || runs[i - 1].level === base);
    if (opens && i > 0) doc.endMarkedContent();
    if (opens) doc.markContent('Span');
    doc.text(run.feed, cx, box.y, WHOLE);
    if (run.reversed) visualOrderLigatures(doc, run.feed);
    cx += widths[i];
  });
  if (parts) doc.endMarkedContent();
  if (rtl) doc.endMarkedContent();
  doc.restore();
}

/** Breaks a text into lines (logical order) that fit `width`, at spaces; a word too long stays whole. */
export function wrap(doc: PDFKit.PDFDocument, text: string, width: number, style: TextStyle): string[] {
  const lines: string[] = [];
  for (const paragraph of text.split(/\r?\n/)) {
    let line = '';
    for (const word of paragraph.split(/\s+/).filter(Boolean)) {
      const candidate = line ? `${line} ${word}` : word;
      if (line && measure(doc, candidate, style) > width) {
        lines.push(line);
        line = word;
      } else line = candidate;
    }
    lines.push(line);
  }
  return lines;
}
