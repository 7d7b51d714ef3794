// Onboarding the company with ZATCA (POST /company/zatca/onboard): a new secp256k1 key and a CSR
// from the company's profile, the compliance CSID for it (with the OTP the Owner got from the
// Fatoora portal), the compliance checks (a stamped sample of each document the company issues:
// standard and simplified invoices, credit and debit notes), then the production CSID. Only
// then is anything kept: the account (key, certificate, CSID) as one sealed secret
// (zatca-account.ts); every issue after that is stamped with it (e-invoice.ts). ZATCA's refusals
// are answered as 4xx in the caller's language with ZATCA's own messages.
import { randomUUID } from 'node:crypto';
import { AppError, type AppContext } from 'diwan/sdk';
import {
  buildXml, checkCompliance, INITIAL_PIH, makeKeyAndCsr, readCertificate, requestComplianceCsid, requestProductionCsid, sign,
  ZATCA_BASE_URLS, type CsrInfo, type OnboardingFailure, type Party, type ZatcaDocument, type ZatcaGateway,
} from './zatca/index.ts';
import { seller } from './e-invoice.ts';
import { saveZatcaAccount, storedZatcaAccount, type StoredZatcaAccount } from './zatca-account.ts';

export interface OnboardInput {
  otp: string;
  gateway?: ZatcaGateway;
  /** The CSR's businessCategory: the branch's industry. */
  businessCategory?: string;
}

/** What GET /company/zatca answers: never a secret. */
export type ZatcaState =
  | { onboarded: false }
  | {
      onboarded: true;
      gateway: string;
      baseUrl: string;
      onboardedAt: string;
      certificate: { subject: string; issuer: string; serialNumber: string; validFrom: string; validTo: string };
    };

export function stateOf(account: StoredZatcaAccount | undefined): ZatcaState {
  if (!account) return { onboarded: false };
  const cert = readCertificate(account.certificatePem);
  return {
    onboarded: true,
    gateway: account.gateway,
    baseUrl: account.baseUrl,
    onboardedAt: account.onboardedAt,
    certificate: {
      subject: cert.x509.subject.split('\n').join(', '),
      issuer: cert.issuerName,
      serialNumber: cert.serialNumber,
      validFrom: new Date(cert.x509.validFrom).toISOString(),
      validTo: new Date(cert.x509.validTo).toISOString(),
    },
  };
}

export const zatcaState = async (ctx: AppContext): Promise<ZatcaState> => stateOf(await storedZatcaAccount(ctx));

/** The profile fields a CSR and a stamped document need, each missing one named (JSON pointers into the company). */
const PROFILE_FIELDS: [pointer: string, value: (c: AppContext['company']) => unknown][] = [
  ['/legalName/en', (c) => c.legalName?.en],
  ['/legalName/ar', (c) => c.legalName?.ar],
  ['/vatNumber', (c) => c.vatNumber],
  ['/crNumber', (c) => c.crNumber],
  ...(['buildingNumber', 'street', 'district', 'city', 'postalCode', 'country'] as const).map(
    (k) => [`/address/${k}`, (c: AppContext['company']) => c.address?.[k]] as [string, (c: AppContext['company']) => unknown],
  ),
];

function checkProfile(ctx: AppContext): void {
  const missing = PROFILE_FIELDS.filter(([, value]) => !value(ctx.company)).map(([pointer]) => pointer);
  if (!missing.length) return;
  const details = missing.map((pointer) => ({ in: 'company', pointer, rule: 'required', message: ctx.t('zatcaProfileMissing', { field: pointer.slice(1) }) }));
  throw new AppError('VALIDATION_ERROR', details, { summary: details.map((d) => d.message).join('; ') });
}

async function baseUrlOf(ctx: AppContext, gateway: ZatcaGateway): Promise<string> {
  const { zatcaBaseUrl } = await ctx.settings.get<{ zatcaBaseUrl?: string }>();
  if (!zatcaBaseUrl) return ZATCA_BASE_URLS[gateway];
  let ok = false;
  try {
    ok = ['http:', 'https:'].includes(new URL(zatcaBaseUrl).protocol);
  } catch {
    // refused below
  }
  if (!ok) throw new AppError('VALIDATION_ERROR', [{ in: 'settings', pointer: '/zatcaBaseUrl', rule: 'format', message: ctx.t('zatcaBadBaseUrl') }], { summary: ctx.t('zatcaBadBaseUrl') });
  return zatcaBaseUrl;
}

function csrInfo(ctx: AppContext, gateway: ZatcaGateway, businessCategory: string): CsrInfo {
  const c = ctx.company;
  const a = c.address!;
  return {
    environment: gateway,
    commonName: `Diwan-${c.id}`,
    organizationName: c.legalName!.en,
    organizationUnit: c.name,
    solutionName: 'Diwan',
    model: 'invoicing',
    deviceSerial: c.id,
    vatNumber: c.vatNumber!,
    // Standard and simplified documents both: the app issues either, by the buyer.
    invoiceType: '1100',
    registeredAddress: `${a.buildingNumber} ${a.street}, ${a.district}, ${a.city} ${a.postalCode}`,
    businessCategory,
  };
}

/** A buyer for the standard samples (ZATCA's checks want one with a VAT number and an address). */
const SAMPLE_BUYER: Party = {
  name: 'شركة نموذجية | Sample Buyer Co',
  vatNumber: '399999999900003',
  address: { street: 'Prince Sultan Street', buildingNumber: '1111', district: 'Al Murooj', city: 'Jeddah', postalCode: '23512', country: 'SA' },
};

