/** Reading a CSR back: its signature checked, its subject, SAN directoryName and template name. */
import { createPublicKey, createVerify, type KeyObject } from 'node:crypto';
import { AsnConvert } from '@peculiar/asn1-schema';
import { DirectoryString, Extensions, Name, SubjectAlternativeName, SubjectPublicKeyInfo, id_ce_subjectAltName } from '@peculiar/asn1-x509';
import { CertificationRequest } from '@peculiar/asn1-csr';
import { OID } from './asn1.ts';
import { pemBody } from './certificate.ts';

export interface CsrContents {
  /** attribute OID → value, for the subject and the SAN directoryName. */
  subject: Record<string, string>;
  alternativeName: Record<string, string>;
  certificateTemplateName?: string;
  /** The curve of the public key, e.g. "secp256k1". */
  namedCurve?: string;
  publicKey: KeyObject;
  signatureValid: boolean;
  extensions: Extensions;
  subjectName: Name;
  subjectPublicKeyInfo: SubjectPublicKeyInfo;
}

export function readCsr(csrPem: string): CsrContents {
  const csr = AsnConvert.parse(Buffer.from(pemBody(csrPem), 'base64'), CertificationRequest);
  const info = csr.certificationRequestInfo;
  const publicKey = createPublicKey({ key: Buffer.from(AsnConvert.serialize(info.subjectPKInfo)), format: 'der', type: 'spki' });
  const signed = csr.certificationRequestInfoRaw ?? AsnConvert.serialize(info);
  const signatureValid = createVerify('sha256').update(Buffer.from(signed)).verify(publicKey, Buffer.from(csr.signature));
  const requested = (info.attributes ?? []).find((a) => a.type === OID.extensionRequest);
  const extensions = requested ? AsnConvert.parse(requested.values[0], Extensions) : new Extensions();
  const ext = (oid: string) => extensions.find((e) => e.extnID === oid)?.extnValue.buffer;
  const san = ext(id_ce_subjectAltName);
  const template = ext(OID.certificateTemplateName);
  const directory = san ? AsnConvert.parse(san, SubjectAlternativeName).find((g) => g.directoryName)?.directoryName : undefined;
  return {
    subject: nameMap(info.subject),
    alternativeName: directory ? nameMap(directory) : {},
    certificateTemplateName: template ? AsnConvert.parse(template, DirectoryString).toString() : undefined,
    namedCurve: publicKey.asymmetricKeyDetails?.namedCurve,
    publicKey,
    signatureValid,
    extensions,
    subjectName: info.subject,
    subjectPublicKeyInfo: info.subjectPKInfo,
  };
}

function nameMap(name: Name): Record<string, string> {
  return Object.fromEntries([...name].flatMap((rdn) => [...rdn].map((atv) => [atv.type, atv.value.toString()])));
}
