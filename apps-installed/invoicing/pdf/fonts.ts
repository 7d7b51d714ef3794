// One typeface for both scripts: Vazirmatn (SIL Open Font License, shipped by the `vazirmatn`
// npm package) has Arabic and Latin glyphs with matching metrics, so a line that mixes them
// needs no font switching, and a fresh machine with no system fonts still renders it.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { create, type Font } from 'fontkit';
import type PDFKit from 'pdfkit';

const require = createRequire(import.meta.url);

const FILES = {
  regular: require.resolve('vazirmatn/fonts/ttf/Vazirmatn-Regular.ttf'),
  bold: require.resolve('vazirmatn/fonts/ttf/Vazirmatn-Bold.ttf'),
} as const;

export type FontName = keyof typeof FILES;

let faces: Record<FontName, Font> | undefined;

/**
 * The faces, parsed once per process: parsing and decoding an Arabic font's tables (its
 * shaping lookups above all) was half of each document's time. PDFKit keeps each document's
 * subset and ToUnicode map apart; see `registerFonts` for the one thing a face carries over.
 */
export function fontFaces(): Record<FontName, Font> {
  faces ??= {
    regular: create(fs.readFileSync(FILES.regular)) as Font,
    bold: create(fs.readFileSync(FILES.bold)) as Font,
  };
  return faces;
}

/** PDFKit takes a fontkit face where its types say a file (it embeds only the glyphs used). */
export const asSource = (face: Font): PDFKit.Mixins.PDFFontSource => face as unknown as PDFKit.Mixins.PDFFontSource;

/**
 * Registers the faces under their names (`doc.font('bold')`) for a new document. fontkit keeps
 * each glyph it made, with the characters of its first making, and PDFKit writes ToUnicode from
 * those: a glyph the previous document's subsetting made as a part of another (an initial ain
 * inside ghain) has none, and would extract as garbage. So each document starts with no glyphs
 * made (a document is drawn in one synchronous stretch, so none interleave).
 */
export function registerFonts(doc: PDFKit.PDFDocument): void {
  for (const [name, face] of Object.entries(fontFaces())) {
    (face as unknown as { _glyphs: Record<number, unknown> })._glyphs = {};
    doc.registerFont(name, asSource(face));
  }
}