/** A sample of each document the company issues, numbered 1…6 (the caller chains and stamps them). */
function samples(ctx: AppContext, supplier: Party): Omit<ZatcaDocument, 'previousHash'>[] {
  const now = ctx.clock.iso();
  const rate = ctx.company.vatRate;
  const net = 10000;
  const tax = Math.round((net * rate) / 100);
  const body = {
    issueDate: now.slice(0, 10), issueTime: now.slice(11, 19), supplier,
    lines: [{ id: '1', name: 'خدمة نموذجية | Sample service', quantity: '1', unitPrice: net, lineExtensionAmount: net, taxCategory: 'S' as const, taxPercent: rate, taxAmount: tax }],
    taxSubtotals: [{ category: 'S' as const, percent: rate, taxableAmount: net, taxAmount: tax }],
    totals: { lineExtensionAmount: net, taxExclusiveAmount: net, taxAmount: tax, taxInclusiveAmount: net + tax, payableAmount: net + tax },
  };
  const docs: Omit<ZatcaDocument, 'counter' | 'previousHash'>[] = [];
  for (const subtype of ['standard', 'simplified'] as const) {
    const buyer = subtype === 'standard' ? { customer: SAMPLE_BUYER, deliveryDate: body.issueDate } : {};
    const invoice = `SME-${subtype[0].toUpperCase()}-1`;
    docs.push({ ...body, ...buyer, kind: 'invoice', subtype, number: invoice, uuid: randomUUID() });
    for (const kind of ['credit', 'debit'] as const) {
      docs.push({ ...body, ...buyer, kind, subtype, number: `${invoice}-${kind}`, uuid: randomUUID(), billingReference: invoice, reason: 'Sample adjustment for the compliance checks' });
    }
  }
  return docs.map((d, i) => ({ ...d, counter: i + 1 }));
}

/** The answer for a ZATCA failure at `step`: 4xx in the envelope, in the caller's language, ZATCA's messages kept. */
function failure(ctx: AppContext, step: 'compliance' | 'complianceInvoices' | 'productionCsid', f: OnboardingFailure, sample?: string): AppError {
  const stepName = ctx.t(`zatcaStep.${step}`);
  if (f.outcome === 'unavailable') {
    const reason = ctx.t('zatcaUnavailable', { step: stepName, said: f.detail });
    return new AppError('CONFLICT', [{ reason: 'zatca_unavailable', step, httpStatus: f.httpStatus }], { reason });
  }
  const said = f.messages.map((m) => `${m.code}: ${m.message}`).join('; ');
  const zatca = { step, httpStatus: f.httpStatus, messages: f.messages };
  // The compliance CSID is refused for its OTP (ZATCA's 400 "Invalid-OTP"): the caller's value at /otp.
  if (step === 'compliance' && f.messages.some((m) => /otp/i.test(`${m.code} ${m.message}`))) {
    const message = ctx.t('zatcaOtpRefused', { said });
    return new AppError('VALIDATION_ERROR', [{ in: 'body', pointer: '/otp', rule: 'zatca', message, zatca }], { summary: message });
  }
  const reason = sample ? ctx.t('zatcaComplianceFailed', { sample, said }) : ctx.t('zatcaRefused', { step: stepName, status: f.httpStatus, said });
  return new AppError('CONFLICT', [{ reason: 'zatca_refused', ...zatca, ...(sample ? { sample } : {}) }], { reason });
}

export async function onboard(ctx: AppContext, input: OnboardInput): Promise<ZatcaState> {
  checkProfile(ctx);
  const gateway = input.gateway ?? 'simulation';
  const opts = { baseUrl: await baseUrlOf(ctx, gateway), lang: ctx.lang };
  const { privateKeyPem, csrBase64 } = makeKeyAndCsr(csrInfo(ctx, gateway, input.businessCategory ?? 'Trade'));

  const compliance = await requestComplianceCsid(csrBase64, input.otp, opts);
  if (!compliance.ok) throw failure(ctx, 'compliance', compliance);

  let previousHash = INITIAL_PIH;
  const supplier = seller(ctx);
  for (const doc of samples(ctx, supplier)) {
    const signed = sign(buildXml({ ...doc, previousHash }), { privateKeyPem, certificatePem: compliance.csid.certificatePem, signingTime: new Date(ctx.clock.now()) });
    previousHash = signed.hash;
    const checked = await checkCompliance({ uuid: doc.uuid, invoiceHash: signed.hash, xml: signed.xml }, compliance.csid, opts);
    if (!checked.ok) throw failure(ctx, 'complianceInvoices', checked, `${doc.subtype} ${doc.kind}`);
  }

  const production = await requestProductionCsid(compliance.csid, opts);
  if (!production.ok) throw failure(ctx, 'productionCsid', production);
  const account: StoredZatcaAccount = {
    gateway,
    baseUrl: opts.baseUrl,
    certificatePem: production.csid.certificatePem,
    privateKeyPem,
    credentials: { binarySecurityToken: production.csid.binarySecurityToken, secret: production.csid.secret },
    onboardedAt: ctx.clock.iso(),
  };
  const state = stateOf(account);
  await ctx.transaction(async () => {
    await saveZatcaAccount(ctx, account);
    await ctx.audit.record({ action: 'onboard', resource: 'zatca', resourceId: ctx.company.id, after: state });
  });
  return state;
}
