// The stamp and the QR (issue 27, parts 6 and 7): a document signed with a key whose CSR a local
// CA certified verifies with node:crypto alone; the conventions (what is signed, the digests, the
// QR tags) are checked against ZATCA's SDK output in its own signed sample.
import { createHash, createPublicKey, createVerify, X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  buildXml, INITIAL_PIH, invoiceHash, issueCertificate, makeKeyAndCsr, makeTestCa, parseQr, qr, readCertificate, sign, stamp,
} from '../apps-installed/invoicing/zatca/index.ts';
import { creditNote, debitNote, simplifiedInvoice, standardInvoice } from './zatca-documents.ts';
import { validateUbl } from './zatca-ubl-schema.ts';

const SDK_SAMPLE = fs.readFileSync(path.join(import.meta.dirname, 'zatca-fixtures', 'Simplified_Invoice.xml'), 'utf8');
const one = (xml: string, re: RegExp) => re.exec(xml)![1].trim();
const digestOf = (xml: string) => one(xml, /Id="invoiceSignedData"[\s\S]*?<ds:DigestValue>([^<]+)</);
const propsDigestOf = (xml: string) => one(xml, /URI="#xadesSignedProperties">[\s\S]*?<ds:DigestValue>([^<]+)</);
const signatureOf = (xml: string) => one(xml, /<ds:SignatureValue>([^<]+)</);
const certOf = (xml: string) => one(xml, /<ds:X509Certificate>([^<]+)</);
const qrOf = (xml: string) => one(xml, /<cbc:ID>QR<\/cbc:ID>\s*<cac:Attachment>\s*<cbc:EmbeddedDocumentBinaryObject[^>]*>([^<]+)</);
const hexB64 = (s: string) => Buffer.from(createHash('sha256').update(s).digest('hex')).toString('base64');

/** Verification as anyone would do it: ECDSA-SHA256 over the hash's bytes with the certificate's key. */
function verifies(hashB64: string, signatureB64: string, publicKey: ReturnType<typeof createPublicKey>): boolean {
  return createVerify('sha256').update(Buffer.from(hashB64, 'base64')).verify(publicKey, Buffer.from(signatureB64, 'base64'));
}

/** The SignedProperties digest as the SDK computes it, written independently: the element with
 *  xmlns:xades on it and xmlns:ds on each ds:* element, then base64 of the hex SHA-256. */
function signedPropertiesDigest(xml: string): string {
  const element = /<xades:SignedProperties[\s\S]*?<\/xades:SignedProperties>/.exec(xml)![0]
    .replace('<xades:SignedProperties ', '<xades:SignedProperties xmlns:xades="http://uri.etsi.org/01903/v1.3.2#" ')
    .replace(/<ds:(\w+)/g, '<ds:$1 xmlns:ds="http://www.w3.org/2000/09/xmldsig#"');
  return hexB64(element);
}

const ca = makeTestCa();
const { privateKeyPem, csrPem } = makeKeyAndCsr({
  environment: 'simulation', commonName: 'TST-886431145-310122393500003', organizationName: 'Riyadh Office Supplies Co', organizationUnit: 'Riyadh Branch',
  solutionName: 'Diwan', model: '1.0', deviceSerial: 'ed22f1d8-e6a2-1118-9b58-d9a8f11e445f', vatNumber: '310122393500003', invoiceType: '1100',
  registeredAddress: 'RRRD2929', businessCategory: 'Office supplies',
});
const certificatePem = issueCertificate(csrPem, ca);
const x509 = new X509Certificate(certificatePem);
const signingTime = new Date('2026-11-28T09:30:05Z');

