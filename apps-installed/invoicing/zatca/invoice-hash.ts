/**
 * The invoice hash ZATCA defines: remove ext:UBLExtensions, cac:Signature and the QR
 * AdditionalDocumentReference (the SDK's XSLT; the whitespace around them stays), canonicalize
 * with C14N 1.1 and take SHA-256, in base64. C14N 1.1 differs from 1.0 only for xml:id, xml:base
 * and the other xml:* attributes, which a UBL invoice does not carry, so 1.0's implementation
 * (xml-crypto's) gives the same bytes.
 */
import { createHash } from 'node:crypto';
import { DOMParser } from '@xmldom/xmldom';
import { C14nCanonicalization } from 'xml-crypto';
import { NS } from './namespaces.ts';

/** ZATCA's PIH for a company's first document: base64 of the hex SHA-256 of "0". */
export const INITIAL_PIH = Buffer.from(createHash('sha256').update('0').digest('hex')).toString('base64');

export function parseXml(xml: string): Document {
  const errors: string[] = [];
  const doc = new DOMParser({
    // xmldom recovers from a mismatched end tag with only a warning: a hash must not be taken over a guess.
    errorHandler: (_level: string, msg: string) => errors.push(String(msg).split('\n')[0]),
  }).parseFromString(xml, 'text/xml');
  if (errors.length || !doc.documentElement) throw new Error(`not well-formed XML: ${errors.join('; ') || 'no root element'}`);
  return doc as unknown as Document;
}

/** The canonical form the hash is taken over (exported for tests and diagnostics). */
export function canonicalForHash(xml: string): string {
  const doc = parseXml(xml);
  const root = doc.documentElement;
  for (const child of Array.from(root.childNodes)) {
    if (child.nodeType !== 1) continue;
    const e = child as Element;
    const drop =
      (e.namespaceURI === NS.ext && e.localName === 'UBLExtensions') ||
      (e.namespaceURI === NS.cac && e.localName === 'Signature') ||
      (e.namespaceURI === NS.cac && e.localName === 'AdditionalDocumentReference' && childText(e, NS.cbc, 'ID') === 'QR');
    if (drop) root.removeChild(e);
  }
  return new C14nCanonicalization().process(root, {});
}

/** The QR a document's XML carries (its AdditionalDocumentReference QR): on a cleared document, ZATCA's. */
export function qrOfXml(xml: string): string | undefined {
  for (const e of Array.from(parseXml(xml).documentElement.childNodes)) {
    if (e.nodeType !== 1 || (e as Element).namespaceURI !== NS.cac || (e as Element).localName !== 'AdditionalDocumentReference') continue;
    if (childText(e as Element, NS.cbc, 'ID') !== 'QR') continue;
    const value = (e as Element).getElementsByTagNameNS(NS.cbc, 'EmbeddedDocumentBinaryObject')[0];
    return value?.textContent?.trim() || undefined;
  }
  return undefined;
}

export function invoiceHash(xml: string): string {
  return createHash('sha256').update(canonicalForHash(xml), 'utf8').digest('base64');
}

function childText(parent: Element, ns: string, localName: string): string | undefined {
  for (const c of Array.from(parent.childNodes)) {
    if (c.nodeType === 1 && (c as Element).namespaceURI === ns && (c as Element).localName === localName) return (c.textContent ?? '').trim();
  }
  return undefined;
}
