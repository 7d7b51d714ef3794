// A ruled table whose header names each column in English over Arabic, and whose cells hold
// one or more lines, each aligned by the column or, for free text, by its own direction.
import { isRtl } from './bidi-runs.ts';
import { drawLine, wrap, type Align, type TextStyle } from './text-line.ts';
import type { Bilingual } from './invoice-view.ts';
import { band, COLORS, ensureRoom, rule, type Sheet } from './sheet.ts';

export interface Column {
  label: Bilingual;
  width: number;
  /** `auto`: each line right-aligned if it reads right to left, else left-aligned. */
  align: Align | 'auto';
  /** Free text is wrapped to the column; other cells are drawn on one line. */
  wraps?: boolean;
}

const PAD = 4;
const LINE = 11;
const CELL: TextStyle = { font: 'regular', size: 8, color: COLORS.ink };
const HEAD: TextStyle = { font: 'bold', size: 7.5, color: COLORS.ink };

/** The header: two lines (English, Arabic) per column on a band. */
export function tableHeader(sheet: Sheet, x: number, columns: Column[]): void {
  const height = 2 * LINE + 2 * PAD;
  ensureRoom(sheet, height + LINE + 2 * PAD);
  band(sheet.doc, x, sheet.y, columns.reduce((w, c) => w + c.width, 0), height);
  let cx = x;
  for (const c of columns) {
    const box = { x: cx + PAD, width: c.width - 2 * PAD };
    drawLine(sheet.doc, c.label.en, { ...box, y: sheet.y + PAD }, 'center', HEAD);
    drawLine(sheet.doc, c.label.ar, { ...box, y: sheet.y + PAD + LINE }, 'center', HEAD);
    cx += c.width;
  }
  sheet.y += height;
}

/** One row; a cell is a string, or several lines. The row is as tall as its tallest cell. */
export function tableRow(sheet: Sheet, x: number, columns: Column[], cells: (string | string[])[], style: TextStyle = CELL): void {
  const lines = columns.map((c, i) => {
    const cell = cells[i] ?? '';
    const given = typeof cell === 'string' ? [cell] : cell;
    return c.wraps ? given.flatMap((t) => wrap(sheet.doc, t, c.width - 2 * PAD, style)) : given;
  });
  const height = Math.max(...lines.map((l) => l.length)) * LINE + 2 * PAD;
  ensureRoom(sheet, height);
  let cx = x;
  columns.forEach((c, i) => {
    lines[i].forEach((text, n) => {
      const align = c.align === 'auto' ? (isRtl(text) ? 'right' : 'left') : c.align;
      drawLine(sheet.doc, text, { x: cx + PAD, y: sheet.y + PAD + n * LINE, width: c.width - 2 * PAD }, align, style);
    });
    cx += c.width;
  });
  sheet.y += height;
  rule(sheet.doc, x, sheet.y, cx - x);
}
