// Every label in both languages: a manifest missing one is refused with every missing key and
// its JSON pointer, and every first-party manifest passes.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Manifest } from '../../manifests/manifest.schema.ts';
import { checkManifest } from './manifest-check.ts';
import { labelProblems } from './manifest-labels.ts';

const dir = path.resolve(import.meta.dirname, '../../manifests');
const firstParty = fs.readdirSync(dir).filter((f) => f.endsWith('.json') && f !== 'manifest.schema.json');

const bi = (en: string, ar: string) => ({ en, ar });
const unlabelled = (): Manifest =>
  ({
    id: 'errands', version: '1.0.0', host: '^0.1.0', name: bi('Errands', 'المهمات'), description: bi('Errands to run', 'مهمات للإنجاز'),
    strings: { en: { 'state.open': 'Open' }, ar: {} },
    documentTypes: [{
      name: 'errand', resource: 'errands', idPrefix: 'err', label: bi('Errand', 'مهمة'),
      fields: [
        { name: 'title', type: 'string', label: bi('Title', 'العنوان') },
        { name: 'due', type: 'date' },
        { name: 'stops', type: 'lines', label: bi('Stops', 'المحطات'), fields: [{ name: 'place', type: 'string' }] },
      ],
      states: ['open', 'done'], initialState: 'open',
      transitions: [{ name: 'finish', from: ['open'], to: 'done' }],
    }],
  }) as Manifest;

describe('manifest labels', () => {
  it('every first-party manifest has every label in English and Arabic', () => {
    expect(firstParty.length).toBeGreaterThan(70);
    const missing = firstParty.flatMap((f) => labelProblems(JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as Manifest).map((p) => `${f} ${p.pointer}`));
    expect(missing).toEqual([]);
  });

  it('every enum value of every first-party manifest is labelled in English and Arabic (value.<field>.<value>), which the console shows for the code', () => {
    const missing: string[] = [];
    for (const f of firstParty) {
      const m = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as Manifest;
      const fields = (m.documentTypes ?? []).flatMap((dt) => [
        ...dt.fields,
        ...dt.fields.flatMap((x) => x.fields ?? []),
        ...(dt.transitions ?? []).flatMap((t) => t.input ?? []),
      ]);
      for (const field of fields) {
        if (field.type !== 'enum') continue;
        for (const v of field.values ?? []) {
          const key = `value.${field.name}.${v}`;
          for (const lang of ['en', 'ar'] as const) if (!m.strings[lang]?.[key]) missing.push(`${f} ${lang} ${key}`);
        }
      }
    }
    expect([...new Set(missing)]).toEqual([]);
  });

  it('refuses a manifest missing labels, listing every missing key with its pointer', () => {
    const { manifest, problems } = checkManifest(unlabelled());
    expect(manifest).toBeUndefined();
    const missing = problems.map((p) => p.pointer);
    expect(missing.sort()).toEqual(
      [
        '/documentTypes/0/fields/1/label',
        '/documentTypes/0/fields/2/fields/0/label',
        '/documentTypes/0/transitions/0/label',
        '/strings/ar/state.open',
        '/strings/en/state.done',
        '/strings/ar/state.done',
      ].sort(),
    );
    expect(problems.find((p) => p.pointer === '/strings/ar/state.done')?.message).toBe('state done has no label in Arabic');
    expect(problems.find((p) => p.pointer === '/documentTypes/0/fields/1/label')?.message).toBe('field errand.due has no label in English and Arabic');
  });

  it("refuses a type's own state label that names no state of that type", () => {
    const m = unlabelled();
    m.strings.en = { ...m.strings.en, 'state.errand.gone': 'Gone', 'state.chore.open': 'Open', 'state.errand.open': 'Open' };
    m.strings.ar = { ...m.strings.ar, 'state.errand.gone': 'ذهبت', 'state.chore.open': 'مفتوحة', 'state.errand.open': 'مفتوحة' };
    const unknown = checkManifest(m).problems.filter((p) => p.rule === 'unknownState');
    expect(unknown.map((p) => p.pointer).sort()).toEqual(['/strings/ar/state.chore.open', '/strings/ar/state.errand.gone', '/strings/en/state.chore.open', '/strings/en/state.errand.gone']);
    expect(unknown.find((p) => p.pointer === '/strings/en/state.errand.gone')?.message).toBe('state.errand.gone names no state of a document type errand');
  });

  it('accepts the same manifest once every label is there', () => {
    const m = unlabelled() as Manifest & { documentTypes: NonNullable<Manifest['documentTypes']> };
    const dt = m.documentTypes[0];
    dt.fields[1].label = bi('Due', 'الاستحقاق');
    dt.fields[2].fields![0].label = bi('Place', 'المكان');
    dt.transitions![0].label = bi('Finish', 'إنهاء');
    m.strings = { en: { 'state.open': 'Open', 'state.done': 'Done' }, ar: { 'state.open': 'مفتوحة', 'state.done': 'منجزة' } };
    expect(checkManifest(m).problems).toEqual([]);
  });
});
