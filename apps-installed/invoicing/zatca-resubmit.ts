// POST /{invoices|credit-notes|debit-notes}/:id/zatca/resubmit: the way out for a document whose
// submission job used up the host's ladder (ZATCA unreachable for hours, a CSID refused until the
// company onboarded again): while the document is `zatcaStatus: pending` and its job is `failed`,
// the job goes back to pending with a fresh set of attempts. Anything else is CONFLICT: a
// submission still under way, a document ZATCA accepted, and a rejected one, which is never sent
// again (a credit note corrects it).
import { AppError, route, type AppContext } from 'diwan/sdk';
import { SUBMIT_JOB } from './submission.ts';
import { TYPE_OF, type DocumentKind } from './e-invoice-kinds.ts';

const RESOURCE: Record<DocumentKind, string> = { invoice: 'invoices', credit: 'credit-notes', debit: 'debit-notes' };

const WORDS = {
  en: {
    notSubmitted: 'the document {{id}} was issued before the company onboarded with ZATCA: it is not submitted',
    underWay: 'the submission of {{id}} is still under way (its job is "{{state}}"): only a submission that failed is sent again',
    accepted: 'ZATCA already accepted {{id}} ({{status}}): there is nothing to send again',
    rejected: 'ZATCA rejected {{id}}: a rejected document is never sent again; issue a credit note to correct it',
  },
  ar: {
    notSubmitted: 'صدر المستند {{id}} قبل ربط الشركة بهيئة الزكاة والضريبة والجمارك: لا يُرسل إليها',
    underWay: 'ما زال إرسال {{id}} جاريًا (مهمته في الحالة "{{state}}"): لا يُعاد إلا الإرسال الذي أخفق',
    accepted: 'قبلت الهيئة المستند {{id}} ({{status}}): لا شيء يُعاد إرساله',
    rejected: 'رفضت الهيئة المستند {{id}}: المستند المرفوض لا يُعاد إرساله أبدًا؛ أصدر إشعارًا دائنًا لتصحيحه',
  },
};
const say = (ctx: AppContext, key: keyof (typeof WORDS)['en'], params: Record<string, unknown>) =>
  WORDS[ctx.lang === 'ar' ? 'ar' : 'en'][key].replace(/\{\{(\w+)\}\}/g, (_, k: string) => String(params[k] ?? ''));
const conflict = (ctx: AppContext, reason: string, key: keyof (typeof WORDS)['en'], params: Record<string, unknown>) =>
  new AppError('CONFLICT', [{ reason, ...params }], { reason: say(ctx, key, params) });

const answer = {
  type: 'object', additionalProperties: false, required: ['data'],
  properties: {
    data: {
      type: 'object', additionalProperties: false, required: ['id', 'zatcaStatus', 'jobId'],
      properties: { id: { type: 'string' }, zatcaStatus: { type: 'string', enum: ['pending'] }, jobId: { type: 'string', description: 'The submission job, pending again (GET /api/v1/jobs/{id})' } },
    },
  },
} as const;

export const resubmitRoutes = (Object.keys(RESOURCE) as DocumentKind[]).map((kind) => {
  const resource = RESOURCE[kind];
  return route({
    method: 'POST', url: `/${resource}/:id/zatca/resubmit`, permission: `${resource}:update`, errors: ['NOT_FOUND', 'CONFLICT'],
    summary: `Send the ${kind === 'invoice' ? 'invoice' : `${kind} note`} to ZATCA again after its submission failed`,
    description:
      'Allowed while the document is `zatcaStatus: pending` and its submission job is `failed` (every attempt of the ladder failed): the job goes back to pending now, with a fresh set of attempts. ' +
      'CONFLICT otherwise: `submission_under_way` (the job is still trying), `already_accepted` (cleared or reported), `rejected` (a rejected document is never sent again: a credit note corrects it), `not_submitted` (issued before onboarding).',
    schema: { params: { type: 'object', required: ['id'], properties: { id: { type: 'string', maxLength: 64 } } }, response: { 202: answer } },
    handler: async (req, ctx) => {
      const id = req.params.id;
      const doc = await ctx.docs(TYPE_OF[kind]).get(id);
      if (!doc) throw new AppError('NOT_FOUND', [{ resource, id }]);
      const status = doc.zatcaStatus;
      if (status === 'rejected') throw conflict(ctx, 'rejected', 'rejected', { id });
      if (status === 'cleared' || status === 'reported') throw conflict(ctx, 'already_accepted', 'accepted', { id, status });
      if (status !== 'pending') throw conflict(ctx, 'not_submitted', 'notSubmitted', { id });
      const key = `zatca:${id}`;
      const job = await ctx.jobs.retry(key);
      if (job && !job.retried) throw conflict(ctx, 'submission_under_way', 'underWay', { id, state: job.state });
      // The failed job was deleted after the host's retention: a new one, under the same key.
      const jobId = job?.id ?? (await ctx.jobs.enqueue(SUBMIT_JOB, { kind, id }, { key })).id;
      return { status: 202, body: { data: { id, zatcaStatus: 'pending', jobId } } };
    },
  });
});
