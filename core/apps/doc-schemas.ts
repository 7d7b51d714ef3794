// A document type's declared fields become its JSON Schemas: the write shape (create), the
// patch shape, the read shape and the list query. Built once per type.
import type { DocumentTypeDecl, FieldDecl, LineFieldDecl } from '../../manifests/manifest.schema.ts';

type Schema = Record<string, unknown>;

/** Neither a client nor an app's input sets it: the app's hooks do, its `compute` expression (of the document or of a line), or its aggregate. */
/** A field only the document's own get route answers (a secret, or a large value): never in lists, audit rows or events. */
export const getOnly = (f: { secret?: boolean; detailOnly?: boolean }): boolean => !!(f.secret || f.detailOnly);

export const isReadOnly = (f: FieldDecl | LineFieldDecl): boolean => !!f.readOnly || f.compute !== undefined || !!(f as FieldDecl).aggregate;

/** Bounds that also keep JSON's `1e400` (Infinity) out of numeric fields. */
const NUMBER_BOUND = 1e15;
/**
 * Money is kept exactly: in minor units (up to 3 digits) an amount must stay a safe integer, so
 * ±10^12 (a trillion) is the most a money field holds, computed or given.
 */
export const MONEY_BOUND = 1e12;

/** The range a number, money or integer field holds (its own bounds, else the type's). */
export function numericBounds(f: FieldDecl | LineFieldDecl): { minimum: number; maximum: number } {
  const bound = f.type === 'money' ? MONEY_BOUND : NUMBER_BOUND;
  return { minimum: f.minimum ?? -bound, maximum: f.maximum ?? bound };
}

function scalarSchema(f: FieldDecl | LineFieldDecl, idPrefixOf: (to: string) => string): Schema {
  const s: Schema = {};
  const about = f.description?.en ?? f.label?.en;
  if (about) s.description = about;
  switch (f.type) {
    case 'string':
      Object.assign(s, { type: 'string', maxLength: f.maxLength ?? 10_000 });
      if (f.minLength !== undefined) s.minLength = f.minLength;
      break;
    case 'number':
    case 'money':
    case 'integer':
      Object.assign(s, { type: f.type === 'integer' ? 'integer' : 'number', finite: true, ...numericBounds(f) });
      break;
    case 'boolean':
      s.type = 'boolean';
      break;
    case 'date':
      Object.assign(s, { type: 'string', format: 'date' });
      break;
    case 'enum':
      Object.assign(s, { type: 'string', enum: f.values });
      break;
    case 'reference':
      Object.assign(s, { type: 'string', pattern: `^${idPrefixOf(f.to!)}_[0-9a-z]+$` });
      break;
  }
  return s;
}

function objectOf(fields: (FieldDecl | LineFieldDecl)[], mode: 'write' | 'read', idPrefixOf: (to: string) => string): Schema {
  const properties: Schema = {};
  const required: string[] = [];
  for (const f of fields) {
    const readOnly = isReadOnly(f);
    if (mode === 'write' && readOnly) continue;
    properties[f.name] =
      f.type === 'lines'
        ? {
            type: 'array',
            ...(mode === 'write' && (f as FieldDecl).minItems !== undefined ? { minItems: (f as FieldDecl).minItems } : {}),
            maxItems: (f as FieldDecl).maxItems ?? 1000,
            items: objectOf((f as FieldDecl).fields ?? [], mode, idPrefixOf),
          }
        : scalarSchema(f, idPrefixOf);
    // What the client cannot write is marked so in the OpenAPI document (and generated clients).
    if (readOnly) (properties[f.name] as Schema).readOnly = true;
    // On read, a field is always there if it is declared required: a write required it, or, for a
    // read-only field, the app's hooks promise to set it. A secret (or another get-only field) is
    // left out of lists, audit rows and events, so reads may lack it.
    // A field with a default may be left out of a create (the default fills it in).
    if (f.required && !(mode === 'read' && getOnly(f)) && !(mode === 'write' && (f as FieldDecl).default !== undefined)) required.push(f.name);
  }
  return { type: 'object', additionalProperties: false, properties, ...(required.length ? { required } : {}) };
}

export interface DocSchemas {
  write: Schema;
  /** What is stored, computed fields included (checked after the hooks: nothing computed escapes its bounds). */
  stored: Schema;
  patch: Schema;
  read: Schema;
  list: Schema;
  listQuery: Schema;
  params: Schema;
  /** Each transition's body: its declared input, and nothing else. */
  transitions: Record<string, Schema>;
}

