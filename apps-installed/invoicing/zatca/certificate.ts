/**
 * What the stamp needs from the signing certificate, in the forms ZATCA's SDK writes them:
 * the certificate's base64 body, its digest (base64 of the hex SHA-256 of that base64 text),
 * the issuer as "CN=…, DC=…" (most specific first), the serial number in decimal, the public key
 * (DER SubjectPublicKeyInfo) and the CA's signature over it (QR tags 8 and 9).
 */
import { createHash, X509Certificate } from 'node:crypto';
import { AsnConvert } from '@peculiar/asn1-schema';
import { Certificate, type Name } from '@peculiar/asn1-x509';
import { memoByString } from './memo.ts';

export interface SigningCertificate {
  base64: string;
  digest: string;
  issuerName: string;
  serialNumber: string;
  publicKey: Buffer;
  signature: Buffer;
  x509: X509Certificate;
}

/** Short names for the attribute types a ZATCA certificate's names carry. */
const SHORT_NAMES: Record<string, string> = {
  '2.5.4.3': 'CN',
  '2.5.4.6': 'C',
  '2.5.4.7': 'L',
  '2.5.4.8': 'ST',
  '2.5.4.10': 'O',
  '2.5.4.11': 'OU',
  '0.9.2342.19200300.100.1.25': 'DC',
  '1.2.840.113549.1.9.1': 'E',
};

/** The body of a PEM (or a bare base64 certificate, as ZATCA's CSID answers give it). */
export function pemBody(pem: string): string {
  return pem.replace(/-----(BEGIN|END) [A-Z ]+-----/g, '').replace(/\s+/g, '');
}

/**
 * ZATCA's CSID answers carry the certificate as `binarySecurityToken`: base64 of the certificate's
 * own base64 text. This gives the PEM that `sign` and `readCertificate` take.
 */
export function certificateFromSecurityToken(binarySecurityToken: string): string {
  const body = Buffer.from(binarySecurityToken, 'base64').toString('ascii').replace(/\s+/g, '');
  if (!/^MII[A-Za-z0-9+/]+=*$/.test(body)) throw new Error('binarySecurityToken does not hold a base64 certificate');
  return `-----BEGIN CERTIFICATE-----\n${body.match(/.{1,64}/g)!.join('\n')}\n-----END CERTIFICATE-----\n`;
}

export function hexDigestBase64(text: string): string {
  return Buffer.from(createHash('sha256').update(text, 'utf8').digest('hex')).toString('base64');
}

export const readCertificate = memoByString(parseCertificate);

function parseCertificate(certificatePem: string): SigningCertificate {
  const base64 = pemBody(certificatePem);
  const der = Buffer.from(base64, 'base64');
  const x509 = new X509Certificate(der);
  const cert = AsnConvert.parse(der, Certificate);
  return {
    base64,
    digest: hexDigestBase64(base64),
    issuerName: nameToString(cert.tbsCertificate.issuer),
    serialNumber: BigInt(`0x${x509.serialNumber}`).toString(10),
    publicKey: x509.publicKey.export({ type: 'spki', format: 'der' }),
    signature: Buffer.from(cert.signatureValue),
    x509,
  };
}

/** RFC 4514 order (last RDN first), joined with ", " as the SDK writes X509IssuerName. */
export function nameToString(name: Name): string {
  return [...name]
    .reverse()
    .flatMap((rdn) => [...rdn].map((atv) => `${SHORT_NAMES[atv.type] ?? atv.type}=${atv.value.toString()}`))
    .join(', ');
}
