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

/** The catalogue's categories, in the order the console shows them. */
export const APP_CATEGORIES = ['sales', 'finance', 'hr', 'marketing', 'website', 'operations', 'services', 'productivity', 'industries', 'platform'] as const;

const role = { type: 'string', enum: ['Viewer', 'Member', 'Manager', 'Admin', 'Owner'] } as const;

/** `resource:action`, e.g. `invoices:create`. */
const permissionRef = { type: 'string', pattern: '^[a-z][a-z0-9-]*:[a-z][a-zA-Z0-9-]*$' } as const;

const fieldCommon = {
  name: { type: 'string', pattern: namePattern },
  label: bilingual,
  /** What the field holds, or for a computed field how it is computed: the API reference and the console's help show it. */
  description: bilingual,
  required: { type: 'boolean' },
  /** Set by the app's hooks (or computed), never by the client: left out of the write schema. */
  readOnly: { type: 'boolean' },
  /**
   * A secret (a password, a token): answered only by the document's own get route, never in
   * lists, audit rows or events. Only strings may be secret, and a secret cannot be a filter.
   */
  secret: { type: 'boolean' },
  /**
   * A large value (a file's text, e.g. an XML document): answered, like a secret, only by the
   * document's own get route, never in lists, audit rows or events; unlike a secret, shown.
   */
  detailOnly: { type: 'boolean' },
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

/**
 * A Common Expression Language expression (https://cel.dev), type-checked against the document's
 * fields when the manifest is validated. Bounded so that one rule stays cheap to check and run.
 */
const expression = { type: 'string', minLength: 1, maxLength: 2000 } as const;

const states = { type: 'array', minItems: 1, uniqueItems: true, items: { type: 'string', pattern: namePattern } } as const;

const scalarTypes = ['string', 'number', 'integer', 'boolean', 'date', 'enum', 'money', 'reference'] as const;

const lineField = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'type'],
  properties: {
    ...fieldCommon,
    type: { type: 'string', enum: scalarTypes },
    /**
     * In a `lines` field: computed for each line from `line` (that line) and `doc`, before the
     * document's computed fields (which can then sum them). Read-only, like a document's.
     */
    compute: expression,
  },
} as const;

/**
 * A read-only total over the documents of another type of the app that reference this one
 * (`via`): the sum of their `field`, or their count, counting only those in `states`. Kept in
 * the unit of work of every write of such a document.
 */
const aggregate = {
  type: 'object',
  additionalProperties: false,
  required: ['type', 'via', 'op'],
  properties: {
    type: { type: 'string', pattern: namePattern },
    via: { type: 'string', pattern: namePattern },
    /** `countDistinct`: how many different values of `field` the children have (donors, not donations). */
    op: { type: 'string', enum: ['sum', 'count', 'countDistinct'] },
    field: { type: 'string', pattern: namePattern },
    states: { type: 'array', minItems: 1, uniqueItems: true, items: { type: 'string', pattern: namePattern } },
  },
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
    /**
     * Computed on every write from the document (`doc.<field>`, `doc.<lines>` with its lines):
     * the field is read-only, and a client that sends it is refused like any read-only field.
     */
    compute: expression,
    /**
     * On create, when the client leaves the field out: an expression over `doc` (as sent) and
     * `ref` (the documents its references name). A field with a default is not required of the client.
     */
    default: expression,
    aggregate,
    /** States in which this field cannot be changed by an update (only a transition's `set` changes it). */
    lockedIn: states,
    /** At most one document of the type per company has a given value (CONFLICT naming the other). */
    unique: { type: 'boolean' },
    /** At most one per parent: the reference field named here (a cheque number once per book). */
    uniqueWithin: { type: 'string', pattern: namePattern },
    /** States whose documents do not hold their unique value (a cancelled booking frees its slot). */
    uniqueExceptIn: states,
    /** Only these values are held unique; others repeat freely (Hajj leave once per employee, annual leave every year). */
    uniqueValues: { type: 'array', minItems: 1, uniqueItems: true, items: { type: 'string', minLength: 1 } },
  },
} as const;

