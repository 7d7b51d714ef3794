/**
 * ZATCA (Fatoora) e-invoices, as a pure module: the UBL 2.1 XML, the invoice hash and its chain,
 * the XAdES stamp, the QR payload and the onboarding key and CSR. It imports nothing from the host;
 * the invoicing app stores numbers, hashes, keys and certificates and calls these functions.
 *
 * Issuing a document:
 *   const xml = buildXml(doc)                       // doc.previousHash = the last document's hash, or INITIAL_PIH
 *   const { xml, hash, qr } = sign(xml, { privateKeyPem, certificatePem, signingTime })   // once onboarded
 *   // or, before onboarding: hash = invoiceHash(xml), qr from the XML's QR reference (tags 1–5)
 */
export type * from './types.ts';
export { buildXml, qrFieldsOf } from './build-xml.ts';
export { invoiceHash, canonicalForHash, qrOfXml, INITIAL_PIH } from './invoice-hash.ts';
export { sign, stamp, signHash, type SignOptions, type StampOptions, type Signed } from './sign.ts';
export { qr, parseQr, type QrFields } from './qr.ts';
export { makeKeyAndCsr, csrFor, CERTIFICATE_TEMPLATE, type CsrInfo, type KeyAndCsr, type ZatcaEnvironment } from './csr.ts';
export { readCsr, type CsrContents } from './csr-read.ts';
export { readCertificate, certificateFromSecurityToken, pemBody, type SigningCertificate } from './certificate.ts';
export { makeTestCa, issueCertificate, type TestCa } from './test-ca.ts';
export { formatAmount } from './amounts.ts';
export {
  submit, submitInvoice, submissionRequest, answer, modeOf, outcomeOf, ZATCA_BASE_URLS,
  type SubmissionOutcome, type SubmissionMode, type SubmissionDocument, type SubmissionResult, type SubmitOptions, type ZatcaMessage, type ZatcaGateway,
} from './submit.ts';
export {
  requestComplianceCsid, checkCompliance, requestProductionCsid,
  type Csid, type OnboardingMessage, type OnboardingFailure, type OnboardingResult, type OnboardingOptions, type ComplianceDocument,
} from './onboarding-api.ts';
