// Checks every manifest in manifests/ the way the host will, plus what only the set as a whole
// can say: references into other apps, generated event payloads and examples, and coverage of
// the spec's catalogue (every event present, with a source). Prints one line per app and every
// problem; exits 1 if there is any.
//
//   npx tsx scripts/check-manifests.ts [app-id …]
import fs from 'node:fs';
import path from 'node:path';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { Manifest } from '../manifests/manifest.schema.ts';
import { checkManifest } from '../core/apps/manifest-check.ts';
import { buildDocSchemas, eventPayloadSchema } from '../core/apps/doc-schemas.ts';

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (a: Ajv) => Ajv;
const ajv = addFormats(new Ajv({ allErrors: true, strict: false }));
ajv.addKeyword({ keyword: 'finite', type: 'number', schemaType: 'boolean', validate: (on: boolean, n: number) => !on || Number.isFinite(n), errors: false });

const root = path.resolve(import.meta.dirname, '..');
const dir = path.join(root, 'manifests');
const spec = JSON.parse(fs.readFileSync(path.join(root, 'test/data/event-catalogue.json'), 'utf8')) as {
  catalogue: { family: string; prefix: string; listed: string[]; further: number }[];
};

const manifests = new Map<string, Manifest>();
for (const f of fs.readdirSync(dir).filter((f) => f.endsWith('.json') && f !== 'manifest.schema.json').sort()) {
  const m = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as Manifest;
  manifests.set(m.id, m);
}
const only = new Set(process.argv.slice(2));
const problems: string[] = [];
const say = (app: string, msg: string) => problems.push(`${app}: ${msg}`);

for (const [id, m] of manifests) {
  if (only.size && !only.has(id)) continue;
  for (const p of checkManifest(m, { manifestOf: (app) => manifests.get(app) }).problems) say(id, `${p.pointer} ${p.rule}: ${p.message}`);
  const typeOf = (ref: string) => {
    const [app, name] = ref.includes('/') ? ref.split('/') : [id, ref];
    if (app !== id && !m.dependencies?.[app]) return undefined;
    return manifests.get(app)?.documentTypes?.find((d) => d.name === name);
  };
  for (const dt of m.documentTypes ?? []) {
    for (const f of dt.fields.flatMap((f) => [f, ...(f.fields ?? [])])) {
      if (f.type === 'reference' && f.to && !typeOf(f.to)) say(id, `${dt.name}.${f.name} refers to ${f.to}, which no app (among its dependencies) declares`);
    }
  }
  for (const fam of m.eventFamilies ?? []) {
    for (const t of fam.topics) {
      if (!t.source || t.source.on === 'operation' || !t.source.type) continue;
      const dt = m.documentTypes?.find((d) => d.name === t.source.type);
      if (!dt) continue;
      let read;
      try {
        read = buildDocSchemas(dt, (to) => typeOf(to)?.idPrefix ?? 'xx').read;
      } catch (e) {
        say(id, `${t.topic}: ${(e as Error).message}`);
        continue;
      }
      if (t.example) {
        const validate = ajv.compile(eventPayloadSchema(read, dt, t.source));
        if (!validate(t.example)) say(id, `${t.topic} example: ${ajv.errorsText(validate.errors)}`);
      }
    }
  }
  for (const dep of Object.keys(m.dependencies ?? {})) if (!manifests.has(dep)) say(id, `depends on ${dep}, which is not a manifest here`);
}

// Resources (paths and permissions) and id prefixes are the platform's, not one app's: unique across all.
for (const key of ['resource', 'idPrefix'] as const) {
  const owner = new Map<string, string>();
  for (const [id, m] of manifests) {
    for (const dt of m.documentTypes ?? []) {
      const prior = owner.get(dt[key]);
      if (prior && (!only.size || only.has(id) || only.has(prior.split('/')[0]))) say(id, `${key} "${dt[key]}" of ${dt.name} is already used by ${prior}`);
      owner.set(dt[key], `${id}/${dt.name}`);
    }
  }
}

// Dependency cycles.
const visiting = new Set<string>();
const done = new Set<string>();
const walk = (id: string, trail: string[]) => {
  if (done.has(id)) return;
  if (visiting.has(id)) return say(id, `dependency cycle ${[...trail, id].join(' → ')}`);
  visiting.add(id);
  for (const dep of Object.keys(manifests.get(id)?.dependencies ?? {})) walk(dep, [...trail, id]);
  visiting.delete(id);
  done.add(id);
};
for (const id of manifests.keys()) walk(id, []);

// Coverage of the spec's catalogue.
const byPrefix = new Map<string, { app: string; topics: string[]; sourced: number }>();
for (const [id, m] of manifests) {
  for (const fam of m.eventFamilies ?? []) {
    byPrefix.set(fam.prefix, { app: id, topics: fam.topics.map((t) => t.topic), sourced: fam.topics.filter((t) => t.source).length });
  }
}
let total = 0;
let sourced = 0;
for (const fam of spec.catalogue) {
  const got = byPrefix.get(fam.prefix);
  if (!got) continue; // the core's families (apps, audit)
  if (only.size && !only.has(got.app)) continue;
  for (const name of fam.listed) if (!got.topics.includes(name)) say(got.app, `the spec's ${name} is missing`);
  if (got.topics.length !== fam.listed.length + fam.further) say(got.app, `${fam.prefix} has ${got.topics.length} topics, the spec ${fam.listed.length + fam.further}`);
  total += got.topics.length;
  sourced += got.sourced;
}

for (const [id, m] of manifests) {
  if (only.size && !only.has(id)) continue;
  const topics = (m.eventFamilies ?? []).flatMap((f) => f.topics);
  const kinds = new Map<string, number>();
  for (const t of topics) kinds.set(t.source?.on ?? 'NONE', (kinds.get(t.source?.on ?? 'NONE') ?? 0) + 1);
  const types = (m.documentTypes ?? []).map((d) => d.name).join(', ') || '-';
  console.log(`${id.padEnd(22)} ${String(topics.length).padStart(3)} events [${[...kinds].map(([k, n]) => `${k} ${n}`).join(', ')}]  types: ${types}`);
}
console.log(`\ncatalogue apps: ${sourced}/${total} events have a source`);
if (problems.length) {
  console.log(`\n${problems.length} problems:`);
  for (const p of problems) console.log(`  ${p}`);
  process.exit(1);
}
