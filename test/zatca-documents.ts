/**
 * Documents a Riyadh office-supplies company issues, with the figures worked out as the caller
 * (the invoicing app) would: amounts in halalas, VAT 15 % rounded per line, ZATCA's exemption
 * reason codes for zero-rated, exempt and out-of-scope lines.
 */
import type { Party, ZatcaDocument } from '../apps-installed/invoicing/zatca/index.ts';
import { INITIAL_PIH } from '../apps-installed/invoicing/zatca/index.ts';

export const SELLER: Party = {
  name: 'شركة مستلزمات المكاتب | Riyadh Office Supplies Co',
  vatNumber: '310122393500003',
  crNumber: '1010010000',
  address: { street: 'King Fahd Road', buildingNumber: '2322', additionalNumber: '8228', district: 'Al Olaya', city: 'Riyadh', postalCode: '12241', country: 'SA' },
};

export const BUYER: Party = {
  name: 'شركة النور للتجارة | Al-Noor Trading',
  vatNumber: '300075588700003',
  address: { street: 'Prince Sultan Street', buildingNumber: '1111', district: 'Al Murooj', city: 'Jeddah', postalCode: '23512', country: 'SA' },
};

const base = { issueDate: '2026-11-28', issueTime: '09:30:00', supplier: SELLER, previousHash: INITIAL_PIH };

/** Chairs (S), medicines (Z, VATEX-SA-35) and a financing fee (E, VATEX-SA-29) to a VAT-registered buyer. */
export function standardInvoice(over: Partial<ZatcaDocument> = {}): ZatcaDocument {
  return {
    ...base,
    kind: 'invoice',
    subtype: 'standard',
    number: 'INV-00001',
    uuid: '3cf5ee18-ee25-44ea-a444-2c37ba7f28be',
    counter: 1,
    customer: BUYER,
    deliveryDate: '2026-11-28',
    paymentMeansCode: '42',
    lines: [
      { id: '1', name: 'كرسي مكتب | Office chair', quantity: '3', unitPrice: 45000, lineExtensionAmount: 135000, taxCategory: 'S', taxPercent: 15, taxAmount: 20250 },
      {
        id: '2', name: 'علبة دواء | Medicine box', quantity: '10', unitPrice: 1250, lineExtensionAmount: 12500, taxCategory: 'Z', taxPercent: 0, taxAmount: 0,
        exemptionReasonCode: 'VATEX-SA-35', exemptionReason: 'Medicines and medical equipment',
      },
      {
        id: '3', name: 'رسوم ترتيب تمويل | Financing arrangement fee', quantity: '1', unitPrice: 20000, lineExtensionAmount: 20000, taxCategory: 'E', taxPercent: 0, taxAmount: 0,
        exemptionReasonCode: 'VATEX-SA-29', exemptionReason: 'Financial services mentioned in Article 29 of the VAT Regulations',
      },
    ],
    taxSubtotals: [
      { category: 'S', percent: 15, taxableAmount: 135000, taxAmount: 20250 },
      { category: 'Z', percent: 0, taxableAmount: 12500, taxAmount: 0, exemptionReasonCode: 'VATEX-SA-35', exemptionReason: 'Medicines and medical equipment' },
      { category: 'E', percent: 0, taxableAmount: 20000, taxAmount: 0, exemptionReasonCode: 'VATEX-SA-29', exemptionReason: 'Financial services mentioned in Article 29 of the VAT Regulations' },
    ],
    totals: { lineExtensionAmount: 167500, taxExclusiveAmount: 167500, taxAmount: 20250, taxInclusiveAmount: 187750, payableAmount: 187750 },
    ...over,
  };
}

/** Two coffees at 20.00 SAR with VAT (17.39 net each: 34.78 + 5.22 VAT = 40.00), no buyer named. */
export function simplifiedInvoice(over: Partial<ZatcaDocument> = {}): ZatcaDocument {
  return {
    ...base,
    kind: 'invoice',
    subtype: 'simplified',
    number: 'INV-00002',
    uuid: '9a1c3b52-7f4e-4d8a-b6f1-0e2d5c7a9b13',
    counter: 2,
    lines: [{ id: '1', name: 'قهوة | Coffee', quantity: '2', unitPrice: 1739, lineExtensionAmount: 3478, taxCategory: 'S', taxPercent: 15, taxAmount: 522 }],
    taxSubtotals: [{ category: 'S', percent: 15, taxableAmount: 3478, taxAmount: 522 }],
    totals: { lineExtensionAmount: 3478, taxExclusiveAmount: 3478, taxAmount: 522, taxInclusiveAmount: 4000, payableAmount: 4000 },
    ...over,
  };
}

