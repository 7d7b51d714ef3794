// Writes manifests/manifest.schema.json from manifests/manifest.schema.ts, its source of truth.
import fs from 'node:fs';
import path from 'node:path';
import { manifestSchema } from '../manifests/manifest.schema.ts';

export const schemaJsonPath = path.join(import.meta.dirname, '../manifests/manifest.schema.json');
export const schemaJson = () => `${JSON.stringify(manifestSchema, null, 2)}\n`;

if (process.argv[1] === import.meta.filename) {
  fs.writeFileSync(schemaJsonPath, schemaJson());
  console.log(`wrote ${path.relative(process.cwd(), schemaJsonPath)}`);
}
