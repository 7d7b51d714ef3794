/**
 * Submitting issued documents to ZATCA (Fatoora), as its published API does: clearance
 * (`POST {base}/invoices/clearance/single`, `Clearance-Status: 1`) for standard documents, before
 * they are given to the buyer, and reporting (`POST {base}/invoices/reporting/single`) for
 * simplified ones, within 24 hours. The body is `{ invoiceHash, uuid, invoice }` (the XML in
 * base64); the caller authenticates with its production CSID (HTTP Basic: the CSID's
 * binarySecurityToken and secret) and asks for `Accept-Version: V2`.
 *
 * ZATCA's answers, mapped:
 *   200  accepted (clearance: `clearanceStatus: CLEARED` with the cleared XML; reporting: `REPORTED`)
 *   202  accepted with warnings (validationResults.warningMessages)
 *   208  clearance of a document already cleared: accepted (a duplicate, with its cleared XML)
 *   409  reporting of a document already reported (`REPORTED_SUCCESSFULLY_EARLIER`): accepted (a duplicate)
 *   400  rejected, with validationResults.errorMessages (and warnings)
 *   401  the CSID was refused (wrong token or secret, or revoked)
 *   303  clearance is switched off by ZATCA for now: the document is to be reported instead
 *   429, 5xx, a time-out or a network failure: try again later (with a 429/503's Retry-After)
 * A resubmission after a lost answer (a time-out, a crash) is therefore safe: ZATCA recognises
 * the hash and answers the duplicate, which counts as accepted.
 */

import { jsonAnswer } from './json-answer.ts';

/** ZATCA's gateways: the developer portal (sandbox), simulation, and production ("core"). */
export const ZATCA_BASE_URLS = {
  sandbox: 'https://gw-fatoora.zatca.gov.sa/e-invoicing/developer-portal',
  simulation: 'https://gw-fatoora.zatca.gov.sa/e-invoicing/simulation',
  production: 'https://gw-fatoora.zatca.gov.sa/e-invoicing/core',
} as const;

export type ZatcaGateway = keyof typeof ZATCA_BASE_URLS;

/** Clearance for standard (B2B) documents, reporting for simplified (B2C) ones. */
export type SubmissionMode = 'clearance' | 'reporting';

/** One of ZATCA's validation messages. */
export interface ZatcaMessage {
  type: string;
  code: string;
  category: string;
  message: string;
  status: string;
}

export interface SubmissionDocument {
  uuid: string;
  /** The document's hash (base64), as issued: `invoiceHash(xml)`. */
  invoiceHash: string;
  /** The issued (stamped) XML. */
  xml: string;
}

export interface SubmitOptions {
  /** A gateway's URL (`ZATCA_BASE_URLS`), or a stand-in's. */
  baseUrl: string;
  /** The production CSID: `binarySecurityToken` and `secret` as ZATCA's CSID answer gave them. */
  credentials: { binarySecurityToken: string; secret: string };
  /** The language of ZATCA's messages. */
  lang?: 'en' | 'ar';
  /** The most a submission waits for its answer (20 s by default). */
  timeoutMs?: number;
  /** Aborts the submission (a job's time being up); it then counts as a time-out. */
  signal?: AbortSignal;
}

export type SubmissionResult =
  | {
      outcome: 'accepted';
      mode: SubmissionMode;
      /** `CLEARED` or `REPORTED`. */
      status: string;
      httpStatus: number;
      /** ZATCA already had this document (a resubmission): it was accepted then. */
      duplicate: boolean;
      warnings: ZatcaMessage[];
      info: ZatcaMessage[];
      /** Clearance: the XML as ZATCA cleared it (with its stamp and QR), to give the buyer. */
      clearedXml?: string;
    }
  | { outcome: 'rejected'; mode: SubmissionMode; httpStatus: number; errors: ZatcaMessage[]; warnings: ZatcaMessage[] }
  | { outcome: 'unauthorized'; mode: SubmissionMode; httpStatus: 401; detail: string }
  | { outcome: 'clearance_off'; mode: 'clearance'; httpStatus: 303; detail: string }
  | {
      outcome: 'retry';
      mode: SubmissionMode;
      httpStatus: number | null;
      reason: 'rate_limited' | 'server_error' | 'timeout' | 'network' | 'unexpected';
      /** What a 429 or 503 asked for with Retry-After (ms), or null. */
      retryAfterMs: number | null;
      detail: string;
    };

