// The invoicing app: customers, invoices, credit and debit notes and payments are document types
// declared in its manifest, with their totals, locks and checks as rules there. This bundle adds
// what the rules cannot say: VAT per line and per category (vat.ts), issuing (gap-free numbers
// taken in the request's transaction, a UUID, the kind), the limits notes and payments keep, the
// settlement they leave on the invoice, and the customer's balance.
import { randomUUID } from 'node:crypto';
import { defineApp, route, fieldError, AppError, fromMinor, minorDigits, toMinor, type AppContext, type Doc } from 'diwan/sdk';
import { priceLines } from './vat.ts';
import { TYPE_OF, documentNumber, type DocumentKind } from './e-invoice-kinds.ts';
import { SUBMIT_JOB, ZATCA_ANSWER, enqueueSubmission, markForZatca, submitToZatca } from './submission.ts';
import { zatcaRoutes } from './zatca-routes.ts';
import { resubmitRoutes } from './zatca-resubmit.ts';

/** The e-invoice and PDF code (zatca/, pdf/ and their libraries), loaded when first used. */
const eInvoice = () => import('./e-invoice.ts');

/** States in which an invoice is issued: it has its number and takes notes and payments. */
const ISSUED = ['sent', 'paid'];

const minor = (ctx: AppContext, amount: unknown) => toMinor(typeof amount === 'number' ? amount : 0, minorDigits(ctx.company.currency));
const money = (ctx: AppContext, m: bigint) => fromMinor(m, minorDigits(ctx.company.currency));

/** The sum of `field` over the documents of `type` that reference the invoice. */
async function sumFor(ctx: AppContext, type: string, invoiceId: string, field: string): Promise<number> {
  const docs = await ctx.docs(type).all({ filters: { invoiceId } });
  return money(ctx, docs.reduce((s, d) => s + minor(ctx, d[field]), 0n));
}

function checkDates(doc: Record<string, unknown>, ctx: AppContext): void {
  if (typeof doc.dueDate === 'string' && typeof doc.date === 'string' && doc.dueDate < doc.date) {
    throw fieldError('/dueDate', 'dateOrder', ctx.t('dueDateBeforeDate'), { other: '/date' });
  }
}

/**
 * Takes the document's numbers: first ZATCA's invoice counter (one series over invoices and
 * notes, taken first by every issue so that concurrent issues queue on it in one order), then
 * the number of its own series. Both roll back with the request.
 */
async function issue(doc: Record<string, unknown>, series: string, ctx: AppContext): Promise<void> {
  doc.counter = await ctx.sequences.next('counter');
  doc.number = await ctx.sequences.next(series);
  doc.uuid = randomUUID();
  doc.issuedAt = ctx.clock.iso();
}

/** The invoice a note or payment is for; it must be issued. */
async function issuedInvoice(ctx: AppContext, id: string): Promise<Doc> {
  const inv = await ctx.docs('invoice').get(id);
  if (!inv) throw fieldError('/invoiceId', 'exists', ctx.t('notesNeedInvoice'));
  if (!ISSUED.includes(inv.state!)) throw new AppError('CONFLICT', [{ reason: 'not_issued', invoiceId: id, state: inv.state }], { reason: ctx.t('notIssued', { id, state: inv.state }) });
  return inv;
}

/**
 * Rewrites an issued invoice as it is, for its hooks and rules to bring what it derives up to
 * date. (An update names a field; its own value passes the lock of an issued invoice.)
 */
const refresh = (ctx: AppContext, inv: Doc): Promise<Doc> => ctx.docs('invoice').update(inv.id, { dueDate: inv.dueDate });

/**
 * Brings an issued invoice's settlement up to date (its payments and notes, summed); it is paid
 * once nothing is left due.
 */
async function settle(ctx: AppContext, invoiceId: string): Promise<Doc> {
  const inv = await refresh(ctx, (await ctx.docs('invoice').get(invoiceId))!);
  return inv.state === 'sent' && inv.balanceDue === 0 ? ctx.docs('invoice').transition(invoiceId, 'pay') : inv;
}

