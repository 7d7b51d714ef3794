// A manifest is refused before any of its code runs, with every problem listed: the JSON
// Schema (ajv) first, then the rules a schema cannot say (semver, string-table parity,
// references between declarations, payload examples, setting defaults, every label in both languages).
import { settingDefaultProblems } from './settings.ts';
import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import semver from 'semver';
import { manifestSchema, type ConditionDecl, type DocumentTypeDecl, type Manifest, type TopicDecl } from '../../manifests/manifest.schema.ts';
import { CORE_PERMISSIONS } from '../identity/permissions.ts';
import { labelProblems } from './manifest-labels.ts';
import { buildRules } from './rules/document-rules.ts';
import { buildEffects } from './rules/effects.ts';
import { namingProblems } from './rules/naming.ts';
import { uniqueProblems } from './rules/unique.ts';
import { aggregateProblems } from './rules/aggregates.ts';

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
/** Names every document has, or that its events use. */
const RESERVED_FIELDS = new Set(['id', 'state', 'createdAt', 'updatedAt', 'stateChangedAt', 'previous']);
/** Dates every document has, for schedules. */
const SYSTEM_DATES = new Set(['createdAt', 'updatedAt', 'stateChangedAt']);

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

/** The version rules, on whatever of `version`, `host` and `dependencies` has the right type (so they are told even beside shape problems). */
function versionProblems(raw: Record<string, unknown>, add: (pointer: string, rule: string, message: string) => void): void {
  const { version, host, dependencies } = raw;
  if (typeof version === 'string' && version !== '' && !semver.valid(version)) add('/version', 'semver', `version "${version}" is not a semantic version`);
  if (typeof host === 'string' && host !== '' && !semver.validRange(host)) add('/host', 'semverRange', `host "${host}" is not a semver range`);
  if (dependencies && typeof dependencies === 'object' && !Array.isArray(dependencies)) {
    for (const [dep, range] of Object.entries(dependencies)) {
      if (dep === raw.id) add(`/dependencies/${dep}`, 'self', 'an app cannot depend on itself');
      if (typeof range === 'string' && !semver.validRange(range)) add(`/dependencies/${dep}`, 'semverRange', `"${range}" is not a semver range`);
    }
  }
}

/** What a check may know besides the manifest: its dependencies' manifests, where at hand (the first-party catalogue). */
export interface CheckContext {
  manifestOf?(appId: string): Manifest | undefined;
}

