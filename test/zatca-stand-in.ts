// A local stand-in for ZATCA's Fatoora invoice API (node:http on 127.0.0.1, a free port), for
// the tests of submission (apps-installed/invoicing/zatca/submit.ts). It checks each request as
// ZATCA does what it can check without ZATCA's rules engine: the path, `Accept-Version: V2`,
// `Clearance-Status` (1 for clearance), Basic auth with the CSID's token and secret (401
// otherwise), a JSON body `{ invoiceHash, uuid, invoice }` whose base64 XML hashes to
// `invoiceHash` and carries `uuid` (400 with ZATCA's message otherwise). It remembers what it
// accepted, and answers a resubmission as ZATCA does: 409 `REPORTED_SUCCESSFULLY_EARLIER` for
// reporting, 208 with a duplicate warning (and the cleared XML) for clearance. It also onboards
// (test/zatca-stand-in-onboarding.ts: compliance CSID, compliance checks, production CSID), and
// the production CSIDs it issues are accepted beside `credentials`.
//
// What each accepted-looking request gets is scripted, one answer per request in order
// (`next(...)`), `accept` when none is left:
//   accept     200, CLEARED with the cleared XML (`clearedOf`) / REPORTED
//   warn       202, the same with a warning (BR-KSA-08: the seller's identification)
//   reject     400, NOT_CLEARED / NOT_REPORTED with two of ZATCA's error messages
//   error500   500, as ZATCA's gateway answers a fault
//   busy429    429 with Retry-After: 7
//   clearanceOff  303 to a clearance (ZATCA has clearance switched off: report it instead)
//   timeout    never answers (the request is not processed either)
//   hold       processes the document (it is cleared/reported) and never answers: the caller
//              cannot know; a resubmission is then a duplicate
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { invoiceHash, parseQr, qr, qrOfXml } from '../apps-installed/invoicing/zatca/index.ts';
import { onboardingStandIn, type OnboardingStandIn } from './zatca-stand-in-onboarding.ts';

export type Answer = 'accept' | 'warn' | 'reject' | 'error500' | 'busy429' | 'clearanceOff' | 'timeout' | 'hold';

/**
 * The XML as the stand-in clears it: ZATCA puts its own stamp and QR on a cleared document, so
 * the stand-in gives the QR another signature (tag 7) and marks the XML, for a test to tell the
 * two apart.
 */
export const clearedOf = (xml: string) => {
  const given = qrOfXml(xml);
  const stamped = given ? xml.replace(`>${given}<`, `>${clearedQr(given)}<`) : xml;
  return `${stamped}\n<!-- cleared by the ZATCA stand-in -->`;
};

/** The QR the stand-in's clearance gives a document's QR. */
export const clearedQr = (given: string) => qr({ ...parseQr(given), signature: 'stamped by the ZATCA stand-in' });
const cleared = (invoice: string) => Buffer.from(clearedOf(Buffer.from(invoice, 'base64').toString('utf8')), 'utf8').toString('base64');

export interface Received {
  mode: 'clearance' | 'reporting' | 'unknown';
  headers: http.IncomingHttpHeaders;
  body: { invoiceHash?: string; uuid?: string; invoice?: string };
  /** The decoded XML. */
  xml: string;
  /** What it answered (status), or null for a request it never answered. */
  status: number | null;
}

export interface StandIn {
  url: string;
  credentials: { binarySecurityToken: string; secret: string };
  received: Received[];
  /** The onboarding endpoints' state: the OTP they accept, the CSIDs issued, the compliance checks seen. */
  onboarding: OnboardingStandIn;
  /** Scripts the answers of the next requests that pass the checks. */
  next(...answers: Answer[]): void;
  /** Requests carrying a uuid. */
  submissionsOf(uuid: string): Received[];
  /** Resolves once `n` requests have arrived. */
  waitForRequests(n: number, ms?: number): Promise<void>;
  close(): Promise<void>;
}

const msg = (type: 'INFO' | 'WARNING' | 'ERROR', code: string, category: string, message: string) => ({ type, code, category, message, status: type === 'INFO' ? 'PASS' : type });
const XSD_OK = msg('INFO', 'XSD_ZATCA_VALID', 'XSD validation', 'Complied with UBL 2.1 standards in line with ZATCA specifications');

export const REJECTION = [
  msg('ERROR', 'BR-KSA-37', 'KSA', 'The seller address building number must contain 4 digits.'),
  msg('ERROR', 'BR-CO-15', 'EN', 'Invoice total amount with VAT (BT-112) = Invoice total amount without VAT (BT-109) + Invoice total VAT amount (BT-110).'),
];
export const WARNING = msg('WARNING', 'BR-KSA-08', 'KSA', 'The seller identification (BT-29) should be present with a scheme ID of CRN, MOM, MLS, SAG, OTH or 700.');

