/**
 * Validation against OASIS's UBL 2.1 schemas (kept in apps-installed/invoicing/zatca/schemas),
 * with libxml2's xmllint compiled to WebAssembly (xmllint-wasm): no system tool needed.
 * The signature in ext:UBLExtensions is checked too (UBL's xmldsig and XAdES schemas, lax).
 */
import fs from 'node:fs';
import path from 'node:path';
import { validateXML } from 'xmllint-wasm';

const ROOT = path.join(import.meta.dirname, '..', 'apps-installed', 'invoicing', 'zatca', 'schemas', 'UBL-2.1');
const MAIN = 'xsd/maindoc/UBL-Invoice-2.1.xsd';

let files: { fileName: string; contents: string }[] | undefined;
function schemaFiles() {
  files ??= ['xsd/maindoc', 'xsd/common'].flatMap((dir) =>
    fs.readdirSync(path.join(ROOT, dir)).map((f) => ({ fileName: `${dir}/${f}`, contents: fs.readFileSync(path.join(ROOT, dir, f), 'utf8') })),
  );
  return files;
}

/** Validates one document or several in one xmllint run (the schemas compile once); errors name `doc-<n>.xml`. */
export async function validateUbl(xml: string | string[]): Promise<{ valid: boolean; errors: string[] }> {
  const all = schemaFiles();
  const docs = (Array.isArray(xml) ? xml : [xml]).map((contents, i) => ({ fileName: `doc-${i}.xml`, contents }));
  const result = await validateXML({
    xml: docs,
    schema: all.find((f) => f.fileName === MAIN)!,
    preload: all.filter((f) => f.fileName !== MAIN),
  });
  return { valid: result.valid, errors: result.errors.map((e) => e.rawMessage) };
}
