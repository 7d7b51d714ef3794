// What the submission tests share: a company's CSID as ZATCA would issue it (a key and CSR
// certified by a local test CA, handed back as `binarySecurityToken` + `secret`), and issued,
// stamped documents of the Riyadh office-supplies company (test/zatca-documents.ts), each with
// its own uuid, number and counter.
import { randomBytes, randomUUID } from 'node:crypto';
import { buildXml, certificateFromSecurityToken, issueCertificate, makeKeyAndCsr, makeTestCa, sign } from '../apps-installed/invoicing/zatca/index.ts';
import { simplifiedInvoice, standardInvoice } from './zatca-documents.ts';

const ca = makeTestCa();
const { privateKeyPem, csrPem } = makeKeyAndCsr({
  environment: 'simulation', commonName: 'TST-886431145-310122393500003', organizationName: 'Riyadh Office Supplies Co', organizationUnit: 'Riyadh Branch',
  solutionName: 'Diwan', model: '1.0', deviceSerial: 'ed22f1d8-e6a2-1118-9b58-d9a8f11e445f', vatNumber: '310122393500003', invoiceType: '1100',
  registeredAddress: 'RRRD2929', businessCategory: 'Office supplies',
});
const certificatePem = issueCertificate(csrPem, ca);
const certBase64 = certificatePem.replace(/-----[A-Z ]+-----/g, '').replace(/\s/g, '');

/** The production CSID as ZATCA's answer carries it: the certificate's base64, base64-encoded again, and a secret. */
export const CSID = { binarySecurityToken: Buffer.from(certBase64, 'utf8').toString('base64'), secret: randomBytes(24).toString('base64') };
// The token is what the zatca module reads back as the certificate it stamps with.
if (certificateFromSecurityToken(CSID.binarySecurityToken).replace(/\s/g, '') !== certificatePem.replace(/\s/g, '')) throw new Error('the CSID token does not carry the certificate');

let counter = 0;

/** A standard (clearance) or simplified (reporting) invoice, issued and stamped: what is submitted. */
export function issuedDocument(subtype: 'standard' | 'simplified'): { uuid: string; invoiceHash: string; xml: string; number: string } {
  counter++;
  const uuid = randomUUID();
  const number = `INV-${String(counter).padStart(5, '0')}`;
  const doc = (subtype === 'standard' ? standardInvoice : simplifiedInvoice)({ uuid, number, counter });
  const signed = sign(buildXml(doc), { privateKeyPem, certificatePem, signingTime: new Date('2026-11-28T09:30:05Z') });
  return { uuid, invoiceHash: signed.hash, xml: signed.xml, number };
}
