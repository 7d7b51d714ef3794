// Onboarding a company with ZATCA through the API, against the local stand-in of ZATCA's API
// (test/zatca-stand-in.ts): the profile a CSR needs (every missing field listed), the Owner only,
// a refused OTP (nothing kept), then the whole flow (compliance CSID, six stamped compliance
// samples, production CSID), the state it answers (never a secret) and what it keeps (sealed).
// From then on every issued document is stamped: QR tags 1–9 whose signature verifies with
// node:crypto alone, the stamped XML served byte for byte and valid against UBL 2.1, the chain
// continuing from the documents issued before. Runs on SQLite and again on PostgreSQL.
import { createPublicKey, createVerify } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Host } from '../core/host.ts';
import { SYSTEM_ACTOR } from '../core/kernel/actor.ts';
import { invoiceHash, parseQr, readCertificate, submitInvoice } from '../apps-installed/invoicing/zatca/index.ts';
import { zatcaAccount } from '../apps-installed/invoicing/zatca-account.ts';
import { startZatcaStandIn, type StandIn } from './zatca-stand-in.ts';
import { closedPort } from './zatca-stand-in-onboarding.ts';
import { validateUbl } from './zatca-ubl-schema.ts';
import { pageQr } from './pdf-pages.ts';
import { ARABIC, createCompany, createCustomer, expectError, makeHost, type Client, type TestCompany } from './helpers.ts';
import { RIYADH_TRADING } from './zatca-company.ts';


