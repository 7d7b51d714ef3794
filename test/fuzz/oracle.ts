// What every answer of the API must satisfy, judged against the served OpenAPI document alone:
// - never a 5xx;
// - an error answer is exactly `{ error: { code, message, details[] } }` with a code of the
//   error table (`x-error-codes`) answered at that code's status;
// - the status, and the code at that status, are declared by the document for the operation;
// - a success answer validates against the declared response schema (ajv, JSON Schema 2020-12,
//   with formats).
// Violations are returned as data (kind + message) so the test can fail on the first and the
// bench can count them.
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (a: Ajv2020) => Ajv2020;

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Obj = Record<string, unknown>;

export interface OpenApiDoc {
  openapi: string;
  paths: Record<string, Record<string, OperationObject>>;
  components: { schemas: Record<string, unknown> };
  webhooks?: Record<string, unknown>;
  'x-error-codes': { code: string; status: number; description: string }[];
}

export interface OperationObject {
  operationId: string;
  parameters?: { name: string; in: 'path' | 'query' | 'header'; required?: boolean; schema: unknown }[];
  requestBody?: { required?: boolean; content: Record<string, { schema: unknown }> };
  responses: Record<string, { description: string; content?: Record<string, { schema: unknown }> }>;
  security?: Record<string, string[]>[];
  'x-permission'?: string;
}

/** One operation of the document, with where it lives. */
export interface Operation {
  id: string;
  method: string;
  path: string;
  op: OperationObject;
}

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
}

/** What a mutation is known to provoke: one of these error codes (their statuses follow). */
export interface Expectation {
  codes?: readonly string[];
  /** Any of these statuses (e.g. 2xx for a request that must succeed). */
  statuses?: readonly number[];
}

export interface Violation {
  /** Stable class, for summaries: `5xx`, `envelope`, `undeclared-status`, `undeclared-code`, … */
  kind: string;
  message: string;
}

const DOC_ID = 'https://diwan.invalid/openapi.json';

export function operationsOf(doc: OpenApiDoc): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'].includes(method)) {
        out.push({ id: op.operationId, method: method.toUpperCase(), path, op });
      }
    }
  }
  return out;
}

function rewriteRefs(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(rewriteRefs);
  if (node && typeof node === 'object') {
    const out: Obj = {};
    for (const [k, v] of Object.entries(node)) out[k] = k === '$ref' && typeof v === 'string' && v.startsWith('#/') ? `${DOC_ID}${v}` : rewriteRefs(v);
    return out;
  }
  return node;
}

/** An ajv (2020-12, formats, the host's `finite` keyword) that knows the document's components. */
export function documentAjv(doc: Pick<OpenApiDoc, 'components'>, opts: { allErrors?: boolean } = {}): { ajv: Ajv2020; compile(schema: unknown): ValidateFunction } {
  const ajv = new Ajv2020({ strict: false, allErrors: opts.allErrors ?? true, validateFormats: true });
  addFormats(ajv);
  ajv.addKeyword({
    keyword: 'finite',
    type: 'number',
    schemaType: 'boolean',
    validate: (on: boolean, data: number) => !on || Number.isFinite(data),
    errors: false,
  });
  ajv.addSchema({ $id: DOC_ID, components: rewriteRefs(doc.components) } as never);
  return { ajv, compile: (schema) => ajv.compile(rewriteRefs(schema) as object) };
}

const headerText = (v: Answer['headers'][string]) => (Array.isArray(v) ? v.join(', ') : v === undefined ? '' : String(v));

export class Oracle {
  readonly table: Map<string, number>;
  private readonly compiled = new Map<string, ValidateFunction>();
  private readonly ajv: ReturnType<typeof documentAjv>;
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(readonly doc: OpenApiDoc) {
    this.table = new Map(doc['x-error-codes'].map((e) => [e.code, e.status]));
    this.ajv = documentAjv(doc);
  }

  /** One validator per distinct schema (many error answers share theirs). */
  private compileSchema(schema: unknown): ValidateFunction {
    const key = JSON.stringify(schema);
    let v = this.compiled.get(key);
    if (!v) this.compiled.set(key, (v = this.ajv.compile(schema)));
    return v;
  }

  /** A validator for a request schema of the document (bodies), as the oracle reads schemas. */
  compileRequestSchema(schema: unknown): ValidateFunction {
    return this.compileSchema(schema);
  }

  private validator(op: Operation, status: string): ValidateFunction | undefined {
    const key = `${op.id} ${status}`;
    let v = this.validators.get(key);
    if (!v) {
      const schema = op.op.responses[status]?.content?.['application/json']?.schema;
      if (schema === undefined) return undefined;
      v = this.compileSchema(schema);
      this.validators.set(key, v);
    }
    return v;
  }

  /** The error codes the document declares for the operation at a status. */
  declaredCodes(op: Operation, status: number): string[] {
    const schema = op.op.responses[String(status)]?.content?.['application/json']?.schema as Obj | undefined;
    const found: string[] = [];
    const visit = (n: unknown) => {
      if (Array.isArray(n)) n.forEach(visit);
      else if (n && typeof n === 'object') {
        const o = n as Obj;
        const code = ((o.properties as Obj | undefined)?.error as Obj | undefined)?.properties as Obj | undefined;
        const codeSchema = code?.code as Obj | undefined;
        if (Array.isArray(codeSchema?.enum)) found.push(...(codeSchema.enum as string[]));
        for (const v of Object.values(o)) visit(v);
      }
    };
    visit(schema);
    return [...new Set(found)];
  }

