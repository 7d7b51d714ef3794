// The spec's event catalogue (80 families, 521 events) as first-party app manifests: every
// family is owned by exactly one source (an app manifest, or the core for `apps` and
// `audit trail`), every listed name is present verbatim, every family has exactly
// `listed + further` topics, and every manifest, payload schema and example is valid.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { manifestSchema, type EventFamilyDecl, type Manifest } from '../manifests/manifest.schema.ts';
import { checkManifest } from '../core/apps/manifest-check.ts';

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (a: Ajv) => Ajv;

const root = path.resolve(import.meta.dirname, '..');
const manifestsDir = path.join(root, 'manifests');

interface SpecFamily {
  family: string;
  prefix: string;
  listed: string[];
  further: number;
}
const spec = JSON.parse(fs.readFileSync(path.join(root, 'test/data/event-catalogue.json'), 'utf8')) as {
  families: number;
  events: number;
  catalogue: SpecFamily[];
};

/** Files in manifests/ that are not first-party catalogue manifests. */
const NOT_CATALOGUE = new Set(['invoicing.json', 'manifest.schema.json']);
const manifestFiles = fs
  .readdirSync(manifestsDir)
  .filter((f) => f.endsWith('.json') && !NOT_CATALOGUE.has(f))
  .sort();
const manifests = manifestFiles.map((file) => ({
  file,
  manifest: JSON.parse(fs.readFileSync(path.join(manifestsDir, file), 'utf8')) as Manifest,
}));
const coreFamilies = JSON.parse(fs.readFileSync(path.join(root, 'core/events/core-families.json'), 'utf8')) as EventFamilyDecl[];

/** Every family declaration with the source that declares it (`core` for the host's own). */
const sources: { owner: string; decl: EventFamilyDecl }[] = [
  ...coreFamilies.map((decl) => ({ owner: 'core', decl })),
  ...manifests.flatMap(({ manifest }) => (manifest.eventFamilies ?? []).map((decl) => ({ owner: manifest.id, decl }))),
];
const specNames = new Set(spec.catalogue.map((f) => f.family));
const catalogueSources = sources.filter((s) => specNames.has(s.decl.family));

const manifestAjv = addFormats(new Ajv({ allErrors: true, strict: false }));
const validateManifest = manifestAjv.compile(manifestSchema);
const validateFamily = manifestAjv.compile(manifestSchema.properties.eventFamilies.items);
/** Payload schemas in strict mode: unknown keywords and required-but-undeclared properties are errors. */
const payloadAjv = addFormats(new Ajv({ allErrors: true, strict: true, allowUnionTypes: true }));

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** `<prefix>.<segment>` with one to three segments; segments are lower-camel or snake words. */
const topicRe = (prefix: string) => new RegExp(`^${escapeRe(prefix)}(\\.[a-z][a-zA-Z0-9_]*){1,3}$`);
const ARABIC = /[\u0600-\u06FF]/;

/** Every `{ en, ar }` text in a manifest outside payloads and examples, with its JSON pointer. */
function bilingualTexts(node: unknown, pointer = ''): { pointer: string; en: string; ar: string }[] {
  if (!node || typeof node !== 'object') return [];
  const o = node as Record<string, unknown>;
  const keys = Object.keys(o);
  if (keys.length === 2 && typeof o.en === 'string' && typeof o.ar === 'string') return [{ pointer, en: o.en, ar: o.ar }];
  return Object.entries(o).flatMap(([k, v]) => (k === 'payload' || k === 'example' ? [] : bilingualTexts(v, `${pointer}/${k}`)));
}

