// The projects app: projects, milestones and tasks are document types declared in its
// manifest. This bundle adds the one thing a manifest cannot say: project.budget.exceeded,
// which compares two fields of the same project (actual cost against budget) and fires when
// the cost crosses the budget, once per crossing.
import { defineApp, toMinor, fromMinor, minorDigits, type AppContext } from 'diwan/sdk';

type Project = Record<string, unknown> & { id: string };

function overBudget(p: Record<string, unknown> | undefined): boolean {
  return !!p && typeof p.budget === 'number' && typeof p.actualCost === 'number' && p.actualCost > p.budget;
}

async function emitExceeded(doc: Project, ctx: AppContext): Promise<void> {
  const currency = ctx.company.currency;
  const digits = minorDigits(currency);
  const budget = doc.budget as number;
  const actualCost = doc.actualCost as number;
  await ctx.events.emit('project.budget.exceeded', {
    projectId: doc.id,
    projectName: doc.name as string,
    budget,
    actualCost,
    overrunAmount: fromMinor(toMinor(actualCost, digits) - toMinor(budget, digits), digits),
    currency,
  });
}

export default defineApp({
  id: 'projects',
  hooks: {
    project: {
      async afterCreate(doc: Project, ctx: AppContext) {
        if (overBudget(doc)) await emitExceeded(doc, ctx);
      },
      async afterUpdate(doc: Project, previous: Project, ctx: AppContext) {
        if (overBudget(doc) && !overBudget(previous)) await emitExceeded(doc, ctx);
      },
    },
  },
});