  /** The one error shape: exactly `{ error: { code, message, details[] } }`, code of the table at its status. */
  checkEnvelope(ans: Answer): { violations: Violation[]; code?: string } {
    const v: Violation[] = [];
    const ct = headerText(ans.headers['content-type']);
    if (!/^application\/json\b/.test(ct)) v.push({ kind: 'envelope', message: `${ans.status} answered with content-type '${ct}'` });
    let body: unknown;
    try {
      body = JSON.parse(ans.body);
    } catch {
      v.push({ kind: 'envelope', message: `${ans.status} answered a body that is not JSON: ${ans.body.slice(0, 120)}` });
      return { violations: v };
    }
    const b = body as Obj;
    if (!b || typeof b !== 'object' || Array.isArray(b) || Object.keys(b).join() !== 'error') {
      v.push({ kind: 'envelope', message: `${ans.status} body is not exactly { error }: ${ans.body.slice(0, 160)}` });
      return { violations: v };
    }
    const e = b.error as Obj;
    if (!e || typeof e !== 'object' || Array.isArray(e) || Object.keys(e).sort().join() !== 'code,details,message') {
      v.push({ kind: 'envelope', message: `${ans.status} error is not exactly { code, message, details }: ${ans.body.slice(0, 160)}` });
      return { violations: v };
    }
    if (typeof e.message !== 'string' || e.message === '') v.push({ kind: 'envelope', message: `${ans.status} error.message is not a non-empty string` });
    if (!Array.isArray(e.details) || e.details.some((d) => !d || typeof d !== 'object' || Array.isArray(d))) {
      v.push({ kind: 'envelope', message: `${ans.status} error.details is not an array of objects` });
    }
    const code = typeof e.code === 'string' ? e.code : undefined;
    if (code === undefined || !this.table.has(code)) {
      v.push({ kind: 'unknown-code', message: `${ans.status} error.code '${String(e.code)}' is not in the error table` });
      return { violations: v };
    }
    if (this.table.get(code) !== ans.status) v.push({ kind: 'code-status', message: `${code} answered with ${ans.status}, the table says ${this.table.get(code)}` });
    return { violations: v, code };
  }

  /** Every check for one answer of one operation. `head`: the request was HEAD (no body to judge). */
  check(op: Operation, ans: Answer, expect?: Expectation, head = false): Violation[] {
    const v: Violation[] = [];
    const where = `${op.method} ${op.path}`;
    if (ans.status >= 500) v.push({ kind: '5xx', message: `${where} answered ${ans.status}: ${ans.body.slice(0, 200)}` });
    const declared = op.op.responses[String(ans.status)];
    if (!declared) v.push({ kind: 'undeclared-status', message: `${where} answered ${ans.status}, which the document does not declare (declared: ${Object.keys(op.op.responses).join(', ')})` });

    let code: string | undefined;
    if (ans.status >= 400) {
      if (head) {
        if (ans.body !== '') v.push({ kind: 'head-body', message: `HEAD ${op.path} answered a body` });
      } else {
        const env = this.checkEnvelope(ans);
        v.push(...env.violations);
        code = env.code;
        if (code !== undefined && declared) {
          const codes = this.declaredCodes(op, ans.status);
          if (!codes.includes(code)) {
            v.push({ kind: 'undeclared-code', message: `${where} answered ${ans.status} ${code}, but the document declares only ${codes.join(', ') || 'no code'} at ${ans.status}` });
          } else {
            const validate = this.validator(op, String(ans.status));
            if (validate && !validate(JSON.parse(ans.body))) {
              v.push({ kind: 'error-schema', message: `${where} ${ans.status} ${code} does not match its declared schema: ${JSON.stringify(validate.errors?.slice(0, 3))}` });
            }
          }
        }
      }
    } else if (ans.status >= 200 && ans.status < 300 && declared) {
      if (ans.status === 204 || head) {
        if (ans.body !== '') v.push({ kind: 'head-body', message: `${head ? 'HEAD' : '204'} ${op.path} answered a body` });
      } else {
        const ct = headerText(ans.headers['content-type']);
        if (declared.content?.['application/json'] && !/^application\/json\b/.test(ct)) {
          v.push({ kind: 'content-type', message: `${where} ${ans.status} answered content-type '${ct}'` });
        }
        const validate = this.validator(op, String(ans.status));
        if (validate) {
          let body: unknown;
          try {
            body = JSON.parse(ans.body);
          } catch {
            v.push({ kind: 'response-schema', message: `${where} ${ans.status} body is not JSON: ${ans.body.slice(0, 120)}` });
            return v;
          }
          if (!validate(body)) {
            const errs = (validate.errors ?? []).slice(0, 3).map((e) => `${e.instancePath || '/'} ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`);
            v.push({ kind: 'response-schema', message: `${where} ${ans.status} body does not match the declared schema: ${errs.join('; ')}` });
          }
        }
      }
    }

    if (expect) {
      if (expect.codes && !(code !== undefined && expect.codes.includes(code))) {
        v.push({ kind: 'expectation', message: `${where}: expected ${expect.codes.join(' or ')}, got ${ans.status} ${code ?? ans.body.slice(0, 120)}` });
      }
      if (expect.statuses && !expect.statuses.includes(ans.status)) {
        v.push({ kind: 'expectation', message: `${where}: expected status ${expect.statuses.join(' or ')}, got ${ans.status} ${ans.body.slice(0, 160)}` });
      }
    }
    return v;
  }
}