/**
 * What a transition (or a create) does to another document, through that type's own operations
 * (its guards, locks, validations, audit entry and events), in the same unit of work. Exactly one
 * of: `target` (a reference field of this document) with `transition` or `set`; or `create` (a
 * document type of the app) with `values`. The type may be a dependency's (`app/type`), never another
 * app's. Expressions read `doc` (this document as written), `id` (its id), `input` (the transition's
 * body), `target` (the target as it is), `from` (the state left), `before` (this document before
 * the transition) and, with `forEach`, `line`.
 */
const effect = {
  type: 'object',
  additionalProperties: false,
  properties: {
    /** A reference field of this document (of the line, with `forEach`): its type is the app's own or, `app/type`, one of a dependency's. */
    target: { type: 'string', pattern: namePattern },
    /** Runs the effect once for each line of this lines field, in order: `line` is the line, `target` a reference field of it. */
    forEach: { type: 'string', pattern: namePattern },
    /** Runs this transition of the target; `input` gives its body. */
    transition: { type: 'string', pattern: namePattern },
    input: { type: 'object', propertyNames: { pattern: namePattern }, minProperties: 1, maxProperties: 50, additionalProperties: expression },
    /** Sets fields of the target (read-only ones too, not computed ones): an update of it. */
    set: { type: 'object', propertyNames: { pattern: namePattern }, minProperties: 1, maxProperties: 50, additionalProperties: expression },
    /** Creates a document of this type of the app, or (`app/type`) of a dependency, with `values`. */
    create: { type: 'string', pattern: '^([a-z][a-z0-9-]{1,39}/)?[a-z][a-zA-Z0-9_]{0,39}$' },
    values: { type: 'object', propertyNames: { pattern: namePattern }, minProperties: 1, maxProperties: 50, additionalProperties: expression },
    /** The effect applies only when this holds (e.g. `from == 'approved'`). */
    when: expression,
    /** A rule between this document and the target (a cheque number inside its book's range): VALIDATION_ERROR at `field` otherwise. */
    check: {
      type: 'object',
      additionalProperties: false,
      required: ['rule', 'message'],
      properties: { rule: expression, field: { type: 'string', pattern: namePattern }, message: bilingual },
    },
    description: bilingual,
  },
} as const;

const effects = { type: 'array', minItems: 1, maxItems: 20, items: effect } as const;

/** A rule every write must keep: `rule` is a CEL expression answering a bool over `doc`. */
const validation = {
  type: 'object',
  additionalProperties: false,
  required: ['rule', 'message'],
  properties: {
    rule: expression,
    /** The field the problem is reported against (its JSON pointer); without it, the document. */
    field: { type: 'string', pattern: namePattern },
    /** A `lines` field: the rule holds for each line (`line`), and a broken one is reported at `/<lines>/<i>/<field>`. */
    each: { type: 'string', pattern: namePattern },
    message: bilingual,
  },
} as const;

/** A test on one field (or `state`) of a document: exactly one of the comparisons. */
const condition = {
  type: 'object',
  additionalProperties: false,
  required: ['field'],
  minProperties: 2,
  maxProperties: 2,
  properties: {
    field: { type: 'string', pattern: namePattern },
    equals: { type: ['string', 'number', 'boolean'] },
    in: { type: 'array', minItems: 1, items: { type: ['string', 'number'] } },
    /** true: the field has a value; false: it has none. */
    present: { type: 'boolean' },
    below: { type: 'number' },
    above: { type: 'number' },
  },
} as const;

/** A condition stated as an expression over `doc`, answering a bool. */
const ruleCondition = {
  type: 'object',
  additionalProperties: false,
  required: ['rule'],
  properties: { rule: expression },
} as const;

/**
 * A setting each company gives the app (a rate, a grace period, a default account): typed like a
 * scalar field, with the default a company has until it sets its own. Apps read them with
 * `ctx.settings.get()`; an Admin changes them through `PATCH /api/v1/apps/{id}/settings`.
 */
