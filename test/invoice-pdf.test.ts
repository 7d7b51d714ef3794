// The invoice PDF as a reader and a machine meet it: its page rendered to pixels (pdf.js on a
// canvas) and the QR code in those pixels decoded (jsQR) to the invoice's ZATCA TLV, byte for
// byte; its text extracted (pdf.js) with the Arabic in logical order, as a search or a copy
// gets it: the title, the seller's name (with its lam-alef ligature), the Umm al-Qura date.
// Pure: no host, no database.
import { generateKeyPairSync, createHash, sign } from 'node:crypto';
import { inflateSync } from 'node:zlib';
import jsQR from 'jsqr';
import type { PDFDocumentProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { openPdf as open, pagePixels } from './pdf-pages.ts';
import { beforeAll, describe, expect, it } from 'vitest';
import { issueDates } from '../apps-installed/invoicing/pdf/formats.ts';
import { renderInvoicePdf, type InvoiceView } from '../apps-installed/invoicing/pdf/index.ts';

/** ZATCA's QR payload: tag, length, UTF-8 value, for each field, in base64. */
function tlv(fields: (string | Buffer)[]): string {
  return Buffer.concat(
    fields.map((v, i) => {
      const value = typeof v === 'string' ? Buffer.from(v, 'utf8') : v;
      return Buffer.concat([Buffer.from([i + 1, value.length]), value]);
    }),
  ).toString('base64');
}

const seller = {
  name: { en: 'Al Amal Trading Co.', ar: 'شركة الأمل للتجارة' },
  vatNumber: '300000000000003',
  crNumber: '1010010000',
  address: { buildingNumber: '1234', street: 'طريق الملك فهد', district: 'العليا', city: 'الرياض', postalCode: '12345', country: 'SA' },
};

// A Riyadh furniture shop bills a contractor: 4 chairs at 350.00 and delivery at 150.00, at 15 %
// VAT (1,550.00 + 232.50 = 1,782.50), and export freight zero-rated (500.00): 2,282.50 in all.
const standard: InvoiceView = {
  kind: 'standard',
  number: 'INV-000042',
  issuedAt: '2026-11-28T10:00:00Z', // 13:00 in Riyadh; 18 Jumada II 1448 in the Umm al-Qura calendar
  seller,
  buyer: {
    name: { en: 'Najd Contracting', ar: 'مؤسسة نجد للمقاولات' },
    vatNumber: '311111111100003',
    address: { buildingNumber: '8228', street: 'Prince Sultan Road', district: 'Al Rawdah', city: 'Jeddah', postalCode: '23434', country: 'SA' },
  },
  lines: [
    { description: 'Office chair كرسي مكتب', quantity: 4, unitPrice: 35000, taxCategory: 'S', taxRate: 15, net: 140000, tax: 21000, total: 161000 },
    { description: 'توصيل وتركيب داخل الرياض', quantity: 1, unitPrice: 15000, taxCategory: 'S', taxRate: 15, net: 15000, tax: 2250, total: 17250 },
    { description: 'Export freight', quantity: 1, unitPrice: 50000, taxCategory: 'Z', taxRate: 0, net: 50000, tax: 0, total: 50000 },
  ],
  taxBreakdown: [
    { category: 'S', rate: 15, taxable: 155000, tax: 23250 },
    { category: 'Z', rate: 0, taxable: 50000, tax: 0, exemptionReason: 'Export of goods' },
  ],
  subtotal: 205000,
  taxTotal: 23250,
  total: 228250,
  currency: 'SAR',
  qr: tlv([seller.name.ar, seller.vatNumber, '2026-11-28T10:00:00Z', '2282.50', '232.50']),
};

// A walk-in customer buys 3 items at 20.00 (60.00 + 9.00 VAT = 69.00). Its QR has phase 2's
// tags 6–9 (hash, ECDSA signature, public key, certificate signature), made here with
// secp256k1 so the code is as dense as a stamped invoice's.
function stampedQr(): string {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'secp256k1' });
  const hash = createHash('sha256').update('invoice').digest('base64');
  return tlv([
    seller.name.ar, seller.vatNumber, '2026-11-28T21:30:00Z', '69.00', '9.00',
    hash,
    sign('sha256', Buffer.from(hash), privateKey).toString('base64'),
    publicKey.export({ type: 'spki', format: 'der' }),
    sign('sha256', Buffer.from('certificate'), privateKey),
  ]);
}

