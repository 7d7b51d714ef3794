// The invoicing app: customers and invoices are document types declared in its manifest;
// this bundle adds what a manifest cannot say — totals in the currency's minor units, the
// date rule, keeping customers that still have invoices — and one custom route.
import { defineApp, route, fieldError, AppError, multiplyToMinor, fromMinor, minorDigits, type AppContext, type Doc } from 'diwan/sdk';

interface Line {
  description: string;
  quantity: number;
  unitPrice: number;
  amount?: number;
}

function computeTotals(doc: Record<string, unknown>, ctx: AppContext): void {
  if (typeof doc.dueDate === 'string' && typeof doc.date === 'string' && doc.dueDate < doc.date) {
    throw fieldError('/dueDate', 'dateOrder', ctx.t('dueDateBeforeDate'), { other: '/date' });
  }
  const currency = ctx.company.currency;
  const digits = minorDigits(currency);
  let subtotal = 0n;
  for (const line of doc.lines as Line[]) {
    const minor = multiplyToMinor(line.quantity, line.unitPrice, digits);
    line.amount = fromMinor(minor, digits);
    subtotal += minor;
  }
  doc.currency = currency;
  doc.subtotal = fromMinor(subtotal, digits);
  doc.total = doc.subtotal;
}

/** Every invoice of a customer in the given states, page by page. */
async function invoicesOf(ctx: AppContext, customerId: string, state?: string): Promise<Doc[]> {
  const out: Doc[] = [];
  for (let page = 1; ; page++) {
    const filters: Record<string, string> = { customerId, ...(state ? { state } : {}) };
    const r = await ctx.docs('invoice').list({ page, pageSize: 100, filters });
    out.push(...r.data);
    if (page * r.pageSize >= r.total) return out;
  }
}

export default defineApp({
  id: 'invoicing',
  hooks: {
    invoice: {
      beforeCreate: computeTotals,
      beforeUpdate: (doc, _previous, ctx) => computeTotals(doc, ctx),
    },
    customer: {
      async beforeDelete(doc, ctx) {
        const { total: count } = await ctx.docs('invoice').list({ pageSize: 1, filters: { customerId: doc.id } });
        if (count > 0) throw new AppError('CONFLICT', [{ reason: 'customer_has_invoices', invoices: count }], { reason: ctx.t('customerHasInvoices', { count }) });
      },
    },
  },
  routes: [
    route({
      method: 'GET',
      url: '/customers/:id/balance',
      permission: 'invoices:read',
      summary: 'What a customer owes: the total of their sent, unpaid invoices',
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
                properties: { customerId: { type: 'string' }, currency: { type: 'string' }, outstanding: { type: 'number' }, invoices: { type: 'integer' } },
              },
            },
          },
        },
      },
      async handler(req, ctx) {
        const customer = await ctx.docs('customer').get(req.params.id);
        if (!customer) throw new AppError('NOT_FOUND', [{ resource: 'customers', id: req.params.id }]);
        const open = await invoicesOf(ctx, customer.id, 'sent');
        const digits = minorDigits(ctx.company.currency);
        const minor = open.reduce((sum, inv) => sum + multiplyToMinor(1, inv.total as number, digits), 0n);
        return { body: { data: { customerId: customer.id, currency: ctx.company.currency, outstanding: fromMinor(minor, digits), invoices: open.length } } };
      },
    }),
  ],
});
