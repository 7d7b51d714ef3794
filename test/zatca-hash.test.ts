// The invoice hash and the PIH chain (issue 27, part 6), checked against ZATCA's own SDK: its
// signed samples (test/zatca-fixtures, from zatca-einvoicing-sdk 238-R3.4.8, Data/Samples) carry
// the hash the SDK computed in their invoiceSignedData reference.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { validateXML } from 'xmllint-wasm';
import { buildXml, canonicalForHash, INITIAL_PIH, invoiceHash, issueCertificate, makeKeyAndCsr, makeTestCa, sign } from '../apps-installed/invoicing/zatca/index.ts';
import { creditNote, debitNote, simplifiedInvoice, standardInvoice } from './zatca-documents.ts';

const FIXTURES = path.join(import.meta.dirname, 'zatca-fixtures');
const sample = (name: string) => fs.readFileSync(path.join(FIXTURES, name), 'utf8');
const sdkDigest = (xml: string) => /Id="invoiceSignedData"[\s\S]*?<ds:DigestValue>([^<]+)<\/ds:DigestValue>/.exec(xml)![1];
const pihOf = (xml: string) => /<cbc:ID>PIH<\/cbc:ID>\s*<cac:Attachment>\s*<cbc:EmbeddedDocumentBinaryObject[^>]*>([^<]+)</.exec(xml)![1];

describe('the invoice hash', () => {
  it('INITIAL_PIH is ZATCA\'s published value: base64 of the hex SHA-256 of "0"', () => {
    expect(INITIAL_PIH).toBe('NWZlY2ViNjZmZmM4NmYzOGQ5NTI3ODZjNmQ2OTZjNzljMmRiYzIzOWRkNGU5MWI0NjcyOWQ3M2EyN2ZiNTdlOQ==');
  });

  const samples = fs.readdirSync(FIXTURES).filter((f) => f.endsWith('.xml'));
  it.each(samples)('equals the hash ZATCA\'s SDK gave its sample %s', (name) => {
    const xml = sample(name);
    expect(invoiceHash(xml)).toBe(sdkDigest(xml));
  });

  it('the SDK samples cover the kinds we issue (388, 381, 383; standard and simplified; S, Z, E, O)', () => {
    const all = samples.map(sample).join('\n');
    for (const code of ['>388<', '>381<', '>383<', 'name="0100000"', 'name="0200000"', '>Z</cbc:ID>', '>E</cbc:ID>', '>O</cbc:ID>']) expect(all).toContain(code);
  });

  it('leaves out the stamp, the cac:Signature and the QR, keeps everything else', () => {
    const canonical = canonicalForHash(sample('Simplified_Invoice.xml'));
    expect(canonical).not.toContain('UBLExtensions');
    expect(canonical).not.toContain('<cac:Signature>');
    expect(canonical).not.toContain('<cbc:ID>QR</cbc:ID>');
    expect(canonical).toContain('<cbc:ID>PIH</cbc:ID>');
    expect(canonical.startsWith('<Invoice xmlns=')).toBe(true); // no XML declaration
    expect(canonical).not.toMatch(/<[^>]+\/>/); // C14N writes empty elements as start and end tags
  });

  it('changes with any figure and not with the QR', () => {
    const xml = buildXml(simplifiedInvoice());
    const h = invoiceHash(xml);
    expect(h).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    expect(invoiceHash(xml.replace('<cbc:PayableAmount currencyID="SAR">40.00<', '<cbc:PayableAmount currencyID="SAR">40.01<'))).not.toBe(h);
    const qrText = /<cbc:ID>QR<\/cbc:ID>\s*<cac:Attachment>\s*<cbc:EmbeddedDocumentBinaryObject[^>]*>([^<]+)</.exec(xml)![1];
    expect(invoiceHash(xml.replace(qrText, Buffer.from('another QR').toString('base64')))).toBe(h);
  });

  it('its canonical form is libxml2\'s C14N of the document without the three parts (escapes, Arabic, a stamp included)', async () => {
    const awkward = standardInvoice({ customer: { ...standardInvoice().customer!, name: 'Smith & Sons <KSA> "Ltd" \'KSA\' | سميث وأبناؤه' } });
    const { privateKeyPem, csrPem } = makeKeyAndCsr({
      environment: 'sandbox', commonName: 'TST', organizationName: 'Org', organizationUnit: 'Unit', solutionName: 'Diwan', model: '1', deviceSerial: '1',
      vatNumber: '310122393500003', invoiceType: '1100', registeredAddress: 'RRRD2929', businessCategory: 'Supplies',
    });
    const stamped = sign(buildXml(awkward), { privateKeyPem, certificatePem: issueCertificate(csrPem, makeTestCa()), signingTime: new Date() }).xml;
    for (const xml of [buildXml(awkward), stamped]) {
      const without = xml
        .replace(/<ext:UBLExtensions>[\s\S]*?<\/ext:UBLExtensions>/, '')
        .replace(/<cac:Signature>[\s\S]*?<\/cac:Signature>/, '')
        .replace(/<cac:AdditionalDocumentReference>\s*<cbc:ID>QR<\/cbc:ID>[\s\S]*?<\/cac:AdditionalDocumentReference>/, '');
      const libxml2 = await validateXML({ xml: { fileName: 'doc.xml', contents: without }, normalization: 'c14n' });
      expect(libxml2.normalized).toContain('Smith &amp; Sons &lt;KSA&gt; "Ltd"');
      // xmllint ends what it prints with a newline; C14N itself has none after the root element.
      expect(canonicalForHash(xml)).toBe(libxml2.normalized.replace(/\n$/, ''));
    }
  });

  it('refuses what is not well-formed XML rather than hash a parser\'s guess', () => {
    expect(() => invoiceHash('<Invoice><cbc:ID>1</Invoice>')).toThrow(/not well-formed XML/);
    expect(() => invoiceHash('not xml')).toThrow(/not well-formed XML: no root element/);
  });

  it('is SHA-256 of the canonical form, in base64', () => {
    const xml = buildXml(standardInvoice());
    expect(invoiceHash(xml)).toBe(createHash('sha256').update(canonicalForHash(xml)).digest('base64'));
  });

  it('chains: each document\'s PIH is the previous document\'s hash, starting from INITIAL_PIH', () => {
    const makers = [standardInvoice, simplifiedInvoice, creditNote, debitNote];
    const issued: string[] = [];
    let previousHash = INITIAL_PIH;
    makers.forEach((make, i) => {
      const xml = buildXml(make({ counter: i + 1, previousHash }));
      issued.push(xml);
      previousHash = invoiceHash(xml);
    });
    expect(pihOf(issued[0])).toBe(INITIAL_PIH);
    for (let i = 1; i < issued.length; i++) expect(pihOf(issued[i])).toBe(invoiceHash(issued[i - 1]));
    expect(new Set(issued.map(invoiceHash)).size).toBe(issued.length);
  });
});
