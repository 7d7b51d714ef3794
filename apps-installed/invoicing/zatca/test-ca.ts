/**
 * A local certificate authority for tests and for a development host without ZATCA: it issues a
 * certificate for a CSR the way ZATCA's CSID endpoints do (the CSR's subject, key and requested
 * extensions, signed with ECDSA-SHA256 by a secp256k1 CA). Never a substitute for ZATCA's CA.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import { AsnConvert } from '@peculiar/asn1-schema';
import {
  BasicConstraints,
  Certificate,
  Extensions,
  id_ce_basicConstraints,
  id_ce_keyUsage,
  KeyUsage,
  KeyUsageFlags,
  TBSCertificate,
  Validity,
  Version,
} from '@peculiar/asn1-x509';
import { ECDSA_SHA256, extension, makeName, signDer, spkiOf, toPem } from './asn1.ts';
import { pemBody } from './certificate.ts';
import { readCsr } from './csr-read.ts';

export interface TestCa {
  privateKeyPem: string;
  certificatePem: string;
}

const DOMAIN_COMPONENT = '0.9.2342.19200300.100.1.25';

export function makeTestCa(commonName = 'DIWAN-TEST-ZATCA-CA'): TestCa {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'secp256k1' });
  // Issuer as ZATCA's: DC=local, DC=gov, DC=extgazt, CN=… (written "CN=…, DC=extgazt, DC=gov, DC=local").
  const name = makeName([
    [DOMAIN_COMPONENT, 'local'],
    [DOMAIN_COMPONENT, 'gov'],
    [DOMAIN_COMPONENT, 'extgazt'],
    ['2.5.4.3', commonName],
  ]);
  const tbs = new TBSCertificate({
    version: Version.v3,
    serialNumber: serial(),
    signature: ECDSA_SHA256(),
    issuer: name,
    validity: validity(10),
    subject: name,
    subjectPublicKeyInfo: spkiOf(publicKey),
    // A CA certificate as verifiers expect one (OpenSSL refuses an issuer without these).
    extensions: new Extensions([
      extension(id_ce_basicConstraints, new BasicConstraints({ cA: true }), true),
      extension(id_ce_keyUsage, new KeyUsage(KeyUsageFlags.keyCertSign | KeyUsageFlags.cRLSign), true),
    ]),
  });
  return {
    privateKeyPem: privateKey.export({ type: 'sec1', format: 'pem' }).toString(),
    certificatePem: certificate(tbs, privateKey),
  };
}

/** The certificate for a CSR (whose signature must verify), valid for a year from now. */
export function issueCertificate(csrPem: string, ca: TestCa): string {
  const csr = readCsr(csrPem);
  if (!csr.signatureValid) throw new Error('the CSR signature does not verify');
  const caCert = AsnConvert.parse(Buffer.from(pemBody(ca.certificatePem), 'base64'), Certificate);
  const caKey = createPrivateKey(ca.privateKeyPem);
  if (createPublicKey(caKey).export({ type: 'spki', format: 'der' }).compare(Buffer.from(AsnConvert.serialize(caCert.tbsCertificate.subjectPublicKeyInfo))) !== 0)
    throw new Error('the CA key does not match the CA certificate');
  const tbs = new TBSCertificate({
    version: Version.v3,
    serialNumber: serial(),
    signature: ECDSA_SHA256(),
    issuer: caCert.tbsCertificate.subject,
    validity: validity(1),
    subject: csr.subjectName,
    subjectPublicKeyInfo: csr.subjectPublicKeyInfo,
    extensions: csr.extensions.length ? csr.extensions : undefined,
  });
  return certificate(tbs, caKey);
}

function certificate(tbs: TBSCertificate, key: ReturnType<typeof createPrivateKey>): string {
  const cert = new Certificate({ tbsCertificate: tbs, signatureAlgorithm: ECDSA_SHA256(), signatureValue: signDer(AsnConvert.serialize(tbs), key) });
  return toPem('CERTIFICATE', AsnConvert.serialize(cert));
}

function serial(): ArrayBuffer {
  const b = randomBytes(16);
  b[0] = (b[0] & 0x7f) | 0x40; // positive, 16 bytes long
  return b.buffer.slice(b.byteOffset, b.byteOffset + 16) as ArrayBuffer;
}

function validity(years: number): Validity {
  const notBefore = new Date(Math.floor(Date.now() / 1000) * 1000 - 60_000);
  const notAfter = new Date(notBefore);
  notAfter.setUTCFullYear(notAfter.getUTCFullYear() + years);
  return new Validity({ notBefore, notAfter });
}