describe('ZATCA\'s own signed sample (the conventions)', () => {
  const cert = readCertificate(certOf(SDK_SAMPLE));

  it('the signature value is ECDSA over the invoice hash, verifiable with the certificate\'s key', () => {
    expect(verifies(digestOf(SDK_SAMPLE), signatureOf(SDK_SAMPLE), cert.x509.publicKey)).toBe(true);
    expect(invoiceHash(SDK_SAMPLE)).toBe(digestOf(SDK_SAMPLE));
  });

  it('the certificate digest, issuer and serial are written as the SDK writes them', () => {
    expect(cert.digest).toBe(one(SDK_SAMPLE, /<xades:CertDigest>[\s\S]*?<ds:DigestValue>([^<]+)</));
    expect(cert.issuerName).toBe(one(SDK_SAMPLE, /<ds:X509IssuerName>([^<]+)</));
    expect(cert.serialNumber).toBe(one(SDK_SAMPLE, /<ds:X509SerialNumber>([^<]+)</));
  });

  it('the SignedProperties digest follows the convention this module uses', () => {
    expect(signedPropertiesDigest(SDK_SAMPLE)).toBe(propsDigestOf(SDK_SAMPLE));
  });

  it('its QR is tags 1–9 with 6 the hash, 7 the signature, 8 the key and 9 the certificate\'s signature; qr() writes the same bytes', () => {
    const fields = parseQr(qrOf(SDK_SAMPLE));
    expect(fields.sellerName).toBe('شركة توريد التكنولوجيا بأقصى سرعة المحدودة | Maximum Speed Tech Supply LTD');
    expect(fields.vatNumber).toBe('399999999900003');
    expect(fields.timestamp).toBe('2022-08-17T17:41:08');
    expect([fields.total, fields.vatTotal]).toEqual(['231.15', '30.15']);
    expect(fields.hash).toBe(digestOf(SDK_SAMPLE));
    expect(fields.signature).toBe(signatureOf(SDK_SAMPLE));
    expect(Buffer.from(fields.publicKey!)).toEqual(cert.publicKey);
    expect(Buffer.from(fields.certificateSignature!)).toEqual(cert.signature);
    expect(qr(fields)).toBe(qrOf(SDK_SAMPLE));
  });
});