describe('event catalogue: totals', () => {
  it('the spec file itself holds 80 families and 521 events', () => {
    expect(spec.catalogue).toHaveLength(80);
    expect(spec.families).toBe(80);
    expect(spec.catalogue.reduce((n, f) => n + f.listed.length + f.further, 0)).toBe(521);
  });

  it('the manifests plus the core families cover 80 families and 521 topics', () => {
    expect(new Set(catalogueSources.map((s) => s.decl.family)).size).toBe(80);
    expect(catalogueSources).toHaveLength(80);
    expect(catalogueSources.reduce((n, s) => n + s.decl.topics.length, 0)).toBe(521);
  });

  it('there are 78 first-party catalogue manifests, one family each', () => {
    expect(manifests).toHaveLength(78);
    for (const { file, manifest } of manifests) expect(manifest.eventFamilies, file).toHaveLength(1);
  });

  it('no manifest declares a family the spec does not list', () => {
    const extra = sources.filter((s) => !specNames.has(s.decl.family)).map((s) => `${s.owner}: ${s.decl.family}`);
    expect(extra).toEqual([]);
  });
});

describe.each(spec.catalogue.map((f) => [f.family, f] as const))('family %s', (_name, fam) => {
  const owners = sources.filter((s) => s.decl.family === fam.family);
  const decl = owners[0]?.decl;

  it('is owned by exactly one source, with the spec display name and prefix', () => {
    expect(owners.map((o) => o.owner)).toHaveLength(1);
    expect(decl.prefix).toBe(fam.prefix);
    const coreOwned = fam.family === 'apps' || fam.family === 'audit trail';
    expect(owners[0].owner === 'core').toBe(coreOwned);
    expect(sources.filter((s) => s.decl.prefix === fam.prefix)).toHaveLength(1);
  });

  it('lists every spec event verbatim and has listed + further topics', () => {
    const names = decl.topics.map((t) => t.topic);
    for (const listed of fam.listed) expect(names, listed).toContain(listed);
    expect(names).toHaveLength(fam.listed.length + fam.further);
    expect(new Set(names).size).toBe(names.length);
  });

  it('names every topic inside its prefix, following the topic grammar', () => {
    const re = topicRe(fam.prefix);
    for (const t of decl.topics) {
      expect(t.topic, t.topic).toMatch(re);
      // Names we added (not in the spec's list) take the full form <prefix>.<noun>[.<noun>].<verb>.
      if (!fam.listed.includes(t.topic)) {
        const segments = t.topic.slice(fam.prefix.length + 1).split('.');
        expect(segments.length, t.topic).toBeGreaterThanOrEqual(2);
        expect(segments.length, t.topic).toBeLessThanOrEqual(3);
      }
    }
  });

  it('gives every topic a bilingual description, a strict object payload schema and a valid example', () => {
    for (const t of decl.topics) {
      expect(t.description.ar, t.topic).toMatch(ARABIC);
      expect(t.description.en, t.topic).not.toMatch(ARABIC);
      const payload = t.payload as { type?: unknown; required?: unknown; properties?: Record<string, Record<string, unknown>> };
      expect(payload.type, t.topic).toBe('object');
      expect(Array.isArray(payload.required), t.topic).toBe(true);
      expect(Object.keys(payload.properties ?? {}).length, t.topic).toBeGreaterThan(0);
      for (const [name, prop] of Object.entries(payload.properties ?? {})) {
        expect('type' in prop || 'enum' in prop, `${t.topic} ${name} has a type`).toBe(true);
      }
      const validate = payloadAjv.compile(t.payload);
      const ok = validate(t.example);
      expect(ok ? [] : validate.errors, `${t.topic} example`).toEqual([]);
      // The example shows only documented fields.
      for (const key of Object.keys(t.example)) expect(Object.keys(payload.properties ?? {}), `${t.topic} example.${key}`).toContain(key);
    }
  });
});

