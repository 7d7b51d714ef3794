/**
 * The plain data an e-invoice is built from. The caller (the invoicing app) has already computed
 * every number: this module formats, it does not calculate.
 *
 * Money is an integer in the currency's minor units (SAR: halalas, 2 digits), as everywhere in
 * Diwan; `buildXml` writes it as a decimal string with that many digits ("4.60"). Quantities are
 * decimal strings ("2", "1.5"), written as given. Percentages are numbers (15 → "15.00").
 */

/** ZATCA's VAT categories (UN/ECE 5305 subset): standard, zero-rated, exempt, out of scope. */
export type TaxCategory = 'S' | 'Z' | 'E' | 'O';

/** invoice → 388, credit note → 381, debit note → 383 (UN/CEFACT 1001). */
export type DocumentKind = 'invoice' | 'credit' | 'debit';

/** standard (B2B, cleared; subtype 0100000) or simplified (B2C, reported; 0200000). */
export type InvoiceSubtype = 'standard' | 'simplified';

export interface Address {
  street: string;
  /** 4 digits in the Saudi national address. */
  buildingNumber: string;
  /** The national address's "additional number" (4 digits), written as PlotIdentification. */
  additionalNumber?: string;
  /** District (CitySubdivisionName). */
  district: string;
  city: string;
  postalCode: string;
  /** ISO 3166-1 alpha-2, e.g. "SA". */
  country: string;
}

export interface Party {
  /** Legal name (RegistrationName); ZATCA's samples write "العربي | English". */
  name: string;
  /** 15 digits, first and last 3. */
  vatNumber?: string;
  /** Commercial registration number (PartyIdentification schemeID="CRN"). */
  crNumber?: string;
  /** Another identification when there is no CR number (e.g. NAT, TIN, 700, …) */
  otherId?: { scheme: string; value: string };
  address?: Address;
}

export interface TaxSubtotal {
  category: TaxCategory;
  percent: number;
  /** Minor units. */
  taxableAmount: number;
  /** Minor units. */
  taxAmount: number;
  /** ZATCA's exemption reason code (VATEX-SA-…), required for Z, E and O. */
  exemptionReasonCode?: string;
  exemptionReason?: string;
}

export interface DocumentLine {
  id: string;
  name: string;
  /** Decimal string. */
  quantity: string;
  /** UN/ECE rec 20 unit code; "PCE" when omitted. */
  unitCode?: string;
  /** Net price per unit, minor units. */
  unitPrice: number;
  /** Line net amount (quantity × price − line allowances), minor units. */
  lineExtensionAmount: number;
  taxCategory: TaxCategory;
  taxPercent: number;
  /** Line VAT, minor units. The line's RoundingAmount is lineExtensionAmount + taxAmount. */
  taxAmount: number;
  exemptionReasonCode?: string;
  exemptionReason?: string;
}

/** The document totals; `buildXml` checks them against the lines and the breakdown (ZATCA's BR-CO rules). */
export interface DocumentTotals {
  /** Sum of line net amounts, minor units. */
  lineExtensionAmount: number;
  /** Total without VAT, minor units. */
  taxExclusiveAmount: number;
  /** Total VAT, minor units. */
  taxAmount: number;
  /** Total with VAT, minor units. */
  taxInclusiveAmount: number;
  /**
   * Amount due, minor units: the total with VAT. (Document-level allowances and prepayment
   * invoices are not modelled: a discount belongs in the line's net amount, and payments made
   * after issue do not change the e-invoice; AllowanceTotalAmount and PrepaidAmount are 0.00.)
   */
  payableAmount: number;
}

export interface ZatcaDocument {
  kind: DocumentKind;
  subtype: InvoiceSubtype;
  /** The document's number (cbc:ID), e.g. "INV-00042". */
  number: string;
  uuid: string;
  /** YYYY-MM-DD. */
  issueDate: string;
  /** HH:MM:SS. */
  issueTime: string;
  /** ISO 4217; SAR when omitted. */
  currency?: string;
  /** The currency's minor digits; 2 when omitted. */
  currencyDigits?: number;
  /** VAT total in SAR (minor units) when the document currency is not SAR. */
  taxAmountInSar?: number;
  /** The invoice counter value (ICV): the company's sequence of issued documents. */
  counter: number;
  /** The previous document's hash (PIH); INITIAL_PIH for the first one. */
  previousHash: string;
  /** For credit and debit notes: the number of the invoice they adjust. */
  billingReference?: string;
  /** For credit and debit notes: why they were issued (PaymentMeans/InstructionNote). */
  reason?: string;
  /** UN/ECE 4461 payment means code; "10" (cash) when omitted. */
  paymentMeansCode?: string;
  /** Supply date (KSA-5), YYYY-MM-DD; required by ZATCA for standard invoices. */
  deliveryDate?: string;
  supplier: Party;
  customer?: Party;
  lines: DocumentLine[];
  taxSubtotals: TaxSubtotal[];
  totals: DocumentTotals;
}
