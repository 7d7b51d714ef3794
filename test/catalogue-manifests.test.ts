// The spec's event catalogue (80 families, 521 events) as first-party app manifests (v2): every
// family is owned by exactly one source (an app manifest, or the core for `apps` and
// `audit trail`), every listed name is present verbatim, every family has exactly
// `listed + further` topics, and every topic has a real source. A topic whose source is one of
// the app's document types carries no payload (its data is the document, generated); only a
// topic emitted by app code (`operation`) or by the host declares its payload schema and an
// example, checked strictly. Each manifest is a working app: document types, a menu that opens
// them, references that resolve into its dependencies, resources and id prefixes of its own.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import semver from 'semver';
import { manifestSchema, type EventFamilyDecl, type Manifest, type TopicDecl } from '../manifests/manifest.schema.ts';
import { checkManifest } from '../core/apps/manifest-check.ts';
import { buildDocSchemas, eventPayloadSchema } from '../core/apps/doc-schemas.ts';

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
const invoicingPath = path.join(manifestsDir, 'invoicing.json');
const invoicing = fs.existsSync(invoicingPath) ? (JSON.parse(fs.readFileSync(invoicingPath, 'utf8')) as Manifest) : undefined;
/** Every app manifest by id, invoicing included: what references and dependencies resolve against. */
const byId = new Map<string, Manifest>([...manifests.map(({ manifest }) => [manifest.id, manifest] as const), ...(invoicing ? [[invoicing.id, invoicing] as const] : [])]);
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
/** The host emits its own families' events itself: their topics name the operation, and declare their payload. */
const familySchema = manifestSchema.properties.eventFamilies.items;
const topicSchema = familySchema.properties.topics.items;
const validateCoreFamily = manifestAjv.compile({
  ...familySchema,
  properties: {
    ...familySchema.properties,
    topics: { type: 'array', items: { ...topicSchema, required: ['topic', 'description', 'source', 'payload', 'example'] } },
  },
});
/** Declared payload schemas in strict mode: unknown keywords and required-but-undeclared properties are errors. */
const payloadAjv = addFormats(new Ajv({ allErrors: true, strict: true, allowUnionTypes: true }));
/** Generated payload schemas (the document as read) carry the host's `finite` keyword. */
const generatedAjv = addFormats(new Ajv({ allErrors: true, strict: false }));
generatedAjv.addKeyword({ keyword: 'finite', type: 'number', schemaType: 'boolean', validate: (on: boolean, n: number) => !on || Number.isFinite(n), errors: false });

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

/** The document type a reference of app `appId` names (`type` or `app/type`), if the app may reach it. */
function referencedType(m: Manifest, to: string) {
  const [app, name] = to.includes('/') ? to.split('/') : [m.id, to];
  if (app !== m.id && !m.dependencies?.[app]) return undefined;
  return byId.get(app)?.documentTypes?.find((d) => d.name === name);
}

/** Whether a topic declares its own payload: the host's, and those app code emits. */
const declaresPayload = (owner: string, t: TopicDecl) => owner === 'core' || t.source?.on === 'operation';

/** A declared payload: a strict object schema with typed properties and an example showing only documented fields. */
function expectStrictPayload(t: TopicDecl) {
  const payload = t.payload as { type?: unknown; required?: unknown; properties?: Record<string, Record<string, unknown>> } | undefined;
  expect(payload, `${t.topic} payload`).toBeDefined();
  expect(payload!.type, t.topic).toBe('object');
  expect(Array.isArray(payload!.required), t.topic).toBe(true);
  expect(Object.keys(payload!.properties ?? {}).length, t.topic).toBeGreaterThan(0);
  for (const [name, prop] of Object.entries(payload!.properties ?? {})) {
    expect('type' in prop || 'enum' in prop, `${t.topic} ${name} has a type`).toBe(true);
  }
  expect(t.example, `${t.topic} example`).toBeDefined();
  const validate = payloadAjv.compile(t.payload!);
  const ok = validate(t.example);
  expect(ok ? [] : validate.errors, `${t.topic} example`).toEqual([]);
  for (const key of Object.keys(t.example!)) expect(Object.keys(payload!.properties ?? {}), `${t.topic} example.${key}`).toContain(key);
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
    // Issue 12 adds the core's webhook operations, beyond the spec's catalogue.
    const extra = sources.filter((s) => !specNames.has(s.decl.family) && !(s.owner === 'core' && s.decl.prefix === 'webhook')).map((s) => `${s.owner}: ${s.decl.family}`);
    expect(extra).toEqual([]);
  });

  it('every topic of the first-party manifests has a source', () => {
    const unsourced = manifests.flatMap(({ manifest }) => (manifest.eventFamilies ?? []).flatMap((f) => f.topics.filter((t) => !t.source).map((t) => t.topic)));
    expect(unsourced).toEqual([]);
  });
});

