/**
 * The UBL 2.1 Invoice ZATCA's XML implementation standard asks for. Credit and debit notes are
 * Invoice documents too (type codes 381 and 383). Elements follow the order of the UBL schema;
 * the stamp (ext:UBLExtensions) is added by `sign`, which keeps the hash unchanged.
 */
import { formatAmount, formatPercent } from './amounts.ts';
import { checkDocument } from './document-checks.ts';
import { NS } from './namespaces.ts';
import { qr } from './qr.ts';
import type { Address, DocumentLine, Party, TaxCategory, TaxSubtotal, ZatcaDocument } from './types.ts';
import { el, render, type XmlElement } from './xml-writer.ts';

const TYPE_CODE = { invoice: '388', credit: '381', debit: '383' } as const;
const SUBTYPE_NAME = { standard: '0100000', simplified: '0200000' } as const;
const SIGNATURE_ID = 'urn:oasis:names:specification:ubl:signature:Invoice';
const SIGNATURE_METHOD = 'urn:oasis:names:specification:ubl:dsig:enveloped:xades';

export function buildXml(doc: ZatcaDocument): string {
  checkDocument(doc);
  const currency = doc.currency ?? 'SAR';
  const digits = doc.currencyDigits ?? 2;
  const money = (name: string, minor: number, cur = currency) => el(name, formatAmount(minor, cur === currency ? digits : 2), { currencyID: cur });
  const t = doc.totals;

  const root = el(
    'Invoice',
    [
      el('cbc:ProfileID', 'reporting:1.0'),
      el('cbc:ID', doc.number),
      el('cbc:UUID', doc.uuid),
      el('cbc:IssueDate', doc.issueDate),
      el('cbc:IssueTime', doc.issueTime),
      el('cbc:InvoiceTypeCode', TYPE_CODE[doc.kind], { name: SUBTYPE_NAME[doc.subtype] }),
      el('cbc:DocumentCurrencyCode', currency),
      el('cbc:TaxCurrencyCode', 'SAR'),
      doc.billingReference !== undefined &&
        el('cac:BillingReference', [el('cac:InvoiceDocumentReference', [el('cbc:ID', doc.billingReference)])]),
      el('cac:AdditionalDocumentReference', [el('cbc:ID', 'ICV'), el('cbc:UUID', String(doc.counter))]),
      attachment('PIH', doc.previousHash),
      attachment('QR', qr(qrFieldsOf(doc))),
      el('cac:Signature', [el('cbc:ID', SIGNATURE_ID), el('cbc:SignatureMethod', SIGNATURE_METHOD)]),
      el('cac:AccountingSupplierParty', [party(doc.supplier, true)]),
      el('cac:AccountingCustomerParty', [doc.customer ? party(doc.customer, false) : el('cac:Party', [])]),
      doc.deliveryDate !== undefined && el('cac:Delivery', [el('cbc:ActualDeliveryDate', doc.deliveryDate)]),
      el('cac:PaymentMeans', [
        el('cbc:PaymentMeansCode', doc.paymentMeansCode ?? '10'),
        doc.reason !== undefined && el('cbc:InstructionNote', doc.reason),
      ]),
      el('cac:TaxTotal', [money('cbc:TaxAmount', t.taxAmount), ...doc.taxSubtotals.map((s) => taxSubtotal(s, money))]),
      el('cac:TaxTotal', [money('cbc:TaxAmount', doc.taxAmountInSar ?? t.taxAmount, 'SAR')]),
      el('cac:LegalMonetaryTotal', [
        money('cbc:LineExtensionAmount', t.lineExtensionAmount),
        money('cbc:TaxExclusiveAmount', t.taxExclusiveAmount),
        money('cbc:TaxInclusiveAmount', t.taxInclusiveAmount),
        money('cbc:AllowanceTotalAmount', 0),
        money('cbc:PrepaidAmount', 0),
        money('cbc:PayableAmount', t.payableAmount),
      ]),
      ...doc.lines.map((l) => line(l, money)),
    ],
    { xmlns: NS.inv, 'xmlns:cac': NS.cac, 'xmlns:cbc': NS.cbc, 'xmlns:ext': NS.ext },
  );
  return `<?xml version="1.0" encoding="UTF-8"?>\n${render(root)}\n`;
}