/** One of the three chairs came back damaged: 450.00 + 67.50 VAT credited. */
export function creditNote(over: Partial<ZatcaDocument> = {}): ZatcaDocument {
  return {
    ...base,
    kind: 'credit',
    subtype: 'standard',
    number: 'CN-00001',
    uuid: '5b7e2d90-1c3a-4f6b-8e9d-2a4c6e8f0b1d',
    counter: 3,
    customer: BUYER,
    deliveryDate: '2026-11-28',
    billingReference: 'INV-00001',
    reason: 'كرسي تالف أعيد | One damaged chair returned',
    lines: [{ id: '1', name: 'كرسي مكتب | Office chair', quantity: '1', unitPrice: 45000, lineExtensionAmount: 45000, taxCategory: 'S', taxPercent: 15, taxAmount: 6750 }],
    taxSubtotals: [{ category: 'S', percent: 15, taxableAmount: 45000, taxAmount: 6750 }],
    totals: { lineExtensionAmount: 45000, taxExclusiveAmount: 45000, taxAmount: 6750, taxInclusiveAmount: 51750, payableAmount: 51750 },
    ...over,
  };
}

/** A delivery fee left off the coffee sale: 30.00 + 4.50 VAT. */
export function debitNote(over: Partial<ZatcaDocument> = {}): ZatcaDocument {
  return {
    ...base,
    kind: 'debit',
    subtype: 'simplified',
    number: 'DN-00001',
    uuid: 'c2e4f6a8-0b1d-4e3f-9a5c-7b9d1f3e5a70',
    counter: 4,
    billingReference: 'INV-00002',
    reason: 'رسوم توصيل لم تُحتسب | Delivery fee not charged',
    lines: [{ id: '1', name: 'توصيل | Delivery', quantity: '1', unitPrice: 3000, lineExtensionAmount: 3000, taxCategory: 'S', taxPercent: 15, taxAmount: 450 }],
    taxSubtotals: [{ category: 'S', percent: 15, taxableAmount: 3000, taxAmount: 450 }],
    totals: { lineExtensionAmount: 3000, taxExclusiveAmount: 3000, taxAmount: 450, taxInclusiveAmount: 3450, payableAmount: 3450 },
    ...over,
  };
}

/** A government fine re-charged at cost: out of scope (O, VATEX-SA-OOS, the taxpayer's own reason). */
export function outOfScopeInvoice(over: Partial<ZatcaDocument> = {}): ZatcaDocument {
  const reason = 'غرامة حكومية مستردة بالتكلفة | Government fine recharged at cost';
  return {
    ...base,
    kind: 'invoice',
    subtype: 'standard',
    number: 'INV-00003',
    uuid: 'e1f3a5c7-9b2d-4f6e-8a0c-3d5f7b9e1a24',
    counter: 5,
    customer: BUYER,
    deliveryDate: '2026-11-28',
    lines: [{ id: '1', name: 'غرامة | Fine', quantity: '1', unitPrice: 50000, lineExtensionAmount: 50000, taxCategory: 'O', taxPercent: 0, taxAmount: 0, exemptionReasonCode: 'VATEX-SA-OOS', exemptionReason: reason }],
    taxSubtotals: [{ category: 'O', percent: 0, taxableAmount: 50000, taxAmount: 0, exemptionReasonCode: 'VATEX-SA-OOS', exemptionReason: reason }],
    totals: { lineExtensionAmount: 50000, taxExclusiveAmount: 50000, taxAmount: 0, taxInclusiveAmount: 50000, payableAmount: 50000 },
    ...over,
  };
}

export const ALL_DOCUMENTS = { standardInvoice, simplifiedInvoice, creditNote, debitNote, outOfScopeInvoice };