const simplified: InvoiceView = {
  kind: 'simplified',
  number: 'INV-000043',
  issuedAt: '2026-11-28T21:30:00Z', // 00:30 on the 29th in Riyadh: the date printed is Riyadh's
  seller,
  lines: [{ description: 'علبة أقلام', quantity: 3, unitPrice: 2000, taxCategory: 'S', taxRate: 15, net: 6000, tax: 900, total: 6900 }],
  taxBreakdown: [{ category: 'S', rate: 15, taxable: 6000, tax: 900 }],
  subtotal: 6000,
  taxTotal: 900,
  total: 6900,
  currency: 'SAR',
  qr: stampedQr(),
};

/** A page's text as pdf.js extracts it: its items in order, a line break where it sees one. */
async function pageText(doc: PDFDocumentProxy, n = 1): Promise<string> {
  const content = await (await doc.getPage(n)).getTextContent();
  return content.items.map((item) => ('str' in item ? item.str + (item.hasEOL ? '\n' : '') : '')).join('');
}

const PDF_ESCAPES: Record<string, string> = { n: '\n', r: '\r', t: '\t', b: '\b', f: '\f', '(': '(', ')': ')', '\\': '\\' };

/** Every ActualText in the PDF's content streams, decoded (PDFKit writes them as UTF-16BE literal strings). */
function actualTexts(pdf: Buffer): string[] {
  const out: string[] = [];
  for (const m of pdf.toString('latin1').matchAll(/stream\r?\n([\s\S]*?)\r?\nendstream/g)) {
    let content: string;
    try {
      content = inflateSync(Buffer.from(m[1], 'latin1')).toString('latin1');
    } catch {
      continue; // not a deflated stream (an image's, say)
    }
    for (const [, literal] of content.matchAll(/\/ActualText \(((?:\\.|[^\\)])*)\)/g)) {
      const bytes = Buffer.from(literal.replace(/\\(.)/g, (_, c: string) => PDF_ESCAPES[c] ?? c), 'latin1');
      out.push(bytes[0] === 0xfe && bytes[1] === 0xff ? Buffer.from(bytes.subarray(2)).swap16().toString('utf16le') : bytes.toString('latin1'));
    }
  }
  return out;
}

