// The nonprofit app: donors, campaigns, donations, pledges, beneficiaries and disbursements
// are document types declared in its manifest. This bundle adds what a manifest cannot say:
// a received donation adds its amount to its campaign's raisedAmount, and a campaign whose
// raisedAmount reaches its goalAmount emits nonprofit.campaign.goal_reached, once per
// crossing (whether the amount was raised by a donation or corrected by hand).
import { defineApp, toMinor, fromMinor, minorDigits, type AppContext, type Doc } from 'diwan/sdk';

function reached(c: Record<string, unknown> | undefined): boolean {
  return !!c && typeof c.goalAmount === 'number' && c.goalAmount > 0 && typeof c.raisedAmount === 'number' && c.raisedAmount >= c.goalAmount;
}

async function emitReached(c: Doc, ctx: AppContext): Promise<void> {
  await ctx.events.emit('nonprofit.campaign.goal_reached', {
    campaignId: c.id,
    campaignName: c.name as string,
    fund: c.fund as string,
    goalAmount: c.goalAmount as number,
    raisedAmount: c.raisedAmount as number,
    currency: ctx.company.currency,
  });
}

export default defineApp({
  id: 'nonprofit',
  hooks: {
    donation: {
      async afterTransition(doc: Doc, transition: string, ctx: AppContext) {
        if (transition !== 'receive' || typeof doc.campaignId !== 'string') return;
        const campaign = await ctx.docs('campaign').get(doc.campaignId);
        if (!campaign) return;
        const digits = minorDigits(ctx.company.currency);
        const raised = toMinor((campaign.raisedAmount as number | undefined) ?? 0, digits) + toMinor(doc.amount as number, digits);
        await ctx.docs('campaign').update(campaign.id, { raisedAmount: fromMinor(raised, digits) });
      },
    },
    campaign: {
      async afterCreate(doc: Doc, ctx: AppContext) {
        if (reached(doc)) await emitReached(doc, ctx);
      },
      async afterUpdate(doc: Doc, previous: Doc, ctx: AppContext) {
        if (reached(doc) && !reached(previous)) await emitReached(doc, ctx);
      },
    },
  },
});
