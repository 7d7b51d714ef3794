// The onboarding half of the ZATCA stand-in (test/zatca-stand-in.ts serves it beside submission):
// ZATCA's compliance CSID, compliance checks and production CSID, answering as its published API
// does, with real certificates from a local CA (apps-installed/invoicing/zatca/test-ca.ts):
//   POST /compliance            `OTP` header (400 Invalid-OTP unless it is the OTP the portal
//                               "gave": `otp`, used once), `{ csr }` (base64 PEM; 400 Invalid-CSR
//                               if its signature does not verify) → requestID, the certificate
//                               for the CSR as binarySecurityToken, a secret
//   POST /compliance/invoices   Basic auth with a compliance CSID (401 otherwise); the XML must
//                               hash to invoiceHash, carry uuid, the seller's VAT number must be
//                               the CSR's, and its stamp must verify with that CSID's certificate
//                               (400 with ZATCA-like messages otherwise; `refuse` names kinds to
//                               refuse besides) → PASS, REPORTED/CLEARED
//   POST /production/csids      Basic auth with the compliance CSID, `{ compliance_request_id }`
//                               of it; refused (400) until a sample of each kind the CSR's title
//                               names passed → the production CSID (a new certificate for the
//                               same key), which the submission endpoints then accept.
import { createVerify, randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { invoiceHash, issueCertificate, makeTestCa, pemBody, readCertificate, readCsr, type TestCa } from '../apps-installed/invoicing/zatca/index.ts';

const UID = '0.9.2342.19200300.100.1.1';
const TITLE = '2.5.4.12';

export interface IssuedCsid {
  requestId: string;
  binarySecurityToken: string;
  secret: string;
  certificatePem: string;
  csrPem: string;
}

export interface ComplianceCheck {
  /** e.g. "388 0100000". */
  kind: string;
  status: number;
  errors: string[];
}

export interface OnboardingStandIn {
  ca: TestCa;
  /** The OTP the stand-in accepts next (the portal's); each is used once. */
  otp: string;
  /** Kinds ("381 0200000") whose compliance checks are refused (BR-KSA-37), as a profile ZATCA finds wrong would be. */
  refuse: Set<string>;
  compliance: IssuedCsid[];
  checks: ComplianceCheck[];
  production: IssuedCsid[];
}

type Send = (status: number, data?: unknown) => void;

const msg = (code: string, message: string) => ({ type: 'ERROR', code, category: 'KSA', message, status: 'ERROR' });

function issue(csrPem: string, ca: TestCa): IssuedCsid {
  const certificatePem = issueCertificate(csrPem, ca);
  return {
    requestId: String(1_000_000_000_000 + Math.floor(Math.random() * 1e12)),
    binarySecurityToken: Buffer.from(pemBody(certificatePem)).toString('base64'),
    secret: randomBytes(24).toString('base64'),
    certificatePem,
    csrPem,
  };
}

const basicOf = (c: { binarySecurityToken: string; secret: string }) => `Basic ${Buffer.from(`${c.binarySecurityToken}:${c.secret}`).toString('base64')}`;

/** The document kinds the CSR's title asks for: standard (1xxx) and/or simplified (x1xx), each as invoice, credit and debit note. */
function kindsOf(title: string): string[] {
  const subtypes = [title[0] === '1' ? '0100000' : '', title[1] === '1' ? '0200000' : ''].filter(Boolean);
  return subtypes.flatMap((s) => ['388', '381', '383'].map((code) => `${code} ${s}`));
}

export function onboardingStandIn(otp = '123345'): OnboardingStandIn & {
  /** Answers an onboarding request; false when the path is not one of them. */
  handle(url: string | undefined, headers: Record<string, string | string[] | undefined>, body: Record<string, unknown>, send: Send): boolean;
  /** Whether `authorization` is a production CSID this stand-in issued. */
  accepts(authorization: string | undefined): boolean;
} {
  const s: OnboardingStandIn = { ca: makeTestCa(), otp, refuse: new Set(), compliance: [], checks: [], production: [] };
  const passed = new Map<string, Set<string>>();
  const complianceBy = (authorization: unknown) => s.compliance.find((c) => basicOf(c) === authorization);

  function compliance(headers: Record<string, unknown>, body: Record<string, unknown>, send: Send): void {
    if (!headers.otp || headers.otp !== s.otp) return send(400, { code: 'Invalid-OTP', message: 'The provided OTP is invalid' });
    let csrPem = '';
    try {
      csrPem = Buffer.from(String(body.csr ?? ''), 'base64').toString('utf8');
      if (!readCsr(csrPem).signatureValid) throw new Error('signature');
    } catch {
      return send(400, { code: 'Invalid-CSR', message: 'The provided CSR is invalid' });
    }
    s.otp = `used-${randomUUID()}`;
    const csid = issue(csrPem, s.ca);
    s.compliance.push(csid);
    send(200, { requestID: Number(csid.requestId), dispositionMessage: 'ISSUED', binarySecurityToken: csid.binarySecurityToken, secret: csid.secret, errors: null });
  }

  function check(headers: Record<string, unknown>, body: Record<string, unknown>, send: Send): void {
    const csid = complianceBy(headers.authorization);
    if (!csid) return send(401, undefined);
    const xml = typeof body.invoice === 'string' ? Buffer.from(body.invoice, 'base64').toString('utf8') : '';
    const code = /<cbc:InvoiceTypeCode name="(\d{7})">(\d{3})</.exec(xml);
    const kind = code ? `${code[2]} ${code[1]}` : 'unknown';
    const errors: ReturnType<typeof msg>[] = [];
    let hash = '';
    try {
      hash = invoiceHash(xml);
    } catch {
      errors.push(msg('XSD_ZATCA_INVALID', 'The invoice is not well-formed XML.'));
    }
    if (hash && hash !== body.invoiceHash) errors.push(msg('invalid-invoice-hash', 'The invoice hash API body does not match the (calculated) Hash of the XML'));
    if (!xml.includes(`<cbc:UUID>${String(body.uuid)}</cbc:UUID>`)) errors.push(msg('invalid-uuid', 'The UUID in the API body does not match the UUID of the invoice'));
    const csr = readCsr(csid.csrPem);
    const sellerVat = /<cac:AccountingSupplierParty>[\s\S]*?<cbc:CompanyID>(\d+)<\/cbc:CompanyID>/.exec(xml)?.[1];
    if (sellerVat !== csr.alternativeName[UID]) errors.push(msg('certificate-permissions', 'User only allowed to use the vat number that exists in the authentication certificate'));
    const signature = /<ds:SignatureValue>([^<]+)</.exec(xml)?.[1];
    const certificate = /<ds:X509Certificate>([^<]+)</.exec(xml)?.[1];
    const verified = !!signature && !!hash && certificate === pemBody(csid.certificatePem)
      && createVerify('sha256').update(Buffer.from(hash, 'base64')).verify(readCertificate(csid.certificatePem).x509.publicKey, Buffer.from(signature, 'base64'));
    if (!verified) errors.push(msg('signature-verification', 'The invoice signature does not verify with the certificate of the compliance CSID'));
    if (s.refuse.has(kind)) errors.push(msg('BR-KSA-37', 'The seller address building number must contain 4 digits.'));
    s.checks.push({ kind, status: errors.length ? 400 : 200, errors: errors.map((e) => e.code) });
    const simplified = code?.[1].startsWith('02');
    const statusKey = simplified ? 'reportingStatus' : 'clearanceStatus';
    if (errors.length) return send(400, { validationResults: { infoMessages: [], warningMessages: [], errorMessages: errors, status: 'ERROR' }, [statusKey]: simplified ? 'NOT_REPORTED' : 'NOT_CLEARED' });
    if (!passed.has(csid.requestId)) passed.set(csid.requestId, new Set());
    passed.get(csid.requestId)!.add(kind);
    send(200, { validationResults: { infoMessages: [], warningMessages: [], errorMessages: [], status: 'PASS' }, [statusKey]: simplified ? 'REPORTED' : 'CLEARED' });
  }

  function production(headers: Record<string, unknown>, body: Record<string, unknown>, send: Send): void {
    const csid = complianceBy(headers.authorization);
    if (!csid) return send(401, undefined);
    if (String(body.compliance_request_id) !== csid.requestId) return send(400, { code: 'Invalid-Request-ID', message: 'The compliance request ID does not belong to this CSID' });
    const missing = kindsOf(readCsr(csid.csrPem).alternativeName[TITLE] ?? '').filter((k) => !passed.get(csid.requestId)?.has(k));
    if (missing.length) return send(400, { code: 'Missing-Compliance-Steps', message: `The compliance steps are not complete: ${missing.join(', ')}` });
    const issued = issue(csid.csrPem, s.ca);
    s.production.push(issued);
    send(200, { requestID: Number(issued.requestId), tokenType: 'http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-x509-token-profile-1.0#X509v3', dispositionMessage: 'ISSUED', binarySecurityToken: issued.binarySecurityToken, secret: issued.secret });
  }

  return Object.assign(s, {
    handle(url: string | undefined, headers: Record<string, string | string[] | undefined>, body: Record<string, unknown>, send: Send): boolean {
      const route = url === '/compliance' ? compliance : url === '/compliance/invoices' ? check : url === '/production/csids' ? production : undefined;
      if (!route) return false;
      if (headers['accept-version'] !== 'V2') send(400, { code: 'Invalid-Request', message: 'Accept-Version must be V2' });
      else route(headers, body, send);
      return true;
    },
    accepts: (authorization: string | undefined) => s.production.some((c) => basicOf(c) === authorization),
  });
}

/** A loopback URL nothing listens on (a port just freed): ZATCA unreachable. */
export async function closedPort(): Promise<string> {
  const server = http.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise((r) => server.close(r));
  return `http://127.0.0.1:${port}`;
}
