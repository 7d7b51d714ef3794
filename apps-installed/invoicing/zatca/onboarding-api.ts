/**
 * ZATCA's onboarding API (Fatoora), as its published API does it, for one EGS unit:
 *   1. `POST {base}/compliance` with the portal's one-time password in an `OTP` header and
 *      `{ csr }` (base64 of the CSR's PEM) → the compliance CSID: `requestID`,
 *      `binarySecurityToken` (the certificate), `secret`;
 *   2. `POST {base}/compliance/invoices`, authenticated with the compliance CSID (HTTP Basic:
 *      token and secret), `{ invoiceHash, uuid, invoice }` for a sample of each kind of document
 *      the unit will issue, signed with the compliance certificate → ZATCA's validation results;
 *   3. `POST {base}/production/csids`, authenticated with the compliance CSID,
 *      `{ compliance_request_id }` → the production CSID (token and secret) that stamps and
 *      submits from then on.
 * Every call asks for `Accept-Version: V2`. What ZATCA refuses (a 4xx, or validation results
 * with errors) is `refused` with its messages; a 5xx, a 429, a time-out or a network failure is
 * `unavailable` (nothing came of it: the caller may try again).
 */
import { certificateFromSecurityToken } from './certificate.ts';
import { jsonAnswer } from './json-answer.ts';

export interface Csid {
  /** ZATCA's `requestID`: the compliance request a production CSID is asked for with. */
  requestId: string;
  binarySecurityToken: string;
  secret: string;
  /** The certificate `binarySecurityToken` carries, as PEM. */
  certificatePem: string;
}

export interface OnboardingMessage {
  code: string;
  message: string;
}

export type OnboardingFailure =
  | { ok: false; outcome: 'refused'; httpStatus: number; messages: OnboardingMessage[] }
  | { ok: false; outcome: 'unavailable'; httpStatus: number | null; detail: string };

export type OnboardingResult<T> = ({ ok: true } & T) | OnboardingFailure;

export interface OnboardingOptions {
  /** A gateway's URL (`ZATCA_BASE_URLS`), or a stand-in's. */
  baseUrl: string;
  /** The language of ZATCA's messages. */
  lang?: 'en' | 'ar';
  /** The most one call waits for its answer (20 s by default). */
  timeoutMs?: number;
}

export interface ComplianceDocument {
  uuid: string;
  invoiceHash: string;
  /** The stamped XML. */
  xml: string;
}

const basic = (c: { binarySecurityToken: string; secret: string }) => `Basic ${Buffer.from(`${c.binarySecurityToken}:${c.secret}`, 'utf8').toString('base64')}`;

/** Step 1: the compliance CSID for a CSR (`csrBase64`: base64 of its PEM), with the portal's OTP. */
export async function requestComplianceCsid(csrBase64: string, otp: string, opts: OnboardingOptions): Promise<OnboardingResult<{ csid: Csid }>> {
  const r = await call(opts, '/compliance', { otp }, { csr: csrBase64 });
  return r.ok ? csidOf(r.body, r.httpStatus) : r;
}

/** Step 2: one compliance check of a stamped sample; `warnings` are kept, errors refuse it. */
export async function checkCompliance(doc: ComplianceDocument, csid: Csid, opts: OnboardingOptions): Promise<OnboardingResult<{ warnings: OnboardingMessage[] }>> {
  const r = await call(opts, '/compliance/invoices', { authorization: basic(csid) }, {
    invoiceHash: doc.invoiceHash, uuid: doc.uuid, invoice: Buffer.from(doc.xml, 'utf8').toString('base64'),
  });
  if (!r.ok) return r;
  const results = r.body?.validationResults;
  const errors = messages(results?.errorMessages);
  if (errors.length || results?.status === 'ERROR') return { ok: false, outcome: 'refused', httpStatus: r.httpStatus, messages: errors.length ? errors : [{ code: 'ERROR', message: 'validation failed' }] };
  return { ok: true, warnings: messages(results?.warningMessages) };
}

/** Step 3: the production CSID, once the compliance checks passed. */
export async function requestProductionCsid(compliance: Csid, opts: OnboardingOptions): Promise<OnboardingResult<{ csid: Csid }>> {
  const r = await call(opts, '/production/csids', { authorization: basic(compliance) }, { compliance_request_id: compliance.requestId });
  return r.ok ? csidOf(r.body, r.httpStatus) : r;
}

function csidOf(body: Record<string, any> | undefined, httpStatus: number): OnboardingResult<{ csid: Csid }> {
  const { requestID, binarySecurityToken, secret } = body ?? {};
  if (typeof binarySecurityToken !== 'string' || typeof secret !== 'string' || requestID === undefined || requestID === null) {
    return { ok: false, outcome: 'unavailable', httpStatus, detail: 'the answer carries no requestID, binarySecurityToken and secret' };
  }
  let certificatePem: string;
  try {
    certificatePem = certificateFromSecurityToken(binarySecurityToken);
  } catch (err) {
    return { ok: false, outcome: 'unavailable', httpStatus, detail: (err as Error).message };
  }
  return { ok: true, csid: { requestId: String(requestID), binarySecurityToken, secret, certificatePem } };
}

async function call(
  opts: OnboardingOptions,
  path: string,
  headers: Record<string, string>,
  body: unknown,
): Promise<{ ok: true; httpStatus: number; body: Record<string, any> | undefined } | OnboardingFailure> {
  let res: Response;
  let text: string;
  try {
    res = await fetch(`${opts.baseUrl.replace(/\/+$/, '')}${path}`, {
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/json', 'accept-language': opts.lang ?? 'en', 'accept-version': 'V2', ...headers },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(opts.timeoutMs ?? 20_000),
      redirect: 'manual',
    });
    text = await res.text();
  } catch (err) {
    const e = err as Error & { cause?: { code?: string; message?: string } };
    return { ok: false, outcome: 'unavailable', httpStatus: null, detail: e.name === 'TimeoutError' ? 'no answer in time' : (e.cause?.code ?? e.cause?.message ?? e.message) };
  }
  const parsed = jsonAnswer(text);
  if (res.status === 200 || res.status === 202) return { ok: true, httpStatus: res.status, body: parsed };
  if (res.status >= 400 && res.status < 500 && res.status !== 429) {
    const said = refusals(parsed);
    return { ok: false, outcome: 'refused', httpStatus: res.status, messages: said.length ? said : [{ code: String(res.status), message: res.statusText || 'refused' }] };
  }
  return { ok: false, outcome: 'unavailable', httpStatus: res.status, detail: `ZATCA answered ${res.status}` };
}

/** ZATCA's refusals come as `{ code, message }`, `{ errors: [{ code, message }] }` (or strings), or validation results. */
function refusals(body: Record<string, any> | undefined): OnboardingMessage[] {
  if (!body) return [];
  if (Array.isArray(body.errors)) return body.errors.map((e: unknown) => (typeof e === 'string' ? { code: 'ERROR', message: e } : { code: String((e as any)?.code ?? 'ERROR'), message: String((e as any)?.message ?? '') }));
  const validation = messages(body.validationResults?.errorMessages);
  if (validation.length) return validation;
  return body.message || body.code ? [{ code: String(body.code ?? 'ERROR'), message: String(body.message ?? '') }] : [];
}

function messages(v: unknown): OnboardingMessage[] {
  return Array.isArray(v) ? v.filter((m) => m && typeof m === 'object').map((m) => ({ code: String(m.code ?? ''), message: String(m.message ?? '') })) : [];
}
