import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { schemaJson, schemaJsonPath } from '../scripts/gen-schema.ts';
import { checkManifest } from '../core/apps/manifest-check.ts';

describe('manifest schema', () => {
  it('manifest.schema.json is generated from manifest.schema.ts and up to date (npm run gen:schema)', () => {
    expect(fs.readFileSync(schemaJsonPath, 'utf8')).toBe(schemaJson());
  });

  it('refuses an invalid manifest with every problem listed, each with a JSON pointer and a rule', () => {
    const { manifest, problems } = checkManifest({
      id: 'Bad Id', version: '1', host: '^0.1.0', name: { en: 'x' }, description: { en: 'x', ar: 'س' }, strings: { en: {}, ar: {} }, extra: 1,
    });
    expect(manifest).toBeUndefined();
    const found = problems.map((p) => `${p.pointer} ${p.rule}`);
    expect(found).toEqual(expect.arrayContaining(['/id pattern', '/name/ar required', '/extra additionalProperties']));
  });

  it('tells a shape problem and a version problem together (a bad version beside an unknown key)', () => {
    const { manifest, problems } = checkManifest({
      id: 'demo', version: 'one', host: 'not a range', name: { en: 'Demo', ar: 'تجربة' }, description: { en: 'Demo', ar: 'تجربة' },
      strings: { en: {}, ar: {} }, colour: 'red', dependencies: { library: 'soon' },
    });
    expect(manifest).toBeUndefined();
    expect(problems.map((p) => `${p.pointer} ${p.rule}`).sort()).toEqual(['/colour additionalProperties', '/dependencies/library semverRange', '/host semverRange', '/version semver']);
    for (const p of problems) expect(p.message.length, p.pointer).toBeGreaterThan(0);
  });

  it('refuses semantic problems: semver, string parity, undeclared menu permission, bad example', () => {
    const { problems } = checkManifest({
      id: 'demo', version: 'one', host: 'not a range', name: { en: 'Demo', ar: 'تجربة' }, description: { en: 'Demo', ar: 'تجربة' },
      strings: { en: { hello: 'Hello', only: 'x' }, ar: { hello: 'مرحبا' } },
      menu: [{ id: 'home', label: { en: 'Home', ar: 'الرئيسية' }, path: '/demo', permission: 'demo:read', order: 1 }],
      eventFamilies: [{ family: 'demo', prefix: 'demo', label: { en: 'Demo', ar: 'تجربة' }, topics: [
        // v2: every topic declares its source; an `operation` declares its payload and example.
        { topic: 'demo.thing.done', description: { en: 'Done', ar: 'تم' }, source: { on: 'operation', operation: 'POST /demo/things/:id/done' }, payload: { type: 'object', required: ['n'], properties: { n: { type: 'integer' } } }, example: { n: 'x' } },
        { topic: 'other.thing.done', description: { en: 'Done', ar: 'تم' }, source: { on: 'operation', operation: 'POST /demo/other' }, payload: { type: 'object' }, example: {} },
      ] }],
    });
    const rules = problems.map((p) => `${p.pointer} ${p.rule}`);
    expect(rules).toEqual(expect.arrayContaining([
      '/version semver', '/host semverRange', '/strings/ar/only missingTranslation', '/menu/0/permission undeclared',
      '/eventFamilies/0/topics/0/example/n example.type', '/eventFamilies/0/topics/1/topic prefix',
    ]));
  });
});
