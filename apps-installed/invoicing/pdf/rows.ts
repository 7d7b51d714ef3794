// The bilingual row: the English label at the left edge, the Arabic one at the right edge and
// the value between them, so either reader finds the label on the side they start from.
import { drawLine, type TextStyle } from './bidi-text.ts';
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
}

/** One row; `value` as two parts draws them side by side (e.g. a Gregorian and a Hijri date). */
export function bilingualRow(sheet: Sheet, label: Bilingual, value: string | [string, string], o: RowOptions): void {
  ensureRoom(sheet, ROW_HEIGHT);
  const size = o.size ?? 8.5;
  const labelStyle: TextStyle = { font: o.bold ? 'bold' : 'regular', size, color: COLORS.muted };
  const valueStyle: TextStyle = { font: o.bold ? 'bold' : 'regular', size, color: COLORS.ink };
  const y = sheet.y + 3;
  const gap = 6;
  drawLine(sheet.doc, label.en, { x: o.x, y, width: o.labelWidth }, 'left', labelStyle);
  drawLine(sheet.doc, label.ar, { x: o.x + o.width - o.labelWidth, y, width: o.labelWidth }, 'right', labelStyle);
  const vx = o.x + o.labelWidth + gap;
  const vw = o.width - 2 * (o.labelWidth + gap);
  if (typeof value === 'string') drawLine(sheet.doc, value, { x: vx, y, width: vw }, o.valueAlign ?? 'center', valueStyle);
  else {
    drawLine(sheet.doc, value[0], { x: vx, y, width: vw / 2 - gap / 2 }, 'left', valueStyle);
    drawLine(sheet.doc, value[1], { x: vx + vw / 2 + gap / 2, y, width: vw / 2 - gap / 2 }, 'right', valueStyle);
  }
  sheet.y += ROW_HEIGHT;
}
