// What the PDF shows, as plain data: the invoicing app builds it from an issued document and the
// company's profile, so this module knows nothing of storage, requests or the platform.
import type { Address } from 'diwan/sdk';

/** A party's national address (ZATCA's fields, as the SDK names them). */
export type { Address };

/** A text in both languages of the document; a part left empty is not printed (a buyer may have one name only). */
export interface Bilingual {
  en: string;
  ar: string;
}


export interface Party {
  name: Bilingual;
  /** 15 digits for a Saudi VAT registration. A simplified invoice's buyer usually has none. */
  vatNumber?: string;
  /** Commercial registration number. */
  crNumber?: string;
  address?: Address;
}

/** The VAT categories of ZATCA (UNCL5305): standard, zero-rated, exempt, out of scope. */
export type TaxCategory = 'S' | 'Z' | 'E' | 'O';

/**
 * Amounts of money (`unitPrice`, `net`, `tax`, `total`, `taxable`, `subtotal`, `taxTotal`) are
 * integers in the currency's minor units (1,234.50 SAR is `123450`; `Number(toMinor(x, digits))`
 * from `diwan/sdk` turns a document's amount into one), so what is printed is exactly what was
 * computed. A fraction is refused with a RangeError rather than printed 100 times too small.
 */
export interface InvoiceLineView {
  /** In whatever language the line was written; drawn right-to-left where it is Arabic. */
  description: string;
  quantity: number;
  unitPrice: number;
  taxCategory: TaxCategory;
  /** Percent: `15` for 15 %. */
  taxRate: number;
  /** quantity × unitPrice (less any discount), without VAT. */
  net: number;
  tax: number;
  /** net + tax. */
  total: number;
}

/** One VAT category's subtotal: what is taxed at `rate` and the VAT it bears. */
export interface TaxBreakdownView {
  category: TaxCategory;
  rate: number;
  taxable: number;
  tax: number;
  /** Why a `Z`/`E`/`O` line bears no VAT (ZATCA's exemption reason text). */
  exemptionReason?: string;
}

/** For a credit or debit note: the invoice it corrects and why. */
export interface NoteReference {
  invoiceNumber: string;
  reason: string;
}

export type InvoiceKind = 'standard' | 'simplified' | 'credit' | 'debit';

export interface InvoiceView {
  /** `standard` (B2B tax invoice), `simplified` (B2C), or a `credit` / `debit` note. */
  kind: InvoiceKind;
  /** The document's number in its series, e.g. `INV-000042`. */
  number: string;
  /** When it was issued: an ISO 8601 instant (`2026-11-28T10:00:00Z`); printed in Riyadh's time. */
  issuedAt: string;
  seller: Party;
  buyer?: Party;
  lines: InvoiceLineView[];
  taxBreakdown: TaxBreakdownView[];
  subtotal: number;
  taxTotal: number;
  total: number;
  /** ISO 4217, e.g. `SAR`: its minor-unit digits place the decimal point of every amount. */
  currency: string;
  /** ZATCA's base64 TLV: the QR code encodes exactly this text. */
  qr: string;
  reference?: NoteReference;
}
