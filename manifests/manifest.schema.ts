// The app manifest's JSON Schema: the single source of truth for manifest validation (ajv),
// manifest types (json-schema-to-ts, below) and the checked-in manifest.schema.json that
// editors use (`npm run gen:schema` writes it; a test keeps the two in step).
import type { FromSchema } from 'json-schema-to-ts';

const idPattern = '^[a-z][a-z0-9-]{1,39}$';
const namePattern = '^[a-z][a-zA-Z0-9_]{0,39}$';

/** Text in both languages the platform speaks. */
const bilingual = {
  type: 'object',
  additionalProperties: false,
  required: ['en', 'ar'],
  properties: {
    en: { type: 'string', minLength: 1 },
    ar: { type: 'string', minLength: 1 },
  },
} as const;

const role = { type: 'string', enum: ['Viewer', 'Member', 'Manager', 'Admin', 'Owner'] } as const;

/** `resource:action`, e.g. `invoices:create`. */
const permissionRef = { type: 'string', pattern: '^[a-z][a-z0-9-]*:[a-z][a-zA-Z0-9-]*$' } as const;

const fieldCommon = {
  name: { type: 'string', pattern: namePattern },
  label: bilingual,
  required: { type: 'boolean' },
  /** Set by the app's hooks, never by the client: left out of the write schema. */
  readOnly: { type: 'boolean' },
  /** Offered as a `?name=` filter on the list route. */
  filterable: { type: 'boolean' },
  minimum: { type: 'number' },
  maximum: { type: 'number' },
  minLength: { type: 'integer', minimum: 0 },
  maxLength: { type: 'integer', minimum: 1 },
  /** enum: the allowed values. */
  values: { type: 'array', minItems: 1, uniqueItems: true, items: { type: 'string', minLength: 1 } },
  /** reference: the document type it points at, `type` or `app-id/type`. */
  to: { type: 'string', pattern: '^([a-z][a-z0-9-]{1,39}/)?[a-z][a-zA-Z0-9_]{0,39}$' },
} as const;

const scalarTypes = ['string', 'number', 'integer', 'boolean', 'date', 'enum', 'money', 'reference'] as const;

const lineField = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'type'],
  properties: { ...fieldCommon, type: { type: 'string', enum: scalarTypes } },
} as const;

const field = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'type'],
  properties: {
    ...fieldCommon,
    type: { type: 'string', enum: [...scalarTypes, 'lines'] },
    /** lines: the fields of each child line (scalars only). */
    fields: { type: 'array', minItems: 1, items: lineField },
    minItems: { type: 'integer', minimum: 0 },
    maxItems: { type: 'integer', minimum: 1 },
  },
} as const;

const documentType = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'resource', 'idPrefix', 'label', 'fields'],
  properties: {
    name: { type: 'string', pattern: namePattern },
    /** Path segment and permission resource: `/api/v1/<resource>`, `<resource>:read`. */
    resource: { type: 'string', pattern: '^[a-z][a-z0-9-]{1,39}$' },
    /** Ids are `<idPrefix>_<random>`. */
    idPrefix: { type: 'string', pattern: '^[a-z]{2,8}$' },
    label: bilingual,
    labelPlural: bilingual,
    fields: { type: 'array', minItems: 1, items: field },
    /** Topic stem for the generated events, e.g. `invoice` gives `invoice.created`. Must lie in a family the app owns. */
    topicBase: { type: 'string', pattern: '^[a-zA-Z][a-zA-Z0-9_-]*(\\.[a-zA-Z][a-zA-Z0-9_-]*)*$' },
    states: { type: 'array', minItems: 1, uniqueItems: true, items: { type: 'string', pattern: namePattern } },
    initialState: { type: 'string' },
    transitions: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'from', 'to'],
        properties: {
          name: { type: 'string', pattern: namePattern },
          label: bilingual,
          from: { type: 'array', minItems: 1, items: { type: 'string' } },
          to: { type: 'string' },
          /** Event verb; defaults to the target state. */
          event: { type: 'string', pattern: namePattern },
        },
      },
    },
  },
} as const;

