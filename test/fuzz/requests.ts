// Requests for one operation of the document: valid ones drawn from its parameter and body
// schemas, and mutated ones (body, JSON text, content type, path parameters, query, credentials,
// headers, HEAD). A case is one or two requests (an Idempotency-Key reused) with what each must
// provoke where that is certain; everything else is judged by the oracle's universal rules.
import fc from 'fast-check';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { Expectation, Operation } from './oracle.ts';
import { CODE_POINT, valueArb, type Schema, type SchemaObject } from './schema-arbitrary.ts';
import { bodyMutationArb, malformedJsonArb } from './mutate.ts';
import type { FuzzWorld, Injected, Tenant } from './world.ts';
import { FUZZ_COMPANY_APPS } from './apps.ts';
import type { Role } from '../../core/identity/roles.ts';

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (a: Ajv) => Ajv;

export interface Step extends Injected {
  expect?: Expectation;
  /** Judge the answer against this operation rather than the case's (a prelude step). */
  op?: Operation;
  /** After a create: the URL naming the record it made (`data.id` of the previous answer), if it made one. */
  withCreatedId?: (id: string) => string;
}

export interface FuzzCase {
  /** The mutation class and where it applied, e.g. `body.wrongType /lines/0/quantity`. */
  label: string;
  steps: Step[];
  /** Two steps with one Idempotency-Key: `same` body (the first answer is replayed) or another (409 if the first was stored). */
  idempotent?: { same: boolean };
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const BODY_LIMIT = 1024 * 1024;

/** Query strings and path parameters arrive as text and are coerced, as the server does. */
const coercing = new Ajv({ strict: false, coerceTypes: 'array', useDefaults: true, allErrors: false });
addFormats(coercing);
coercing.addKeyword({ keyword: 'finite', type: 'number', schemaType: 'boolean', validate: (on: boolean, d: number) => !on || Number.isFinite(d), errors: false });

interface Parts {
  params: Record<string, string>;
  query: Record<string, unknown>;
  body: unknown;
  role: Role;
}

function queryString(query: Record<string, unknown>, raw = ''): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined) continue;
    for (const one of Array.isArray(v) ? v : [v]) parts.push(`${encodeURIComponent(k)}=${encodeURIComponent(String(one))}`);
  }
  if (raw) parts.push(raw);
  return parts.length ? `?${parts.join('&')}` : '';
}

function expandPath(path: string, params: Record<string, string>, rawOverride: Record<string, string> = {}): string {
  return path.replace(/\{([^}]+)\}/g, (_m, name: string) => rawOverride[name] ?? encodeURIComponent(params[name] ?? ''));
}

function safeDecode(s: string): string | undefined {
  try {
    return decodeURIComponent(s);
  } catch {
    return undefined;
  }
}

/** Whether the server would refuse the text before validating it (not JSON, or a prototype key). */
/** The server's limit on nesting (DIWAN_JSON_MAX_DEPTH's default): deeper bodies are BAD_REQUEST. */
const JSON_MAX_DEPTH = 32;

/** Arrays and objects nested in a value (`{}` is depth 1), as core/http/json-body.ts counts them. */
function depthOf(v: unknown): number {
  if (v === null || typeof v !== 'object') return 0;
  let deepest = 0;
  for (const x of Object.values(v)) deepest = Math.max(deepest, depthOf(x));
  return deepest + 1;
}

function unreadable(payload: string): boolean {
  let value: unknown;
  try {
    value = JSON.parse(payload);
  } catch {
    return true;
  }
  if (depthOf(value) > JSON_MAX_DEPTH) return true;
  return /"(__proto__|constructor)"\s*:/.test(payload) && /"__proto__"\s*:|"prototype"\s*:/.test(payload);
}

/**
 * Whether a parsed body holds text no database may be handed: U+0000 or a lone surrogate, in a
 * value or a key. The API refuses it (VALIDATION_ERROR) whatever the schema says.
 */
