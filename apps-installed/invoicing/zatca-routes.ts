// The company's onboarding with ZATCA over the API: POST /company/zatca/onboard (the Owner, with
// the OTP from the Fatoora portal) and GET /company/zatca (its state, never a secret). The
// onboarding code (zatca/, its libraries) loads with the first call.
import { route } from 'diwan/sdk';

const onboarding = () => import('./zatca-onboarding.ts');

const certificate = {
  type: 'object',
  additionalProperties: false,
  required: ['subject', 'issuer', 'serialNumber', 'validFrom', 'validTo'],
  properties: {
    subject: { type: 'string', description: "The certificate's subject (C, OU, O, CN), as ZATCA issued it" },
    issuer: { type: 'string', description: "ZATCA's issuing CA" },
    serialNumber: { type: 'string', description: 'Decimal' },
    validFrom: { type: 'string', format: 'date-time' },
    validTo: { type: 'string', format: 'date-time' },
  },
} as const;

const state = {
  type: 'object',
  additionalProperties: false,
  required: ['onboarded'],
  properties: {
    onboarded: { type: 'boolean', description: 'Whether issued documents are stamped (QR tags 1–9) with the company’s key' },
    gateway: { type: 'string', enum: ['sandbox', 'simulation', 'production'] },
    baseUrl: { type: 'string', description: "Where ZATCA's API was reached" },
    onboardedAt: { type: 'string', format: 'date-time' },
    certificate,
  },
} as const;

const answer = { type: 'object', additionalProperties: false, required: ['data'], properties: { data: state } } as const;

export const zatcaRoutes = [
  route({
    method: 'GET',
    url: '/company/zatca',
    permission: 'company:read',
    summary: "The company's onboarding with ZATCA: the gateway and the certificate that stamps its documents (never a key or secret)",
    schema: { response: { 200: answer } },
    handler: async (_req, ctx) => ({ body: { data: await (await onboarding()).zatcaState(ctx) } }),
  }),
  route({
    method: 'POST',
    url: '/company/zatca/onboard',
    permission: 'zatca:onboard',
    summary: 'Onboard the company with ZATCA: key, CSR, compliance CSID, compliance checks, production CSID',
    description:
      "Makes a secp256k1 key and a CSR from the company's profile (legal name, VAT and CR numbers, national address: every missing field is listed as VALIDATION_ERROR), " +
      'asks ZATCA for a compliance CSID with the OTP from the Fatoora portal (a refused OTP: VALIDATION_ERROR at /otp), passes the compliance checks with a stamped ' +
      'sample of each document (standard and simplified invoices, credit and debit notes), then asks for the production CSID. Only then are the key, the certificate ' +
      'and the CSID kept, sealed; from then on every issued document is stamped and its QR carries tags 1–9. ZATCA refusing a step: CONFLICT (reason zatca_refused) with its messages; ' +
      'ZATCA not answering (a 5xx, a time-out): CONFLICT with reason zatca_unavailable, nothing kept, try again. The gateway is reached at ZATCA’s URL for it, or at the app setting zatcaBaseUrl when set. Onboarding ' +
      'again replaces the account (documents stamped before keep their certificate).',
    errors: ['CONFLICT'],
    schema: {
      body: {
        type: 'object',
        additionalProperties: false,
        required: ['otp'],
        properties: {
          otp: { type: 'string', pattern: '^[0-9]{4,10}$', description: 'The one-time password the Fatoora portal gave for this unit' },
          gateway: { type: 'string', enum: ['sandbox', 'simulation', 'production'], default: 'simulation', description: "ZATCA's developer portal, simulation or production" },
          businessCategory: { type: 'string', minLength: 1, maxLength: 100, description: "The CSR's business category (the branch's industry); Trade when omitted" },
        },
      },
      response: { 200: answer },
    },
    handler: async (req, ctx) => ({ body: { data: await (await onboarding()).onboard(ctx, req.body) } }),
  }),
];
