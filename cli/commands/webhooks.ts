// `diwan webhooks add|list|remove|rotate|log|retry`: webhook endpoints of a company and their
// delivery log. Writes are audited in their transaction, as the API routes do; the signing
// secret is printed by `add` and `rotate` only. Deliveries are made by the running server.
import { DELIVERY_FILTERS, type DeliveryFilter } from '../../core/webhooks/deliveries.ts';
import { record, table } from '../output.ts';
import { companyOf, companyOption, pageOf, pageOptions, type CommandGroup } from './command.ts';

const endpointArg = { name: 'endpointId', required: true, description: 'The endpoint id (whe_…)' };

export const webhooks: CommandGroup = {
  name: 'webhooks',
  summary: 'Webhook endpoints and their delivery log',
  commands: [
    {
      name: 'add',
      summary: 'Register a webhook endpoint; its signing secret is printed this once',
      options: {
        company: companyOption,
        url: { type: 'string', value: 'url', required: true, description: 'http(s) URL that receives the deliveries' },
        topics: { type: 'string', value: "'invoice.*,crm.lead.created'", required: true, description: 'Topic patterns, comma-separated: exact topics, <family>.*, or *' },
        description: { type: 'string', value: 'text', description: 'What the endpoint is for' },
        disabled: { type: 'boolean', description: 'Register it disabled' },
      },
      examples: ["diwan webhooks add --company co_… --url https://example.com/hooks --topics 'invoice.*,crm.lead.created' --json"],
      async run(ctx) {
        const company = companyOf(ctx);
        const topics = String(ctx.opts.topics).split(',').map((t) => t.trim()).filter((t) => t !== '');
        const data = await ctx.host.webhooks.endpoints.create(
          company.id,
          { url: String(ctx.opts.url), topics, description: (ctx.opts.description as string | undefined) ?? null, enabled: ctx.opts.disabled !== true },
          ctx.actor,
        );
        const { secret, ...rest } = data;
        return { data, text: `Webhook endpoint ${data.id} registered for ${company.id}. This is the only time its signing secret is shown:\n\n  ${secret}\n\n${record({ ...rest, topics: rest.topics.join(', ') } as never)}` };
      },
    },
    {
      name: 'list',
      summary: "List a company's webhook endpoints (never their secrets)",
      options: { company: companyOption, ...pageOptions('Endpoints', 100) },
      run(ctx) {
        const q = pageOf(ctx, 100);
        const { data, total } = ctx.host.webhooks.endpoints.list(companyOf(ctx).id, q);
        const rows = data.map((e) => ({ ...e, topics: e.topics.join(','), enabled: e.enabled ? 'yes' : 'no' }));
        return {
          data: { data, total, page: q.page, pageSize: q.pageSize },
          text: data.length
            ? table(rows as never, [
                { key: 'id', label: 'ID' },
                { key: 'url', label: 'URL' },
                { key: 'topics', label: 'TOPICS' },
                { key: 'enabled', label: 'ENABLED' },
                { key: 'description', label: 'DESCRIPTION' },
                { key: 'createdAt', label: 'CREATED' },
              ])
            : 'No webhook endpoints in this company.',
        };
      },
    },
    {
      name: 'remove',
      summary: 'Delete a webhook endpoint with its delivery log',
      args: [endpointArg],
      options: { company: companyOption },
      run(ctx) {
        const data = ctx.host.webhooks.endpoints.remove(companyOf(ctx).id, String(ctx.args.endpointId), ctx.actor);
        return { data, text: `Webhook endpoint ${data.id} removed.` };
      },
    },
    {
      name: 'rotate',
      summary: 'A new signing secret, printed this once; the previous one keeps signing during the grace period',
      args: [endpointArg],
      options: { company: companyOption },
      run(ctx) {
        const data = ctx.host.webhooks.endpoints.rotate(companyOf(ctx).id, String(ctx.args.endpointId), ctx.actor);
        const grace = data.previousSecretValidUntil ? `The previous secret keeps signing until ${data.previousSecretValidUntil}.` : 'The previous secret no longer signs.';
        return { data, text: `New signing secret of ${data.id} (shown this once):\n\n  ${data.secret}\n\n${grace}` };
      },
    },
    {
      name: 'log',
      summary: "An endpoint's deliveries, newest first",
      args: [endpointArg],
      options: {
        company: companyOption,
        state: { type: 'string', value: 'state', choices: DELIVERY_FILTERS, description: `Only deliveries in this state: ${DELIVERY_FILTERS.join(', ')}` },
        ...pageOptions('Deliveries', 100),
      },
      run(ctx) {
        const company = companyOf(ctx);
        const ep = ctx.host.webhooks.endpoints.get(company.id, String(ctx.args.endpointId));
        const q = { ...pageOf(ctx, 100), state: ctx.opts.state as DeliveryFilter | undefined };
        const { data, total } = ctx.host.webhooks.deliveries.list(ep.id, q);
        return {
          data: { data, total, page: q.page, pageSize: q.pageSize },
          text: data.length
            ? table(data as never, [
                { key: 'id', label: 'DELIVERY' },
                { key: 'topic', label: 'TOPIC' },
                { key: 'state', label: 'STATE' },
                { key: 'attemptCount', label: 'ATTEMPTS' },
                { key: 'lastStatus', label: 'STATUS' },
                { key: 'lastFailure', label: 'FAILURE' },
                { key: 'nextAttemptAt', label: 'NEXT' },
                { key: 'createdAt', label: 'CREATED' },
              ])
            : 'No deliveries.',
        };
      },
    },
    {
      name: 'retry',
      summary: 'Schedule a new attempt of one delivery now (dead ones included)',
      args: [{ name: 'deliveryId', required: true, description: 'The delivery id (dlv_…)' }],
      options: { company: companyOption },
      run(ctx) {
        const company = companyOf(ctx);
        const deliveryId = String(ctx.args.deliveryId);
        const endpointId = ctx.host.webhooks.deliveries.endpointOf(company.id, deliveryId);
        const data = ctx.host.webhooks.deliveries.retry(company.id, endpointId, deliveryId, ctx.actor);
        return { data, text: `Delivery ${data.id} scheduled for a new attempt now; the running server sends it.` };
      },
    },
  ],
};
