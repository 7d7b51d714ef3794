// Submission to ZATCA (issue 27, part 8): the client (apps-installed/invoicing/zatca/submit.ts)
// against the local stand-in (test/zatca-stand-in.ts), every answer ZATCA's API gives: accepted,
// accepted with warnings, cleared with the cleared XML, rejected with ZATCA's messages, a refused
// CSID, a server fault, a rate limit, a time-out, and the duplicate answers that make a
// resubmission safe.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answer, outcomeOf, submit, submitInvoice, submissionRequest, ZATCA_BASE_URLS } from '../apps-installed/invoicing/zatca/index.ts';
import { clearedOf, REJECTION, startZatcaStandIn, WARNING, type StandIn } from './zatca-stand-in.ts';
import { CSID, issuedDocument } from './zatca-submission-kit.ts';

describe('submitting to ZATCA (the client against the stand-in)', () => {
  let zatca: StandIn;
  const opts = () => ({ baseUrl: zatca.url, credentials: CSID, lang: 'ar' as const, timeoutMs: 2000 });

  beforeAll(async () => {
    zatca = await startZatcaStandIn(CSID);
  });
  afterAll(async () => {
    await zatca.close();
  });

  it('names ZATCA’s three gateways', () => {
    expect(ZATCA_BASE_URLS).toEqual({
      sandbox: 'https://gw-fatoora.zatca.gov.sa/e-invoicing/developer-portal',
      simulation: 'https://gw-fatoora.zatca.gov.sa/e-invoicing/simulation',
      production: 'https://gw-fatoora.zatca.gov.sa/e-invoicing/core',
    });
    const r = submissionRequest('reporting', { uuid: 'u', invoiceHash: 'h', xml: '<x/>' }, { baseUrl: `${ZATCA_BASE_URLS.simulation}/`, credentials: CSID });
    expect(r.url).toBe('https://gw-fatoora.zatca.gov.sa/e-invoicing/simulation/invoices/reporting/single');
  });

  it('reports a simplified invoice: 200 REPORTED, sent as ZATCA’s API asks', async () => {
    const doc = issuedDocument('simplified');
    const result = await submitInvoice('simplified', doc, opts());
    expect(result).toEqual({ outcome: 'accepted', mode: 'reporting', status: 'REPORTED', httpStatus: 200, duplicate: false, warnings: [], info: [expect.objectContaining({ code: 'XSD_ZATCA_VALID' })] });
    const [sent] = zatca.submissionsOf(doc.uuid);
    expect(sent.mode).toBe('reporting');
    expect(sent.headers).toMatchObject({
      'accept-version': 'V2', 'accept-language': 'ar', 'content-type': 'application/json', 'clearance-status': '0',
      authorization: `Basic ${Buffer.from(`${CSID.binarySecurityToken}:${CSID.secret}`).toString('base64')}`,
    });
    expect(Object.keys(sent.body).sort()).toEqual(['invoice', 'invoiceHash', 'uuid']);
    expect(sent.body).toMatchObject({ uuid: doc.uuid, invoiceHash: doc.invoiceHash });
    expect(sent.xml).toBe(doc.xml);
  });

  it('clears a standard invoice: 200 CLEARED with the cleared XML, asked with Clearance-Status: 1', async () => {
    const doc = issuedDocument('standard');
    const result = await submitInvoice('standard', doc, opts());
    expect(result).toMatchObject({ outcome: 'accepted', mode: 'clearance', status: 'CLEARED', httpStatus: 200, duplicate: false, warnings: [] });
    expect(result.outcome === 'accepted' && result.clearedXml).toBe(clearedOf(doc.xml));
    const [sent] = zatca.submissionsOf(doc.uuid);
    expect([sent.mode, sent.headers['clearance-status']]).toEqual(['clearance', '1']);
  });

  it('accepts with warnings on a 202, keeping ZATCA’s messages', async () => {
    zatca.next('warn', 'warn');
    const simplified = await submitInvoice('simplified', issuedDocument('simplified'), opts());
    expect(simplified).toMatchObject({ outcome: 'accepted', status: 'REPORTED', httpStatus: 202, warnings: [WARNING] });
    const standard = await submitInvoice('standard', issuedDocument('standard'), opts());
    expect(standard).toMatchObject({ outcome: 'accepted', status: 'CLEARED', httpStatus: 202, warnings: [WARNING] });
  });

  it('is rejected on a 400 with every one of ZATCA’s error messages, for either mode', async () => {
    zatca.next('reject', 'reject');
    expect(await submitInvoice('simplified', issuedDocument('simplified'), opts())).toEqual({ outcome: 'rejected', mode: 'reporting', httpStatus: 400, errors: REJECTION, warnings: [] });
    expect(await submitInvoice('standard', issuedDocument('standard'), opts())).toMatchObject({ outcome: 'rejected', mode: 'clearance', errors: REJECTION });
  });

  it('is rejected when the hash or the uuid sent is not the document’s (the stand-in checks them as ZATCA does)', async () => {
    const doc = issuedDocument('simplified');
    const other = issuedDocument('simplified');
    const result = await submit('reporting', { ...doc, invoiceHash: other.invoiceHash, uuid: other.uuid }, opts());
    expect(result.outcome).toBe('rejected');
    expect(result.outcome === 'rejected' && result.errors.map((e) => e.code)).toEqual(['invalid-invoice-hash', 'invalid-uuid']);
  });

  it('tells a refused CSID (401) apart', async () => {
    const result = await submitInvoice('simplified', issuedDocument('simplified'), { ...opts(), credentials: { ...CSID, secret: 'not the secret' } });
    expect(result).toMatchObject({ outcome: 'unauthorized', httpStatus: 401 });
  });

  it('says to try again on a 5xx, a 429 (with its Retry-After) and a time-out', async () => {
    zatca.next('error500', 'busy429', 'timeout');
    expect(await submitInvoice('simplified', issuedDocument('simplified'), opts())).toMatchObject({ outcome: 'retry', reason: 'server_error', httpStatus: 500, retryAfterMs: null });
    expect(await submitInvoice('standard', issuedDocument('standard'), opts())).toMatchObject({ outcome: 'retry', reason: 'rate_limited', httpStatus: 429, retryAfterMs: 7000 });
    const started = Date.now();
    const timedOut = await submitInvoice('simplified', issuedDocument('simplified'), { ...opts(), timeoutMs: 300 });
    expect(timedOut).toEqual({ outcome: 'retry', mode: 'reporting', httpStatus: null, reason: 'timeout', retryAfterMs: null, detail: 'no answer from ZATCA within 300 ms' });
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('stops when its caller’s signal aborts (a job whose time is up), and says so as a time-out', async () => {
    zatca.next('timeout');
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 100);
    expect(await submitInvoice('simplified', issuedDocument('simplified'), { ...opts(), signal: abort.signal })).toMatchObject({ outcome: 'retry', reason: 'timeout' });
  });

  it('counts a resubmission ZATCA already has as accepted: 409 for reporting, 208 with the cleared XML for clearance', async () => {
    const simplified = issuedDocument('simplified');
    zatca.next('hold');
    expect(await submitInvoice('simplified', simplified, { ...opts(), timeoutMs: 300 })).toMatchObject({ outcome: 'retry', reason: 'timeout' });
    expect(await submitInvoice('simplified', simplified, opts())).toMatchObject({ outcome: 'accepted', status: 'REPORTED', httpStatus: 409, duplicate: true });

    const standard = issuedDocument('standard');
    expect(await submitInvoice('standard', standard, opts())).toMatchObject({ outcome: 'accepted', duplicate: false });
    const again = await submitInvoice('standard', standard, opts());
    expect(again).toMatchObject({ outcome: 'accepted', status: 'CLEARED', httpStatus: 208, duplicate: true, warnings: [expect.objectContaining({ category: 'Duplicate-Invoice' })] });
    expect(again.outcome === 'accepted' && again.clearedXml).toBe(clearedOf(standard.xml));
  });

  it('tells what each answer means for the invoice: its zatcaStatus and messages, or a retry', () => {
    expect(outcomeOf(answer('reporting', 409, JSON.stringify({ message: 'Invoice Hash Previously Submitted', reportingStatus: 'REPORTED_SUCCESSFULLY_EARLIER' }))))
      .toEqual({ settled: true, zatcaStatus: 'reported', messages: [], duplicate: true });
    const cleared = answer('clearance', 202, JSON.stringify({ validationResults: { warningMessages: [WARNING], errorMessages: [], status: 'WARNING' }, clearanceStatus: 'CLEARED', clearedInvoice: Buffer.from('<Invoice/>').toString('base64') }));
    expect(outcomeOf(cleared)).toEqual({ settled: true, zatcaStatus: 'cleared', messages: [`${WARNING.code}: ${WARNING.message}`], clearedXml: '<Invoice/>', duplicate: false });
    const rejected = answer('reporting', 400, JSON.stringify({ validationResults: { warningMessages: [WARNING], errorMessages: REJECTION, status: 'ERROR' }, reportingStatus: 'NOT_REPORTED' }));
    expect(outcomeOf(rejected)).toEqual({ settled: true, zatcaStatus: 'rejected', messages: [...REJECTION, WARNING].map((m) => `${m.code}: ${m.message}`), duplicate: false });
    expect(outcomeOf(answer('reporting', 503, '', '30'))).toEqual({ settled: false, retry: 'ZATCA retry: ZATCA answered 503' });
    expect(outcomeOf(answer('clearance', 401, ''))).toEqual({ settled: false, retry: 'ZATCA unauthorized: ZATCA refused the CSID' });
    expect(answer('clearance', 303, '')).toMatchObject({ outcome: 'clearance_off' });
    expect(answer('reporting', 503, '', '30')).toMatchObject({ retryAfterMs: 30_000, reason: 'server_error' });
  });

  it('says a network failure is one to retry', async () => {
    const closed = await startZatcaStandIn(CSID);
    const url = closed.url;
    await closed.close();
    expect(await submitInvoice('simplified', issuedDocument('simplified'), { ...opts(), baseUrl: url })).toMatchObject({ outcome: 'retry', reason: 'network', httpStatus: null });
  });
});
