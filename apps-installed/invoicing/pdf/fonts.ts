// One typeface for both scripts: Vazirmatn (SIL Open Font License, shipped by the `vazirmatn`
// npm package) has Arabic and Latin glyphs with matching metrics, so a line that mixes them
// needs no font switching, and a fresh machine with no system fonts still renders it.
import { createRequire } from 'node:module';
import type PDFKit from 'pdfkit';

const require = createRequire(import.meta.url);

export const FONT_PATHS = {
  regular: require.resolve('vazirmatn/fonts/ttf/Vazirmatn-Regular.ttf'),
  bold: require.resolve('vazirmatn/fonts/ttf/Vazirmatn-Bold.ttf'),
} as const;

export type FontName = keyof typeof FONT_PATHS;

/** Registers the faces under their names (`doc.font('bold')`); PDFKit embeds only the glyphs used. */
export function registerFonts(doc: PDFKit.PDFDocument): void {
  for (const [name, file] of Object.entries(FONT_PATHS)) doc.registerFont(name, file);
}