export async function startZatcaStandIn(credentials = { binarySecurityToken: Buffer.from('stand-in CSID certificate').toString('base64'), secret: 'stand-in secret' }): Promise<StandIn> {
  const received: Received[] = [];
  const script: Answer[] = [];
  /** What was cleared or reported: uuid → hash. */
  const done = new Map<string, string>();
  const waiting = new Set<() => void>();
  const held = new Set<http.ServerResponse>();
  const expected = `Basic ${Buffer.from(`${credentials.binarySecurityToken}:${credentials.secret}`).toString('base64')}`;
  const onboarding = onboardingStandIn();

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const mode = req.url === '/invoices/clearance/single' ? 'clearance' : req.url === '/invoices/reporting/single' ? 'reporting' : 'unknown';
      let body: Received['body'] = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        // checked below
      }
      if (req.method === 'POST' && onboarding.handle(req.url, req.headers, body, (status, data) => res.writeHead(status, { 'content-type': 'application/json' }).end(data === undefined ? '' : JSON.stringify(data)))) return;
      const xml = typeof body.invoice === 'string' ? Buffer.from(body.invoice, 'base64').toString('utf8') : '';
      const r: Received = { mode, headers: req.headers, body, xml, status: null };
      received.push(r);
      waiting.forEach((w) => w());
      const send = (status: number, data?: unknown, headers: Record<string, string> = {}) => {
        r.status = status;
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(data === undefined ? '' : JSON.stringify(data));
      };
      const statusKey = mode === 'clearance' ? 'clearanceStatus' : 'reportingStatus';
      const refuse = (errors: ReturnType<typeof msg>[]) =>
        send(400, { validationResults: { infoMessages: [], warningMessages: [], errorMessages: errors, status: 'ERROR' }, [statusKey]: mode === 'clearance' ? 'NOT_CLEARED' : 'NOT_REPORTED', ...(mode === 'clearance' ? { clearedInvoice: null } : {}) });

      if (req.method !== 'POST' || mode === 'unknown') return send(404, { message: 'no such resource' });
      if (req.headers.authorization !== expected && !onboarding.accepts(req.headers.authorization)) return send(401, undefined);
      if (req.headers['accept-version'] !== 'V2') return send(400, { code: 'Invalid-Request', message: 'Accept-Version must be V2' });
      if (mode === 'clearance' && req.headers['clearance-status'] !== '1') return send(400, { code: 'Invalid-Request', message: 'Clearance-Status must be 1 for clearance' });
      if (!body.invoiceHash || !body.uuid || !xml) return send(400, { code: 'Invalid-Request', message: 'invoiceHash, uuid and invoice are required' });
      const problems: ReturnType<typeof msg>[] = [];
      let hash = '';
      try {
        hash = invoiceHash(xml);
      } catch {
        problems.push(msg('ERROR', 'XSD_ZATCA_INVALID', 'XSD validation', 'The invoice is not well-formed XML.'));
      }
      if (hash && hash !== body.invoiceHash) problems.push(msg('ERROR', 'invalid-invoice-hash', 'INVOICE_HASHING_ERRORS', 'The invoice hash API body does not match the (calculated) Hash of the XML'));
      if (!xml.includes(`<cbc:UUID>${body.uuid}</cbc:UUID>`)) problems.push(msg('ERROR', 'invalid-uuid', 'KSA', 'The UUID in the API body does not match the UUID of the invoice'));
      if (problems.length) return refuse(problems);

      // A document already cleared or reported: a duplicate, whatever the script says.
      if (done.get(body.uuid) === body.invoiceHash) {
        const dup = msg('WARNING', 'Invoice-Warning', 'Duplicate-Invoice', 'Invoice Hash Previously submitted.');
        return mode === 'clearance'
          ? send(208, { validationResults: { infoMessages: [XSD_OK], warningMessages: [dup], errorMessages: [], status: 'WARNING' }, clearanceStatus: 'CLEARED', clearedInvoice: cleared(body.invoice!) })
          : send(409, { message: 'Invoice Hash Previously Submitted', reportingStatus: 'REPORTED_SUCCESSFULLY_EARLIER' });
      }
      const answer = script.shift() ?? 'accept';
      const accepted = (status: number, warnings: ReturnType<typeof msg>[]) => {
        done.set(body.uuid!, body.invoiceHash!);
        send(status, {
          validationResults: { infoMessages: [XSD_OK], warningMessages: warnings, errorMessages: [], status: warnings.length ? 'WARNING' : 'PASS' },
          ...(mode === 'clearance' ? { clearanceStatus: 'CLEARED', clearedInvoice: cleared(body.invoice!) } : { reportingStatus: 'REPORTED' }),
        });
      };
      switch (answer) {
        case 'accept': return accepted(200, []);
        case 'warn': return accepted(202, [WARNING]);
        case 'reject': return refuse(REJECTION);
        case 'error500': return send(500, { code: 'Internal-Server-Error', message: 'Something went wrong, please try again later' });
        case 'busy429': return send(429, { message: 'Too many requests' }, { 'retry-after': '7' });
        case 'clearanceOff': return mode === 'clearance' ? send(303, { message: 'Clearance is deactivated: submit the invoice to /invoices/reporting/single' }) : accepted(200, []);
        case 'hold':
          done.set(body.uuid, body.invoiceHash);
          held.add(res);
          return;
        case 'timeout':
          held.add(res);
          return;
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url, credentials, received, onboarding,
    next: (...answers) => script.push(...answers),
    submissionsOf: (uuid) => received.filter((r) => r.body.uuid === uuid),
    waitForRequests: (n, ms = 30_000) => new Promise((resolve, reject) => {
      const until = Date.now() + ms;
      const look = () => {
        if (received.length >= n) return (waiting.delete(look), clearInterval(t), resolve());
        if (Date.now() > until) return (waiting.delete(look), clearInterval(t), reject(new Error(`the stand-in received ${received.length} of ${n} requests`)));
      };
      const t = setInterval(look, 50);
      waiting.add(look);
      look();
    }),
    async close() {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