const topic = {
  type: 'object',
  additionalProperties: false,
  required: ['topic', 'description', 'payload', 'example'],
  properties: {
    /** `<prefix>.<noun>[.<noun>].<verb>` (or `<prefix>.<verb>`), inside the family's prefix. */
    topic: { type: 'string', pattern: '^[a-zA-Z][a-zA-Z0-9_-]*(\\.[a-zA-Z][a-zA-Z0-9_-]*)+$' },
    description: bilingual,
    /** JSON Schema of the event's `data`. */
    payload: { type: 'object' },
    /** A `data` that validates against `payload`; sent by test events. */
    example: { type: 'object' },
  },
} as const;

const eventFamily = {
  type: 'object',
  additionalProperties: false,
  required: ['family', 'prefix', 'label', 'topics'],
  properties: {
    /** Display name as in the catalogue, e.g. `point of sale`. */
    family: { type: 'string', minLength: 1 },
    /** The topic prefix the app owns: only it may emit `<prefix>.*`. */
    prefix: { type: 'string', pattern: '^[a-zA-Z][a-zA-Z0-9_-]*$' },
    label: bilingual,
    topics: { type: 'array', items: topic },
  },
} as const;

export const manifestSchema = {
  $id: 'https://diwan.dev/schemas/manifest.json',
  title: 'Diwan app manifest',
  type: 'object',
  additionalProperties: false,
  required: ['id', 'version', 'host', 'name', 'description', 'strings'],
  properties: {
    $schema: { type: 'string' },
    id: { type: 'string', pattern: idPattern },
    version: { type: 'string', minLength: 1, maxLength: 64 },
    /** semver range of the host versions the app works with. */
    host: { type: 'string', minLength: 1 },
    /** Other apps it needs, with semver ranges. */
    dependencies: { type: 'object', propertyNames: { pattern: idPattern }, additionalProperties: { type: 'string' } },
    name: bilingual,
    description: bilingual,
    /** The app's i18next namespace, one table per language with the same keys. */
    strings: {
      type: 'object',
      additionalProperties: false,
      required: ['en', 'ar'],
      properties: {
        en: { type: 'object', additionalProperties: { type: 'string' } },
        ar: { type: 'object', additionalProperties: { type: 'string' } },
      },
    },
    permissions: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['resource', 'action', 'role'],
        properties: {
          resource: { type: 'string', pattern: '^[a-z][a-z0-9-]*$' },
          action: { type: 'string', pattern: '^[a-z][a-zA-Z0-9-]*$' },
          /** The lowest role that holds it by default. */
          role,
          description: bilingual,
        },
      },
    },
    menu: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'label', 'path', 'permission', 'order'],
        properties: {
          id: { type: 'string', pattern: namePattern },
          label: bilingual,
          path: { type: 'string', pattern: '^/' },
          permission: permissionRef,
          order: { type: 'integer' },
        },
      },
    },
    documentTypes: { type: 'array', items: documentType },
    eventFamilies: { type: 'array', items: eventFamily },
    /** Server bundle entry, relative to the app's folder; default-exports `defineApp({...})`. */
    server: { type: 'string', minLength: 1 },
    /** Web bundle folder, relative to the app's folder; served under `/apps/<id>/`. */
    web: { type: 'string', minLength: 1 },
  },
} as const;

export type Manifest = FromSchema<typeof manifestSchema>;
export type DocumentTypeDecl = NonNullable<Manifest['documentTypes']>[number];
export type FieldDecl = DocumentTypeDecl['fields'][number];
export type EventFamilyDecl = NonNullable<Manifest['eventFamilies']>[number];
export type TopicDecl = EventFamilyDecl['topics'][number];
export type PermissionDecl = NonNullable<Manifest['permissions']>[number];
export type MenuDecl = NonNullable<Manifest['menu']>[number];
export type Role = PermissionDecl['role'];
