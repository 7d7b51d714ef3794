// What a client needs to draw a document type's pages: its fields, states and transitions in
// the caller's language, and which of its permissions the caller holds. Answered by
// `GET /api/v1/document-types`; the web console builds every list, form and button from it.
import type { FieldDecl } from '../../manifests/manifest.schema.ts';
import type { Lang, Translator } from '../kernel/i18n/i18n.ts';
import type { LoadedApp } from './runtime.ts';
import { isReadOnly } from './doc-schemas.ts';
import { roleAtLeast, type Role } from '../identity/roles.ts';

type LineFieldDecl = NonNullable<FieldDecl['fields']>[number];

const text = { type: 'string' } as const;
const lineFieldMeta = {
  type: 'object',
  required: ['name', 'type', 'label', 'required', 'readOnly', 'filterable'],
  properties: {
    name: text,
    type: { type: 'string', enum: ['string', 'number', 'integer', 'boolean', 'date', 'enum', 'money', 'reference', 'lines'] },
    label: { type: 'string', description: "In the caller's language; the field's name when the manifest gives no label" },
    required: { type: 'boolean', description: 'Always present: a write must give it, or, read-only, the app sets it' },
    readOnly: { type: 'boolean', description: 'Set by the app, never by the client' },
    description: { type: 'string', description: "What it holds, or how it is computed, in the caller's language (when the manifest says)" },
    computed: { type: 'boolean', description: 'Computed by the host on every write from the document (read-only)' },
    lockedIn: { type: 'array', items: text, description: 'States in which an update cannot change it' },
    filterable: { type: 'boolean', description: 'Offered as `?<name>=` on the list route' },
    minimum: { type: 'number' },
    maximum: { type: 'number' },
    minLength: { type: 'integer' },
    maxLength: { type: 'integer' },
    values: { type: 'array', items: text, description: 'enum: the allowed values' },
    options: {
      type: 'array', description: "enum: the allowed values with labels in the caller's language (the app's `value.<field>.<value>` string, else the value)",
      items: { type: 'object', required: ['value', 'label'], properties: { value: text, label: text } },
    },
    target: {
      type: 'object', description: 'reference: the document type it points at',
      required: ['app', 'type', 'resource', 'idPrefix'],
      properties: { app: text, type: text, resource: text, idPrefix: text, titleField: { type: ['string', 'null'] } },
    },
  },
} as const;
const fieldMeta = {
  ...lineFieldMeta,
  properties: {
    ...lineFieldMeta.properties,
    minItems: { type: 'integer' },
    maxItems: { type: 'integer' },
    fields: { type: 'array', items: lineFieldMeta, description: "lines: each line's fields" },
  },
} as const;

export const docTypeMetaSchema = {
  type: 'object',
  required: ['app', 'name', 'resource', 'idPrefix', 'label', 'labelPlural', 'titleField', 'fields', 'states', 'initialState', 'transitions', 'downloads', 'sort', 'permissions'],
  properties: {
    app: text,
    name: text,
    resource: { type: 'string', description: 'Path segment of its routes: `/api/v1/<resource>`' },
    idPrefix: text,
    label: text,
    labelPlural: text,
    titleField: { type: ['string', 'null'], description: 'The field that names a document to a person (its first required, else filterable, string field), or null' },
    fields: { type: 'array', items: fieldMeta },
    states: {
      type: 'array', description: "Its states with labels in the caller's language (the app's `state.<type>.<name>` string, else its `state.<name>`, else the name); empty when it has none",
      items: { type: 'object', required: ['name', 'label'], properties: { name: text, label: text } },
    },
    initialState: { type: ['string', 'null'] },
    lockedIn: { type: 'array', items: text, description: 'States in which a document is not updated or deleted (only its transitions change it)' },
    downloads: {
      type: 'array', description: "The document's files (an app's `GET /<resource>/:id/<name>` routes that answer other than JSON): the console offers each on the document's page",
      items: {
        type: 'object', required: ['name', 'mediaType', 'summary'],
        properties: {
          name: { type: 'string', description: 'The last path segment: `/api/v1/<resource>/<id>/<name>`' },
          mediaType: text,
          summary: text,
          offeredWhen: { type: 'string', description: 'The field a document must have for the file to exist (absent: always)' },
        },
      },
    },
    transitions: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'label', 'from', 'to', 'permission', 'allowed'],
        properties: {
          name: text, label: text, from: { type: 'array', items: text }, to: text, permission: text,
          allowed: { type: 'boolean', description: "Whether the caller holds its permission and, when it names roles, one of them (or higher)" },
          guarded: { type: 'boolean', description: 'It runs only when a condition on the document holds: `?dryRun=true` on it tells whether it would run now' },
          description: { type: 'string', description: "What it does, in the caller's language (when the manifest says)" },
          input: { type: 'array', items: lineFieldMeta, description: 'The body it takes, described as fields are' },
          roles: { type: 'array', items: text, description: 'Only these roles (and higher) may run it' },
        },
      },
    },
    sort: { type: 'array', items: text, description: 'Values the list route accepts in `?sort=` (`-` first for descending)' },
    permissions: {
      type: 'object',
      required: ['read', 'create', 'update', 'delete'],
      description: 'Whether the caller holds each of its permissions',
      properties: { read: { type: 'boolean' }, create: { type: 'boolean' }, update: { type: 'boolean' }, delete: { type: 'boolean' } },
    },
  },
} as const;