const PATHS: Record<SubmissionMode, string> = { clearance: '/invoices/clearance/single', reporting: '/invoices/reporting/single' };
const DEFAULT_TIMEOUT_MS = 20_000;

/** The request ZATCA's API takes, without sending it: what `submit` POSTs. */
export function submissionRequest(mode: SubmissionMode, doc: SubmissionDocument, opts: Pick<SubmitOptions, 'baseUrl' | 'credentials' | 'lang'>): { url: string; headers: Record<string, string>; body: string } {
  const basic = Buffer.from(`${opts.credentials.binarySecurityToken}:${opts.credentials.secret}`, 'utf8').toString('base64');
  return {
    url: `${opts.baseUrl.replace(/\/+$/, '')}${PATHS[mode]}`,
    headers: {
      accept: 'application/json',
      'content-type': 'application/json',
      'accept-language': opts.lang ?? 'en',
      'accept-version': 'V2',
      // 1 asks for clearance; reporting says 0.
      'clearance-status': mode === 'clearance' ? '1' : '0',
      authorization: `Basic ${basic}`,
    },
    body: JSON.stringify({ invoiceHash: doc.invoiceHash, uuid: doc.uuid, invoice: Buffer.from(doc.xml, 'utf8').toString('base64') }),
  };
}

/** Standard documents are cleared, simplified ones reported. */
export const modeOf = (subtype: 'standard' | 'simplified'): SubmissionMode => (subtype === 'standard' ? 'clearance' : 'reporting');

/** Submits an issued document for clearance (standard) or reporting (simplified), and maps the answer. */
export function submitInvoice(subtype: 'standard' | 'simplified', doc: SubmissionDocument, opts: SubmitOptions): Promise<SubmissionResult> {
  return submit(modeOf(subtype), doc, opts);
}