describe('the invoice PDF', () => {
  let standardPdf: PDFDocumentProxy;
  let simplifiedPdf: PDFDocumentProxy;

  beforeAll(async () => {
    // Two documents at once, on the same parsed font faces: each must still map its glyphs to its own text.
    [standardPdf, simplifiedPdf] = await Promise.all([renderInvoicePdf(standard).then(open), renderInvoicePdf(simplified).then(open)]);
  });

  it('a standard tax invoice: its QR decodes from the rendered page to exactly the invoice’s qr', async () => {
    expect(standardPdf.numPages).toBe(1);
    const { data, width, height } = await pagePixels(standardPdf);
    const code = jsQR(data, width, height);
    expect(code?.data).toBe(standard.qr);
    // The TLV really is ZATCA's: tag 1 is the seller's Arabic name.
    const bytes = Buffer.from(code!.data, 'base64');
    expect(bytes.subarray(2, 2 + bytes[1]).toString('utf8')).toBe('شركة الأمل للتجارة');
  });

  it('a standard tax invoice: Arabic and English extracted in logical order, with both calendars and the totals', async () => {
    const text = await pageText(standardPdf);
    const has = (s: string) => expect(text, s).toContain(s);
    has('فاتورة ضريبية');
    has('Tax Invoice');
    expect(text).not.toMatch(/مبسطة|Simplified/);
    has('شركة الأمل للتجارة'); // "الأمل": lam-alef with hamza is one glyph
    has('مؤسسة نجد للمقاولات');
    has('Al Amal Trading Co.');
    has('300000000000003');
    has('311111111100003');
    has('INV-000042');
    has('2026-11-28 13:00');
    has('18 جمادى الآخرة 1448 هـ'); // "الآخرة": lam-alef with madda
    has('Jumada II 18, 1448 AH');
    has('1234 طريق الملك فهد، العليا، الرياض 12345، المملكة العربية السعودية');
    has('8228 Prince Sultan Road, Al Rawdah, Jeddah 23434, Saudi Arabia');
    has('Office chair كرسي مكتب'); // a left-to-right line with Arabic in it
    has('توصيل وتركيب داخل الرياض');
    has('النسبة الأساسية');
    has('خاضع للنسبة الصفرية');
    has('Export of goods');
    has('1,550.00');
    has('232.50');
    has('2,050.00 SAR');
    has('232.50 SAR');
    has('2,282.50 SAR');
    has('الإجمالي شامل ضريبة القيمة المضافة');
  });

  it('each line with Arabic carries its logical text as ActualText, for readers that take it (Acrobat)', async () => {
    const texts = actualTexts(await renderInvoicePdf(standard));
    for (const s of ['فاتورة ضريبية', 'شركة الأمل للتجارة', '18 جمادى الآخرة 1448 هـ', 'Office chair كرسي مكتب', 'الإجمالي شامل ضريبة القيمة المضافة']) {
      expect(texts).toContain(s);
    }
    // English alone needs none.
    expect(texts).not.toContain('Tax Invoice');
  });

  it('a simplified tax invoice: its stamped (phase 2) QR decodes to exactly the qr, and its title is the simplified one', async () => {
    const { data, width, height } = await pagePixels(simplifiedPdf);
    expect(jsQR(data, width, height)?.data).toBe(simplified.qr);
    const text = await pageText(simplifiedPdf);
    for (const s of ['فاتورة ضريبية مبسطة', 'Simplified Tax Invoice', 'شركة الأمل للتجارة', '2026-11-29 00:30', '19 جمادى الآخرة 1448 هـ', 'علبة أقلام', '69.00 SAR']) {
      expect(text).toContain(s);
    }
    // No buyer on this one: the seller alone.
    expect(text).not.toContain('المشتري');
  });

  it('a credit note names itself and the invoice it corrects, with the reason', async () => {
    // One damaged chair taken back: 350.00 + 52.50 VAT = 402.50.
    const note: InvoiceView = {
      ...standard,
      kind: 'credit',
      number: 'CRN-000007',
      issuedAt: '2026-12-02T08:15:00Z',
      lines: [{ description: 'Office chair كرسي مكتب', quantity: 1, unitPrice: 35000, taxCategory: 'S', taxRate: 15, net: 35000, tax: 5250, total: 40250 }],
      taxBreakdown: [{ category: 'S', rate: 15, taxable: 35000, tax: 5250 }],
      subtotal: 35000,
      taxTotal: 5250,
      total: 40250,
      reference: { invoiceNumber: 'INV-000042', reason: 'إرجاع كرسي تالف' },
    };
    const text = await pageText(await open(await renderInvoicePdf(note)));
    for (const s of ['إشعار دائن', 'Credit Note', 'رقم الإشعار', 'CRN-000007', 'الفاتورة الأصلية', 'INV-000042', 'إرجاع كرسي تالف', '402.50 SAR', '2026-12-02 11:15']) {
      expect(text).toContain(s);
    }
  });

  it('a long invoice runs onto more pages, each with the lines’ header and its number of the whole', async () => {
    const lines = Array.from({ length: 60 }, (_, i) => ({ ...standard.lines[i % 2], description: `بند رقم ${i + 1}` }));
    const doc = await open(await renderInvoicePdf({ ...standard, lines }));
    expect(doc.numPages).toBeGreaterThan(1);
    const pages = await Promise.all(Array.from({ length: doc.numPages }, (_, i) => pageText(doc, i + 1)));
    pages.forEach((text, i) => {
      expect(text).toContain(`Page ${i + 1} of ${doc.numPages}`);
      expect(text).toContain(`صفحة ${i + 1} من ${doc.numPages}`);
      expect(text).toContain('Description');
    });
    expect(pages.join('\n')).toContain('بند رقم 60');
    expect(pages.at(-1)).toContain('2,282.50 SAR');
  });

  it('an amount in major units (with a fraction) is refused, naming the field, rather than printed 100 times too small', async () => {
    const wrong = { ...standard, lines: [{ ...standard.lines[0], net: 1400.5 }], total: 2282.5 };
    await expect(renderInvoicePdf(wrong)).rejects.toThrow('/lines/0/net (1400.5), /total (2282.5)');
  });

  it('the Hijri date is Umm al-Qura’s, on the day in Riyadh', () => {
    // 1 Muharram 1447 fell on 26 June 2025; the National Day, 23 September 2025, on 1 Rabiʻ II;
    // 1 Ramadan 1447 on 18 February 2026. 21:30 UTC on 25 June is already the 26th in Riyadh.
    expect(issueDates('2025-06-26T09:00:00Z').hijriAr).toBe('1 محرم 1447 هـ');
    expect(issueDates('2025-06-25T21:30:00Z')).toEqual({ gregorian: '2025-06-26 00:30', hijriAr: '1 محرم 1447 هـ', hijriEn: 'Muharram 1, 1447 AH' });
    expect(issueDates('2025-06-25T20:30:00Z').hijriAr).toBe('29 ذو الحجة 1446 هـ');
    expect(issueDates('2025-09-23T09:00:00Z').hijriAr).toBe('1 ربيع الآخر 1447 هـ');
    expect(issueDates('2026-02-18T09:00:00Z').hijriEn).toBe('Ramadan 1, 1447 AH');
  });
});