export interface MetaDeps {
  lang: Lang;
  tr: Translator;
  /** The loaded app a reference's `app-id/type` names. */
  app(id: string): LoadedApp | undefined;
  allows(permission: string): boolean;
  /** The caller's role, which a transition's `roles` narrow (absent for the operator). */
  role?: Role;
}

/** The field that names a document: its first required string field, else its first filterable one. */
const titleFieldOf = (fields: readonly FieldDecl[]): string | null =>
  (fields.find((f) => f.type === 'string' && !isReadOnly(f) && f.required) ?? fields.find((f) => f.type === 'string' && !isReadOnly(f) && f.filterable))?.name ?? null;

/** The document types of one app, as `GET /api/v1/document-types` answers them. */
export function docTypeMeta(a: LoadedApp, d: MetaDeps): Record<string, unknown>[] {
  const appId = a.manifest.id;
  const ns = `app.${appId}`;
  const say = (key: string, fallback: string) => (d.tr.hasKey(d.lang, key, ns) ? d.tr.t(d.lang, key, {}, ns) : fallback);
  const field = (f: FieldDecl | LineFieldDecl, withLines: boolean): Record<string, unknown> => {
    const out: Record<string, unknown> = {
      name: f.name,
      type: f.type,
      label: f.label?.[d.lang] ?? f.name,
      required: !!f.required,
      readOnly: isReadOnly(f),
      filterable: !!f.filterable,
    };
    for (const k of ['minimum', 'maximum', 'minLength', 'maxLength'] as const) if (f[k] !== undefined) out[k] = f[k];
    if (f.description) out.description = f.description[d.lang];
    if (f.compute !== undefined || (f as FieldDecl).aggregate) out.computed = true;
    if ((f as FieldDecl).lockedIn) out.lockedIn = (f as FieldDecl).lockedIn;
    if (f.type === 'enum' && f.values) {
      out.values = f.values;
      out.options = f.values.map((v) => ({ value: v, label: say(`value.${f.name}.${v}`, v) }));
    }
    if (f.type === 'reference' && f.to) {
      const [targetApp, type] = f.to.includes('/') ? f.to.split('/') : [appId, f.to];
      const t = d.app(targetApp)?.docTypes.get(type)?.decl;
      if (t) out.target = { app: targetApp, type, resource: t.resource, idPrefix: t.idPrefix, titleField: titleFieldOf(t.fields) };
    }
    if (withLines && f.type === 'lines') {
      const lf = f as FieldDecl;
      if (lf.minItems !== undefined) out.minItems = lf.minItems;
      if (lf.maxItems !== undefined) out.maxItems = lf.maxItems;
      out.fields = (lf.fields ?? []).map((x) => field(x, false));
    }
    return out;
  };
  return [...a.docTypes.values()].map(({ decl }) => {
    const r = decl.resource;
    const sortable = decl.fields.filter((f) => f.filterable && f.type !== 'lines').map((f) => f.name);
    return {
      app: appId,
      name: decl.name,
      resource: r,
      idPrefix: decl.idPrefix,
      label: decl.label[d.lang],
      labelPlural: decl.labelPlural?.[d.lang] ?? decl.label[d.lang],
      titleField: titleFieldOf(decl.fields),
      fields: decl.fields.map((f) => field(f, true)),
      // A type's own `state.<type>.<name>` first: Arabic states agree with their type's gender.
      states: (decl.states ?? []).map((s) => ({ name: s, label: say(`state.${decl.name}.${s}`, say(`state.${s}`, s)) })),
      initialState: decl.initialState ?? decl.states?.[0] ?? null,
      ...(decl.lockedIn ? { lockedIn: decl.lockedIn } : {}),
      transitions: (decl.transitions ?? []).map((t) => ({
        name: t.name,
        label: t.label?.[d.lang] ?? t.name,
        from: t.from,
        to: t.to,
        permission: `${r}:${t.name}`,
        allowed: d.allows(`${r}:${t.name}`) && (!t.roles || !d.role || t.roles.some((x) => roleAtLeast(d.role!, x))),
        ...(t.guard ? { guarded: true } : {}),
        ...(t.description ? { description: t.description[d.lang] } : {}),
        ...(t.input ? { input: t.input.map((x) => field(x, false)) } : {}),
        ...(t.roles ? { roles: t.roles } : {}),
      })),
      downloads: (a.def.routes ?? []).flatMap((x) => {
        const name = x.method === 'GET' && x.produces ? new RegExp(`^/${r}/:id/([a-z][a-z0-9-]*)$`).exec(x.url)?.[1] : undefined;
        return name ? [{ name, mediaType: x.produces, summary: x.summary, ...(x.offeredWhen ? { offeredWhen: x.offeredWhen } : {}) }] : [];
      }),
      sort: ['createdAt', ...sortable, ...(decl.states ? ['state'] : [])].flatMap((s) => [s, `-${s}`]),
      permissions: { read: d.allows(`${r}:read`), create: d.allows(`${r}:create`), update: d.allows(`${r}:update`), delete: d.allows(`${r}:delete`) },
    };
  });
}
