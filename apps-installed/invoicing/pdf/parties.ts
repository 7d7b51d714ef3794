// The seller and the buyer side by side, each with both names, VAT and CR numbers and address.
// A simplified invoice's buyer is often unknown: then only the seller is shown.
import { isRtl } from './bidi-runs.ts';
import { drawLine, wrap, type TextStyle } from './text-line.ts';
import type { Address, Bilingual, Party } from './invoice-view.ts';
import { LABELS } from './labels.ts';
import { bilingualRow } from './rows.ts';
import { band, COLORS, LEFT, WIDTH, type Sheet } from './sheet.ts';

const GAP = 12;
const BOX = (WIDTH - GAP) / 2;
const LINE = 12;

const regions = { en: new Intl.DisplayNames(['en'], { type: 'region' }), ar: new Intl.DisplayNames(['ar'], { type: 'region' }) };

/** `1234 King Fahd Road, Al Olaya, Riyadh 12345, Saudi Arabia`; in Arabic with Arabic commas and country name. */
export function formatAddress(a: Address): string {
  const parts = [[a.buildingNumber, a.street], [a.district], [a.city, a.postalCode]]
    .map((p) => p.filter(Boolean).join(' '))
    .filter(Boolean);
  const arabic = isRtl(parts.join(' '));
  if (a.country) parts.push(regions[arabic ? 'ar' : 'en'].of(a.country) ?? a.country);
  return parts.join(arabic ? '، ' : ', ');
}

function drawParty(sheet: Sheet, x: number, heading: Bilingual, party: Party): void {
  const { doc } = sheet;
  const head: TextStyle = { font: 'bold', size: 9, color: COLORS.accent };
  band(doc, x, sheet.y, BOX, 16);
  drawLine(doc, heading.en, { x: x + 5, y: sheet.y + 3, width: BOX / 2 - 5 }, 'left', head);
  drawLine(doc, heading.ar, { x: x + BOX / 2, y: sheet.y + 3, width: BOX / 2 - 5 }, 'right', head);
  sheet.y += 20;
  const name: TextStyle = { font: 'bold', size: 9.5, color: COLORS.ink };
  drawLine(doc, party.name.en, { x, y: sheet.y, width: BOX }, 'left', name);
  sheet.y += LINE + 1;
  drawLine(doc, party.name.ar, { x, y: sheet.y, width: BOX }, 'right', name);
  sheet.y += LINE + 2;
  const row = { x, width: BOX, labelWidth: 66 };
  if (party.vatNumber) bilingualRow(sheet, LABELS.vatNumber, party.vatNumber, row);
  if (party.crNumber) bilingualRow(sheet, LABELS.crNumber, party.crNumber, row);
  if (party.address) {
    const text = formatAddress(party.address);
    bilingualRow(sheet, LABELS.address, '', row);
    const style: TextStyle = { font: 'regular', size: 8.5, color: COLORS.ink };
    for (const line of wrap(doc, text, BOX, style)) {
      drawLine(doc, line, { x, y: sheet.y, width: BOX }, isRtl(line) ? 'right' : 'left', style);
      sheet.y += LINE;
    }
  }
}

export function drawParties(sheet: Sheet, seller: Party, buyer: Party | undefined): void {
  const top = sheet.y;
  const left = { ...sheet, y: top };
  drawParty(left, LEFT, LABELS.seller, seller);
  let bottom = left.y;
  if (buyer) {
    const right = { ...sheet, y: top };
    drawParty(right, LEFT + BOX + GAP, LABELS.buyer, buyer);
    bottom = Math.max(bottom, right.y);
  }
  sheet.y = bottom + 14;
}
