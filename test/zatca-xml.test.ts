// The e-invoice XML (issue 27, part 6): every kind of document validates against OASIS's UBL 2.1
// schemas and carries ZATCA's fields with the figures the caller gave.
import { describe, expect, it } from 'vitest';
import { buildXml, formatAmount, INITIAL_PIH, parseQr, type ZatcaDocument } from '../apps-installed/invoicing/zatca/index.ts';
import { parseXml } from '../apps-installed/invoicing/zatca/invoice-hash.ts';
import { ALL_DOCUMENTS, creditNote, debitNote, simplifiedInvoice, standardInvoice } from './zatca-documents.ts';
import { validateUbl } from './zatca-ubl-schema.ts';

const CBC = 'urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2';
const CAC = 'urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2';

/** The texts of the elements at a path of local names under the root (cac/cbc alike). */
function texts(xml: string, path: string): string[] {
  let nodes: Element[] = [parseXml(xml).documentElement as Element];
  for (const step of path.split('/')) {
    nodes = nodes.flatMap((n) => Array.from(n.childNodes).filter((c): c is Element => c.nodeType === 1 && (c as Element).localName === step));
  }
  return nodes.map((n) => n.textContent ?? '');
}
const attr = (xml: string, path: string, name: string) => {
  const doc = parseXml(xml);
  const [parent, child] = path.split('/');
  const el = Array.from(doc.getElementsByTagNameNS(CBC, child)).find((e) => (e.parentNode as Element).localName === parent);
  return el?.getAttribute(name);
};

