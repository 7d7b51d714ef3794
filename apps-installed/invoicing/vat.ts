// VAT on a document's lines as ZATCA's e-invoicing rules compute it, exact in the currency's
// minor units (half away from zero, which for amounts of money is "half up"):
// - a line's net amount is quantity × unit price, rounded once (BT-131);
// - its VAT is net × rate ÷ 100, rounded (KSA-11, BR-KSA-50), and net + VAT its amount with VAT (KSA-12, BR-KSA-51);
// - the breakdown has one entry per category and rate (with its one exemption reason): the sum of its lines'
//   net amounts (BR-S-08) and its VAT, taxable × rate ÷ 100 rounded once (BR-CO-17). The
//   document's VAT total is the sum of the breakdown's (BR-CO-14), so a document of three lines
//   of 10.10 at 15 % has VAT 4.55 (30.30 × 0.15 = 4.545), though each line shows 1.52.
// The totals themselves (subtotal, VAT total, total) are the manifest's computed fields.
import { fromMinor, minorDigits, multiplyToMinor, type AppContext } from 'diwan/sdk';

export type TaxCategory = 'S' | 'Z' | 'E' | 'O';

export interface Line {
  description: string;
  quantity: number;
  unitPrice: number;
  taxCategory?: TaxCategory;
  exemptionReasonCode?: string;
  exemptionReason?: string;
  amount?: number;
  taxRate?: number;
  taxAmount?: number;
  amountWithTax?: number;
}

/** ZATCA's exemption and zero-rating reasons (the XML implementation standard's VATEX-SA list); out of scope (OOS) takes the seller's own text. */
export const EXEMPTION_REASONS: Record<string, string> = {
  'VATEX-SA-29': 'Financial services mentioned in Article 29 of the VAT Regulations',
  'VATEX-SA-29-7': 'Life insurance services mentioned in Article 29 of the VAT Regulations',
  'VATEX-SA-30': 'Real estate transactions mentioned in Article 30 of the VAT Regulations',
  'VATEX-SA-32': 'Export of goods',
  'VATEX-SA-33': 'Export of services',
  'VATEX-SA-34-1': 'The international transport of Goods',
  'VATEX-SA-34-2': 'International transport of passengers',
  'VATEX-SA-34-3': 'Services directly connected and incidental to a Supply of international passenger transport',
  'VATEX-SA-34-4': 'Supply of a qualifying means of transport',
  'VATEX-SA-34-5': 'Any services relating to Goods or passenger transportation, as defined in article twenty five of these Regulations',
  'VATEX-SA-35': 'Medicines and medical equipment',
  'VATEX-SA-36': 'Qualifying metals',
  'VATEX-SA-EDU': 'Private education to citizen',
  'VATEX-SA-HEA': 'Private healthcare to citizen',
  'VATEX-SA-MLTRY': 'Supply of qualified military goods',
};

/** `amount × rate %` in minor units, rounded once. */
const percentOf = (minor: bigint, rate: number): bigint => multiplyToMinor(Number(minor), rate / 100, 0);

/** A document's totals in minor units (what the manifest's computed fields then store). */
export interface Totals {
  subtotal: bigint;
  taxTotal: bigint;
  total: bigint;
}

/**
 * Prices `doc.lines` (each line's net, rate, VAT and amount with VAT) and sets `doc.taxBreakdown`
 * and `doc.currency`. Standard-rated lines take the company's VAT rate; the others 0. Answers the
 * totals, for what is built in the same write (the e-invoice); the stored ones are the rules'.
 */
export function priceLines(doc: Record<string, unknown>, ctx: AppContext): Totals {
  const currency = ctx.company.currency;
  const digits = minorDigits(currency);
  const groups = new Map<string, { taxCategory: TaxCategory; taxRate: number; taxable: bigint; code?: string; reason?: string }>();
  for (const line of doc.lines as Line[]) {
    const category = (line.taxCategory ??= 'S');
    if (line.exemptionReasonCode && !line.exemptionReason && EXEMPTION_REASONS[line.exemptionReasonCode]) line.exemptionReason = EXEMPTION_REASONS[line.exemptionReasonCode];
    const rate = category === 'S' ? ctx.company.vatRate : 0;
    const net = multiplyToMinor(line.quantity, line.unitPrice, digits);
    const tax = percentOf(net, rate);
    Object.assign(line, { amount: fromMinor(net, digits), taxRate: rate, taxAmount: fromMinor(tax, digits), amountWithTax: fromMinor(net + tax, digits) });
    // One entry per category and rate, as the e-invoice has them (a rule keeps one exemption reason per category).
    const key = `${category}|${rate}`;
    const g = groups.get(key);
    if (g) g.taxable += net;
    else groups.set(key, { taxCategory: category, taxRate: rate, taxable: net, code: line.exemptionReasonCode, reason: line.exemptionReason });
  }
  let subtotal = 0n;
  let taxTotal = 0n;
  doc.taxBreakdown = [...groups.values()].map((g) => {
    const tax = percentOf(g.taxable, g.taxRate);
    subtotal += g.taxable;
    taxTotal += tax;
    return {
      taxCategory: g.taxCategory,
      taxRate: g.taxRate,
      taxableAmount: fromMinor(g.taxable, digits),
      taxAmount: fromMinor(tax, digits),
      ...(g.code ? { exemptionReasonCode: g.code } : {}),
      ...(g.reason ? { exemptionReason: g.reason } : {}),
    };
  });
  doc.currency = currency;
  return { subtotal, taxTotal, total: subtotal + taxTotal };
}
