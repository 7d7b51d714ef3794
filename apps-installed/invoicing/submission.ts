// Submission of issued documents to ZATCA, as a durable job (issue 27, part 8). When a company
// onboarded with ZATCA issues an invoice or a note, the issuing write marks it `zatcaStatus:
// pending` and enqueues its submission (keyed by the document: once, however often asked). The
// job sends the issued XML with the company's CSID to its gateway (zatca/submit.ts): clearance
// for a standard document, reporting for a simplified one, or reporting when ZATCA answers that
// clearance is switched off (303). ZATCA's answer is written on the document, with the event of
// its outcome, in the attempt's unit of work: `cleared` (with the cleared XML), `reported`, or
// `rejected`, and ZATCA's errors and warnings. What ZATCA asks to try again (a 5xx, a 429 with
// its Retry-After, no answer in time) and a refused CSID (401: the next attempt reads the
// account again, so onboarding anew lets it through) are thrown, and the job walks the host's
// ladder. A resubmission after a lost answer is safe: ZATCA answers a duplicate as accepted.
import { RetryLater, type AppContext, type Doc, type JobContext } from 'diwan/sdk';
import { modeOf, submit, type SubmissionResult, type ZatcaMessage } from './zatca/submit.ts';
import { zatcaAccount } from './zatca-account.ts';
import { TYPE_OF, documentNumber, type DocumentKind } from './e-invoice-kinds.ts';

export const SUBMIT_JOB = 'submitToZatca';

/**
 * In the issuing write, once the document is sealed: stamped means the company was onboarded
 * (e-invoice.ts stamps then, and only then), and a stamped document waits for ZATCA. Before
 * onboarding nothing is submitted and a document has no status.
 */
export function markForZatca(doc: Record<string, unknown>): void {
  if (typeof doc.signatureValue === 'string') doc.zatcaStatus = 'pending';
}

/** After the issuing write made the document, in the same unit of work: its submission, once per document. */
export async function enqueueSubmission(ctx: AppContext, doc: Doc, kind: DocumentKind): Promise<void> {
  if (doc.zatcaStatus === 'pending') await ctx.jobs.enqueue(SUBMIT_JOB, { kind, id: doc.id }, { key: `zatca:${doc.id}` });
}

/** What ZATCA answers is kept on the document (read-only: the job sets it, no client). */
export const ZATCA_ANSWER = ['zatcaStatus', 'zatcaMessages', 'clearedXml'];

// Within the fields' bounds (a longer answer would fail every attempt to write it).
const cut = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);
const message = (type: 'error' | 'warning') => (m: ZatcaMessage) => ({ type, code: cut(m.code, 200), ...(m.category ? { category: cut(m.category, 200) } : {}), message: cut(m.message, 2000) });

/** The answer that settles the document, or a throw that makes the job try again. */
function settled(r: SubmissionResult) {
  if (r.outcome === 'accepted') {
    return { zatcaStatus: r.mode === 'clearance' ? 'cleared' : 'reported', messages: r.warnings.map(message('warning')), clearedXml: r.clearedXml };
  }
  if (r.outcome === 'rejected') return { zatcaStatus: 'rejected', messages: [...r.errors.map(message('error')), ...r.warnings.map(message('warning'))], clearedXml: undefined };
  const what = `ZATCA ${r.outcome} (${r.httpStatus ?? 'no answer'}): ${r.detail}`;
  if (r.outcome === 'retry' && r.retryAfterMs) throw new RetryLater(what, r.retryAfterMs);
  throw new Error(what);
}

/** The job: submits the document once, and writes what ZATCA answered. */
export async function submitToZatca(payload: { kind: DocumentKind; id: string }, ctx: JobContext): Promise<void> {
  const type = TYPE_OF[payload.kind];
  const docs = ctx.docs(type);
  const doc = await docs.get(payload.id);
  // Settled by an earlier attempt whose own end was lost: nothing to do.
  if (doc?.zatcaStatus !== 'pending') return;
  const account = await zatcaAccount(ctx);
  if (!account) throw new Error('the company is no longer onboarded with ZATCA: once it is onboarded again, the submission goes on');
  const xml = await (await import('./e-invoice.ts')).xmlOf(ctx, doc, payload.kind);
  const sent = { uuid: String(doc.uuid), invoiceHash: String(doc.hash), xml };
  const opts = { baseUrl: account.baseUrl, credentials: account.credentials, lang: ctx.lang, signal: ctx.signal };
  let result = await submit(modeOf(doc.kind as 'standard' | 'simplified'), sent, opts);
  // Clearance switched off by ZATCA (303): the document is reported instead, as its API says.
  if (result.outcome === 'clearance_off') result = await submit('reporting', sent, opts);
  const { zatcaStatus, messages, clearedXml } = settled(result);
  const fields = { zatcaStatus, ...(messages.length ? { zatcaMessages: messages.slice(0, 100) } : {}), ...(clearedXml !== undefined ? { clearedXml } : {}) };
  await docs.set(doc.id, fields);
  await ctx.events.emit(`invoice.zatca.${zatcaStatus}`, {
    documentType: type, id: doc.id, number: documentNumber(payload.kind, doc.number), uuid: doc.uuid, kind: doc.kind, mode: result.mode, zatcaStatus, messages,
  });
}