describe('the e-invoice XML', () => {
  it('every document kind (standard, simplified, credit, debit; S, Z, E and O lines) validates against the UBL 2.1 schemas', async () => {
    const xmls = Object.values(ALL_DOCUMENTS).map((make) => buildXml(make()));
    const result = await validateUbl(xmls);
    expect(result.errors).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('the validator is real: a document with an element out of the schema order is refused', async () => {
    const xml = buildXml(simplifiedInvoice()).replace(/(\s*<cbc:ProfileID>reporting:1\.0<\/cbc:ProfileID>)(\s*<cbc:ID>[^<]*<\/cbc:ID>)/, '$2$1');
    const result = await validateUbl(xml);
    expect(result.valid).toBe(false);
    expect(result.errors.join('\n')).toMatch(/ProfileID.*not expected/);
  });

  it('a standard invoice carries ZATCA header fields, ICV, PIH, parties and per-category tax totals', () => {
    const xml = buildXml(standardInvoice());
    expect(texts(xml, 'ProfileID')).toEqual(['reporting:1.0']);
    expect(texts(xml, 'ID')).toEqual(['INV-00001']);
    expect(texts(xml, 'UUID')).toEqual(['3cf5ee18-ee25-44ea-a444-2c37ba7f28be']);
    expect(texts(xml, 'IssueDate')).toEqual(['2026-11-28']);
    expect(texts(xml, 'IssueTime')).toEqual(['09:30:00']);
    expect(texts(xml, 'InvoiceTypeCode')).toEqual(['388']);
    expect(attr(xml, 'Invoice/InvoiceTypeCode', 'name')).toBe('0100000');
    expect(texts(xml, 'DocumentCurrencyCode')).toEqual(['SAR']);
    expect(texts(xml, 'TaxCurrencyCode')).toEqual(['SAR']);
    expect(texts(xml, 'AdditionalDocumentReference/ID')).toEqual(['ICV', 'PIH', 'QR']);
    expect(texts(xml, 'AdditionalDocumentReference/UUID')).toEqual(['1']);
    expect(texts(xml, 'AdditionalDocumentReference/Attachment/EmbeddedDocumentBinaryObject')[0]).toBe(INITIAL_PIH);
    expect(texts(xml, 'Signature/ID')).toEqual(['urn:oasis:names:specification:ubl:signature:Invoice']);
    expect(texts(xml, 'AccountingSupplierParty/Party/PartyIdentification/ID')).toEqual(['1010010000']);
    expect(xml).toContain('<cbc:ID schemeID="CRN">1010010000</cbc:ID>');
    expect(texts(xml, 'AccountingSupplierParty/Party/PostalAddress/BuildingNumber')).toEqual(['2322']);
    expect(texts(xml, 'AccountingSupplierParty/Party/PostalAddress/PlotIdentification')).toEqual(['8228']);
    expect(texts(xml, 'AccountingSupplierParty/Party/PostalAddress/CitySubdivisionName')).toEqual(['Al Olaya']);
    expect(texts(xml, 'AccountingSupplierParty/Party/PartyTaxScheme/CompanyID')).toEqual(['310122393500003']);
    expect(texts(xml, 'AccountingCustomerParty/Party/PartyTaxScheme/CompanyID')).toEqual(['300075588700003']);
    expect(texts(xml, 'AccountingCustomerParty/Party/PartyLegalEntity/RegistrationName')).toEqual(['شركة النور للتجارة | Al-Noor Trading']);
    expect(texts(xml, 'Delivery/ActualDeliveryDate')).toEqual(['2026-11-28']);
    expect(texts(xml, 'PaymentMeans/PaymentMeansCode')).toEqual(['42']);
    expect(texts(xml, 'BillingReference')).toEqual([]);
    // The first TaxTotal has a subtotal per category; the second is the total in SAR alone.
    expect(texts(xml, 'TaxTotal/TaxAmount')).toEqual(['202.50', '202.50']);
    expect(texts(xml, 'TaxTotal/TaxSubtotal/TaxableAmount')).toEqual(['1350.00', '125.00', '200.00']);
    expect(texts(xml, 'TaxTotal/TaxSubtotal/TaxAmount')).toEqual(['202.50', '0.00', '0.00']);
    expect(texts(xml, 'TaxTotal/TaxSubtotal/TaxCategory/ID')).toEqual(['S', 'Z', 'E']);
    expect(texts(xml, 'TaxTotal/TaxSubtotal/TaxCategory/TaxExemptionReasonCode')).toEqual(['VATEX-SA-35', 'VATEX-SA-29']);
    expect(texts(xml, 'LegalMonetaryTotal/LineExtensionAmount')).toEqual(['1675.00']);
    expect(texts(xml, 'LegalMonetaryTotal/TaxExclusiveAmount')).toEqual(['1675.00']);
    expect(texts(xml, 'LegalMonetaryTotal/TaxInclusiveAmount')).toEqual(['1877.50']);
    expect(texts(xml, 'LegalMonetaryTotal/PayableAmount')).toEqual(['1877.50']);
    // Each line: its VAT and its amount with VAT (RoundingAmount), its category with the reason.
    expect(texts(xml, 'InvoiceLine/TaxTotal/TaxAmount')).toEqual(['202.50', '0.00', '0.00']);
    expect(texts(xml, 'InvoiceLine/TaxTotal/RoundingAmount')).toEqual(['1552.50', '125.00', '200.00']);
    expect(texts(xml, 'InvoiceLine/Item/ClassifiedTaxCategory/ID')).toEqual(['S', 'Z', 'E']);
    expect(texts(xml, 'InvoiceLine/Item/ClassifiedTaxCategory/Percent')).toEqual(['15.00', '0.00', '0.00']);
    expect(texts(xml, 'InvoiceLine/Item/ClassifiedTaxCategory/TaxExemptionReason')).toEqual([
      'Medicines and medical equipment',
      'Financial services mentioned in Article 29 of the VAT Regulations',
    ]);
    expect(texts(xml, 'InvoiceLine/Price/PriceAmount')).toEqual(['450.00', '12.50', '200.00']);
    expect(xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"')).toBe(true);
    expect(xml).toContain(`xmlns:cac="${CAC}"`);
  });

  it('the QR before stamping carries tags 1–5 from the document figures', () => {
    const xml = buildXml(simplifiedInvoice());
    const fields = parseQr(texts(xml, 'AdditionalDocumentReference/Attachment/EmbeddedDocumentBinaryObject')[1]);
    expect(fields).toEqual({
      sellerName: 'شركة مستلزمات المكاتب | Riyadh Office Supplies Co',
      vatNumber: '310122393500003',
      timestamp: '2026-11-28T09:30:00',
      total: '40.00',
      vatTotal: '5.22',
    });
  });

  it('a simplified invoice: subtype 0200000, no buyer tax scheme; a credit note 381 and a debit note 383 reference the invoice and give the reason', () => {
    const simple = buildXml(simplifiedInvoice());
    expect(attr(simple, 'Invoice/InvoiceTypeCode', 'name')).toBe('0200000');
    expect(texts(simple, 'AccountingCustomerParty/Party/PartyTaxScheme')).toEqual([]);

    const credit = buildXml(creditNote());
    expect(texts(credit, 'InvoiceTypeCode')).toEqual(['381']);
    expect(attr(credit, 'Invoice/InvoiceTypeCode', 'name')).toBe('0100000');
    expect(texts(credit, 'BillingReference/InvoiceDocumentReference/ID')).toEqual(['INV-00001']);
    expect(texts(credit, 'PaymentMeans/InstructionNote')).toEqual(['كرسي تالف أعيد | One damaged chair returned']);

    const debit = buildXml(debitNote());
    expect(texts(debit, 'InvoiceTypeCode')).toEqual(['383']);
    expect(attr(debit, 'Invoice/InvoiceTypeCode', 'name')).toBe('0200000');
    expect(texts(debit, 'BillingReference/InvoiceDocumentReference/ID')).toEqual(['INV-00002']);
    expect(texts(debit, 'PaymentMeans/InstructionNote')).toEqual(['رسوم توصيل لم تُحتسب | Delivery fee not charged']);
  });

  it('a document in US dollars gives its VAT in SAR in the second tax total', async () => {
    const xml = buildXml(simplifiedInvoice({ currency: 'USD', taxAmountInSar: 1958 }));
    expect(xml).toContain('<cbc:TaxAmount currencyID="SAR">19.58</cbc:TaxAmount>');
    expect(xml).toContain('<cbc:PayableAmount currencyID="USD">40.00</cbc:PayableAmount>');
    expect(texts(xml, 'DocumentCurrencyCode')).toEqual(['USD']);
    expect(texts(xml, 'TaxCurrencyCode')).toEqual(['SAR']);
    expect((await validateUbl(xml)).errors).toEqual([]);
  });

  it('text is escaped: a name with & and < stays well-formed and reads back the same', () => {
    const doc = standardInvoice({ customer: { ...standardInvoice().customer!, name: 'Smith & Sons <KSA>' } });
    expect(texts(buildXml(doc), 'AccountingCustomerParty/Party/PartyLegalEntity/RegistrationName')).toEqual(['Smith & Sons <KSA>']);
  });

  it('amounts are exact from minor units, negative and large included', () => {
    expect(formatAmount(460)).toBe('4.60');
    expect(formatAmount(5)).toBe('0.05');
    expect(formatAmount(-1999)).toBe('-19.99');
    expect(formatAmount(123456789012345)).toBe('1234567890123.45');
    expect(formatAmount(1000, 3)).toBe('1.000');
    expect(() => formatAmount(1.5)).toThrow(/minor units/);
  });

  it('a document with bad formats is refused with every problem named', () => {
    const bad: ZatcaDocument = creditNote({ billingReference: undefined, issueTime: '9:30', lines: [{ ...creditNote().lines[0], quantity: 'one' }] });
    expect(() => buildXml(bad)).toThrow(/issueTime must be HH:MM:SS.*billingReference and reason.*quantity must be a decimal string/);
    const noReason = standardInvoice({ taxSubtotals: standardInvoice().taxSubtotals.map((s) => ({ ...s, exemptionReasonCode: undefined })) });
    expect(() => buildXml(noReason)).toThrow(/tax subtotal Z: needs an exemption reason code and text; tax subtotal E: needs/);
    expect(() => buildXml(simplifiedInvoice({ currency: 'USD' }))).toThrow(/not in SAR needs taxAmountInSar/);
  });

  it('figures that do not add up are refused as ZATCA would reject them (BR-CO-10/14/15, BR-S-08/09)', () => {
    const doc = standardInvoice();
    // The chairs' VAT typed as 202.05 instead of 202.50, in the breakdown and the totals alike.
    const typo = standardInvoice({
      taxSubtotals: doc.taxSubtotals.map((s) => (s.category === 'S' ? { ...s, taxAmount: 20205 } : s)),
      totals: { ...doc.totals, taxAmount: 20205, taxInclusiveAmount: 187705, payableAmount: 187705 },
    });
    expect(() => buildXml(typo)).toThrow(/tax subtotal S 15%: tax 20205 is not 15 % of 135000 \(BR-S-09\)/);
    // A line added without updating the totals or the breakdown.
    const extra = standardInvoice({ lines: [...doc.lines, { ...doc.lines[0], id: '4' }] });
    expect(() => buildXml(extra)).toThrow(/lineExtensionAmount 167500 is not the sum of the lines, 302500 \(BR-CO-10\).*taxable 135000 is not the sum of its lines, 270000 \(BR-S-08\)/);
    // A total with VAT that is not net + VAT, and a zero-rated line with no breakdown of its own.
    const off = standardInvoice({ totals: { ...doc.totals, taxInclusiveAmount: 187751 }, taxSubtotals: doc.taxSubtotals.filter((s) => s.category !== 'Z') });
    expect(() => buildXml(off)).toThrow(/taxExclusiveAmount \+ taxAmount \(BR-CO-15\).*payableAmount must equal taxInclusiveAmount.*lines of Z 0% have no tax subtotal/);
  });

  it('per-line rounding that differs from the category\'s by a halala a line is accepted, as ZATCA\'s validator does', () => {
    // Three stickers of 0.03 net: VAT 0.00 per line (0.0045 rounds down), but 15 % of 0.09 is 0.01:
    // the breakdown's 0.00 is a halala off the category's own rounding, within ZATCA's tolerance.
    const line = { name: 'Sticker', quantity: '1', unitPrice: 3, lineExtensionAmount: 3, taxCategory: 'S' as const, taxPercent: 15, taxAmount: 0 };
    const doc = simplifiedInvoice({
      lines: [1, 2, 3].map((n) => ({ ...line, id: String(n) })),
      taxSubtotals: [{ category: 'S', percent: 15, taxableAmount: 9, taxAmount: 0 }],
      totals: { lineExtensionAmount: 9, taxExclusiveAmount: 9, taxAmount: 0, taxInclusiveAmount: 9, payableAmount: 9 },
    });
    expect(() => buildXml(doc)).not.toThrow();
  });
});