const setting = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'type', 'label', 'default'],
  properties: {
    name: fieldCommon.name,
    label: bilingual,
    description: bilingual,
    type: { type: 'string', enum: ['string', 'number', 'integer', 'boolean', 'date', 'enum', 'money'] },
    minimum: fieldCommon.minimum,
    maximum: fieldCommon.maximum,
    minLength: fieldCommon.minLength,
    maxLength: fieldCommon.maxLength,
    values: fieldCommon.values,
    default: { type: ['string', 'number', 'boolean'] },
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
    states,
    initialState: { type: 'string' },
    /** States in which the document cannot be updated or deleted: it changes only through its transitions. */
    lockedIn: states,
    /** Rules each write must keep, all answered at once as one VALIDATION_ERROR. */
    validations: { type: 'array', minItems: 1, maxItems: 100, items: validation },
    transitions: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'from', 'to'],
        properties: {
          name: { type: 'string', pattern: namePattern },
          label: bilingual,
          /** What it does, for the API reference and the console's help. */
          description: bilingual,
          from: { type: 'array', minItems: 1, items: { type: 'string' } },
          to: { type: 'string' },
          /** The body it takes: fields like the document's (scalars), `input.<name>` in its expressions. */
          input: { type: 'array', minItems: 1, maxItems: 50, items: lineField },
          /** It may run only when `rule` (over `doc` and `input`) holds; otherwise CONFLICT with `message`. */
          guard: {
            type: 'object',
            additionalProperties: false,
            required: ['rule', 'message'],
            properties: { rule: expression, message: bilingual },
          },
          /** Roles that may run it, on top of its permission (a higher role may too). */
          roles: { type: 'array', minItems: 1, uniqueItems: true, items: role },
          /** Fields of the document given values by expressions over `doc` and `input`, in the transition's write. */
          set: { type: 'object', propertyNames: { pattern: namePattern }, minProperties: 1, maxProperties: 50, additionalProperties: expression },
          /** What it does to related documents, after its own write, in the same unit of work. */
          effects,
        },
      },
    },
    /** Effects of creating a document (one created directly in an occupying state occupies its bed). */
    createEffects: effects,
    /**
     * Effects of deleting a document, undoing what its creation and transitions did to related
     * documents (a batch deleted takes its quantity out of the product's stock). `doc` and
     * `before` are the document as it was.
     */
    deleteEffects: effects,
    /**
     * A naming series: `field` (read-only) gets `format` with its number, gap-free per company,
     * type and period (`{YYYY}`, `{YY}`, `{MM}` from `date`, a date field, or today), `{#####}`
     * the number padded to as many digits; at create, or at the transition `on`.
     */
    naming: {
      type: 'object',
      additionalProperties: false,
      required: ['field', 'format'],
      properties: {
        field: { type: 'string', pattern: namePattern },
        format: { type: 'string', minLength: 3, maxLength: 60, pattern: '\\{#+\\}' },
        on: { type: 'string', pattern: namePattern },
        date: { type: 'string', pattern: namePattern },
      },
    },
    /**
     * Time-based conditions the host's scheduler evaluates: a document is due once `date` +
     * `offsetDays` has passed while it is in one of `states` (and `when` holds). A topic whose
     * source is the schedule fires once per document and date value, across restarts and
     * processes.
     */
    schedules: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'date'],
        properties: {
          name: { type: 'string', pattern: namePattern },
          label: bilingual,
          /** A `date` field of the type, or `createdAt`, `updatedAt`, `stateChangedAt`. */
          date: { type: 'string', pattern: namePattern },
          /** Days after the date (negative: before it, as for `expiring`). */
          offsetDays: { type: 'integer', minimum: -3650, maximum: 3650, default: 0 },
          states: { type: 'array', minItems: 1, uniqueItems: true, items: { type: 'string', pattern: namePattern } },
          when: condition,
        },
      },
    },
  },
} as const;

