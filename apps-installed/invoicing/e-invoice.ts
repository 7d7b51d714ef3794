// An issued document as ZATCA's e-invoice (zatca/, a pure module) and as the bilingual PDF
// (pdf/): the mapping from the stored document, the company's profile and the customer. Sealing
// happens at issue, in the issuing write: the hash chain (each document's PIH is the hash of the
// document with the counter before it), the hash and the QR are stored on the document, and once
// the company is onboarded with ZATCA (zatca-account.ts) the stamp's signature and certificate
// too (QR tags 1–9; before, tags 1–5), so its XML can be rebuilt, byte for byte, whenever it is
// asked for.
import { minorDigits, toMinor, type AppContext, type Doc } from 'diwan/sdk';
import { buildXml, invoiceHash, INITIAL_PIH, pemBody, qr, qrFieldsOf, qrOfXml, sign, stamp, type Party, type ZatcaDocument } from './zatca/index.ts';
import { zatcaAccount } from './zatca-account.ts';
import type { InvoiceView } from './pdf/index.ts';
import type { Totals } from './vat.ts';
import { TYPE_OF, documentNumber, type DocumentKind } from './e-invoice-kinds.ts';

type Address = { buildingNumber?: string; street?: string; district?: string; city?: string; postalCode?: string; country?: string };

/** The national address, when it has every part ZATCA's XML writes (otherwise none is written). */
function fullAddress(a: Address | undefined): Party['address'] {
  if (!a?.street || !a.buildingNumber || !a.district || !a.city || !a.postalCode || !a.country) return undefined;
  return { street: a.street, buildingNumber: a.buildingNumber, district: a.district, city: a.city, postalCode: a.postalCode, country: a.country };
}

const sellerName = (ctx: AppContext) => (ctx.company.legalName ? `${ctx.company.legalName.ar} | ${ctx.company.legalName.en}` : ctx.company.name);

export function seller(ctx: AppContext): Party {
  const c = ctx.company;
  return { name: sellerName(ctx), vatNumber: c.vatNumber, crNumber: c.crNumber, address: fullAddress(c.address) };
}

function buyer(customer: Doc | undefined): Party | undefined {
  if (!customer) return undefined;
  const name = customer.legalNameAr ? `${customer.legalNameAr} | ${customer.name}` : String(customer.name);
  return { name, vatNumber: customer.vatNumber as string | undefined, crNumber: customer.crNumber as string | undefined, address: fullAddress(customer as Address) };
}

/** Only a VAT-registered seller issues ZATCA e-invoices; its chain starts with the first document it issues once registered. */
export const registered = (ctx: AppContext) => !!ctx.company.vatNumber;

/** The document (with its totals, in minor units) as the zatca module takes it. */
async function zatcaDocument(ctx: AppContext, doc: Record<string, unknown>, kind: DocumentKind, totals: Totals): Promise<ZatcaDocument> {
  const currency = doc.currency as string;
  const digits = minorDigits(currency);
  const m = (x: unknown) => Number(toMinor(typeof x === 'number' ? x : 0, digits));
  const customer = await ctx.docs('customer').get(doc.customerId as string);
  const invoice = kind === 'invoice' ? undefined : await ctx.docs('invoice').get(doc.invoiceId as string);
  const issuedAt = String(doc.issuedAt);
  const lines = doc.lines as Record<string, unknown>[];
  const breakdown = doc.taxBreakdown as Record<string, unknown>[];
  return {
    kind,
    subtype: doc.kind as 'standard' | 'simplified',
    number: documentNumber(kind, doc.number),
    uuid: String(doc.uuid),
    issueDate: issuedAt.slice(0, 10),
    issueTime: issuedAt.slice(11, 19),
    currency,
    currencyDigits: digits,
    counter: doc.counter as number,
    previousHash: String(doc.previousHash),
    ...(invoice ? { billingReference: documentNumber('invoice', invoice.number), reason: String(doc.reason) } : {}),
    supplier: seller(ctx),
    customer: buyer(customer),
    lines: lines.map((l, i) => ({
      id: String(i + 1), name: String(l.description), quantity: String(l.quantity), unitPrice: m(l.unitPrice), lineExtensionAmount: m(l.amount),
      taxCategory: l.taxCategory as ZatcaDocument['lines'][number]['taxCategory'], taxPercent: l.taxRate as number, taxAmount: m(l.taxAmount),
      ...(l.exemptionReasonCode ? { exemptionReasonCode: String(l.exemptionReasonCode), exemptionReason: String(l.exemptionReason ?? '') } : {}),
    })),
    taxSubtotals: breakdown.map((b) => ({
      category: b.taxCategory as ZatcaDocument['lines'][number]['taxCategory'], percent: b.taxRate as number, taxableAmount: m(b.taxableAmount), taxAmount: m(b.taxAmount),
      ...(b.exemptionReasonCode ? { exemptionReasonCode: String(b.exemptionReasonCode), exemptionReason: String(b.exemptionReason ?? '') } : {}),
    })),
    totals: { lineExtensionAmount: Number(totals.subtotal), taxExclusiveAmount: Number(totals.subtotal), taxAmount: Number(totals.taxTotal), taxInclusiveAmount: Number(totals.total), payableAmount: Number(totals.total) },
  };
}