export function unstorable(v: unknown): boolean {
  const bad = (s: string) => s.includes('\0') || !(s as string & { isWellFormed(): boolean }).isWellFormed();
  if (typeof v === 'string') return bad(v);
  if (Array.isArray(v)) return v.some(unstorable);
  if (v !== null && typeof v === 'object') return Object.entries(v).some(([k, x]) => bad(k) || unstorable(x));
  return false;
}

export class CaseBuilder {
  private readonly bodySchema?: Schema;
  private readonly validateBody?: (v: unknown) => boolean;
  private readonly pathParams: { name: string; schema: SchemaObject }[];
  private readonly queryParams: { name: string; required: boolean; schema: SchemaObject }[];
  private readonly headerParams: { name: string; required: boolean; schema: SchemaObject }[];
  private readonly secured: boolean;
  /** An app route whose app the fuzz company does not have: APP_NOT_ENABLED comes before the route's own rules. */
  private readonly appDisabled: boolean;

  constructor(private world: FuzzWorld, private t: Tenant, private op: Operation) {
    const params = op.op.parameters ?? [];
    this.pathParams = params.filter((p) => p.in === 'path').map((p) => ({ name: p.name, schema: p.schema as SchemaObject }));
    this.queryParams = params.filter((p) => p.in === 'query').map((p) => ({ name: p.name, required: !!p.required, schema: p.schema as SchemaObject }));
    this.headerParams = params.filter((p) => p.in === 'header').map((p) => ({ name: p.name, required: !!p.required, schema: p.schema as SchemaObject }));
    this.bodySchema = op.op.requestBody?.content['application/json']?.schema as Schema | undefined;
    if (this.bodySchema !== undefined) {
      const v = world.oracle.compileRequestSchema(this.bodySchema);
      this.validateBody = (x) => v(x) as boolean;
    }
    this.secured = (op.op.security ?? []).length > 0;
    const appId = op.id.split('.')[0];
    this.appDisabled = appId !== 'core' && !FUZZ_COMPANY_APPS.includes(appId);
  }

  /** What a request provokes once its credentials pass: the app gate first, then `codes`. */
  private gated(codes: string[]): Expectation {
    return { codes: this.appDisabled ? ['APP_NOT_ENABLED'] : codes };
  }

  private headers(role: Role | { key: string; company?: string } | 'none', extra: Record<string, string> = {}): Record<string, string> {
    const h: Record<string, string> = {};
    if (role !== 'none') {
      const key = typeof role === 'string' ? this.t.keys[role] : role.key;
      h.authorization = `Bearer ${key}`;
      const company = typeof role === 'string' ? this.t.companyId : role.company;
      if (company !== undefined) h['x-company-id'] = company;
    }
    return { ...h, ...extra };
  }

  private parts?: fc.Arbitrary<Parts>;

  /** Valid request parts; built once per builder (ids are read when drawn). */
  private partsArb(): fc.Arbitrary<Parts> {
    return (this.parts ??= this.buildParts());
  }

