// A manifest is refused before any of its code runs, with every problem listed: the JSON
// Schema (ajv) first, then the rules a schema cannot say (semver, string-table parity,
// references between declarations, payload examples).
import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import semver from 'semver';
import { manifestSchema, type Manifest } from '../../manifests/manifest.schema.ts';
import { CORE_PERMISSIONS } from '../identity/permissions.ts';

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (a: Ajv) => Ajv;

export interface Problem {
  pointer: string;
  rule: string;
  message: string;
}

const manifestAjv = addFormats(new Ajv({ allErrors: true, strict: false }));
const validateShape = manifestAjv.compile(manifestSchema);
/** Payload schemas are compiled by a separate instance so that their `$id`s cannot clash with ours. */
export const payloadAjv = addFormats(new Ajv({ allErrors: true, strict: false }));

function fromAjv(errors: ErrorObject[], base = ''): Problem[] {
  return errors.map((e) => {
    const p = e.params as Record<string, string>;
    const pointer =
      base + e.instancePath + (e.keyword === 'required' ? `/${p.missingProperty}` : e.keyword === 'additionalProperties' ? `/${p.additionalProperty}` : '');
    return { pointer, rule: e.keyword, message: `${pointer || '/'} ${e.message ?? 'is not valid'}` };
  });
}

const CORE_PERMISSION_NAMES = new Set(CORE_PERMISSIONS.map((p) => p.permission));

/** Permissions a document type brings without declaring them, with their default lowest role. */
export function docTypePermissions(dt: NonNullable<Manifest['documentTypes']>[number]) {
  const base = [
    { action: 'read', role: 'Viewer' },
    { action: 'create', role: 'Member' },
    { action: 'update', role: 'Member' },
    { action: 'delete', role: 'Manager' },
  ] as const;
  return [
    ...base.map((b) => ({ resource: dt.resource, action: b.action as string, role: b.role as string })),
    ...(dt.transitions ?? []).map((t) => ({ resource: dt.resource, action: t.name, role: 'Member' })),
  ];
}

