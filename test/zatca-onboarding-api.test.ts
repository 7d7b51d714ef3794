// ZATCA's onboarding API client (apps-installed/invoicing/zatca/onboarding-api.ts) against a local
// server answering each request as scripted: the headers and bodies it sends, ZATCA's refusals
// in each of the shapes its gateways use, and what counts as ZATCA being unavailable.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedPort } from './zatca-stand-in-onboarding.ts';
import { checkCompliance, issueCertificate, makeKeyAndCsr, makeTestCa, pemBody, requestComplianceCsid, requestProductionCsid, type Csid } from '../apps-installed/invoicing/zatca/index.ts';

type Answer = { status: number; body?: unknown; delayMs?: number };

describe("ZATCA's onboarding API client", () => {
  let server: http.Server;
  let baseUrl: string;
  const answers: Answer[] = [];
  const seen: { url: string; headers: http.IncomingHttpHeaders; body: Record<string, unknown> }[] = [];
  const { csrPem, csrBase64 } = makeKeyAndCsr({
    environment: 'simulation', commonName: 'Diwan-test', organizationName: 'Riyadh Trading Co.', organizationUnit: 'Riyadh', solutionName: 'Diwan', model: 'invoicing',
    deviceSerial: 'co_1', vatNumber: '310122393500003', invoiceType: '1100', registeredAddress: '1234 King Fahd Road', businessCategory: 'Trade',
  });
  const certificate = issueCertificate(csrPem, makeTestCa());
  const token = Buffer.from(pemBody(certificate)).toString('base64');
  const csid: Csid = { requestId: '1234567890123', binarySecurityToken: token, secret: 's3cret', certificatePem: certificate };

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let text = '';
      req.on('data', (c) => (text += c));
      req.on('end', () => {
        seen.push({ url: req.url!, headers: req.headers, body: JSON.parse(text) });
        const a = answers.shift() ?? { status: 500 };
        setTimeout(() => res.writeHead(a.status, { 'content-type': 'application/json' }).end(a.body === undefined ? '' : JSON.stringify(a.body)), a.delayMs ?? 0);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });

  it('asks for the compliance CSID with the OTP header and the CSR, and reads the certificate the token carries', async () => {
    answers.push({ status: 200, body: { requestID: 1234567890123, dispositionMessage: 'ISSUED', binarySecurityToken: token, secret: 's3cret', errors: null } });
    const r = await requestComplianceCsid(csrBase64, '123345', { baseUrl, lang: 'ar' });
    expect(r).toEqual({ ok: true, csid });
    expect(seen.at(-1)).toMatchObject({ url: '/compliance', headers: { otp: '123345', 'accept-version': 'V2', 'accept-language': 'ar', 'content-type': 'application/json' }, body: { csr: csrBase64 } });
  });

  it("reads ZATCA's refusals in each shape: { code, message }, { errors: [...] } of objects or strings, validation results", async () => {
    answers.push(
      { status: 400, body: { code: 'Invalid-OTP', message: 'The provided OTP is invalid' } },
      { status: 400, body: { errors: [{ code: 'Invalid-CSR', message: 'The provided CSR is invalid' }, 'second'] } },
      { status: 401, body: undefined },
    );
    expect(await requestComplianceCsid(csrBase64, '1', { baseUrl })).toEqual({ ok: false, outcome: 'refused', httpStatus: 400, messages: [{ code: 'Invalid-OTP', message: 'The provided OTP is invalid' }] });
    expect(await requestComplianceCsid(csrBase64, '1', { baseUrl })).toEqual({
      ok: false, outcome: 'refused', httpStatus: 400, messages: [{ code: 'Invalid-CSR', message: 'The provided CSR is invalid' }, { code: 'ERROR', message: 'second' }],
    });
    expect(await requestProductionCsid(csid, { baseUrl })).toMatchObject({ ok: false, outcome: 'refused', httpStatus: 401, messages: [{ code: '401' }] });
  });

  it('sends a compliance check with the CSID as HTTP Basic; errors in the validation results refuse it, warnings do not', async () => {
    const doc = { uuid: 'u-1', invoiceHash: 'aGFzaA==', xml: '<Invoice/>' };
    const results = (status: string, errorMessages: unknown[], warningMessages: unknown[] = []) => ({ validationResults: { status, infoMessages: [], warningMessages, errorMessages }, reportingStatus: 'REPORTED' });
    answers.push(
      { status: 202, body: results('WARNING', [], [{ type: 'WARNING', code: 'BR-KSA-08', message: 'seller id' }]) },
      { status: 400, body: results('ERROR', [{ type: 'ERROR', code: 'BR-KSA-37', message: 'building number' }]) },
      { status: 200, body: results('ERROR', []) },
    );
    expect(await checkCompliance(doc, csid, { baseUrl })).toEqual({ ok: true, warnings: [{ code: 'BR-KSA-08', message: 'seller id' }] });
    expect(seen.at(-1)).toMatchObject({
      url: '/compliance/invoices',
      headers: { authorization: `Basic ${Buffer.from(`${token}:s3cret`).toString('base64')}`, 'accept-version': 'V2' },
      body: { uuid: 'u-1', invoiceHash: 'aGFzaA==', invoice: Buffer.from('<Invoice/>').toString('base64') },
    });
    expect(await checkCompliance(doc, csid, { baseUrl })).toEqual({ ok: false, outcome: 'refused', httpStatus: 400, messages: [{ code: 'BR-KSA-37', message: 'building number' }] });
    expect(await checkCompliance(doc, csid, { baseUrl })).toMatchObject({ ok: false, outcome: 'refused', httpStatus: 200 });
  });

  it('asks for the production CSID with the compliance request id', async () => {
    answers.push({ status: 200, body: { requestID: 99, dispositionMessage: 'ISSUED', binarySecurityToken: token, secret: 'prod' } });
    expect(await requestProductionCsid(csid, { baseUrl })).toEqual({ ok: true, csid: { requestId: '99', binarySecurityToken: token, secret: 'prod', certificatePem: certificate } });
    expect(seen.at(-1)).toMatchObject({ url: '/production/csids', body: { compliance_request_id: '1234567890123' } });
  });

  it('tells ZATCA unavailable apart: a 5xx, a 429, no answer in time, nobody listening, an answer without a certificate', async () => {
    answers.push({ status: 503 }, { status: 429 }, { status: 200, delayMs: 500 }, { status: 200, body: { requestID: 1, binarySecurityToken: 'bm90IGEgY2VydA==', secret: 'x' } });
    expect(await requestProductionCsid(csid, { baseUrl })).toEqual({ ok: false, outcome: 'unavailable', httpStatus: 503, detail: 'ZATCA answered 503' });
    expect(await requestProductionCsid(csid, { baseUrl })).toMatchObject({ ok: false, outcome: 'unavailable', httpStatus: 429 });
    expect(await requestProductionCsid(csid, { baseUrl, timeoutMs: 100 })).toEqual({ ok: false, outcome: 'unavailable', httpStatus: null, detail: 'no answer in time' });
    expect(await requestProductionCsid(csid, { baseUrl: await closedPort() })).toEqual({ ok: false, outcome: 'unavailable', httpStatus: null, detail: 'ECONNREFUSED' });
    expect(await requestProductionCsid(csid, { baseUrl })).toMatchObject({ ok: false, outcome: 'unavailable', httpStatus: 200, detail: 'binarySecurityToken does not hold a base64 certificate' });
  });
});