/** The hash of the document issued with the counter before `counter` (ZATCA's initial PIH for the first, or when that one was issued before the company registered). */
async function previousHash(ctx: AppContext, counter: number): Promise<string> {
  if (counter <= 1) return INITIAL_PIH;
  for (const type of Object.values(TYPE_OF)) {
    const { data } = await ctx.docs(type).list({ pageSize: 1, filters: { counter: counter - 1 } });
    if (data[0]) return (data[0].hash as string | undefined) ?? INITIAL_PIH;
  }
  return INITIAL_PIH;
}

/**
 * Seals an issued document in its issuing write: its PIH, its hash and its QR, and once the
 * company is onboarded its stamp (signed with the company's key, at the time of issue). The
 * counter was taken first in this write, so concurrent issues queue there and the chain never
 * forks. The hash is the unsigned XML's (ZATCA's definition leaves the stamp and QR out).
 */
export async function seal(ctx: AppContext, doc: Record<string, unknown>, kind: DocumentKind, totals: Totals): Promise<void> {
  if (!registered(ctx)) return;
  doc.previousHash = await previousHash(ctx, doc.counter as number);
  const z = await zatcaDocument(ctx, doc, kind, totals);
  const xml = buildXml(z);
  const account = await zatcaAccount(ctx);
  if (!account) {
    doc.hash = invoiceHash(xml);
    doc.qr = qr(qrFieldsOf(z));
    return;
  }
  const signed = sign(xml, { privateKeyPem: account.privateKeyPem, certificatePem: account.certificatePem, signingTime: new Date(String(doc.issuedAt)) });
  Object.assign(doc, { hash: signed.hash, qr: signed.qr, signatureValue: signed.signatureValue, signingCertificate: pemBody(account.certificatePem) });
}

const totalsOf = (doc: Doc): Totals => {
  const digits = minorDigits(doc.currency as string);
  return { subtotal: toMinor(doc.subtotal as number, digits), taxTotal: toMinor(doc.taxTotal as number, digits), total: toMinor(doc.total as number, digits) };
};

/** The stored, sealed document's XML, as it was when it was sealed (stamped again from its signature when it was stamped). */
export async function xmlOf(ctx: AppContext, doc: Doc, kind: DocumentKind): Promise<string> {
  const xml = buildXml(await zatcaDocument(ctx, doc, kind, totalsOf(doc)));
  if (typeof doc.signatureValue !== 'string') return xml;
  return stamp(xml, { signatureValue: doc.signatureValue, certificatePem: String(doc.signingCertificate), signingTime: new Date(String(doc.issuedAt)) }).xml;
}

/** The bilingual PDF of a sealed document. */
export async function pdfOf(ctx: AppContext, doc: Doc, kind: DocumentKind): Promise<Buffer> {
  const digits = minorDigits(doc.currency as string);
  const m = (x: unknown) => Number(toMinor(typeof x === 'number' ? x : 0, digits));
  const c = ctx.company;
  const customer = await ctx.docs('customer').get(doc.customerId as string);
  const invoice = kind === 'invoice' ? undefined : await ctx.docs('invoice').get(doc.invoiceId as string);
  const view: InvoiceView = {
    kind: kind === 'invoice' ? (doc.kind as 'standard' | 'simplified') : kind,
    number: documentNumber(kind, doc.number),
    issuedAt: String(doc.issuedAt),
    seller: { name: c.legalName ?? { en: c.name, ar: '' }, vatNumber: c.vatNumber, crNumber: c.crNumber, address: c.address },
    ...(customer ? { buyer: { name: { en: String(customer.name), ar: String(customer.legalNameAr ?? '') }, vatNumber: customer.vatNumber as string | undefined, crNumber: customer.crNumber as string | undefined, address: customer as Address } } : {}),
    lines: (doc.lines as Record<string, unknown>[]).map((l) => ({
      description: String(l.description), quantity: l.quantity as number, unitPrice: m(l.unitPrice), taxCategory: l.taxCategory as 'S', taxRate: l.taxRate as number,
      net: m(l.amount), tax: m(l.taxAmount), total: m(l.amountWithTax),
    })),
    taxBreakdown: (doc.taxBreakdown as Record<string, unknown>[]).map((b) => ({
      category: b.taxCategory as 'S', rate: b.taxRate as number, taxable: m(b.taxableAmount), tax: m(b.taxAmount), ...(b.exemptionReason ? { exemptionReason: String(b.exemptionReason) } : {}),
    })),
    subtotal: m(doc.subtotal),
    taxTotal: m(doc.taxTotal),
    total: m(doc.total),
    currency: String(doc.currency),
    // A cleared document is given to the buyer as ZATCA cleared it: with ZATCA's QR.
    qr: (typeof doc.clearedXml === 'string' && qrOfXml(doc.clearedXml)) || String(doc.qr),
    ...(invoice ? { reference: { invoiceNumber: documentNumber('invoice', invoice.number), reason: String(doc.reason) } } : {}),
  };
  // The PDF's libraries (pdfkit, fonts) load with the first PDF asked for.
  const { renderInvoicePdf } = await import('./pdf/index.ts');
  return renderInvoicePdf(view);
}
