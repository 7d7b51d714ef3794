// Analytics: dashboards, datasets, access grants and exports are document types declared in
// the manifest. This bundle adds the route a viewer opens a dashboard through, which checks the
// dashboard's access grants and emits `analytics.access.denied` when the caller holds none.
//
// A grant names a user (the caller id) or a platform role. The caller holds a role when it holds
// a permission whose default lowest role is that role (roles are ordered, so a Manager also
// holds the Member and Viewer grants); a company that moves those permissions moves this too.
import { defineApp, route, AppError, type AppContext, type Doc } from 'diwan/sdk';

const ROLE_PROBES: [role: string, permission: string][] = [
  ['Viewer', 'analytics-dashboards:read'],
  ['Member', 'analytics-dashboards:create'],
  ['Manager', 'analytics-dashboards:delete'],
  ['Admin', 'audit:read'],
  ['Owner', 'apps:manage'],
];
const LEVELS = ['view', 'edit', 'manage'];

/** The highest level any of the caller's grants gives on the dashboard, or undefined. */
async function levelOf(ctx: AppContext, dashboardId: string): Promise<string | undefined> {
  const roles = new Set(ROLE_PROBES.filter(([, p]) => ctx.can(p)).map(([r]) => r));
  let best = -1;
  for (const g of await ctx.docs('access').all({ filters: { dashboardId } })) {
    const mine = g.principalType === 'user' ? g.principalId === ctx.actor.id : roles.has(g.principalId as string);
    if (mine) best = Math.max(best, LEVELS.indexOf(g.level as string));
  }
  return best >= 0 ? LEVELS[best] : undefined;
}

export default defineApp({
  id: 'analytics',
  routes: [
    route({
      method: 'GET',
      url: '/analytics-dashboards/:id/open',
      permission: 'analytics-dashboards:read',
      summary: 'Open a published dashboard the caller has been granted access to',
      description: 'Answers 403 (and emits analytics.access.denied) when no grant of the dashboard reaches the caller.',
      errors: ['FORBIDDEN'],
      schema: {
        params: { type: 'object', required: ['id'], properties: { id: { type: 'string', maxLength: 64 } } },
        response: {
          200: {
            type: 'object',
            required: ['data'],
            properties: {
              data: {
                type: 'object',
                required: ['dashboard', 'level'],
                properties: { dashboard: { type: 'object', additionalProperties: true }, level: { type: 'string', enum: LEVELS } },
              },
            },
          },
        },
      },
      async handler(req, ctx) {
        const dashboard = await ctx.docs('dashboard').get(req.params.id);
        if (!dashboard || dashboard.state !== 'published') throw new AppError('NOT_FOUND', [{ resource: 'analytics-dashboards', id: req.params.id }]);
        const level = await levelOf(ctx, dashboard.id);
        if (!level) {
          await ctx.events.emit('analytics.access.denied', {
            dashboardId: dashboard.id,
            userId: ctx.actor.id,
            requiredLevel: 'view',
            attemptedAt: ctx.clock.iso(),
          });
          throw new AppError('FORBIDDEN', [{ resource: 'analytics-dashboards', id: dashboard.id, reason: 'no_dashboard_access' }]);
        }
        return { body: { data: { dashboard, level } } };
      },
    }),
  ],
});
