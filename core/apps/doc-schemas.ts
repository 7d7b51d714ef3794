// A document type's declared fields become its JSON Schemas: the write shape (create), the
// patch shape, the read shape and the list query. Built once per type.
import type { DocumentTypeDecl, FieldDecl } from '../../manifests/manifest.schema.ts';

type LineFieldDecl = NonNullable<FieldDecl['fields']>[number];
type Schema = Record<string, unknown>;

/** Bounds that also keep JSON's `1e400` (Infinity) out of numeric fields. */
const NUMBER_BOUND = 1e15;

function scalarSchema(f: FieldDecl | LineFieldDecl, idPrefixOf: (to: string) => string): Schema {
  const s: Schema = {};
  if (f.label) s.description = f.label.en;
  switch (f.type) {
    case 'string':
      Object.assign(s, { type: 'string', maxLength: f.maxLength ?? 10_000 });
      if (f.minLength !== undefined) s.minLength = f.minLength;
      break;
    case 'number':
    case 'money':
    case 'integer':
      Object.assign(s, {
        type: f.type === 'integer' ? 'integer' : 'number',
        finite: true,
        minimum: f.minimum ?? -NUMBER_BOUND,
        maximum: f.maximum ?? NUMBER_BOUND,
      });
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
    if (mode === 'write' && f.readOnly) continue;
    properties[f.name] =
      f.type === 'lines'
        ? {
            type: 'array',
            ...(mode === 'write' && (f as FieldDecl).minItems !== undefined ? { minItems: (f as FieldDecl).minItems } : {}),
            maxItems: (f as FieldDecl).maxItems ?? 1000,
            items: objectOf((f as FieldDecl).fields ?? [], mode, idPrefixOf),
          }
        : scalarSchema(f, idPrefixOf);
    if (mode === 'write' ? f.required : f.required || f.readOnly) required.push(f.name);
  }
  return { type: 'object', additionalProperties: false, properties, ...(required.length ? { required } : {}) };
}

export interface DocSchemas {
  write: Schema;
  patch: Schema;
  read: Schema;
  list: Schema;
  listQuery: Schema;
  params: Schema;
}

export function buildDocSchemas(dt: DocumentTypeDecl, idPrefixOf: (to: string) => string): DocSchemas {
  const write = objectOf(dt.fields, 'write', idPrefixOf);
  const { required: _drop, ...patchBase } = write;
  const patch = { ...patchBase, minProperties: 1 };
  const readFields = objectOf(dt.fields, 'read', idPrefixOf);
  const read = {
    type: 'object',
    additionalProperties: false,
    required: ['id', 'createdAt', 'updatedAt', ...(dt.states ? ['state'] : [])],
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
  const listQuery = {
    type: 'object',
    additionalProperties: false,
    properties: {
      page: { type: 'integer', minimum: 1, maximum: 1_000_000, default: 1, description: 'Page number, from 1' },
      pageSize: { type: 'integer', minimum: 1, maximum: 100, default: 20, description: 'Items per page, at most 100' },
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
  return { write, patch, read, list, listQuery, params };
}