/**
 * What makes an event fire. Document sources name one of the app's document types; the
 * event's `data` is then the document (its read schema, generated), with `previous` holding
 * the old values for `transition` and `change`. An `operation` is app code (a custom route or
 * a hook) that emits the topic itself, so the topic declares its payload schema and example.
 */
const source = {
  type: 'object',
  additionalProperties: false,
  required: ['on'],
  properties: {
    on: { type: 'string', enum: ['create', 'update', 'delete', 'transition', 'change', 'schedule', 'operation'] },
    /** The document type (own app) for every `on` but `operation`. */
    type: { type: 'string', pattern: namePattern },
    /** on: transition — the transition's name. */
    transition: { type: 'string', pattern: namePattern },
    /** on: change — the field (or `state`) whose change fires the event. */
    field: { type: 'string', pattern: namePattern },
    /** on: schedule — the name of one of the type's schedules. */
    schedule: { type: 'string', pattern: namePattern },
    /** on: operation — what emits it, e.g. `POST /crm/leads/:id/score` or `hook message.beforeCreate`. */
    operation: { type: 'string', minLength: 1, maxLength: 200 },
    /**
     * Fires only when this holds of the document: a test on one field, or `{ rule }`, a CEL
     * expression over `doc` (computed fields included). With `change`, it fires when the
     * condition becomes true (it held not before the write, and holds after).
     */
    when: { anyOf: [condition, ruleCondition] },
  },
} as const;

const topic = {
  type: 'object',
  additionalProperties: false,
  required: ['topic', 'description', 'source'],
  properties: {
    /** `<prefix>.<noun>[.<noun>].<verb>` (or `<prefix>.<verb>`), inside the family's prefix. */
    topic: { type: 'string', pattern: '^[a-zA-Z][a-zA-Z0-9_-]*(\\.[a-zA-Z][a-zA-Z0-9_-]*)+$' },
    description: bilingual,
    source,
    /** JSON Schema of the event's `data`: required for `operation` sources, generated for document sources. */
    payload: { type: 'object' },
    /** A `data` that validates against the payload schema; sent by test events. Generated when absent. */
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
    /** Where the console's app catalogue files it (the console names each category in both languages). */
    category: { type: 'string', enum: APP_CATEGORIES },
    /** A mark for the launcher (an emoji or one or two letters); without it the console draws a monogram. */
    icon: { type: 'string', minLength: 1, maxLength: 8 },
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
        required: ['id', 'label', 'permission', 'order'],
        properties: {
          id: { type: 'string', pattern: namePattern },
          label: bilingual,
          /** One of the app's document types: the console opens its list. */
          documentType: { type: 'string', pattern: namePattern },
          /** A page of the app's own web bundle, relative to `/apps/<id>/`. Exactly one of documentType and path. */
          path: { type: 'string', pattern: '^/' },
          permission: permissionRef,
          order: { type: 'integer' },
          /** The heading the entry sits under in the app's menu; entries without one come first. */
          group: bilingual,
        },
      },
    },
    documentTypes: { type: 'array', items: documentType },
    eventFamilies: { type: 'array', items: eventFamily },
    settings: { type: 'array', maxItems: 100, items: setting },
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
export type SettingDecl = NonNullable<Manifest['settings']>[number];
export type Role = PermissionDecl['role'];
export type SourceDecl = TopicDecl['source'];
export type ScheduleDecl = NonNullable<DocumentTypeDecl['schedules']>[number];
export type ConditionDecl = NonNullable<ScheduleDecl['when']>;
/** A topic source's condition: a test on one field, or a rule. */
export type WhenDecl = NonNullable<SourceDecl['when']>;
export type AggregateDecl = NonNullable<FieldDecl['aggregate']>;
export type TransitionDecl = NonNullable<DocumentTypeDecl['transitions']>[number];
export type ValidationDecl = NonNullable<DocumentTypeDecl['validations']>[number];
export type LineFieldDecl = NonNullable<FieldDecl['fields']>[number];
export type EffectDecl = NonNullable<DocumentTypeDecl['createEffects']>[number];
export type NamingDecl = NonNullable<DocumentTypeDecl['naming']>;