  private buildParts(): fc.Arbitrary<Parts> {
    const ctx = this.world.genContext(this.t);
    // Each parameter from the ids known under the ones before it (an endpoint's deliveries), read
    // when drawn, so records made during the run are named too; sometimes anything the schema allows.
    let params: fc.Arbitrary<Record<string, string>> = fc.constant({});
    for (const p of this.pathParams) {
      const gen = valueArb(p.schema, ctx, [p.name]).map(String);
      params = params.chain((chosen) => {
        const pool = this.world.poolFor(this.t, this.op.path, p.name, chosen);
        const one = pool.length ? fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...pool) }, { weight: 1, arbitrary: gen }) : gen;
        return one.map((v) => ({ ...chosen, [p.name]: v }));
      });
    }
    const query: Record<string, fc.Arbitrary<unknown>> = {};
    for (const q of this.queryParams) query[q.name] = valueArb(q.schema, ctx, [q.name]);
    const required = this.queryParams.filter((q) => q.required).map((q) => q.name);
    return fc.record({
      params,
      query: fc.record(query, { requiredKeys: required }) as fc.Arbitrary<Record<string, unknown>>,
      body: this.bodySchema !== undefined ? valueArb(this.bodySchema, ctx, []) : fc.constant(undefined),
      role: fc.constantFrom(...this.world.rolesAllowed(this.op)),
    });
  }

  private step(parts: Parts, over: Partial<Step> & { rawParams?: Record<string, string>; rawQuery?: string } = {}): Step {
    const { rawParams, rawQuery, ...rest } = over;
    const hasBody = parts.body !== undefined;
    const headers = this.headers(parts.role, hasBody ? { 'content-type': 'application/json' } : {});
    return {
      method: this.op.method,
      url: expandPath(this.op.path, parts.params, rawParams) + queryString(parts.query, rawQuery),
      headers,
      ...(hasBody ? { payload: JSON.stringify(parts.body) } : {}),
      ...rest,
    };
  }

  /** VALIDATION_ERROR if the body text, as the server reads it, breaks the schema; 413 if too large. */
  private bodyExpect(payload: string): Expectation | undefined {
    if (Buffer.byteLength(payload) > BODY_LIMIT) return this.gated(['PAYLOAD_TOO_LARGE']);
    if (unreadable(payload)) return this.gated(['BAD_REQUEST']);
    const body = JSON.parse(payload);
    if (unstorable(body) || (this.validateBody && !this.validateBody(body))) return this.gated(['VALIDATION_ERROR']);
    return this.appDisabled ? this.gated([]) : undefined;
  }

  /**
   * Other operations on the same record: their path starts with this one's up to its first
   * parameter, and needs no parameter this one lacks. Not DELETE: the few records of the pool
   * would soon be gone (the delete operation's own run covers "then nothing").
   */
  private siblings(): CaseBuilder[] {
    const first = this.op.path.indexOf('}');
    if (first < 0) return [];
    const family = this.op.path.slice(0, first + 1);
    const mine = new Set(this.pathParams.map((p) => p.name));
    return this.world.operations
      .filter((o) => o !== this.op && o.method !== 'DELETE' && o.path.startsWith(family) && o.op.security?.length)
      .filter((o) => (o.op.parameters ?? []).filter((p) => p.in === 'path').every((p) => mine.has(p.name)))
      .map((o) => new CaseBuilder(this.world, this.t, o));
  }

  /** The create operation of the collection this operation's first parameter names (POST /invoices for /invoices/{id}/pay). */
  private creator(): CaseBuilder | undefined {
    const first = this.pathParams[0];
    if (!first || first.name !== 'id') return undefined;
    const collection = this.op.path.slice(0, this.op.path.indexOf(`/{${first.name}}`));
    const create = this.world.operations.find((o) => o.method === 'POST' && o.path === collection && o.op.requestBody);
    return create && new CaseBuilder(this.world, this.t, create);
  }

  /** A valid request of this operation on the given record (the first Owner-level role allowed). */
  validStep(params: Record<string, string>): fc.Arbitrary<Step> {
    return this.partsArb().map((p) => {
      const own = Object.fromEntries(this.pathParams.map((x) => [x.name, params[x.name] ?? p.params[x.name]]));
      return this.step({ ...p, params: own, role: 'Owner' });
    });
  }

  caseArb(): fc.Arbitrary<FuzzCase> {
    const parts = this.partsArb();
    const op = this.op;
    const arms: { weight: number; arbitrary: fc.Arbitrary<FuzzCase> }[] = [];
    const arm = (weight: number, arbitrary: fc.Arbitrary<FuzzCase>) => arms.push({ weight, arbitrary });

    arm(5, parts.map((p) => ({ label: 'valid', steps: [this.step(p)] })));

    if (this.bodySchema !== undefined) {
      arm(
        4,
        parts.chain((p) =>
          bodyMutationArb(p.body, this.bodySchema!, this.world.genContext(this.t)).map((m) => ({
            label: m.label,
            steps: [this.step(p, { payload: m.payload, expect: this.bodyExpect(m.payload) })],
          })),
        ),
      );
    }

    if (BODY_METHODS.has(op.method)) {
      arm(
        1,
        parts.chain((p) =>
          malformedJsonArb(JSON.stringify(p.body ?? { a: 1 })).map((m) => {
            const s = this.step(p, { payload: m.payload });
            s.headers['content-type'] = 'application/json';
            const expect = unreadable(m.payload) ? this.gated(['BAD_REQUEST']) : unstorable(JSON.parse(m.payload)) ? this.gated(['VALIDATION_ERROR']) : undefined;
            return { label: m.label, steps: [{ ...s, expect }] };
          }),
        ),
      );
      const wrongTypes = ['text/plain', 'application/xml', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'text/json', 'application/vnd.api+json', 'application/json-patch+json', 'image/png', ''];
      const okTypes = ['application/json; charset=utf-8', 'application/json;charset=UTF-8', 'Application/JSON', 'application/json; foo=bar'];
      arm(
        1,
        parts.chain((p) =>
          fc.oneof(
            fc.constantFrom(...wrongTypes).map((ct) => ({ ct: ct as string | undefined, label: `contentType.wrong '${ct}'`, expect: this.gated(['UNSUPPORTED_MEDIA_TYPE']) as Expectation | undefined, payload: JSON.stringify(p.body ?? {}) })),
            fc.constant({ ct: undefined as string | undefined, label: 'contentType.missing (with a body)', expect: this.gated(['UNSUPPORTED_MEDIA_TYPE']) as Expectation | undefined, payload: JSON.stringify(p.body ?? {}) }),
            fc.constantFrom(...okTypes).map((ct) => ({ ct: ct as string | undefined, label: `contentType.variant '${ct}'`, expect: undefined as Expectation | undefined, payload: JSON.stringify(p.body ?? {}) })),
            fc.constant({ ct: 'application/json' as string | undefined, label: 'contentType.json with an empty body', expect: this.gated(['BAD_REQUEST']) as Expectation | undefined, payload: '' }),
          ).map((v) => {
            const s = this.step(p, { payload: v.payload, expect: v.expect });
            if (v.ct === undefined) delete s.headers['content-type'];
            else s.headers['content-type'] = v.ct;
            return { label: v.label, steps: [s] };
          }),
        ),
      );
    }

    if (this.bodySchema === undefined) {
      // A body where the operation takes none: ignored, or refused as a body — either way declared.
      arm(
        1,
        parts.chain((p) =>
          fc.constantFrom(
            { ct: 'application/json', payload: '{"unexpected":true}' },
            { ct: 'application/json', payload: '[1,2' },
            { ct: 'text/plain', payload: 'hello' },
            { ct: 'application/json', payload: 'TOO_LARGE' },
          ).map((v) => (v.payload === 'TOO_LARGE' ? { ...v, payload: JSON.stringify({ x: 'y'.repeat(BODY_LIMIT) }) } : v)).map((b) => {
            const s = this.step(p, { payload: b.payload });
            s.headers['content-type'] = b.ct;
            return { label: `bodyOnBodyless ${b.ct} ${b.payload.length > 40 ? `${b.payload.length} bytes` : b.payload}`, steps: [s] };
          }),
        ),
      );
    }

    if (this.pathParams.length) {
      const bad = fc.oneof(
        fc.constantFrom('%ZZ', '%', '%E0%A4%A', '%C0%AF', '%ED%A0%80', 'a%2', '%%'),
        // No '.', '..' or '%2E%2E': a URL parser resolves dot segments before the request is sent.
        fc.constantFrom('%00', '%2F', 'a%2Fb', '%20', '+', ';', '%3F', '%23', '%25', '~', '*', '..a', 'a.'),
        fc.string({ minLength: 1, maxLength: 6, unit: CODE_POINT }).filter((x) => x !== '.' && x !== '..').map(encodeURIComponent),
        fc.constantFrom('عميل', '😀', '\u202eevil', 'İ', 'ß', '\ufeff').map(encodeURIComponent),
        fc.integer({ min: 65, max: 8000 }).map((n) => 'a'.repeat(n)),
      );
      arm(
        2,
        parts.chain((p) =>
          fc.tuple(fc.constantFrom(...this.pathParams), bad, fc.boolean()).map(([param, raw, suffix]) => {
            // A valid id with an encoded slash and another route's tail: must not reach that route.
            const value = suffix && this.world.poolFor(this.t, op.path, param.name, p.params).length ? `${encodeURIComponent(p.params[param.name])}%2F${raw.replace(/^%2F/, '')}` : raw;
            const decoded = safeDecode(value);
            let expect: Expectation | undefined;
            if (decoded === undefined) expect = { codes: ['BAD_REQUEST'] };
            // Longer than the router's parameter limit (100): no such route, 404.
            else if (!coercing.validate(param.schema as object, decoded)) expect = { codes: this.appDisabled ? ['APP_NOT_ENABLED', 'NOT_FOUND'] : ['VALIDATION_ERROR', 'NOT_FOUND'] };
            return { label: `path.${param.name} = ${value.length > 40 ? `${value.slice(0, 20)}… (${value.length})` : value}`, steps: [this.step(p, { rawParams: { [param.name]: value }, expect })] };
          }),
        ),
      );
      const tails = ['send', 'balance', 'enable', 'deliveries', 'upgrade', 'recover', 'test', 'rotate-secret'];
      arm(
        1,
        parts.chain((p) =>
          fc.tuple(fc.constantFrom(...this.pathParams), fc.constantFrom(...tails)).map(([param, tail]) => {
            const value = `${encodeURIComponent(p.params[param.name])}%2F${tail}`;
            return { label: `path.${param.name} with an encoded slash: ${value}`, steps: [this.step(p, { rawParams: { [param.name]: value } })] };
          }),
        ),
      );
    }

    if (this.queryParams.length) {
      arm(
        2,
        parts.chain((p) =>
          fc.tuple(
            fc.constantFrom(...this.queryParams),
            fc.oneof(
              fc.constantFrom('abc', '', '1.5', '-1', '0', '101', '1e400', 'NaN', 'true', 'null', '%ZZ', '%00', '١', '1,2', ' 1', '0x10', '9007199254740993'),
              // A lone surrogate has no UTF-8: its would-be bytes (CESU-8) are not UTF-8 either.
              fc.constantFrom('%ED%BF%BF', 'a%ED%A0%80b', '%ED%A0%BD%ED%B8%80'),
              fc.integer({ min: 100, max: 5000 }).map((n) => 'q'.repeat(n)),
            ),
            fc.constantFrom('replace', 'duplicate', 'unknown', 'drop'),
          ).map(([q, raw, how]) => {
            const query = { ...p.query };
            let rawQuery = '';
            let label: string;
            if (how === 'unknown') {
              rawQuery = `zz_${raw.length > 10 ? 'long' : encodeURIComponent(raw)}=${raw}`;
              label = `query.unknown ${rawQuery.slice(0, 40)}`;
            } else if (how === 'drop') {
              delete query[q.name];
              label = `query.drop ${q.name}${q.required ? ' (required)' : ''}`;
            } else {
              const first = query[q.name];
              delete query[q.name];
              rawQuery = how === 'duplicate' ? `${q.name}=${encodeURIComponent(String(first ?? '1'))}&${q.name}=${raw}` : `${q.name}=${raw}`;
              label = `query.${how} ${q.name}=${raw.length > 30 ? `${raw.slice(0, 10)}… (${raw.length})` : raw}`;
            }
            // What the server sees after decoding and coercion; refused only if that breaks the parameter's schema.
            const seen: Record<string, unknown> = { ...query };
            const decoded = raw.includes('%') ? (safeDecode(raw) ?? raw) : raw.replace(/\+/g, ' ');
            if (how === 'replace') seen[q.name] = decoded;
            if (how === 'duplicate') seen[q.name] = [String(p.query[q.name] ?? '1'), decoded];
            const schema = { type: 'object', properties: Object.fromEntries(this.queryParams.map((x) => [x.name, x.schema])), required: this.queryParams.filter((x) => x.required).map((x) => x.name) };
            const sure = how !== 'unknown' && !raw.includes('%') && raw !== '';
            const expect: Expectation | undefined = sure && !coercing.validate(schema, seen) ? this.gated(['VALIDATION_ERROR']) : undefined;
            return { label, steps: [this.step({ ...p, query }, { rawQuery, expect })] };
          }),
        ),
      );
    }

    if (this.secured) {
      const other = this.world.other;
      type Cred = { label: string; who: Role | { key: string; company?: string } | 'none'; codes: string[]; authz?: string };
      const creds: Cred[] = [
        { label: 'auth.missing', who: 'none', codes: ['UNAUTHENTICATED'] },
        { label: 'auth.missingKeyWithCompany', who: { key: '', company: this.t.companyId }, codes: ['UNAUTHENTICATED'], authz: '' },
        { label: 'auth.basic', who: 'none', codes: ['UNAUTHENTICATED'], authz: 'Basic dXNlcjpwYXNz' },
        { label: 'auth.bearerNoToken', who: 'none', codes: ['UNAUTHENTICATED'], authz: 'Bearer' },
        { label: 'auth.bearerTwoTokens', who: 'none', codes: ['UNAUTHENTICATED'], authz: `Bearer ${this.t.keys.Owner} x` },
        { label: 'auth.unknownKey', who: { key: 'dwk_0000000000000000_' + 'a'.repeat(43), company: this.t.companyId }, codes: ['UNAUTHENTICATED'] },
        { label: 'auth.garbageKey', who: { key: 'x'.repeat(300), company: this.t.companyId }, codes: ['UNAUTHENTICATED'] },
        { label: 'auth.revoked', who: { key: this.t.revokedKey, company: this.t.companyId }, codes: ['UNAUTHENTICATED'] },
        { label: 'auth.expired', who: { key: this.t.expiredKey, company: this.t.companyId }, codes: ['UNAUTHENTICATED'] },
        { label: 'auth.noCompany', who: { key: this.t.keys.Owner }, codes: ['COMPANY_REQUIRED'] },
        { label: 'auth.blankCompany', who: { key: this.t.keys.Owner, company: '  ' }, codes: ['COMPANY_REQUIRED'] },
        { label: 'auth.otherCompanyHeader', who: { key: this.t.keys.Owner, company: other.companyId }, codes: ['FORBIDDEN'] },
        { label: 'auth.otherCompanyKey', who: { key: other.ownerKey, company: this.t.companyId }, codes: ['FORBIDDEN'] },
        { label: 'auth.unknownCompany', who: { key: this.t.keys.Owner, company: 'co_nope' }, codes: ['FORBIDDEN'] },
        { label: 'auth.scopedToNothing', who: { key: this.t.scopedKey, company: this.t.companyId }, codes: this.gated(['FORBIDDEN']).codes as string[] },
        ...this.world.rolesBelow(op).map((r): Cred => ({ label: `auth.roleBelow ${r}`, who: r, codes: this.gated(['FORBIDDEN']).codes as string[] })),
      ];
      // Credentials are judged before anything about the request itself: combined with bodies
      // that are valid, broken or not JSON at all, the answer is the credential's.
      const bodies: fc.Arbitrary<{ payload?: string; ct?: string; note: string }> = BODY_METHODS.has(op.method)
        ? parts.chain((p) =>
            fc.oneof(
              fc.constant({ payload: p.body === undefined ? undefined : JSON.stringify(p.body), ct: p.body === undefined ? undefined : 'application/json', note: '' }),
              fc.constant({ payload: '{', ct: 'application/json', note: ' + malformed JSON' }),
              fc.constant({ payload: 'x', ct: 'text/plain', note: ' + text/plain body' }),
              fc.constant({ payload: '{"zz":1}', ct: 'application/json', note: ' + wrong body' }),
            ),
          )
        : fc.constant({ note: '' });
      arm(
        3,
        fc.tuple(parts, fc.constantFrom(...creds), bodies).map(([p, c, b]) => {
          const s = this.step({ ...p, body: undefined });
          s.headers = this.headers(c.who);
          if (c.authz !== undefined) s.headers.authorization = c.authz;
          if (b.payload !== undefined) s.payload = b.payload;
          if (b.ct !== undefined) s.headers['content-type'] = b.ct;
          return { label: `${c.label}${b.note}`, steps: [{ ...s, expect: { codes: c.codes } }] };
        }),
      );
    }

    const idem = this.headerParams.find((h) => h.name.toLowerCase() === 'idempotency-key');
    arm(
      1,
      parts.chain((p) =>
        fc.oneof(
          fc.integer({ min: 200, max: 9000 }).map((n) => ({ name: 'Idempotency-Key', value: 'k'.repeat(n) })),
          fc.constantFrom('', ' ', 'é', 'key with spaces', '\t').map((v) => ({ name: 'Idempotency-Key', value: v })),
          fc.constantFrom('ar', 'en', 'xx', '*', 'ar-SA;q=0.1, en;q=0.9', 'ar;q=abc', ';;;', 'a'.repeat(500)).map((v) => ({ name: 'Accept-Language', value: v })),
          fc.constantFrom('garbage', 'gzip, deflate, br', '*/*').map((v) => ({ name: 'Accept-Encoding', value: v })),
          fc.constantFrom('text/html', 'application/xml', '*/*', 'application/json;q=0').map((v) => ({ name: 'Accept', value: v })),
          fc.integer({ min: 1000, max: 12_000 }).map((n) => ({ name: 'X-Padding', value: 'p'.repeat(n) })),
        ).map((h) => {
          const s = this.step(p);
          s.headers[h.name.toLowerCase()] = h.value;
          let expect: Expectation | undefined;
          if (idem && h.name === 'Idempotency-Key' && h.value !== '' && !coercing.validate(idem.schema as object, h.value)) expect = this.gated(['VALIDATION_ERROR']);
          return { label: `headers.${h.name} ${h.value.length > 20 ? `(${h.value.length} chars)` : JSON.stringify(h.value)}`, steps: [{ ...s, expect }] };
        }),
      ),
    );

    if (idem && this.bodySchema !== undefined) {
      // The same key with another body conflicts; with the same body the first answer is replayed.
      arm(
        1,
        fc.tuple(parts, parts, fc.string({ minLength: 1, maxLength: 20, unit: 'grapheme-ascii' }), fc.boolean()).map(([a, b, key, same]) => {
          // A dry run stores nothing and spends no key (docs/app-authors.md): replay is a write's.
          if (a.query.dryRun === true) a = { ...a, query: { ...a.query, dryRun: false } };
          const h = { 'idempotency-key': `fuzz-${key}` };
          const first = this.step(a);
          Object.assign(first.headers, h);
          const second = this.step({ ...a, body: same ? a.body : b.body });
          Object.assign(second.headers, h);
          return { label: `headers.Idempotency-Key reused (${same ? 'same' : 'other'} body)`, steps: [first, second], idempotent: { same } };
        }),
      );
    }

    if (op.method === 'GET') {
      arm(1, parts.map((p) => ({ label: 'method.HEAD', steps: [{ ...this.step(p), method: 'HEAD' }] })));
    }

    // A record made just before: create, then this operation on it (pools are few and the
    // delete operations empty them).
    const creator = this.creator();
    if (creator) {
      arm(
        2,
        fc.tuple(parts, creator.validStep({})).map(([p, pre]) => {
          const main = this.step(p);
          main.withCreatedId = (id) => this.step({ ...p, params: { ...p.params, id } }).url;
          return { label: `after ${creator.op.method} ${creator.op.path} (on what it made)`, steps: [{ ...pre, op: creator.op }, main] };
        }),
      );
    }

    // State: first a valid request of a sibling operation on the same record (send, then pay;
    // uninstall, then purge; a delivery's endpoint rotated), then this one.
    const siblings = this.siblings();
    if (siblings.length) {
      arm(
        3,
        fc.tuple(parts, fc.constantFrom(...siblings)).chain(([p, sb]) =>
          sb.validStep(p.params).map((pre) => ({ label: `after ${sb.op.method} ${sb.op.path}`, steps: [{ ...pre, op: sb.op }, this.step(p)] })),
        ),
      );
    }
    return fc.oneof(...arms);
  }
}
