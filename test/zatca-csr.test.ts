// Onboarding (issue 27, part 6): the key and the CSR ZATCA's compliance API takes, read back with
// the same ASN.1 library and with node:crypto, and a certificate issued from it by a local CA.
import { createPublicKey, X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CERTIFICATE_TEMPLATE, certificateFromSecurityToken, issueCertificate, makeKeyAndCsr, makeTestCa, readCertificate, readCsr, type CsrInfo } from '../apps-installed/invoicing/zatca/index.ts';

const INFO: CsrInfo = {
  environment: 'simulation',
  commonName: 'TST-886431145-310122393500003',
  organizationName: 'Riyadh Office Supplies Co',
  organizationUnit: 'Riyadh Branch',
  solutionName: 'Diwan',
  model: '1.0',
  deviceSerial: 'ed22f1d8-e6a2-1118-9b58-d9a8f11e445f',
  vatNumber: '310122393500003',
  invoiceType: '1100',
  registeredAddress: 'RRRD2929',
  businessCategory: 'Office supplies',
};

describe('the onboarding key and CSR', () => {
  const made = makeKeyAndCsr(INFO);

  it('the key is secp256k1 (SEC1 PEM), and the CSR is signed by it', () => {
    expect(made.privateKeyPem).toMatch(/^-----BEGIN EC PRIVATE KEY-----\n/);
    expect(made.csrPem).toMatch(/^-----BEGIN CERTIFICATE REQUEST-----\n[A-Za-z0-9+/=\n]+-----END CERTIFICATE REQUEST-----\n$/);
    expect(Buffer.from(made.csrBase64, 'base64').toString()).toBe(made.csrPem);
    const csr = readCsr(made.csrPem);
    expect(csr.namedCurve).toBe('secp256k1');
    expect(csr.signatureValid).toBe(true);
    expect(csr.publicKey.export({ type: 'spki', format: 'der' })).toEqual(createPublicKey(made.privateKeyPem).export({ type: 'spki', format: 'der' }));
  });

  it('carries every field ZATCA requires: subject C, OU, O, CN; SAN SN, UID, title, registeredAddress, businessCategory; the template name', () => {
    const csr = readCsr(made.csrPem);
    expect(csr.subject).toEqual({
      '2.5.4.6': 'SA',
      '2.5.4.11': 'Riyadh Branch',
      '2.5.4.10': 'Riyadh Office Supplies Co',
      '2.5.4.3': 'TST-886431145-310122393500003',
    });
    expect(csr.alternativeName).toEqual({
      '2.5.4.4': '1-Diwan|2-1.0|3-ed22f1d8-e6a2-1118-9b58-d9a8f11e445f',
      '0.9.2342.19200300.100.1.1': '310122393500003',
      '2.5.4.12': '1100',
      '2.5.4.26': 'RRRD2929',
      '2.5.4.15': 'Office supplies',
    });
    expect(csr.certificateTemplateName).toBe('PREZATCA-Code-Signing');
  });

  it('names the certificate template of each environment', () => {
    expect(CERTIFICATE_TEMPLATE).toEqual({ sandbox: 'TSTZATCA-Code-Signing', simulation: 'PREZATCA-Code-Signing', production: 'ZATCA-Code-Signing' });
    for (const environment of ['sandbox', 'production'] as const) {
      expect(readCsr(makeKeyAndCsr({ ...INFO, environment }).csrPem).certificateTemplateName).toBe(CERTIFICATE_TEMPLATE[environment]);
    }
  });

  it('Arabic names survive (UTF8String)', () => {
    const csr = readCsr(makeKeyAndCsr({ ...INFO, organizationName: 'شركة مستلزمات المكاتب' }).csrPem);
    expect(csr.subject['2.5.4.10']).toBe('شركة مستلزمات المكاتب');
  });

  it('a tampered CSR does not verify', () => {
    const der = Buffer.from(made.csrPem.replace(/-----[A-Z ]+-----/g, '').replace(/\s/g, ''), 'base64');
    const at = der.indexOf(Buffer.from('Riyadh Branch'));
    der[at] = 'X'.charCodeAt(0);
    const pem = `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`;
    expect(readCsr(pem).signatureValid).toBe(false);
    expect(() => issueCertificate(pem, makeTestCa())).toThrow(/does not verify/);
  });

  it('the local test CA issues a certificate for it that node:crypto verifies, with the subject, key and SAN asked for', () => {
    const ca = makeTestCa();
    const pem = issueCertificate(made.csrPem, ca);
    const cert = new X509Certificate(pem);
    expect(cert.verify(new X509Certificate(ca.certificatePem).publicKey)).toBe(true);
    expect(cert.checkIssued(new X509Certificate(ca.certificatePem))).toBe(true);
    expect(cert.subject.split('\n')).toEqual(['C=SA', 'OU=Riyadh Branch', 'O=Riyadh Office Supplies Co', 'CN=TST-886431145-310122393500003']);
    expect(cert.publicKey.export({ type: 'spki', format: 'der' })).toEqual(createPublicKey(made.privateKeyPem).export({ type: 'spki', format: 'der' }));
    expect(cert.subjectAltName).toContain('310122393500003');
    const read = readCertificate(pem);
    expect(read.issuerName).toBe('CN=DIWAN-TEST-ZATCA-CA, DC=extgazt, DC=gov, DC=local');
    expect(read.serialNumber).toBe(BigInt(`0x${cert.serialNumber}`).toString());
  });

  it('reads the certificate out of a CSID answer\'s binarySecurityToken (base64 of the base64 text)', () => {
    const pem = issueCertificate(made.csrPem, makeTestCa());
    const token = Buffer.from(pem.replace(/-----[A-Z ]+-----/g, '').replace(/\s/g, '')).toString('base64');
    expect(new X509Certificate(certificateFromSecurityToken(token)).raw).toEqual(new X509Certificate(pem).raw);
    expect(() => certificateFromSecurityToken(Buffer.from('not a certificate').toString('base64'))).toThrow(/does not hold a base64 certificate/);
  });

  it('the CA refuses to sign with a key that is not its own', () => {
    const ca = makeTestCa();
    expect(() => issueCertificate(made.csrPem, { ...ca, privateKeyPem: makeTestCa().privateKeyPem })).toThrow(/does not match/);
  });
});