/** Tags 1–5 of the QR, from the document's own figures. */
export function qrFieldsOf(doc: ZatcaDocument) {
  const digits = doc.currencyDigits ?? 2;
  return {
    sellerName: doc.supplier.name,
    vatNumber: doc.supplier.vatNumber ?? '',
    timestamp: `${doc.issueDate}T${doc.issueTime}`,
    total: formatAmount(doc.totals.taxInclusiveAmount, digits),
    vatTotal: formatAmount(doc.totals.taxAmount, digits),
  };
}

type Money = (name: string, minor: number, cur?: string) => XmlElement;

function attachment(id: string, base64: string): XmlElement {
  return el('cac:AdditionalDocumentReference', [
    el('cbc:ID', id),
    el('cac:Attachment', [el('cbc:EmbeddedDocumentBinaryObject', base64, { mimeCode: 'text/plain' })]),
  ]);
}

function party(p: Party, supplier: boolean): XmlElement {
  const id = p.crNumber !== undefined ? { scheme: 'CRN', value: p.crNumber } : p.otherId;
  return el('cac:Party', [
    id && el('cac:PartyIdentification', [el('cbc:ID', id.value, { schemeID: id.scheme })]),
    p.address && address(p.address),
    (supplier || p.vatNumber !== undefined) &&
      el('cac:PartyTaxScheme', [p.vatNumber !== undefined && el('cbc:CompanyID', p.vatNumber), el('cac:TaxScheme', [el('cbc:ID', 'VAT')])]),
    el('cac:PartyLegalEntity', [el('cbc:RegistrationName', p.name)]),
  ]);
}

function address(a: Address): XmlElement {
  return el('cac:PostalAddress', [
    el('cbc:StreetName', a.street),
    el('cbc:BuildingNumber', a.buildingNumber),
    a.additionalNumber !== undefined && el('cbc:PlotIdentification', a.additionalNumber),
    el('cbc:CitySubdivisionName', a.district),
    el('cbc:CityName', a.city),
    el('cbc:PostalZone', a.postalCode),
    el('cac:Country', [el('cbc:IdentificationCode', a.country)]),
  ]);
}

function taxCategory(
  name: 'cac:TaxCategory' | 'cac:ClassifiedTaxCategory',
  category: TaxCategory,
  percent: number,
  code: string | undefined,
  reason: string | undefined,
): XmlElement {
  // The document-level category carries the UN/ECE scheme attributes, as in ZATCA's samples.
  const scheme = name === 'cac:TaxCategory';
  return el(name, [
    el('cbc:ID', category, scheme ? { schemeID: 'UN/ECE 5305', schemeAgencyID: '6' } : undefined),
    el('cbc:Percent', formatPercent(percent)),
    code !== undefined && el('cbc:TaxExemptionReasonCode', code),
    reason !== undefined && el('cbc:TaxExemptionReason', reason),
    el('cac:TaxScheme', [el('cbc:ID', 'VAT', scheme ? { schemeID: 'UN/ECE 5153', schemeAgencyID: '6' } : undefined)]),
  ]);
}

function taxSubtotal(s: TaxSubtotal, money: Money): XmlElement {
  return el('cac:TaxSubtotal', [
    money('cbc:TaxableAmount', s.taxableAmount),
    money('cbc:TaxAmount', s.taxAmount),
    taxCategory('cac:TaxCategory', s.category, s.percent, s.exemptionReasonCode, s.exemptionReason),
  ]);
}

function line(l: DocumentLine, money: Money): XmlElement {
  return el('cac:InvoiceLine', [
    el('cbc:ID', l.id),
    el('cbc:InvoicedQuantity', l.quantity, { unitCode: l.unitCode ?? 'PCE' }),
    money('cbc:LineExtensionAmount', l.lineExtensionAmount),
    el('cac:TaxTotal', [money('cbc:TaxAmount', l.taxAmount), money('cbc:RoundingAmount', l.lineExtensionAmount + l.taxAmount)]),
    el('cac:Item', [
      el('cbc:Name', l.name),
      taxCategory('cac:ClassifiedTaxCategory', l.taxCategory, l.taxPercent, l.exemptionReasonCode, l.exemptionReason),
    ]),
    el('cac:Price', [money('cbc:PriceAmount', l.unitPrice)]),
  ]);
}
