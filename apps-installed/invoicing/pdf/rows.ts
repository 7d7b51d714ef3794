// The bilingual row: the English label at the left edge, the Arabic one at the right edge and
// the value between them, so either reader finds the label on the side they start from.
import { isRtl } from './bidi-runs.ts';
import { drawLine, wrap, type TextStyle } from './text-line.ts';
import type { Bilingual } from './invoice-view.ts';
import { COLORS, ensureRoom, type Sheet } from './sheet.ts';

export const ROW_HEIGHT = 15;

export interface RowOptions {
  x: number;
  width: number;
  /** Each label's share of the width (the value gets the rest). */
  labelWidth: number;
  bold?: boolean;
  size?: number;
  /** Where the value sits between the labels. */
  valueAlign?: 'left' | 'right' | 'center';
  /** A free text (a note's reason) is wrapped onto as many lines as it needs. */
  wraps?: boolean;
}

const WRAPPED_LINE = 11;

/** One row; `value` as two parts draws them side by side (e.g. a Gregorian and a Hijri date). */
export function bilingualRow(sheet: Sheet, label: Bilingual, value: string | [string, string], o: RowOptions): void {
  const size = o.size ?? 8.5;
  const labelStyle: TextStyle = { font: o.bold ? 'bold' : 'regular', size, color: COLORS.muted };
  const valueStyle: TextStyle = { font: o.bold ? 'bold' : 'regular', size, color: COLORS.ink };
  const gap = 6;
  const vx = o.x + o.labelWidth + gap;
  const vw = o.width - 2 * (o.labelWidth + gap);
  const lines = typeof value === 'string' && o.wraps ? wrap(sheet.doc, value, vw, valueStyle) : [value];
  const height = ROW_HEIGHT + (lines.length - 1) * WRAPPED_LINE;
  ensureRoom(sheet, height);
  const y = sheet.y + 3;
  drawLine(sheet.doc, label.en, { x: o.x, y, width: o.labelWidth }, 'left', labelStyle);
  drawLine(sheet.doc, label.ar, { x: o.x + o.width - o.labelWidth, y, width: o.labelWidth }, 'right', labelStyle);
  lines.forEach((line, n) => {
    const at = y + n * WRAPPED_LINE;
    // Wrapped text reads from its own side; a one-line value sits where the row puts it.
    const align = o.wraps ? (isRtl(String(line)) ? 'right' : 'left') : (o.valueAlign ?? 'center');
    if (typeof line === 'string') drawLine(sheet.doc, line, { x: vx, y: at, width: vw }, align, valueStyle);
    else {
      drawLine(sheet.doc, line[0], { x: vx, y: at, width: vw / 2 - gap / 2 }, 'left', valueStyle);
      drawLine(sheet.doc, line[1], { x: vx + vw / 2 + gap / 2, y: at, width: vw / 2 - gap / 2 }, 'right', valueStyle);
    }
  });
  sheet.y += height;
}