describe('stamping our documents', () => {
  it('signs the invoice hash: the signature verifies with node:crypto alone, and the stamped XML hashes to the same value', () => {
    const unsigned = buildXml(standardInvoice());
    const signed = sign(unsigned, { privateKeyPem, certificatePem, signingTime });
    expect(signed.hash).toBe(invoiceHash(unsigned));
    expect(invoiceHash(signed.xml)).toBe(signed.hash);
    expect(digestOf(signed.xml)).toBe(signed.hash);
    expect(signatureOf(signed.xml)).toBe(signed.signatureValue);
    expect(verifies(signed.hash, signed.signatureValue, x509.publicKey)).toBe(true);
    expect(verifies(signed.hash, signed.signatureValue, createPublicKey(anotherKey()))).toBe(false);
  });

  it('writes the SignedProperties (signing time, certificate digest, issuer, serial) and their digest', () => {
    const { xml } = sign(buildXml(standardInvoice()), { privateKeyPem, certificatePem, signingTime });
    const cert = readCertificate(certificatePem);
    expect(one(xml, /<xades:SigningTime>([^<]+)</)).toBe('2026-11-28T09:30:05');
    expect(one(xml, /<xades:CertDigest>[\s\S]*?<ds:DigestValue>([^<]+)</)).toBe(hexB64(certificatePem.replace(/-----[A-Z ]+-----/g, '').replace(/\s/g, '')));
    expect(one(xml, /<ds:X509IssuerName>([^<]+)</)).toBe(cert.issuerName);
    expect(one(xml, /<ds:X509SerialNumber>([^<]+)</)).toBe(BigInt(`0x${x509.serialNumber}`).toString());
    expect(certOf(xml)).toBe(x509.raw.toString('base64'));
    expect(propsDigestOf(xml)).toBe(signedPropertiesDigest(xml));
  });

  it('every stamped kind still validates against the UBL 2.1 schemas (the signature against UBL\'s xmldsig and XAdES schemas)', async () => {
    const signed = [standardInvoice, simplifiedInvoice, creditNote, debitNote].map((make) => sign(buildXml(make()), { privateKeyPem, certificatePem, signingTime }).xml);
    const result = await validateUbl(signed);
    expect(result.errors).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('writes the same stamp again, byte for byte, from the signature value alone (no key): how an issued document is served', () => {
    for (const doc of [standardInvoice(), simplifiedInvoice(), creditNote(), debitNote()]) {
      const xml = buildXml(doc);
      const signed = sign(xml, { privateKeyPem, certificatePem, signingTime });
      expect(stamp(xml, { certificatePem, signingTime, signatureValue: signed.signatureValue })).toEqual(signed);
      // ECDSA is randomised: signing again gives another signature, hence it is kept.
      expect(sign(xml, { privateKeyPem, certificatePem, signingTime }).signatureValue).not.toBe(signed.signatureValue);
    }
  });

  it('a changed figure breaks it: the hash no longer matches the reference and the signature no longer verifies', () => {
    const signed = sign(buildXml(simplifiedInvoice()), { privateKeyPem, certificatePem, signingTime });
    const tampered = signed.xml.replace('<cbc:PayableAmount currencyID="SAR">40.00<', '<cbc:PayableAmount currencyID="SAR">4.00<');
    expect(tampered).not.toBe(signed.xml);
    expect(invoiceHash(tampered)).not.toBe(digestOf(tampered));
    expect(verifies(invoiceHash(tampered), signatureOf(tampered), x509.publicKey)).toBe(false);
  });

  it('the QR of a simplified invoice has tags 1–9; tag 7 verifies over tag 6 with the key in tag 8; tag 9 is the CA\'s signature', () => {
    const signed = sign(buildXml(simplifiedInvoice()), { privateKeyPem, certificatePem, signingTime });
    expect(qrOf(signed.xml)).toBe(signed.qr);
    const f = parseQr(signed.qr);
    expect([f.sellerName, f.vatNumber, f.timestamp, f.total, f.vatTotal]).toEqual([
      'شركة مستلزمات المكاتب | Riyadh Office Supplies Co', '310122393500003', '2026-11-28T09:30:00', '40.00', '5.22',
    ]);
    expect(f.hash).toBe(signed.hash);
    expect(f.signature).toBe(signed.signatureValue);
    const key = createPublicKey({ key: Buffer.from(f.publicKey!), format: 'der', type: 'spki' });
    expect(verifies(f.hash!, f.signature!, key)).toBe(true);
    expect(Buffer.from(f.certificateSignature!)).toEqual(readCertificate(certificatePem).signature);
    // Tag 9 is what makes the certificate verify under the CA's key.
    expect(x509.verify(new X509Certificate(ca.certificatePem).publicKey)).toBe(true);
  });

  it('a standard invoice\'s QR stops at tag 8 (tag 9 is for simplified invoices)', () => {
    const f = parseQr(sign(buildXml(standardInvoice()), { privateKeyPem, certificatePem, signingTime }).qr);
    expect(f.publicKey).toBeDefined();
    expect(f.certificateSignature).toBeUndefined();
  });

  it('a chain of stamped documents: each PIH is the previous stamped document\'s hash', () => {
    let previousHash = INITIAL_PIH;
    const hashes: string[] = [];
    for (const [i, make] of [standardInvoice, simplifiedInvoice, creditNote, debitNote].entries()) {
      const signed = sign(buildXml(make({ counter: i + 1, previousHash })), { privateKeyPem, certificatePem, signingTime });
      expect(one(signed.xml, /<cbc:ID>PIH<\/cbc:ID>\s*<cac:Attachment>\s*<cbc:EmbeddedDocumentBinaryObject[^>]*>([^<]+)</)).toBe(previousHash);
      expect(invoiceHash(signed.xml)).toBe(signed.hash);
      hashes.push(signed.hash);
      previousHash = signed.hash;
    }
    expect(new Set(hashes).size).toBe(4);
  });

  it('a document is stamped once', () => {
    const { xml } = sign(buildXml(simplifiedInvoice()), { privateKeyPem, certificatePem, signingTime });
    expect(() => sign(xml, { privateKeyPem, certificatePem, signingTime })).toThrow(/already stamped/);
  });
});

/** A key of another unit: the signature must not verify with it. */
function anotherKey(): string {
  return makeKeyAndCsr({
    environment: 'sandbox', commonName: 'x', organizationName: 'x', organizationUnit: 'x', solutionName: 'x', model: 'x', deviceSerial: 'x',
    vatNumber: '300000000000003', invoiceType: '1100', registeredAddress: 'x', businessCategory: 'x',
  }).privateKeyPem;
}
