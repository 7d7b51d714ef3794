/**
 * ZATCA's stamp: an enveloped XAdES signature in ext:UBLExtensions, as the SDK writes it.
 * - The signature value is ECDSA (secp256k1, SHA-256) over the invoice hash's 32 bytes — not over
 *   ds:SignedInfo: ZATCA verifies it against the hash, and so can anyone with node:crypto.
 * - The SignedProperties digest is base64 of the hex SHA-256 of the SignedProperties element as
 *   the SDK serialises it: xmlns:xades on the element, xmlns:ds on every ds:* element, at the
 *   indentation it has in the document (checked against the SDK's own samples in the tests).
 * - The block goes right after the Invoice start tag with no whitespace of its own outside it, and
 *   the QR is rewritten in place, so the hash of the stamped document is the hash that was signed.
 */
import { createPrivateKey, createSign } from 'node:crypto';
import { readCertificate, hexDigestBase64, type SigningCertificate } from './certificate.ts';
import { invoiceHash } from './invoice-hash.ts';
import { parseQr, qr } from './qr.ts';
import { memoByString } from './memo.ts';
import { escapeText } from './xml-writer.ts';

export interface SignOptions {
  /** PEM of the secp256k1 key (SEC1 "EC PRIVATE KEY" or PKCS #8). */
  privateKeyPem: string;
  /** PEM (or bare base64) of the certificate ZATCA issued for the key. */
  certificatePem: string;
  signingTime: Date;
}

export interface Signed {
  xml: string;
  /** The invoice hash (base64): the next document's PIH. */
  hash: string;
  /** Base64 DER ECDSA signature of the hash. */
  signatureValue: string;
  /** The QR payload with tags 1–9 (base64), as set into the XML. */
  qr: string;
}

const NS_DS = 'http://www.w3.org/2000/09/xmldsig#';
const NS_XADES = 'http://uri.etsi.org/01903/v1.3.2#';
const SHA256 = 'http://www.w3.org/2001/04/xmlenc#sha256';
const C14N11 = 'http://www.w3.org/2006/12/xml-c14n11';
const XPATH = 'http://www.w3.org/TR/1999/REC-xpath-19991116';

const privateKeyOf = memoByString((pem) => createPrivateKey(pem));

export function signHash(hash: string, privateKeyPem: string): string {
  const key = privateKeyOf(privateKeyPem);
  return createSign('sha256').update(Buffer.from(hash, 'base64')).sign(key).toString('base64');
}

export function sign(xml: string, opts: SignOptions): Signed {
  const hash = invoiceHash(xml);
  return stamped(xml, hash, signHash(hash, opts.privateKeyPem), opts.certificatePem, opts.signingTime);
}

export interface StampOptions {
  certificatePem: string;
  signingTime: Date;
  /** The signature `sign` made (ECDSA is randomised: it is kept to write the same stamp again). */
  signatureValue: string;
}

/** The stamp `sign` wrote, written again from its signature value: the same bytes, without the key. */
export function stamp(xml: string, opts: StampOptions): Signed {
  return stamped(xml, invoiceHash(xml), opts.signatureValue, opts.certificatePem, opts.signingTime);
}

function stamped(xml: string, hash: string, signatureValue: string, certificatePem: string, signingTime: Date): Signed {
  if (xml.includes('<ext:UBLExtensions')) throw new Error('the document is already stamped');
  const cert = readCertificate(certificatePem);
  const time = signingTime.toISOString().slice(0, 19);

  const simplified = /<cbc:InvoiceTypeCode name="02/.test(xml);
  const qrMatch = QR_RE.exec(xml);
  if (!qrMatch) throw new Error('the document has no QR AdditionalDocumentReference to complete');
  const qrValue = qr({
    ...parseQr(qrMatch[2]),
    hash,
    signature: signatureValue,
    publicKey: cert.publicKey,
    certificateSignature: simplified ? cert.signature : undefined,
  });

  const start = /<Invoice\b[^>]*>/.exec(xml);
  if (!start) throw new Error('not a UBL Invoice document');
  const at = start.index + start[0].length;
  const block = extensionsBlock(hash, signatureValue, cert, time);
  const out = (xml.slice(0, at) + block + xml.slice(at)).replace(QR_RE, (_m, open: string, _v, close: string) => open + qrValue + close);
  return { xml: out, hash, signatureValue, qr: qrValue };
}

const QR_RE =
  /(<cac:AdditionalDocumentReference>\s*<cbc:ID>QR<\/cbc:ID>\s*<cac:Attachment>\s*<cbc:EmbeddedDocumentBinaryObject[^>]*>)([^<]*)(<\/cbc:EmbeddedDocumentBinaryObject>)/;

