// The invoice PDF: `renderInvoicePdf(view)` draws a bilingual (Arabic and English) tax invoice,
// simplified tax invoice, credit or debit note from plain data (`InvoiceView`, documented in
// invoice-view.ts) and resolves to the PDF's bytes (`application/pdf`). It imports nothing from
// the host, so the invoicing app calls it from its route and tests call it alone.
//
// From an issued invoice document (money fields are numbers in major units there; `digits` is
// `minorDigits(currency)` and `m(x)` is `Number(toMinor(x, digits))`, both from `diwan/sdk`):
//   kind: doc.kind (a note: 'credit' | 'debit'), number, issuedAt, currency, qr;
//   lines[i]: { description, quantity, unitPrice: m(unitPrice), taxCategory, taxRate,
//               net: m(amount), tax: m(taxAmount), total: m(amountWithTax) };
//   taxBreakdown[i]: { category: taxCategory, rate: taxRate, taxable: m(taxableAmount),
//                      tax: m(taxAmount), exemptionReason };
//   subtotal, taxTotal, total: m(…); seller from the company's profile, buyer from the customer
//   ({ en: name, ar: legalNameAr ?? '' }); reference for a note: { invoiceNumber, reason }.
export { renderInvoicePdf } from './render-invoice.ts';
export type {
  Address, Bilingual, InvoiceKind, InvoiceLineView, InvoiceView, NoteReference, Party, TaxBreakdownView, TaxCategory,
} from './invoice-view.ts';
