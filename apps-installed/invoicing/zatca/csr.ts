/**
 * The key and the certificate signing request ZATCA's onboarding takes (compliance CSID):
 * a secp256k1 key (node:crypto; WebCrypto has no secp256k1) and a PKCS #10 request with the
 * subject C=SA, OU, O, CN, the certificate-template-name extension of the target environment,
 * and a subjectAltName directoryName carrying SN (1-solution|2-model|3-serial), UID (VAT number),
 * title (invoice types, e.g. 1100), registeredAddress and businessCategory.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { AsnConvert } from '@peculiar/asn1-schema';
import { Attribute, DirectoryString, Extensions, GeneralName, SubjectAlternativeName, id_ce_subjectAltName } from '@peculiar/asn1-x509';
import { Attributes, CertificationRequest, CertificationRequestInfo } from '@peculiar/asn1-csr';
import { ECDSA_SHA256, extension, makeName, OID, signDer, spkiOf, toPem } from './asn1.ts';

export type ZatcaEnvironment = 'sandbox' | 'simulation' | 'production';

/** The certificate template each of ZATCA's environments issues from. */
export const CERTIFICATE_TEMPLATE: Record<ZatcaEnvironment, string> = {
  sandbox: 'TSTZATCA-Code-Signing',
  simulation: 'PREZATCA-Code-Signing',
  production: 'ZATCA-Code-Signing',
};

export interface CsrInfo {
  environment: ZatcaEnvironment;
  /** CN: the unit's common name, e.g. "TST-886431145-399999999900003". */
  commonName: string;
  /** O: the taxpayer's name. */
  organizationName: string;
  /** OU: the branch's name (for a VAT group member, its 10-digit TIN). */
  organizationUnit: string;
  /** SN: solution name, model or version, and the unit's serial (often a UUID). */
  solutionName: string;
  model: string;
  deviceSerial: string;
  /** UID: the 15-digit VAT number. */
  vatNumber: string;
  /** title: four flags, standard / simplified / (reserved) / (reserved): "1100" issues both. */
  invoiceType: string;
  /** registeredAddress: the branch's address (short address or street). */
  registeredAddress: string;
  /** businessCategory: the branch's industry. */
  businessCategory: string;
}

export interface KeyAndCsr {
  /** SEC1 PEM ("EC PRIVATE KEY"), the form ZATCA's tools read. */
  privateKeyPem: string;
  csrPem: string;
  /** What the compliance API's `csr` field takes: base64 of the PEM text. */
  csrBase64: string;
}

export function makeKeyAndCsr(info: CsrInfo): KeyAndCsr {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'secp256k1' });
  const privateKeyPem = privateKey.export({ type: 'sec1', format: 'pem' }).toString();
  const csrPem = csrFor(privateKeyPem, info);
  return { privateKeyPem, csrPem, csrBase64: Buffer.from(csrPem).toString('base64') };
}

/** A CSR for an existing key (a renewal keeps or replaces the key as the caller decides). */
export function csrFor(privateKeyPem: string, info: CsrInfo): string {
  const key = createPrivateKey(privateKeyPem);
  const subject = makeName([
    [OID.country, 'SA'],
    [OID.organizationalUnit, info.organizationUnit],
    [OID.organization, info.organizationName],
    [OID.commonName, info.commonName],
  ]);
  const altName = new SubjectAlternativeName([
    new GeneralName({
      directoryName: makeName([
        [OID.surname, `1-${info.solutionName}|2-${info.model}|3-${info.deviceSerial}`],
        [OID.userId, info.vatNumber],
        [OID.title, info.invoiceType],
        [OID.registeredAddress, info.registeredAddress],
        [OID.businessCategory, info.businessCategory],
      ]),
    }),
  ]);
  const extensions = new Extensions([
    extension(OID.certificateTemplateName, new DirectoryString({ printableString: CERTIFICATE_TEMPLATE[info.environment] })),
    extension(id_ce_subjectAltName, altName),
  ]);
  const requestInfo = new CertificationRequestInfo({
    version: 0,
    subject,
    subjectPKInfo: spkiOf(createPublicKey(key)),
    attributes: new Attributes([new Attribute({ type: OID.extensionRequest, values: [AsnConvert.serialize(extensions)] })]),
  });
  const csr = new CertificationRequest({
    certificationRequestInfo: requestInfo,
    signatureAlgorithm: ECDSA_SHA256(),
    signature: signDer(AsnConvert.serialize(requestInfo), key),
  });
  return toPem('CERTIFICATE REQUEST', AsnConvert.serialize(csr));
}