/** A credit or debit note: priced like an invoice, issued (and sealed) at once with the invoice's customer and kind. */
function noteHooks(series: string, kind: DocumentKind) {
  return {
    async beforeCreate(doc: Record<string, unknown>, ctx: AppContext) {
      // The counter and series are taken first: concurrent notes on one company queue there, and each then reads the invoice as the previous one left it.
      await issue(doc, series, ctx);
      const inv = await issuedInvoice(ctx, doc.invoiceId as string);
      const totals = priceLines(doc, ctx);
      Object.assign(doc, { customerId: inv.customerId, kind: inv.kind, date: ctx.clock.today() });
      await (await eInvoice()).seal(ctx, doc, kind, totals);
      markForZatca(doc);
    },
    beforeUpdate(doc: Record<string, unknown>, previous: Doc) {
      // An issued note never changes (its fields are locked, what it computed is kept): only ZATCA's answer is written on it.
      for (const [k, v] of Object.entries(previous)) if (!['id', 'state', 'createdAt', 'updatedAt', ...ZATCA_ANSWER].includes(k)) doc[k] = v;
    },
    beforeDelete(doc: Doc, ctx: AppContext) {
      throw new AppError('CONFLICT', [{ reason: 'locked', state: doc.state }], { reason: ctx.t('noteLocked', { state: doc.state }) });
    },
  };
}

/** GET …/xml (the ZATCA e-invoice) and …/pdf (the bilingual PDF) of each kind of issued document. */
const RESOURCE: Record<DocumentKind, string> = { invoice: 'invoices', credit: 'credit-notes', debit: 'debit-notes' };
const eInvoiceRoutes = (Object.keys(RESOURCE) as DocumentKind[]).flatMap((kind) => {
  const resource = RESOURCE[kind];
  const sealed = async (ctx: AppContext, id: string): Promise<Doc> => {
    const doc = await ctx.docs(TYPE_OF[kind]).get(id);
    if (!doc) throw new AppError('NOT_FOUND', [{ resource, id }]);
    if (!doc.hash) throw new AppError('CONFLICT', [{ reason: 'not_sealed', id, state: doc.state }], { reason: ctx.t('notSealed', { what: kind, id }) });
    return doc;
  };
  const params = { type: 'object', required: ['id'], properties: { id: { type: 'string', maxLength: 64 } } } as const;
  /** Saved under the document's number: `INV-000042.pdf`. */
  const file = (doc: Doc, ext: string) => ({ 'content-disposition': `attachment; filename="${documentNumber(kind, doc.number)}.${ext}"` });
  return [
    route({
      method: 'GET', url: `/${resource}/:id/xml`, permission: `${resource}:read`, produces: 'application/xml', errors: ['NOT_FOUND', 'CONFLICT'],
      offeredWhen: 'hash',
      summary: `The ${kind === 'invoice' ? 'invoice' : `${kind} note`}'s e-invoice: UBL 2.1 with ZATCA's fields (ICV, PIH, QR); once ZATCA cleared it, the XML as ZATCA cleared it`,
      description: 'As it was sealed at issue, until ZATCA clears it (`zatcaStatus: cleared`); from then on the cleared XML ZATCA returned, with its stamp (the document\'s `clearedXml`). A standard document is given to the buyer only in that cleared form; a simplified one as issued.',
      schema: { params, response: { 200: { type: 'string', description: 'UBL 2.1 Invoice XML' } } },
      handler: async (req, ctx) => {
        const doc = await sealed(ctx, req.params.id);
        return { body: typeof doc.clearedXml === 'string' ? doc.clearedXml : await (await eInvoice()).xmlOf(ctx, doc, kind), headers: file(doc, 'xml') };
      },
    }),
    route({
      method: 'GET', url: `/${resource}/:id/pdf`, permission: `${resource}:read`, produces: 'application/pdf', errors: ['NOT_FOUND', 'CONFLICT'],
      offeredWhen: 'hash',
      summary: `The ${kind === 'invoice' ? 'invoice' : `${kind} note`} as a bilingual (Arabic and English) PDF with its QR code`,
      schema: { params, response: { 200: { type: 'string', format: 'binary', description: 'PDF' } } },
      handler: async (req, ctx) => {
        const doc = await sealed(ctx, req.params.id);
        return { body: await (await eInvoice()).pdfOf(ctx, doc, kind), headers: file(doc, 'pdf') };
      },
    }),
  ];
});

