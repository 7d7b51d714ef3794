// The kinds of document ZATCA numbers in one chain, and how each is named: light, so that the
// server bundle knows them without loading the e-invoice code (e-invoice.ts) until it is used.

export type DocumentKind = 'invoice' | 'credit' | 'debit';

/** The document types that take the invoice counter, by ZATCA's kind. */
export const TYPE_OF: Record<DocumentKind, string> = { invoice: 'invoice', credit: 'creditNote', debit: 'debitNote' };

const PREFIX: Record<DocumentKind, string> = { invoice: 'INV', credit: 'CRN', debit: 'DBN' };

/** The number a person reads: `INV-000042`. */
export const documentNumber = (kind: DocumentKind, n: unknown) => `${PREFIX[kind]}-${String(n).padStart(6, '0')}`;
