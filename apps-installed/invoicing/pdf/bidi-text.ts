// Drawing a line that may mix Arabic and English. PDFKit shapes through fontkit (joining
// forms, lam-alef) but knows no bidi: it would lay words out left to right. So the Unicode
// Bidirectional Algorithm (bidi-js) cuts the line into runs of one direction, each drawn where
// it shows, in visual order, as PDF text is. For text extraction in logical order:
// - a line with Arabic is a Span whose ActualText is the logical string (Acrobat reads that);
// - extractors that read the glyphs (pdf.js, poppler) reverse what they take for right-to-left
//   text, so a ligature's ToUnicode entry is written in visual order (else lam-alef would come
//   out alef-lam), and in a left-to-right line each embedded right-to-left part is its own
//   marked-content item, which pdf.js reverses alone (it guesses one direction per item, and a
//   line like "Office chair كرسي مكتب" would otherwise read as right-to-left, parts swapped).
import bidiFactory from 'bidi-js';
import type PDFKit from 'pdfkit';
import type { FontName } from './fonts.ts';

const bidi = bidiFactory();

/** The scripts fontkit lays out right to left (its `Script.direction`). */
const RTL_SCRIPT =
  /\p{Script=Arabic}|\p{Script=Hebrew}|\p{Script=Syriac}|\p{Script=Thaana}|\p{Script=Nko}|\p{Script=Samaritan}|\p{Script=Mandaic}/u;
const NEUTRAL_SCRIPT = /\p{Script=Common}|\p{Script=Inherited}|\p{Script=Unknown}/u;

/** Whether a text has a right-to-left letter (bidi class R or AL). */
function hasRtl(text: string): boolean {
  for (const ch of text) {
    const type = bidi.getBidiCharTypeName(ch);
    if (type === 'R' || type === 'AL') return true;
  }
  return false;
}

/** Whether fontkit will reverse the glyphs of `text`: it goes by the first character of a script of its own. */
function fontkitReverses(text: string): boolean {
  for (const ch of text) if (!NEUTRAL_SCRIPT.test(ch)) return RTL_SCRIPT.test(ch);
  return false;
}

/** A run as PDFKit must be given it, so that what fontkit lays out comes out in visual order. */
export interface VisualRun {
  feed: string;
  /** The run's bidi embedding level (odd: right to left). */
  level: number;
  /** fontkit reverses this run's glyphs (their ToUnicode order then needs care). */
  reversed: boolean;
}

/** The runs of one line, left to right on the page, and the line's own (paragraph) level. */
export function visualRuns(line: string): { runs: VisualRun[]; base: number } {
  const levels = bidi.getEmbeddingLevels(line);
  const mirrored = bidi.getMirroredCharactersMap(line, levels.levels);
  const order = bidi.getReorderedIndices(line, levels);
  const runs: VisualRun[] = [];
  let group: number[] = [];
  const flush = () => {
    if (!group.length) return;
    const odd = (levels.levels[group[0]] & 1) === 1;
    // The run's characters in logical order; an RTL run's brackets mirrored, as UBA L4 says.
    const indices = [...group].sort((a, b) => a - b);
    const logical = indices.map((i) => mirrored.get(i) ?? line[i]).join('');
    const reversed = fontkitReverses(logical);
    runs.push({ feed: reversed === odd ? logical : [...logical].reverse().join(''), level: levels.levels[group[0]], reversed });
    group = [];
  };
  for (const i of order) {
    const prev = group[group.length - 1];
    if (prev !== undefined && (levels.levels[prev] !== levels.levels[i] || Math.abs(prev - i) !== 1)) flush();
    group.push(i);
  }
  flush();
  return { runs, base: levels.paragraphs[0]?.level ?? 0 };
}

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

/** The paragraph direction a text takes by its first strong character, for aligning it. */
export const isRtl = (text: string): boolean => bidi.getEmbeddingLevels(text).paragraphs[0]?.level === 1;
