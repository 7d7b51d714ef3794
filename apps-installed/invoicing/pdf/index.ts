// The invoice PDF: `renderInvoicePdf(view)` draws a bilingual (Arabic and English) tax invoice,
// simplified tax invoice, credit or debit note from plain data (`InvoiceView`, documented in
// invoice-view.ts). It imports nothing from the host, so the invoicing app calls it from its
// route and tests call it alone.
export { renderInvoicePdf } from './render-invoice.ts';
export type {
  Address, Bilingual, InvoiceKind, InvoiceLineView, InvoiceView, NoteReference, Party, TaxBreakdownView, TaxCategory,
} from './invoice-view.ts';