describe.each(spec.catalogue.map((f) => [f.family, f] as const))('family %s', (_name, fam) => {
  const owners = sources.filter((s) => s.decl.family === fam.family);
  const decl = owners[0]?.decl;
  const owner = owners[0]?.owner;

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

  it('gives every topic a bilingual description and a source; the host emits its own as operations', () => {
    for (const t of decl.topics) {
      expect(t.description.ar, t.topic).toMatch(ARABIC);
      expect(t.description.en, t.topic).not.toMatch(ARABIC);
      expect(t.source, t.topic).toBeDefined();
      // v2 (issue 9): the host's own topics name their source too, the operation that emits them (they named none before).
      if (owner === 'core') expect(t.source, t.topic).toMatchObject({ on: 'operation', operation: expect.any(String) });
    }
  });

  it('declares a strict payload schema and a valid example exactly where code emits the event', () => {
    for (const t of decl.topics.filter((t) => declaresPayload(owner, t))) expectStrictPayload(t);
  });

  it('leaves the payload of document-sourced events to the document, and any example fits the generated schema', () => {
    const m = byId.get(owner);
    for (const t of decl.topics.filter((t) => !declaresPayload(owner, t))) {
      expect(t.payload, `${t.topic} payload`).toBeUndefined();
      const dt = m?.documentTypes?.find((d) => d.name === t.source?.type);
      expect(dt, `${t.topic} source type ${t.source?.type}`).toBeDefined();
      if (t.example === undefined) continue;
      const read = buildDocSchemas(dt!, (to) => referencedType(m!, to)?.idPrefix ?? 'xx').read;
      const validate = generatedAjv.compile(eventPayloadSchema(read, dt!, t.source));
      const ok = validate(t.example);
      expect(ok ? [] : validate.errors, `${t.topic} example`).toEqual([]);
    }
  });
});

describe('uniqueness across every source', () => {
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

  it('no resource or id prefix of a document type is used by two apps (or twice in one)', () => {
    for (const key of ['resource', 'idPrefix'] as const) {
      const owner = new Map<string, string>();
      const dupes: string[] = [];
      for (const m of byId.values()) {
        for (const dt of m.documentTypes ?? []) {
          const prior = owner.get(dt[key]);
          if (prior) dupes.push(`${key} ${dt[key]}: ${prior} and ${m.id}/${dt.name}`);
          owner.set(dt[key], `${m.id}/${dt.name}`);
        }
      }
      expect(dupes, key).toEqual([]);
    }
  });

  it('the dependencies between apps form no cycle', () => {
    const cycles: string[] = [];
    const done = new Set<string>();
    const visiting = new Set<string>();
    const walk = (id: string, trail: string[]) => {
      if (done.has(id)) return;
      if (visiting.has(id)) return void cycles.push([...trail, id].join(' → '));
      visiting.add(id);
      for (const dep of Object.keys(byId.get(id)?.dependencies ?? {})) walk(dep, [...trail, id]);
      visiting.delete(id);
      done.add(id);
    };
    for (const id of byId.keys()) walk(id, []);
    expect(cycles).toEqual([]);
  });
});

describe.each(manifests.map((m) => [m.file, m.manifest] as const))('manifest %s', (_file, manifest) => {
  it('validates against manifestSchema', () => {
    const ok = validateManifest(manifest);
    expect(ok ? [] : validateManifest.errors).toEqual([]);
  });

  it("passes the host's own manifest check", () => {
    expect(checkManifest(manifest).problems).toEqual([]);
  });

  it('has the first-party shape: schema link, version 2.0.0, host range, document types and a menu that opens them', () => {
    expect(manifest.$schema).toBe('./manifest.schema.json');
    expect(manifest.version).toBe('2.0.0');
    expect(manifest.host).toBe('^0.1.0');
    expect(manifest.documentTypes?.length ?? 0).toBeGreaterThan(0);
    expect(manifest.menu?.length ?? 0).toBeGreaterThan(0);
    for (const item of manifest.menu ?? []) {
      expect(item.path, item.id).toBeUndefined();
      const dt = manifest.documentTypes?.find((d) => d.name === item.documentType);
      expect(dt, `menu ${item.id} opens ${item.documentType}`).toBeDefined();
      expect(item.permission, item.id).toBe(`${dt!.resource}:read`);
    }
  });

  it('gives every topic a source: operations declare payload and example, document sources neither payload', () => {
    for (const t of (manifest.eventFamilies ?? []).flatMap((f) => f.topics)) {
      expect(t.source, t.topic).toBeDefined();
      if (t.source.on === 'operation') {
        expect(t.source.operation, t.topic).toBeTruthy();
        expect(t.payload, t.topic).toBeDefined();
        expect(t.example, t.topic).toBeDefined();
      } else {
        expect(t.payload, t.topic).toBeUndefined();
        expect(manifest.documentTypes?.map((d) => d.name), t.topic).toContain(t.source.type);
      }
    }
  });

  it('refers only to document types it declares or that its dependencies declare, within their version ranges', () => {
    for (const [dep, range] of Object.entries(manifest.dependencies ?? {})) {
      const target = byId.get(dep);
      expect(target, `dependency ${dep}`).toBeDefined();
      expect(semver.satisfies(target!.version, range), `${dep} ${target!.version} satisfies ${range}`).toBe(true);
    }
    for (const dt of manifest.documentTypes ?? []) {
      for (const f of dt.fields.flatMap((f) => [f, ...(f.fields ?? [])])) {
        if (f.type === 'reference') expect(referencedType(manifest, f.to!), `${dt.name}.${f.name} → ${f.to}`).toBeDefined();
      }
    }
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
  it('holds exactly the apps and audit trail families, each in the eventFamily shape (the host emits them: an operation source, a declared payload)', () => {
    expect(coreFamilies.map((f) => [f.family, f.prefix])).toEqual([
      ['apps', 'app'],
      ['audit trail', 'audit'],
      ['webhook operations', 'webhook'],
    ]);
    for (const fam of coreFamilies) {
      const ok = validateCoreFamily(fam);
      expect(ok ? [] : validateCoreFamily.errors, fam.family).toEqual([]);
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