const debitNoteHooks = noteHooks('debit-note', 'debit');

export default defineApp({
  id: 'invoicing',
  jobs: { [SUBMIT_JOB]: submitToZatca },
  hooks: {
    invoice: {
      beforeCreate(doc, ctx) {
        checkDates(doc, ctx);
        priceLines(doc, ctx);
        Object.assign(doc, { amountPaid: 0, creditedTotal: 0, debitedTotal: 0 });
      },
      async beforeUpdate(doc, previous, ctx) {
        if (previous.state === 'draft' || previous.state === 'void') {
          checkDates(doc, ctx);
          priceLines(doc, ctx);
          Object.assign(doc, { amountPaid: 0, creditedTotal: 0, debitedTotal: 0 });
          return;
        }
        // Issued: what was issued stays (its fields are locked, its computed values kept), and
        // the settlement follows the payments and notes. The first update after `send` issues it.
        if (previous.number === undefined) {
          const totals = priceLines(doc, ctx);
          await issue(doc, 'invoice', ctx);
          const customer = await ctx.docs('customer').get(doc.customerId as string);
          doc.kind = customer?.vatNumber ? 'standard' : 'simplified';
          await (await eInvoice()).seal(ctx, doc, 'invoice', totals);
          markForZatca(doc);
        } else {
          for (const k of ['lines', 'taxBreakdown', 'currency', 'number', 'counter', 'uuid', 'kind', 'issuedAt', 'previousHash', 'hash', 'qr', 'signatureValue', 'signingCertificate']) {
            if (previous[k] !== undefined) doc[k] = previous[k];
          }
        }
        doc.amountPaid = await sumFor(ctx, 'payment', previous.id, 'amount');
        doc.creditedTotal = await sumFor(ctx, 'creditNote', previous.id, 'total');
        doc.debitedTotal = await sumFor(ctx, 'debitNote', previous.id, 'total');
      },
      async afterTransition(doc, transition, ctx) {
        if (transition !== 'send') return;
        // Issued in the same unit of work as the state change; the answer to `send` is the issued invoice.
        Object.assign(doc, await refresh(ctx, doc));
        await enqueueSubmission(ctx, doc, 'invoice');
      },
      beforeDelete(doc, ctx) {
        if (ISSUED.includes(doc.state!)) throw new AppError('CONFLICT', [{ reason: 'locked', state: doc.state }], { reason: ctx.t('lockedAfterIssue', { state: doc.state }) });
      },
    },
    creditNote: {
      ...noteHooks('credit-note', 'credit'),
      async afterCreate(doc, ctx) {
        // Never more than is left to credit: the invoice's total and debit notes, less what earlier credit notes took.
        const inv = (await ctx.docs('invoice').get(doc.invoiceId as string))!;
        const left = minor(ctx, inv.total) + minor(ctx, inv.debitedTotal) - minor(ctx, inv.creditedTotal);
        const amount = minor(ctx, doc.total);
        if (amount > left) {
          const amounts = { amount: money(ctx, amount), left: money(ctx, left), currency: ctx.company.currency };
          throw new AppError('CONFLICT', [{ reason: 'over_credit', invoiceId: inv.id, ...amounts }], { reason: ctx.t('overCredit', { id: inv.number ?? inv.id, ...amounts }) });
        }
        await settle(ctx, inv.id);
        await enqueueSubmission(ctx, doc, 'credit');
      },
    },
    debitNote: {
      ...debitNoteHooks,
      async beforeCreate(doc, ctx) {
        // A paid invoice is closed: what was undercharged after it was paid is billed anew.
        const inv = await ctx.docs('invoice').get(doc.invoiceId as string);
        if (inv?.state === 'paid') throw new AppError('CONFLICT', [{ reason: 'paid', invoiceId: inv.id, state: inv.state }], { reason: ctx.t('debitOnPaid', { id: inv.number ?? inv.id }) });
        await debitNoteHooks.beforeCreate(doc, ctx);
      },
      async afterCreate(doc, ctx) {
        await settle(ctx, doc.invoiceId as string);
        await enqueueSubmission(ctx, doc, 'debit');
      },
    },
    payment: {
      async beforeCreate(doc, ctx) {
        // The receipt number first: concurrent payments of the company queue on it, so each reads the balance the previous one left.
        doc.number = await ctx.sequences.next('payment');
        const inv = await issuedInvoice(ctx, doc.invoiceId as string);
        const amount = minor(ctx, doc.amount);
        const balance = minor(ctx, inv.balanceDue);
        if (amount > balance) {
          const amounts = { amount: money(ctx, amount), balance: money(ctx, balance), currency: ctx.company.currency };
          throw new AppError('CONFLICT', [{ reason: 'overpayment', invoiceId: inv.id, ...amounts }], { reason: ctx.t('overpayment', { id: inv.number ?? inv.id, ...amounts }) });
        }
        Object.assign(doc, { customerId: inv.customerId, currency: ctx.company.currency });
      },
      async afterCreate(doc, ctx) {
        await settle(ctx, doc.invoiceId as string);
      },
    },
    customer: {
      async beforeDelete(doc, ctx) {
        const { total: count } = await ctx.docs('invoice').list({ pageSize: 1, filters: { customerId: doc.id } });
        if (count > 0) throw new AppError('CONFLICT', [{ reason: 'customer_has_invoices', invoices: count }], { reason: ctx.t('customerHasInvoices', { count }) });
      },
    },
  },
  routes: [
    ...eInvoiceRoutes,
    ...zatcaRoutes,
    ...resubmitRoutes,
    route({
      method: 'POST',
      url: '/invoices/:id/payments',
      permission: 'payments:create',
      summary: 'Record a payment against an issued invoice',
      description: 'Partial payments add up; a payment above the balance due is refused (CONFLICT with the amounts). The invoice is paid once its balance due reaches zero.',
      errors: ['NOT_FOUND', 'CONFLICT'],
      schema: {
        params: { type: 'object', required: ['id'], properties: { id: { type: 'string', maxLength: 64 } } },
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['amount', 'date', 'method'],
          properties: {
            amount: { type: 'number', description: 'In the company currency; more than zero, at most the balance due' },
            date: { type: 'string', format: 'date' },
            method: { type: 'string', enum: ['cash', 'card', 'bankTransfer', 'cheque', 'other'] },
            reference: { type: 'string', maxLength: 200 },
          },
        },
        response: { 201: { type: 'object', required: ['data'], properties: { data: { type: 'object', additionalProperties: true, description: 'The payment recorded' } } } },
      },
      async handler(req, ctx) {
        if (!(await ctx.docs('invoice').get(req.params.id))) throw new AppError('NOT_FOUND', [{ resource: 'invoices', id: req.params.id }]);
        return { status: 201, body: { data: await ctx.docs('payment').create({ ...req.body, invoiceId: req.params.id }) } };
      },
    }),
    route({
      method: 'GET',
      url: '/customers/:id/balance',
      permission: 'invoices:read',
      summary: 'What a customer owes: the balance due of their issued invoices, notes and payments included',
      schema: {
        params: { type: 'object', required: ['id'], properties: { id: { type: 'string', maxLength: 64 } } },
        response: {
          200: {
            type: 'object',
            required: ['data'],
            properties: {
              data: {
                type: 'object',
                required: ['customerId', 'currency', 'outstanding', 'invoices'],
                properties: {
                  customerId: { type: 'string' },
                  currency: { type: 'string' },
                  outstanding: { type: 'number', description: 'The sum of the balance due of their issued invoices (negative: owed to the customer)' },
                  invoices: { type: 'integer', description: 'Issued invoices with a balance due other than zero' },
                },
              },
            },
          },
        },
      },
      async handler(req, ctx) {
        const customer = await ctx.docs('customer').get(req.params.id);
        if (!customer) throw new AppError('NOT_FOUND', [{ resource: 'customers', id: req.params.id }]);
        const open = (await ctx.docs('invoice').all({ filters: { customerId: customer.id } })).filter((inv) => ISSUED.includes(inv.state!) && inv.balanceDue !== 0);
        const outstanding = open.reduce((sum, inv) => sum + minor(ctx, inv.balanceDue), 0n);
        return { body: { data: { customerId: customer.id, currency: ctx.company.currency, outstanding: money(ctx, outstanding), invoices: open.length } } };
      },
    }),
  ],
});
