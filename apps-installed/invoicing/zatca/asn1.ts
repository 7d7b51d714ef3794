/** Shared X.509 building blocks for the CSR and the test CA (ASN.1 by @peculiar/asn1-x509). */
import { createSign, type KeyObject } from 'node:crypto';
import { AsnConvert, OctetString } from '@peculiar/asn1-schema';
import {
  AlgorithmIdentifier,
  AttributeTypeAndValue,
  AttributeValue,
  Extension,
  Name,
  RelativeDistinguishedName,
  SubjectPublicKeyInfo,
} from '@peculiar/asn1-x509';

export const OID = {
  commonName: '2.5.4.3',
  surname: '2.5.4.4', // ZATCA's "SN": 1-solution|2-model|3-serial
  country: '2.5.4.6',
  organization: '2.5.4.10',
  organizationalUnit: '2.5.4.11',
  title: '2.5.4.12', // invoice types the unit issues, e.g. 1100
  businessCategory: '2.5.4.15',
  registeredAddress: '2.5.4.26',
  userId: '0.9.2342.19200300.100.1.1', // UID: the VAT number
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  extensionRequest: '1.2.840.113549.1.9.14',
  certificateTemplateName: '1.3.6.1.4.1.311.20.2',
} as const;

/** A Name with one attribute per RDN, in the order given; country codes are PrintableString, the rest UTF8String. */
export function makeName(entries: [oid: string, value: string][]): Name {
  return new Name(
    entries.map(
      ([type, value]) =>
        new RelativeDistinguishedName([
          new AttributeTypeAndValue({
            type,
            value: new AttributeValue(type === OID.country ? { printableString: value } : { utf8String: value }),
          }),
        ]),
    ),
  );
}

export function spkiOf(publicKey: KeyObject): SubjectPublicKeyInfo {
  return AsnConvert.parse(publicKey.export({ type: 'spki', format: 'der' }), SubjectPublicKeyInfo);
}

export function extension(extnID: string, value: unknown, critical = false): Extension {
  return new Extension({ extnID, critical, extnValue: new OctetString(AsnConvert.serialize(value)) });
}

export const ECDSA_SHA256 = () => new AlgorithmIdentifier({ algorithm: OID.ecdsaWithSha256 });

/** ECDSA-SHA256 over DER bytes: the signature X.509 structures carry (DER, as node:crypto gives it). */
export function signDer(der: ArrayBuffer, key: KeyObject): ArrayBuffer {
  const sig = createSign('sha256').update(Buffer.from(der)).sign(key);
  return sig.buffer.slice(sig.byteOffset, sig.byteOffset + sig.byteLength) as ArrayBuffer;
}

export function toPem(label: string, der: ArrayBuffer | Uint8Array): string {
  const b64 = Buffer.from(der as ArrayBuffer).toString('base64');
  return `-----BEGIN ${label}-----\n${b64.match(/.{1,64}/g)!.join('\n')}\n-----END ${label}-----\n`;
}