export async function submit(mode: SubmissionMode, doc: SubmissionDocument, opts: SubmitOptions): Promise<SubmissionResult> {
  const req = submissionRequest(mode, doc, opts);
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const signal = opts.signal ? AbortSignal.any([opts.signal, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs);
  let res: Response;
  let text: string;
  try {
    res = await fetch(req.url, { method: 'POST', headers: req.headers, body: req.body, signal, redirect: 'manual' });
    text = await res.text();
  } catch (err) {
    const aborted = signal.aborted || (err as Error).name === 'TimeoutError' || (err as Error).name === 'AbortError';
    return {
      outcome: 'retry', mode, httpStatus: null, reason: aborted ? 'timeout' : 'network', retryAfterMs: null,
      detail: aborted ? `no answer from ZATCA within ${timeoutMs} ms` : `ZATCA could not be reached: ${causeOf(err)}`,
    };
  }
  return answer(mode, res.status, text, res.headers.get('retry-after'));
}

/** ZATCA's answer (status, body text, Retry-After) as a result. */
export function answer(mode: SubmissionMode, httpStatus: number, text: string, retryAfter: string | null = null): SubmissionResult {
  const body = jsonAnswer(text);
  const results = (body?.validationResults ?? {}) as Record<string, unknown>;
  const warnings = messages(results.warningMessages);
  const info = messages(results.infoMessages);
  const errors = messages(results.errorMessages);
  const status = String((mode === 'clearance' ? body?.clearanceStatus : body?.reportingStatus) ?? '');
  const said = typeof body?.message === 'string' ? body.message : text.slice(0, 300);
  if (httpStatus === 200 || httpStatus === 202 || httpStatus === 208 || (httpStatus === 409 && mode === 'reporting')) {
    const cleared = typeof body?.clearedInvoice === 'string' ? Buffer.from(body.clearedInvoice, 'base64').toString('utf8') : undefined;
    // A 409 is an error to ZATCA and a success to its caller: the document was reported before.
    const duplicate = httpStatus === 208 || httpStatus === 409 || /REPORTED_SUCCESSFULLY_EARLIER/.test(status) || warnings.some((w) => /previously submitted/i.test(w.message));
    return {
      outcome: 'accepted', mode, status: mode === 'clearance' ? 'CLEARED' : 'REPORTED', httpStatus, duplicate, warnings, info,
      ...(mode === 'clearance' && cleared !== undefined ? { clearedXml: cleared } : {}),
    };
  }
  if (httpStatus === 400) {
    const all = errors.length ? errors : [{ type: 'ERROR', code: String(body?.code ?? 'Invalid-Request'), category: 'Request', message: said || 'ZATCA refused the request', status: 'ERROR' }];
    return { outcome: 'rejected', mode, httpStatus, errors: all, warnings };
  }
  if (httpStatus === 401) return { outcome: 'unauthorized', mode, httpStatus, detail: said || 'ZATCA refused the CSID' };
  if (httpStatus === 303 && mode === 'clearance') return { outcome: 'clearance_off', mode, httpStatus, detail: said || 'clearance is switched off: report the document instead' };
  const retryAfterMs = httpStatus === 429 || httpStatus === 503 ? parseRetryAfter(retryAfter) : null;
  return {
    outcome: 'retry', mode, httpStatus, retryAfterMs,
    reason: httpStatus === 429 ? 'rate_limited' : httpStatus >= 500 ? 'server_error' : 'unexpected',
    detail: `ZATCA answered ${httpStatus}${said ? `: ${said}` : ''}`,
  };
}

function messages(v: unknown): ZatcaMessage[] {
  if (!Array.isArray(v)) return [];
  return v
    .filter((m) => m && typeof m === 'object')
    .map((m) => ({ type: String(m.type ?? ''), code: String(m.code ?? ''), category: String(m.category ?? ''), message: String(m.message ?? ''), status: String(m.status ?? '') }));
}

/** Delta-seconds or an HTTP-date, as a wait in ms; null when absent or unreadable. */
function parseRetryAfter(v: string | null): number | null {
  if (v == null) return null;
  if (/^\d{1,10}$/.test(v.trim())) return Number(v.trim()) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, at - Date.now());
}

function causeOf(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (err as Error).message ?? String(err);
}

/** What a submission's result means for the document: its `zatcaStatus` and ZATCA's messages, or a reason to try again. */
export type SubmissionOutcome =
  | { settled: true; zatcaStatus: 'cleared' | 'reported' | 'rejected'; messages: string[]; clearedXml?: string; duplicate: boolean }
  | { settled: false; retry: string };

/**
 * Accepted (with or without warnings, a duplicate included) → `cleared` or `reported`; rejected →
 * `rejected` with ZATCA's errors then warnings, each `code: message`; anything else (a 5xx, a 429,
 * a time-out, a refused CSID, clearance switched off) is to be tried again later.
 */
export function outcomeOf(r: SubmissionResult): SubmissionOutcome {
  const line = (m: ZatcaMessage) => `${m.code}: ${m.message}`;
  if (r.outcome === 'accepted') {
    return {
      settled: true, zatcaStatus: r.mode === 'clearance' ? 'cleared' : 'reported', messages: r.warnings.map(line), duplicate: r.duplicate,
      ...(r.clearedXml !== undefined ? { clearedXml: r.clearedXml } : {}),
    };
  }
  if (r.outcome === 'rejected') return { settled: true, zatcaStatus: 'rejected', messages: [...r.errors, ...r.warnings].map(line), duplicate: false };
  return { settled: false, retry: `ZATCA ${r.outcome}: ${r.detail}` };
}