describe('onboarding with ZATCA and stamping at issue', () => {
  let host: Host;
  let co: TestCompany;
  let api: Client;
  let zatca: StandIn;
  let b2b: { id: string };
  let b2c: { id: string };

  const line = (quantity: number, unitPrice: number) => ({ description: `${quantity} × ${unitPrice}`, quantity, unitPrice });
  const issue = async (customerId: string) => {
    const draft = await api.post('/api/v1/invoices', { customerId, date: '2026-03-01', dueDate: '2026-03-31', lines: [line(2, 100)] });
    expect(draft.statusCode, draft.body).toBe(201);
    const sent = await api.post(`/api/v1/invoices/${draft.json().data.id}/send`, {});
    expect(sent.statusCode, sent.body).toBe(200);
    return sent.json().data;
  };
  const secrets = () => host.storage.db.all<{ value: string }>('SELECT value FROM app_secrets WHERE company_id = ?', [co.company.id]);
  const onboard = (body: Record<string, unknown>, headers?: Record<string, string>) => api.post('/api/v1/company/zatca/onboard', body, headers);

  beforeAll(async () => {
    zatca = await startZatcaStandIn();
    host = await makeHost({ config: { rateLimitPerMinute: 0 } });
    co = await createCompany(host, { name: 'Riyadh Trading', currency: 'SAR' });
    api = co.as();
    b2b = await createCustomer(api, 'Al-Noor Trading');
    expect((await api.patch(`/api/v1/customers/${b2b.id}`, { vatNumber: '300075588700003', buildingNumber: '1111', street: 'Prince Sultan Street', district: 'Al Murooj', city: 'Jeddah', postalCode: '23512', country: 'SA' })).statusCode).toBe(200);
    b2c = await createCustomer(api, 'Walk-in');
  });
  afterAll(async () => {
    await host.close();
    await zatca.close();
  });

  it('is not onboarded at first; the profile a CSR needs is checked first, every missing field listed, in English and Arabic', async () => {
    expect((await co.as('Viewer').get('/api/v1/company/zatca')).json()).toEqual({ data: { onboarded: false } });
    expect((await api.patch('/api/v1/company', { vatNumber: RIYADH_TRADING.vatNumber, address: { city: 'Riyadh', country: 'SA' } })).statusCode).toBe(200);
    const err = expectError(await onboard({ otp: '123345' }), 400, 'VALIDATION_ERROR');
    expect(err.details.map((d) => d.pointer)).toEqual(['/legalName/en', '/legalName/ar', '/crNumber', '/address/buildingNumber', '/address/street', '/address/district', '/address/postalCode']);
    expect(err.details[2]).toMatchObject({ in: 'company', rule: 'required', message: "the company's crNumber is missing: set it with PATCH /api/v1/company before onboarding" });
    const ar = expectError(await onboard({ otp: '123345' }, { 'accept-language': 'ar' }), 400, 'VALIDATION_ERROR');
    for (const d of ar.details) expect(d.message).toMatch(ARABIC);
    // A bad body is the body's problem, listed as such.
    const bad = expectError(await onboard({ otp: 'abc', gateway: 'moon' }), 400, 'VALIDATION_ERROR');
    expect(bad.details.map((d) => d.pointer).sort()).toEqual(['/gateway', '/otp']);
    expect(zatca.onboarding.compliance).toHaveLength(0);
  });

  it('issues without a stamp before onboarding: QR tags 1–5, the XML unsigned', async () => {
    expect((await api.patch('/api/v1/company', RIYADH_TRADING)).statusCode).toBe(200);
    const inv = await issue(b2c.id);
    expect(inv.signatureValue).toBeUndefined();
    const q = parseQr(inv.qr);
    expect(q).toMatchObject({ sellerName: 'شركة الرياض للتجارة | Riyadh Trading Co.', vatNumber: RIYADH_TRADING.vatNumber, total: '230.00', vatTotal: '30.00' });
    expect(q.hash).toBeUndefined();
    const xml = (await api.get(`/api/v1/invoices/${inv.id}/xml`)).body;
    expect(xml).not.toContain('<ext:UBLExtensions>');
  });

  it('is the Owner’s alone', async () => {
    for (const role of ['Admin', 'Manager', 'Member'] as const) expectError(await co.as(role).post('/api/v1/company/zatca/onboard', { otp: '123345' }), 403, 'FORBIDDEN');
  });

  it('answers ZATCA refusing the OTP as VALIDATION_ERROR at /otp with its message, in English and Arabic, and keeps nothing', async () => {
    expect((await api.patch('/api/v1/apps/invoicing/settings', { zatcaBaseUrl: zatca.url })).statusCode).toBe(200);
    const err = expectError(await onboard({ otp: '999999', gateway: 'simulation' }), 400, 'VALIDATION_ERROR');
    expect(err.details).toEqual([
      expect.objectContaining({ in: 'body', pointer: '/otp', rule: 'zatca', zatca: { step: 'compliance', httpStatus: 400, messages: [{ code: 'Invalid-OTP', message: 'The provided OTP is invalid' }] } }),
    ]);
    expect(err.details[0].message).toBe('ZATCA refused the OTP (Invalid-OTP: The provided OTP is invalid): ask the Fatoora portal for a new one and onboard again');
    const ar = expectError(await onboard({ otp: '999999' }, { 'accept-language': 'ar' }), 400, 'VALIDATION_ERROR');
    expect(ar.details[0].message).toMatch(/^رفضت الهيئة رمز التحقق/);
    expect(zatca.onboarding.compliance).toHaveLength(0);
    expect(await secrets()).toEqual([]);
    expect((await api.get('/api/v1/company/zatca')).json().data).toEqual({ onboarded: false });
  });

  it('answers ZATCA not answering as CONFLICT (zatca_unavailable), and a base URL that is not http as VALIDATION_ERROR', async () => {
    await api.patch('/api/v1/apps/invoicing/settings', { zatcaBaseUrl: await closedPort() });
    const down = expectError(await onboard({ otp: zatca.onboarding.otp }), 409, 'CONFLICT');
    expect(down.details[0]).toMatchObject({ reason: 'zatca_unavailable', step: 'compliance', httpStatus: null });
    expect(down.message).toContain('ZATCA did not answer the compliance CSID request (ECONNREFUSED)');
    await api.patch('/api/v1/apps/invoicing/settings', { zatcaBaseUrl: 'ftp://zatca.example' });
    const ftp = expectError(await onboard({ otp: zatca.onboarding.otp }), 400, 'VALIDATION_ERROR');
    expect(ftp.details[0]).toMatchObject({ in: 'settings', pointer: '/zatcaBaseUrl', rule: 'format' });
    await api.patch('/api/v1/apps/invoicing/settings', { zatcaBaseUrl: zatca.url });
    expect(await secrets()).toEqual([]);
  });

  it('answers a compliance check ZATCA refuses as CONFLICT naming the sample, with ZATCA’s messages, and keeps nothing', async () => {
    zatca.onboarding.refuse.add('381 0200000');
    const err = expectError(await onboard({ otp: zatca.onboarding.otp }), 409, 'CONFLICT');
    zatca.onboarding.refuse.clear();
    expect(err.details).toEqual([{
      reason: 'zatca_refused', step: 'complianceInvoices', sample: 'simplified credit', httpStatus: 400,
      messages: [{ code: 'BR-KSA-37', message: 'The seller address building number must contain 4 digits.' }],
    }]);
    expect(err.message).toContain("ZATCA's compliance checks refused the sample simplified credit: BR-KSA-37");
    expect(zatca.onboarding.checks.map((c) => c.status)).toEqual([200, 200, 200, 200, 400]);
    expect(zatca.onboarding.production).toHaveLength(0);
    expect(await secrets()).toEqual([]);
    zatca.onboarding.checks.length = 0;
    zatca.onboarding.otp = '654321';
  });

  it('onboards: compliance CSID, a stamped sample of each of the six documents, production CSID; answers the certificate, never a secret', async () => {
    const res = await onboard({ otp: zatca.onboarding.otp, gateway: 'simulation', businessCategory: 'Wholesale' });
    expect(res.statusCode, res.body).toBe(200);
    const state = res.json().data;
    const [production] = zatca.onboarding.production;
    const cert = readCertificate(production.certificatePem);
    expect(state).toEqual({
      onboarded: true, gateway: 'simulation', baseUrl: zatca.url, onboardedAt: expect.any(String),
      certificate: {
        subject: `C=SA, OU=Riyadh Trading, O=Riyadh Trading Co., CN=Diwan-${co.company.id}`,
        issuer: 'CN=DIWAN-TEST-ZATCA-CA, DC=extgazt, DC=gov, DC=local',
        serialNumber: cert.serialNumber,
        validFrom: new Date(cert.x509.validFrom).toISOString(),
        validTo: new Date(cert.x509.validTo).toISOString(),
      },
    });
    // ZATCA saw each kind once, each passing, then issued the production CSID.
    expect(zatca.onboarding.checks.map((c) => `${c.kind} ${c.status}`)).toEqual([
      '388 0100000 200', '381 0100000 200', '383 0100000 200', '388 0200000 200', '381 0200000 200', '383 0200000 200',
    ]);
    expect(zatca.onboarding.production).toHaveLength(1);
    // The state read back is the same; no answer carries the key or the CSID's secret.
    const got = await co.as('Viewer').get('/api/v1/company/zatca');
    expect(got.json().data).toEqual(state);
    for (const body of [res.body, got.body]) {
      expect(body).not.toContain(production.secret);
      expect(body).not.toContain('PRIVATE KEY');
    }
    // Kept sealed: the stored row holds neither.
    const rows = await secrets();
    expect(rows).toHaveLength(1);
    expect(rows[0].value).not.toContain(production.secret);
    expect(rows[0].value).not.toContain('PRIVATE');
    // Audited, without secrets.
    const audit = (await api.get('/api/v1/audit-log?resource=zatca')).json().data;
    expect(audit[0]).toMatchObject({ action: 'onboard', resource: 'zatca', after: state });
  });

  it('keeps the account the submission code reads, whose CSID the gateway accepts', async () => {
    const ctx = host.runtime.contextFor('invoicing', { company: co.company, actor: SYSTEM_ACTOR, lang: 'en', requestId: null });
    const account = (await zatcaAccount(ctx))!;
    const [production] = zatca.onboarding.production;
    expect(account).toMatchObject({ gateway: 'simulation', baseUrl: zatca.url, credentials: { binarySecurityToken: production.binarySecurityToken, secret: production.secret } });
    expect(createPublicKey(account.privateKeyPem).export({ type: 'spki', format: 'der' })).toEqual(readCertificate(account.certificatePem).publicKey);
    const inv = await issue(b2c.id);
    const xml = (await api.get(`/api/v1/invoices/${inv.id}/xml`)).body;
    const r = await submitInvoice('simplified', { uuid: inv.uuid, invoiceHash: inv.hash, xml }, { baseUrl: account.baseUrl, credentials: account.credentials });
    expect(r).toMatchObject({ outcome: 'accepted', status: 'REPORTED' });
  });

  it('stamps every issued document: QR tags 1–9, tag 7 verifying over tag 6 with the key in tag 8 (node:crypto alone), the chain continuing', async () => {
    const before = (await api.get('/api/v1/invoices?sort=-counter&pageSize=1')).json().data[0];
    const standard = await issue(b2b.id);
    const simplified = await issue(b2c.id);
    const credit = (await api.post('/api/v1/credit-notes', { invoiceId: standard.id, reason: 'One unit returned', lines: [line(1, 100)] })).json().data;
    expect(standard.counter).toBe(before.counter + 1);
    expect(standard.previousHash).toBe(before.hash);
    expect(simplified.previousHash).toBe(standard.hash);
    expect(credit.previousHash).toBe(simplified.hash);
    const production = readCertificate(zatca.onboarding.production[0].certificatePem);
    for (const doc of [standard, simplified, credit]) {
      const q = parseQr(doc.qr);
      expect(q.hash).toBe(doc.hash);
      expect(q.signature).toBe(doc.signatureValue);
      const key = createPublicKey({ key: Buffer.from(q.publicKey!), format: 'der', type: 'spki' });
      expect(createVerify('sha256').update(Buffer.from(q.hash!, 'base64')).verify(key, Buffer.from(q.signature!, 'base64'))).toBe(true);
      expect(Buffer.from(q.publicKey!)).toEqual(production.publicKey);
      // Tag 9 (the CA's signature of the certificate) on simplified documents only.
      expect(q.certificateSignature ? Buffer.from(q.certificateSignature) : undefined).toEqual(doc.kind === 'simplified' ? production.signature : undefined);
      expect(doc.signingCertificate).toBe(production.base64);
    }
    // A tampered hash does not verify.
    const q = parseQr(standard.qr);
    const other = Buffer.from(simplified.hash, 'base64');
    expect(createVerify('sha256').update(other).verify(createPublicKey({ key: Buffer.from(q.publicKey!), format: 'der', type: 'spki' }), Buffer.from(q.signature!, 'base64'))).toBe(false);
  });

  it('keeps one unbroken chain through 50 concurrent stamped sends, each stamp verifying', async () => {
    const drafts = await Promise.all(Array.from({ length: 50 }, async (_, i) => {
      const res = await api.post('/api/v1/invoices', { customerId: i % 2 ? b2b.id : b2c.id, date: '2026-03-01', dueDate: '2026-03-31', lines: [line(1, 10 + i)] });
      return res.json().data.id as string;
    }));
    const sent = await Promise.all(drafts.map((id) => api.post(`/api/v1/invoices/${id}/send`, {})));
    for (const r of sent) expect(r.statusCode, r.body).toBe(200);
    const docs = sent.map((r) => r.json().data).sort((a, b) => a.counter - b.counter);
    const previous = (await api.get(`/api/v1/credit-notes?counter=${docs[0].counter - 1}`)).json().data[0] ?? (await api.get(`/api/v1/invoices?counter=${docs[0].counter - 1}`)).json().data[0];
    expect(previous.signatureValue).toEqual(expect.any(String));
    const byCounter = new Map([[previous.counter, previous], ...docs.map((d) => [d.counter, d] as const)]);
    for (const d of docs) {
      expect(d.previousHash).toBe(byCounter.get(d.counter - 1).hash);
      const q = parseQr(d.qr);
      const key = createPublicKey({ key: Buffer.from(q.publicKey!), format: 'der', type: 'spki' });
      expect(createVerify('sha256').update(Buffer.from(d.hash, 'base64')).verify(key, Buffer.from(d.signatureValue, 'base64'))).toBe(true);
    }
    expect(docs.map((d) => d.counter)).toEqual(Array.from({ length: 50 }, (_, i) => docs[0].counter + i));
  });

  it('serves the stamped XML of each kind, byte for byte the same each time, hashing to the stored hash and valid against the UBL 2.1 schemas', async () => {
    const standard = await issue(b2b.id);
    const credit = (await api.post('/api/v1/credit-notes', { invoiceId: standard.id, reason: 'Returned', lines: [line(1, 100)] })).json().data;
    const debit = (await api.post('/api/v1/debit-notes', { invoiceId: standard.id, reason: 'Freight not billed', lines: [line(1, 40)] })).json().data;
    const simplified = await issue(b2c.id);
    const xmls: string[] = [];
    for (const [path, doc] of [['invoices', standard], ['credit-notes', credit], ['debit-notes', debit], ['invoices', simplified]] as const) {
      const first = await api.get(`/api/v1/${path}/${doc.id}/xml`);
      const again = await api.get(`/api/v1/${path}/${doc.id}/xml`);
      expect(first.statusCode, first.body).toBe(200);
      expect(again.body).toBe(first.body);
      expect(first.body).toContain(`<ds:SignatureValue>${doc.signatureValue}</ds:SignatureValue>`);
      expect(first.body).toContain(`<ds:X509Certificate>${doc.signingCertificate}</ds:X509Certificate>`);
      expect(first.body).toContain(`<xades:SigningTime>${doc.issuedAt.slice(0, 19)}</xades:SigningTime>`);
      expect(first.body).toContain(`<cbc:EmbeddedDocumentBinaryObject mimeCode="text/plain">${doc.qr}</cbc:EmbeddedDocumentBinaryObject>`);
      expect(invoiceHash(first.body)).toBe(doc.hash);
      xmls.push(first.body);
    }
    const { valid, errors } = await validateUbl(xmls);
    expect(errors).toEqual([]);
    expect(valid).toBe(true);
    // The PDF carries the same QR, tags 1–9, as its page shows it.
    const pdf = await api.get(`/api/v1/invoices/${standard.id}/pdf`);
    expect(pdf.statusCode).toBe(200);
    expect(pdf.headers['content-type']).toMatch(/^application\/pdf/);
    expect(await pageQr(pdf.rawPayload)).toBe((await api.get(`/api/v1/invoices/${standard.id}`)).json().data.qr);
  });
  it('onboards again with a new OTP: a new key and certificate stamp what is issued next; what was stamped before keeps its own', async () => {
    const before = await issue(b2b.id);
    const beforeXml = (await api.get(`/api/v1/invoices/${before.id}/xml`)).body;
    zatca.onboarding.otp = '777777';
    const res = await onboard({ otp: '777777', gateway: 'sandbox' });
    expect(res.statusCode, res.body).toBe(200);
    const second = zatca.onboarding.production.at(-1)!;
    expect(res.json().data).toMatchObject({ gateway: 'sandbox', certificate: { serialNumber: readCertificate(second.certificatePem).serialNumber } });
    expect(await secrets()).toHaveLength(1);
    const after = await issue(b2b.id);
    expect(after.previousHash).toBe(before.hash);
    expect(after.signingCertificate).toBe(readCertificate(second.certificatePem).base64);
    expect(before.signingCertificate).not.toBe(after.signingCertificate);
    expect((await api.get(`/api/v1/invoices/${before.id}/xml`)).body).toBe(beforeXml);
    const q = parseQr(after.qr);
    expect(createVerify('sha256').update(Buffer.from(after.hash, 'base64')).verify(createPublicKey({ key: Buffer.from(q.publicKey!), format: 'der', type: 'spki' }), Buffer.from(after.signatureValue, 'base64'))).toBe(true);
  });
});