/** The SignedProperties element at its place in the block; `standalone` declares its namespaces as the digest wants. */
export function signedProperties(cert: SigningCertificate, signingTime: string, standalone: boolean): string {
  const ds = standalone ? ` xmlns:ds="${NS_DS}"` : '';
  const xades = standalone ? ` xmlns:xades="${NS_XADES}"` : '';
  return lines(8, [
    `<xades:SignedProperties${xades} Id="xadesSignedProperties">`,
    [
      `<xades:SignedSignatureProperties>`,
      [
        `<xades:SigningTime>${signingTime}</xades:SigningTime>`,
        `<xades:SigningCertificate>`,
        [
          `<xades:Cert>`,
          [
            `<xades:CertDigest>`,
            [`<ds:DigestMethod${ds} Algorithm="${SHA256}"/>`, `<ds:DigestValue${ds}>${cert.digest}</ds:DigestValue>`],
            `</xades:CertDigest>`,
            `<xades:IssuerSerial>`,
            [
              `<ds:X509IssuerName${ds}>${escapeText(cert.issuerName)}</ds:X509IssuerName>`,
              `<ds:X509SerialNumber${ds}>${cert.serialNumber}</ds:X509SerialNumber>`,
            ],
            `</xades:IssuerSerial>`,
          ],
          `</xades:Cert>`,
        ],
        `</xades:SigningCertificate>`,
      ],
      `</xades:SignedSignatureProperties>`,
    ],
    `</xades:SignedProperties>`,
  ]).trimStart();
}

function extensionsBlock(hash: string, signatureValue: string, cert: SigningCertificate, signingTime: string): string {
  const propsDigest = hexDigestBase64(signedProperties(cert, signingTime, true));
  const transform = (xpath: string) => [`<ds:Transform Algorithm="${XPATH}">`, [`<ds:XPath>${escapeText(xpath)}</ds:XPath>`], `</ds:Transform>`];
  return lines(0, [
    `<ext:UBLExtensions>`,
    [
      `<ext:UBLExtension>`,
      [
        `<ext:ExtensionURI>urn:oasis:names:specification:ubl:dsig:enveloped:xades</ext:ExtensionURI>`,
        `<ext:ExtensionContent>`,
        [
          `<sig:UBLDocumentSignatures xmlns:sig="urn:oasis:names:specification:ubl:schema:xsd:CommonSignatureComponents-2" xmlns:sac="urn:oasis:names:specification:ubl:schema:xsd:SignatureAggregateComponents-2" xmlns:sbc="urn:oasis:names:specification:ubl:schema:xsd:SignatureBasicComponents-2">`,
          [
            `<sac:SignatureInformation>`,
            [
              `<cbc:ID>urn:oasis:names:specification:ubl:signature:1</cbc:ID>`,
              `<sbc:ReferencedSignatureID>urn:oasis:names:specification:ubl:signature:Invoice</sbc:ReferencedSignatureID>`,
              `<ds:Signature xmlns:ds="${NS_DS}" Id="signature">`,
              [
                `<ds:SignedInfo>`,
                [
                  `<ds:CanonicalizationMethod Algorithm="${C14N11}"/>`,
                  `<ds:SignatureMethod Algorithm="http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256"/>`,
                  `<ds:Reference Id="invoiceSignedData" URI="">`,
                  [
                    `<ds:Transforms>`,
                    [
                      ...transform('not(//ancestor-or-self::ext:UBLExtensions)'),
                      ...transform('not(//ancestor-or-self::cac:Signature)'),
                      ...transform("not(//ancestor-or-self::cac:AdditionalDocumentReference[cbc:ID='QR'])"),
                      `<ds:Transform Algorithm="${C14N11}"/>`,
                    ],
                    `</ds:Transforms>`,
                    `<ds:DigestMethod Algorithm="${SHA256}"/>`,
                    `<ds:DigestValue>${hash}</ds:DigestValue>`,
                  ],
                  `</ds:Reference>`,
                  `<ds:Reference Type="http://www.w3.org/2000/09/xmldsig#SignatureProperties" URI="#xadesSignedProperties">`,
                  [`<ds:DigestMethod Algorithm="${SHA256}"/>`, `<ds:DigestValue>${propsDigest}</ds:DigestValue>`],
                  `</ds:Reference>`,
                ],
                `</ds:SignedInfo>`,
                `<ds:SignatureValue>${signatureValue}</ds:SignatureValue>`,
                `<ds:KeyInfo>`,
                [`<ds:X509Data>`, [`<ds:X509Certificate>${cert.base64}</ds:X509Certificate>`], `</ds:X509Data>`],
                `</ds:KeyInfo>`,
                `<ds:Object>`,
                [
                  `<xades:QualifyingProperties xmlns:xades="${NS_XADES}" Target="signature">`,
                  [{ indented: signedProperties(cert, signingTime, false) }],
                  `</xades:QualifyingProperties>`,
                ],
                `</ds:Object>`,
              ],
              `</ds:Signature>`,
            ],
            `</sac:SignatureInformation>`,
          ],
          `</sig:UBLDocumentSignatures>`,
        ],
        `</ext:ExtensionContent>`,
      ],
      `</ext:UBLExtension>`,
    ],
    `</ext:UBLExtensions>`,
  ]);
}

/** A line, a nested block (one level, 4 spaces, deeper: the SDK's layout), or a fragment whose later lines are already indented. */
type Lines = (string | { indented: string } | Lines)[];

function lines(level: number, items: Lines): string {
  const pad = ' '.repeat(level * 4);
  return items
    .map((item) => (Array.isArray(item) ? lines(level + 1, item) : pad + (typeof item === 'string' ? item : item.indented)))
    .join('\n');
}