export function checkManifest(raw: unknown): { manifest?: Manifest; problems: Problem[] } {
  if (!validateShape(raw)) return { problems: fromAjv(validateShape.errors ?? []) };
  const m = raw as Manifest;
  const problems: Problem[] = [];
  const add = (pointer: string, rule: string, message: string) => problems.push({ pointer, rule, message });

  if (!semver.valid(m.version)) add('/version', 'semver', `version "${m.version}" is not a semantic version`);
  if (!semver.validRange(m.host)) add('/host', 'semverRange', `host "${m.host}" is not a semver range`);
  for (const [dep, range] of Object.entries(m.dependencies ?? {})) {
    if (dep === m.id) add(`/dependencies/${dep}`, 'self', 'an app cannot depend on itself');
    if (!semver.validRange(range)) add(`/dependencies/${dep}`, 'semverRange', `"${range}" is not a semver range`);
  }

  // String tables: same keys in both languages, so nothing silently falls back to English.
  const enKeys = Object.keys(m.strings.en);
  const arKeys = Object.keys(m.strings.ar);
  for (const k of enKeys) if (!(k in m.strings.ar)) add(`/strings/ar/${k}`, 'missingTranslation', `key "${k}" has no Arabic string`);
  for (const k of arKeys) if (!(k in m.strings.en)) add(`/strings/en/${k}`, 'missingTranslation', `key "${k}" has no English string`);

  const declared = new Set<string>();
  (m.permissions ?? []).forEach((p, i) => {
    const name = `${p.resource}:${p.action}`;
    if (declared.has(name)) add(`/permissions/${i}`, 'duplicate', `permission ${name} is declared twice`);
    if (CORE_PERMISSION_NAMES.has(name)) add(`/permissions/${i}`, 'reserved', `permission ${name} belongs to the host`);
    declared.add(name);
  });

  const typeNames = new Set<string>();
  const resources = new Set<string>();
  const prefixes = new Set((m.eventFamilies ?? []).map((f) => f.prefix));
  (m.documentTypes ?? []).forEach((dt, i) => {
    const at = `/documentTypes/${i}`;
    if (typeNames.has(dt.name)) add(`${at}/name`, 'duplicate', `document type ${dt.name} is declared twice`);
    if (resources.has(dt.resource)) add(`${at}/resource`, 'duplicate', `resource ${dt.resource} is used twice`);
    typeNames.add(dt.name);
    resources.add(dt.resource);
    for (const p of docTypePermissions(dt)) declared.add(`${p.resource}:${p.action}`);
    const states = new Set(dt.states ?? []);
    if (dt.states && !dt.initialState) add(`${at}/initialState`, 'required', 'a type with states needs an initialState');
    if (dt.initialState && !states.has(dt.initialState)) add(`${at}/initialState`, 'state', `"${dt.initialState}" is not one of the states`);
    (dt.transitions ?? []).forEach((t, j) => {
      if (!dt.states) add(`${at}/transitions/${j}`, 'states', 'transitions need declared states');
      for (const s of [...t.from, t.to]) {
        if (dt.states && !states.has(s)) add(`${at}/transitions/${j}`, 'state', `"${s}" is not one of the states`);
      }
    });
    const base = dt.topicBase ?? `${m.eventFamilies?.[0]?.prefix ?? m.id}.${dt.name}`;
    if (!prefixes.has(base.split('.')[0])) {
      add(`${at}/topicBase`, 'ownedPrefix', `events of ${dt.name} ("${base}.*") must lie in an event family the app owns`);
    }
    const fieldNames = new Set<string>();
    dt.fields.forEach((f, j) => {
      const fat = `${at}/fields/${j}`;
      if (fieldNames.has(f.name)) add(`${fat}/name`, 'duplicate', `field ${f.name} is declared twice`);
      if (['id', 'state', 'createdAt', 'updatedAt'].includes(f.name)) add(`${fat}/name`, 'reserved', `field name ${f.name} is reserved`);
      fieldNames.add(f.name);
      const checkField = (ff: typeof f | NonNullable<typeof f.fields>[number], p: string) => {
        if (ff.type === 'enum' && !ff.values) add(`${p}/values`, 'required', `enum field ${ff.name} needs values`);
        if (ff.type === 'reference' && !ff.to) add(`${p}/to`, 'required', `reference field ${ff.name} needs "to"`);
      };
      checkField(f, fat);
      if (f.type === 'lines') {
        if (!f.fields) add(`${fat}/fields`, 'required', `lines field ${f.name} needs fields`);
        f.fields?.forEach((lf, k) => checkField(lf, `${fat}/fields/${k}`));
      }
    });
  });
  // References to local types must resolve; `app/type` ones are checked against dependencies at install.
  (m.documentTypes ?? []).forEach((dt, i) =>
    dt.fields.forEach((f, j) => {
      const refs = [f, ...(f.fields ?? [])].filter((x) => x.type === 'reference' && x.to && !x.to.includes('/'));
      for (const r of refs) {
        if (!typeNames.has(r.to!)) add(`/documentTypes/${i}/fields/${j}`, 'reference', `"${r.to}" is not a document type of this app`);
      }
      const deps = [f, ...(f.fields ?? [])].filter((x) => x.type === 'reference' && x.to?.includes('/'));
      for (const r of deps) {
        const app = r.to!.split('/')[0];
        if (!m.dependencies?.[app]) add(`/documentTypes/${i}/fields/${j}`, 'dependency', `"${r.to}" needs a dependency on ${app}`);
      }
    }),
  );

  (m.menu ?? []).forEach((item, i) => {
    if (!declared.has(item.permission) && !CORE_PERMISSION_NAMES.has(item.permission)) {
      add(`/menu/${i}/permission`, 'undeclared', `menu item ${item.id} needs ${item.permission}, which the app does not declare`);
    }
  });

  const topics = new Set<string>();
  const familyPrefixes = new Set<string>();
  (m.eventFamilies ?? []).forEach((fam, i) => {
    if (familyPrefixes.has(fam.prefix)) add(`/eventFamilies/${i}/prefix`, 'duplicate', `prefix ${fam.prefix} is declared twice`);
    familyPrefixes.add(fam.prefix);
    if (fam.prefix === 'audit' || fam.prefix === 'app') add(`/eventFamilies/${i}/prefix`, 'reserved', `prefix ${fam.prefix} belongs to the host`);
    fam.topics.forEach((t, j) => {
      const at = `/eventFamilies/${i}/topics/${j}`;
      if (!t.topic.startsWith(`${fam.prefix}.`)) add(`${at}/topic`, 'prefix', `${t.topic} is outside the family prefix ${fam.prefix}`);
      if (topics.has(t.topic)) add(`${at}/topic`, 'duplicate', `${t.topic} is declared twice`);
      topics.add(t.topic);
      try {
        const validate = payloadAjv.compile(t.payload);
        if (!validate(t.example)) {
          for (const p of fromAjv(validate.errors ?? [], `${at}/example`)) problems.push({ ...p, rule: `example.${p.rule}` });
        }
      } catch (e) {
        add(`${at}/payload`, 'schema', `payload is not a valid JSON Schema: ${(e as Error).message}`);
      }
    });
  });

  return problems.length ? { problems } : { manifest: m, problems };
}
