// The seller's profile of a company: what a Saudi tax invoice must name (ZATCA's e-invoicing
// rules): the legal name in English and Arabic, the VAT registration number, the commercial
// registration, the national address, and the VAT rate its standard-rated lines carry. Checked
// whole (every problem at once, in the caller's language) before it is stored.
import type { ErrorDetail } from '../kernel/errors/diwan-error.ts';
import type { Address } from '../../sdk/define-app.ts';
import type { Lang, Translator } from '../kernel/i18n/i18n.ts';


export interface CompanyProfile {
  legalName?: { en: string; ar: string };
  vatNumber?: string;
  crNumber?: string;
  address?: Address;
  /** The standard VAT rate in percent (Saudi Arabia: 15 since July 2020). */
  vatRate: number;
}

export const DEFAULT_VAT_RATE = 15;

const text = (max: number, description: string) => ({ type: 'string', minLength: 1, maxLength: max, description }) as const;

export const localizedNameSchema = {
  title: 'LocalizedName',
  type: 'object',
  additionalProperties: false,
  required: ['en', 'ar'],
  properties: { en: text(200, 'In English'), ar: text(200, 'In Arabic') },
} as const;

export const addressSchema = {
  title: 'Address',
  type: 'object',
  additionalProperties: false,
  description: 'The national address (in Saudi Arabia a building number of 4 digits and a postal code of 5)',
  properties: {
    buildingNumber: text(20, 'Building number'),
    street: text(200, 'Street'),
    district: text(200, 'District'),
    city: text(200, 'City'),
    postalCode: text(20, 'Postal code'),
    country: { type: 'string', pattern: '^[A-Z]{2}$', description: 'ISO 3166-1 alpha-2 country code' },
  },
} as const;

const vatNumber = { type: 'string', maxLength: 40, description: 'VAT registration number: 15 digits, the first and the last 3' } as const;
const crNumber = { type: 'string', maxLength: 40, description: 'Commercial registration number: 10 digits' } as const;
const vatRate = { type: 'number', minimum: 0, maximum: 100, description: 'The standard VAT rate in percent, given to standard-rated (S) lines' } as const;

/** What PATCH /company takes: any of these; `null` clears an optional one. */
export const profilePatchSchema = {
  title: 'CompanyUpdate',
  type: 'object',
  additionalProperties: false,
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 200, description: 'The name shown in the console' },
    legalName: { anyOf: [localizedNameSchema, { type: 'null' }] },
    vatNumber: { type: ['string', 'null'], maxLength: 40, description: vatNumber.description },
    crNumber: { type: ['string', 'null'], maxLength: 40, description: crNumber.description },
    address: { anyOf: [addressSchema, { type: 'null' }] },
    vatRate,
  },
} as const;

/** The profile's fields as they are read (with the company's id, name, currency). */
export const profileProperties = { legalName: localizedNameSchema, vatNumber, crNumber, address: addressSchema, vatRate } as const;

export function profileOf(stored: string | null | undefined): CompanyProfile {
  const p = stored ? (JSON.parse(stored) as Partial<CompanyProfile>) : {};
  return { ...p, vatRate: p.vatRate ?? DEFAULT_VAT_RATE };
}

/**
 * The problems a profile has beyond its schema's types and lengths: the forms ZATCA's rules
 * give (BR-KSA-39/40 the VAT number, BR-KSA-08 the CR number, BR-KSA-37 and BR-KSA-66 a Saudi
 * building number and postal code), each with its pointer and a message in `lang`.
 */
export function profileProblems(p: CompanyProfile, lang: Lang, tr: Translator): ErrorDetail[] {
  const out: ErrorDetail[] = [];
  const add = (pointer: string, rule: string, key: string, params: Record<string, unknown> = {}) =>
    out.push({ in: 'body', pointer, rule, message: tr.t(lang, key, { field: pointer.slice(1).replace(/\//g, '.'), ...params }) });
  const digits = (pointer: string, value: string, length: number) => {
    if (!/^[0-9]*$/.test(value)) add(pointer, 'digits', 'company.digitsOnly');
    if (value.length !== length) add(pointer, 'length', 'company.digitCount', { count: length, given: value.length });
  };
  if (p.vatNumber !== undefined) {
    digits('/vatNumber', p.vatNumber, 15);
    if (!p.vatNumber.startsWith('3')) add('/vatNumber', 'firstDigit', 'company.vatFirst');
    if (!p.vatNumber.endsWith('3')) add('/vatNumber', 'lastDigit', 'company.vatLast');
  }
  if (p.crNumber !== undefined) digits('/crNumber', p.crNumber, 10);
  const a = p.address;
  if (a && (a.country ?? 'SA') === 'SA') {
    if (a.buildingNumber !== undefined) digits('/address/buildingNumber', a.buildingNumber, 4);
    if (a.postalCode !== undefined) digits('/address/postalCode', a.postalCode, 5);
  }
  return out;
}

/** `profile` with `patch` applied: a given value replaces, `null` clears. */
export function applyProfilePatch(profile: CompanyProfile, patch: Record<string, unknown>): CompanyProfile {
  const next: Record<string, unknown> = { ...profile };
  for (const k of ['legalName', 'vatNumber', 'crNumber', 'address', 'vatRate'] as const) {
    if (!(k in patch)) continue;
    if (patch[k] === null) delete next[k];
    else next[k] = patch[k];
  }
  return next as unknown as CompanyProfile;
}