export function buildDocSchemas(dt: DocumentTypeDecl, idPrefixOf: (to: string) => string): DocSchemas {
  const write: Schema = { title: `New ${dt.label.en}`, ...objectOf(dt.fields, 'write', idPrefixOf) };
  const { required: _drop, title: _title, ...patchBase } = write;
  const patch = { title: `${dt.label.en} changes`, ...patchBase, minProperties: 1 };
  const readFields = objectOf(dt.fields, 'read', idPrefixOf);
  const defaulted = dt.fields.filter((f) => f.required && f.default !== undefined).map((f) => f.name);
  const stored = { ...readFields, required: [...((write.required as string[] | undefined) ?? []), ...defaulted] };
  // A read document always has what a write required (an update validates the merged document
  // against the write schema) and the read-only fields declared required (the hooks set them).
  // Titles name the shared schemas of the OpenAPI document (`invoicing.Invoice`).
  const read = {
    title: dt.label.en,
    type: 'object',
    additionalProperties: false,
    required: ['id', ...(dt.states ? ['state'] : []), ...((readFields.required as string[] | undefined) ?? []), 'createdAt', 'updatedAt'],
    properties: {
      id: { type: 'string', pattern: `^${dt.idPrefix}_[0-9a-z]+$` },
      ...(dt.states ? { state: { type: 'string', enum: dt.states } } : {}),
      ...(readFields.properties as Schema),
      createdAt: { type: 'string', format: 'date-time' },
      updatedAt: { type: 'string', format: 'date-time' },
    },
  };
  const filters: Schema = {};
  for (const f of dt.fields) {
    if (!f.filterable || f.type === 'lines') continue;
    const s = scalarSchema(f, idPrefixOf);
    delete s.finite;
    filters[f.name] = { ...s, description: `Only ${dt.labelPlural?.en ?? dt.label.en} whose ${f.name} equals this` };
  }
  if (dt.states) filters.state = { type: 'string', enum: dt.states, description: 'Only documents in this state' };
  const sortKeys = ['createdAt', ...dt.fields.filter((f) => f.filterable && f.type !== 'lines').map((f) => f.name), ...(dt.states ? ['state'] : [])];
  const listQuery = {
    type: 'object',
    additionalProperties: false,
    properties: {
      page: { type: 'integer', minimum: 1, maximum: 1_000_000, default: 1, description: 'Page number, from 1' },
      pageSize: { type: 'integer', minimum: 1, maximum: 100, default: 20, description: 'Items per page, at most 100' },
      sort: { type: 'string', enum: sortKeys.flatMap((k) => [k, `-${k}`]), default: 'createdAt', description: 'Order: `createdAt`, a filterable field or `state`; `-` first for descending' },
      ...filters,
    },
  };
  const list = {
    type: 'object',
    required: ['data', 'total', 'page', 'pageSize'],
    properties: {
      data: { type: 'array', items: read },
      total: { type: 'integer' },
      page: { type: 'integer' },
      pageSize: { type: 'integer' },
    },
  };
  const params = {
    type: 'object',
    required: ['id'],
    properties: { id: { type: 'string', maxLength: 64, description: `${dt.label.en} id (\`${dt.idPrefix}_…\`)` } },
  };
  const transitions: Record<string, Schema> = {};
  for (const t of dt.transitions ?? []) {
    transitions[t.name] = { title: `${t.label?.en ?? t.name} ${dt.label.en}`, description: t.description?.en ?? `What ${t.name} takes`, ...objectOf(t.input ?? [], 'write', idPrefixOf) };
  }
  return { write, stored, patch, read, list, listQuery, params, transitions };
}

/**
 * The `data` of an event whose source is a document: the document as read, and for
 * `transition` and `change` sources `previous`, the values the write replaced.
 */
export function eventPayloadSchema(readSchema: Schema, dt: DocumentTypeDecl, source: { on: string; field?: string }): Schema {
  // Events never carry a secret or another get-only field.
  const secrets = new Set(dt.fields.filter(getOnly).map((f) => f.name));
  const read = secrets.size ? { ...readSchema, properties: Object.fromEntries(Object.entries(readSchema.properties as Schema).filter(([k]) => !secrets.has(k))) } : readSchema;
  if (source.on !== 'transition' && source.on !== 'change') return read;
  const props = read.properties as Schema;
  const changed = source.on === 'transition' ? 'state' : source.field!;
  const previous = {
    type: 'object',
    additionalProperties: false,
    required: changed === 'state' && dt.states ? ['state'] : [],
    description: 'The values this write replaced',
    properties: { [changed]: changed === 'state' ? { type: 'string', enum: dt.states } : withNull(props[changed] as Schema) },
  };
  return { ...read, required: [...(read.required as string[]), 'previous'], properties: { ...props, previous } };
}

/** A field's schema that also admits null (a previous value that was not set). */
function withNull(s: Schema): Schema {
  return { anyOf: [s, { type: 'null' }] };
}