export function checkManifest(raw: unknown, ctx: CheckContext = {}): { manifest?: Manifest; problems: Problem[] } {
  const problems: Problem[] = [];
  const add = (pointer: string, rule: string, message: string) => problems.push({ pointer, rule, message });
  if (!validateShape(raw)) {
    problems.push(...fromAjv(validateShape.errors ?? []));
    if (raw && typeof raw === 'object' && !Array.isArray(raw)) versionProblems(raw as Record<string, unknown>, add);
    return { problems };
  }
  const m = raw as Manifest;
  versionProblems(m as unknown as Record<string, unknown>, add);

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
  const checkCondition = (dt: DocumentTypeDecl, c: ConditionDecl, pointer: string) => {
    if (c.field !== 'state' && !dt.fields.some((f) => f.name === c.field)) add(`${pointer}/field`, 'field', `"${c.field}" is not a field of ${dt.name}`);
    if (c.field === 'state' && !dt.states) add(`${pointer}/field`, 'states', `${dt.name} has no states`);
  };
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
      (t.input ?? []).forEach((f, k) => {
        const iat = `${at}/transitions/${j}/input/${k}`;
        if ((t.input ?? []).findIndex((o) => o.name === f.name) !== k) add(`${iat}/name`, 'duplicate', `input ${f.name} is declared twice`);
        if (f.type === 'enum' && !f.values) add(`${iat}/values`, 'required', `enum input ${f.name} needs values`);
        if (f.type === 'reference' && !f.to) add(`${iat}/to`, 'required', `reference input ${f.name} needs "to"`);
        if (f.readOnly || f.secret || f.compute !== undefined) add(iat, 'input', `input ${f.name} is sent by the client: it cannot be read-only, computed or secret`);
      });
    });
    const lockStates = (list: readonly string[] | undefined, pointer: string) => {
      if (list && !dt.states) add(pointer, 'states', `${dt.name} has no states to lock in`);
      else for (const st of list ?? []) if (!states.has(st)) add(pointer, 'state', `"${st}" is not one of the states`);
    };
    lockStates(dt.lockedIn, `${at}/lockedIn`);
    // Expressions: parsed and type-checked against the fields (and the fields of the local types
    // its references name; another app's are typed at install), each problem at its pointer. The
    // rules of the topics' conditions over this type are checked with them.
    const conditions = (m.eventFamilies ?? []).flatMap((fam, fi) =>
      fam.topics.flatMap((t, ti) => (t.source.type === dt.name && t.source.when && 'rule' in t.source.when ? [{ rule: t.source.when.rule, pointer: `/eventFamilies/${fi}/topics/${ti}/source/when/rule` }] : [])),
    );
    const targets = (to: string) => (to.includes('/') ? undefined : m.documentTypes?.find((d) => d.name === to)?.fields);
    for (const p of buildRules(dt, at, { targets, conditions }).problems) add(p.pointer, p.rule, p.message);
    // Effects on related documents (a dependency's typed here when its manifest is at hand, else
    // at install), naming series and unique fields (core/apps/rules/).
    const effectTypes = {
      typeOf: (ref: string) => {
        const [app, name] = ref.includes('/') ? ref.split('/') : [m.id, ref];
        return (app === m.id ? m : ctx.manifestOf?.(app))?.documentTypes?.find((o) => o.name === name);
      },
      dependency: (app: string) => (!m.dependencies?.[app] ? false : ctx.manifestOf?.(app) ? ('known' as const) : ('unknown' as const)),
    };
    for (const p of [...buildEffects(dt, at, effectTypes).problems, ...namingProblems(dt, at), ...uniqueProblems(dt, at)]) add(p.pointer, p.rule, p.message);
    (dt.schedules ?? []).forEach((sc, j) => {
      const sat = `${at}/schedules/${j}`;
      if ((dt.schedules ?? []).findIndex((o) => o.name === sc.name) !== j) add(`${sat}/name`, 'duplicate', `schedule ${sc.name} is declared twice`);
      const dateField = dt.fields.find((f) => f.name === sc.date);
      if (!SYSTEM_DATES.has(sc.date) && dateField?.type !== 'date') {
        add(`${sat}/date`, 'dateField', `"${sc.date}" is not a date field of ${dt.name} (nor createdAt, updatedAt, stateChangedAt)`);
      }
      for (const st of sc.states ?? []) if (!states.has(st)) add(`${sat}/states`, 'state', `"${st}" is not one of the states`);
      if (sc.when) checkCondition(dt, sc.when, `${sat}/when`);
    });
    const fieldNames = new Set<string>();
    dt.fields.forEach((f, j) => {
      const fat = `${at}/fields/${j}`;
      if (fieldNames.has(f.name)) add(`${fat}/name`, 'duplicate', `field ${f.name} is declared twice`);
      if (RESERVED_FIELDS.has(f.name)) add(`${fat}/name`, 'reserved', `field name ${f.name} is reserved`);
      fieldNames.add(f.name);
      const checkField = (ff: typeof f | NonNullable<typeof f.fields>[number], p: string) => {
        if (ff.secret && ff.type !== 'string') add(`${p}/secret`, 'secretType', `only a string field can be secret (${ff.name} is ${ff.type})`);
        if (ff.secret && ff.filterable) add(`${p}/filterable`, 'secretFilter', `a secret field (${ff.name}) cannot be a list filter`);
        if (ff.detailOnly && ff.filterable) add(`${p}/filterable`, 'detailFilter', `a get-only field (${ff.name}) cannot be a list filter: lists do not carry it`);
        if (ff.type === 'enum' && !ff.values) add(`${p}/values`, 'required', `enum field ${ff.name} needs values`);
        if (ff.type === 'reference' && !ff.to) add(`${p}/to`, 'required', `reference field ${ff.name} needs "to"`);
        // Reads declare such a field always present: only a server bundle's hooks (or its expression) can keep that promise.
        if (ff.readOnly && ff.required && !m.server && (ff as typeof f).compute === undefined) add(`${p}/required`, 'computed', `read-only field ${ff.name} is required, but the app has no server bundle to set it`);
      };
      checkField(f, fat);
      lockStates(f.lockedIn, `${fat}/lockedIn`);
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
    if ((item.documentType === undefined) === (item.path === undefined)) {
      add(`/menu/${i}`, 'oneOf', `menu item ${item.id} needs exactly one of documentType and path`);
    }
    if (item.documentType !== undefined && !typeNames.has(item.documentType)) {
      add(`/menu/${i}/documentType`, 'reference', `"${item.documentType}" is not a document type of this app`);
    }
  });

  /** A document source names a type of this app and what of it fires; an operation brings its own payload. */
  const checkSource = (t: TopicDecl, at: string) => {
    const src = t.source;
    const sat = `${at}/source`;
    if (src.on === 'operation') {
      if (!src.operation) add(`${sat}/operation`, 'required', 'an operation source names the route or hook that emits it');
      if (src.type !== undefined) add(`${sat}/type`, 'operation', 'an operation source names no document type');
      if (t.payload === undefined) add(`${at}/payload`, 'required', 'a topic with an operation source declares its payload schema');
      if (t.example === undefined) add(`${at}/example`, 'required', 'a topic with an operation source declares an example');
      return;
    }
    if (t.payload !== undefined) add(`${at}/payload`, 'generated', 'a document source generates its payload schema (the document); leave payload out');
    const dt = (m.documentTypes ?? []).find((d) => d.name === src.type);
    if (!dt) {
      add(`${sat}/type`, 'reference', `"${src.type ?? ''}" is not a document type of this app`);
      return;
    }
    const need = { transition: 'transition', change: 'field', schedule: 'schedule' } as const;
    for (const [on, key] of Object.entries(need)) {
      if (src.on === on && src[key] === undefined) add(`${sat}/${key}`, 'required', `an "${on}" source names its ${key}`);
      if (src.on !== on && src[key] !== undefined) add(`${sat}/${key}`, 'unexpected', `${key} belongs to "${on}" sources only`);
    }
    if (src.operation !== undefined) add(`${sat}/operation`, 'unexpected', 'operation belongs to operation sources only');
    if (src.on === 'transition' && src.transition && !(dt.transitions ?? []).some((x) => x.name === src.transition)) {
      add(`${sat}/transition`, 'reference', `"${src.transition}" is not a transition of ${dt.name}`);
    }
    if (src.on === 'change' && src.field && src.field !== 'state' && !dt.fields.some((f) => f.name === src.field)) {
      add(`${sat}/field`, 'reference', `"${src.field}" is not a field of ${dt.name}`);
    }
    if (src.on === 'change' && src.field === 'state' && !dt.states) add(`${sat}/field`, 'states', `${dt.name} has no states`);
    if (src.on === 'schedule' && src.schedule && !(dt.schedules ?? []).some((x) => x.name === src.schedule)) {
      add(`${sat}/schedule`, 'reference', `"${src.schedule}" is not a schedule of ${dt.name}`);
    }
    if (src.when) {
      if (src.on === 'schedule') add(`${sat}/when`, 'unexpected', "a schedule's condition belongs on the schedule");
      else if (!('rule' in src.when)) checkCondition(dt, src.when, `${sat}/when`);
    }
  };

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
      checkSource(t, at);
      if (t.payload === undefined) return;
      try {
        const validate = payloadAjv.compile(t.payload);
        if (t.example !== undefined && !validate(t.example)) {
          for (const p of fromAjv(validate.errors ?? [], `${at}/example`)) problems.push({ ...p, rule: `example.${p.rule}` });
        }
      } catch (e) {
        add(`${at}/payload`, 'schema', `payload is not a valid JSON Schema: ${(e as Error).message}`);
      }
    });
  });

  problems.push(...aggregateProblems(m));
  problems.push(...settingDefaultProblems(m));
  // Every label in both languages, so no page shows a raw id (a state, a field) to a person.
  // (A key the parity check already named is not named twice.)
  const named = new Set(problems.map((p) => p.pointer));
  problems.push(...labelProblems(m).filter((p) => !named.has(p.pointer)));

  return problems.length ? { problems } : { manifest: m, problems };
}