describe('uniqueness across every source', () => {
  const invoicingPath = path.join(manifestsDir, 'invoicing.json');
  const invoicing = fs.existsSync(invoicingPath) ? (JSON.parse(fs.readFileSync(invoicingPath, 'utf8')) as Manifest) : undefined;
  const all = [...sources, ...(invoicing?.eventFamilies ?? []).map((decl) => ({ owner: invoicing!.id, decl }))];

  it('no topic appears twice anywhere (manifests, core families, invoicing)', () => {
    const seen = new Map<string, string>();
    const dupes: string[] = [];
    for (const { owner, decl } of all) {
      for (const t of decl.topics) {
        if (seen.has(t.topic)) dupes.push(`${t.topic} (${seen.get(t.topic)} and ${owner})`);
        seen.set(t.topic, owner);
      }
    }
    expect(dupes).toEqual([]);
  });

  it('no prefix or family display name is claimed twice', () => {
    const prefixes = all.map((s) => s.decl.prefix);
    const names = all.map((s) => s.decl.family.toLowerCase());
    expect(prefixes.filter((p, i) => prefixes.indexOf(p) !== i)).toEqual([]);
    expect(names.filter((n, i) => names.indexOf(n) !== i)).toEqual([]);
  });

  it('app ids are unique, match their file names and do not collide with invoicing', () => {
    const ids = manifests.map((m) => m.manifest.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const { file, manifest } of manifests) expect(file).toBe(`${manifest.id}.json`);
    if (invoicing) expect(ids).not.toContain(invoicing.id);
  });
});

describe.each(manifests.map((m) => [m.file, m.manifest] as const))('manifest %s', (_file, manifest) => {
  it('validates against manifestSchema', () => {
    const ok = validateManifest(manifest);
    expect(ok ? [] : validateManifest.errors).toEqual([]);
  });

  it('passes the host\'s own manifest check', () => {
    expect(checkManifest(manifest).problems).toEqual([]);
  });

  it('has the first-party shape: schema link, version, host range, read permission and one menu entry', () => {
    expect(manifest.$schema).toBe('./manifest.schema.json');
    expect(manifest.version).toBe('1.0.0');
    expect(manifest.host).toBe('^0.1.0');
    expect(manifest.permissions).toContainEqual(expect.objectContaining({ resource: manifest.id, action: 'read', role: 'Viewer' }));
    expect(manifest.menu).toHaveLength(1);
    expect(manifest.menu![0]).toMatchObject({ path: `/${manifest.id}`, permission: `${manifest.id}:read` });
  });

  it('has string tables with identical keys, including a title', () => {
    expect(Object.keys(manifest.strings.ar).sort()).toEqual(Object.keys(manifest.strings.en).sort());
    expect(manifest.strings.en.title).toBeTruthy();
    expect(manifest.strings.ar.title).toMatch(ARABIC);
  });

  it('writes every Arabic text in Arabic script and every English text without it', () => {
    const texts = bilingualTexts(manifest);
    expect(texts.length).toBeGreaterThan(5);
    for (const t of texts) {
      expect(t.ar, t.pointer).toMatch(ARABIC);
      expect(t.en, t.pointer).not.toMatch(ARABIC);
    }
  });
});

describe('core/events/core-families.json', () => {
  it('holds exactly the apps and audit trail families, each in the eventFamily shape', () => {
    expect(coreFamilies.map((f) => [f.family, f.prefix])).toEqual([
      ['apps', 'app'],
      ['audit trail', 'audit'],
    ]);
    for (const fam of coreFamilies) {
      const ok = validateFamily(fam);
      expect(ok ? [] : validateFamily.errors, fam.family).toEqual([]);
    }
    expect(coreFamilies[1].topics).toEqual([]);
  });

  it('apps payloads carry appId, version, companyId and actor', () => {
    for (const t of coreFamilies[0].topics) {
      expect((t.payload as { required: string[] }).required, t.topic).toEqual(expect.arrayContaining(['appId', 'version', 'companyId', 'actor']));
    }
  });

  it('writes its texts in the right scripts', () => {
    for (const t of bilingualTexts(coreFamilies)) {
      expect(t.ar, t.pointer).toMatch(ARABIC);
      expect(t.en, t.pointer).not.toMatch(ARABIC);
    }
  });
});
