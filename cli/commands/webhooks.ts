// `diwan webhooks add|list|remove|rotate|log|retry`: webhook endpoints of a company and their
// delivery log, through the webhooks domain, which audits each write in its transaction (as
// for the API routes); the signing secret is printed by `add` and `rotate` only. Deliveries are
// made by the running server. Every command here loads the webhooks services (with the apps,
// whose catalogue checks an endpoint's topics).
import { DiwanError } from '../../core/kernel/errors/diwan-error.ts';
import { DELIVERY_FILTERS, type Attempt, type Delivery, type DeliveryFilter } from '../../core/webhooks/deliveries.ts';
import type { Lang } from '../../core/kernel/i18n/i18n.ts';
import { record, table } from '../output.ts';
import { companyOf, companyOption, pageOf, pageOptions, scopeOf, type CommandContext, type CommandGroup } from './command.ts';

const endpointArg = { name: 'endpointId', required: true, description: 'The endpoint id (whe_…)' };

const words: Record<Lang, Record<'added' | 'none' | 'removed' | 'enabled' | 'disabled' | 'graceUntil' | 'graceNone' | 'rotated' | 'noDeliveries' | 'everyAttempt' | 'noAttempts' | 'retried' | 'healthy' | 'failingSince' | 'disabledWhy', string>> = {
  en: {
    added: 'Webhook endpoint {{id}} registered for {{company}}. This is the only time its signing secret is shown:',
    none: 'No webhook endpoints in this company.',
    removed: 'Webhook endpoint {{id}} removed.',
    enabled: 'Webhook endpoint {{id}} is enabled.',
    disabled: 'Webhook endpoint {{id}} is disabled.',
    graceUntil: 'The previous secret keeps signing until {{at}}.',
    graceNone: 'The previous secret no longer signs.',
    rotated: 'New signing secret of {{id}} (shown this once):',
    noDeliveries: 'No deliveries.',
    everyAttempt: 'Every attempt of one: diwan webhooks log {{id}} --company {{company}} --delivery <id>',
    noAttempts: 'No attempts yet.',
    retried: 'Delivery {{id}} scheduled for a new attempt now; the running server sends it.',
    healthy: 'healthy',
    failingSince: 'failing since {{at}}',
    disabledWhy: 'disabled ({{reason}})',
  },
  ar: {
    added: 'سُجّلت نقطة الويب هوك {{id}} للشركة {{company}}. هذه هي المرة الوحيدة التي يظهر فيها سر التوقيع:',
    none: 'لا توجد نقاط ويب هوك في هذه الشركة.',
    removed: 'حُذفت نقطة الويب هوك {{id}}.',
    enabled: 'نقطة الويب هوك {{id}} مفعّلة.',
    disabled: 'نقطة الويب هوك {{id}} معطّلة.',
    graceUntil: 'يظل السر السابق يوقّع حتى {{at}}.',
    graceNone: 'لم يعد السر السابق يوقّع.',
    rotated: 'سر توقيع جديد للنقطة {{id}} (يظهر مرة واحدة):',
    noDeliveries: 'لا توجد تسليمات.',
    everyAttempt: 'كل محاولات تسليم واحد: diwan webhooks log {{id}} --company {{company}} --delivery <id>',
    noAttempts: 'لا محاولات بعد.',
    retried: 'جُدول التسليم {{id}} لمحاولة جديدة الآن؛ يرسله الخادم العامل.',
    healthy: 'سليمة',
    failingSince: 'تخفق منذ {{at}}',
    disabledWhy: 'معطّلة ({{reason}})',
  },
};
const say = (lang: Lang, key: keyof (typeof words)['en'], params: Record<string, unknown> = {}) =>
  words[lang][key].replace(/\{\{(\w+)\}\}/g, (_, k: string) => String(params[k] ?? ''));

/** A response excerpt on one line, cut for a table cell (the JSON keeps it whole). */
function excerpt(a: Attempt, max = 60): string {
  const flat = a.responseExcerpt.replace(/\s+/g, ' ').trim();
  if (!flat) return a.responseBytes ? `(${a.responseBytes} bytes)` : '';
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/**
 * A delivery's state as the log's filters name it: a pending delivery whose last attempt failed
 * is `retrying`, which `--state failed` (retrying or dead) lists, so the column agrees with the
 * filter. The JSON keeps the stored state.
 */
export const shownState = (d: Pick<Delivery, 'state' | 'attemptCount'>): string => (d.state === 'pending' && d.attemptCount > 0 ? 'retrying' : d.state);

/** One delivery and every attempt of it, for people. */
function attemptsText(d: Delivery & { attempts: Attempt[] }, lang: Lang): string {
  const head = record({ ...d, state: shownState(d) } as never, ['id', 'endpointId', 'eventId', 'topic', 'state', 'attemptCount', 'lastStatus', 'lastFailure', 'nextAttemptAt', 'createdAt', 'deliveredAt']);
  if (!d.attempts.length) return `${head}\n\n${say(lang, 'noAttempts')}`;
  const rows = d.attempts.map((a) => ({ ...a, durationMs: `${a.durationMs} ms`, response: excerpt(a) }));
  return `${head}\n\n${table(rows, [
    { key: 'attempt', label: 'ATTEMPT' },
    { key: 'at', label: 'AT' },
    { key: 'status', label: 'STATUS' },
    { key: 'durationMs', label: 'DURATION' },
    { key: 'failure', label: 'FAILURE' },
    { key: 'detail', label: 'DETAIL' },
    { key: 'response', label: 'RESPONSE' },
  ], lang)}`;
}

/** `--headers` as JSON: an object of header names to strings (the domain checks each one). */
function headersOption(value: unknown): Record<string, string> | null {
  if (value === undefined) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(String(value));
  } catch {
    parsed = undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new DiwanError('VALIDATION_ERROR', [{ in: 'option', pointer: '/headers', rule: 'json', message: '--headers must be a JSON object such as {"x-tenant":"acme"}' }], {
      summary: '--headers must be a JSON object such as {"x-tenant":"acme"}',
    });
  }
  return parsed as Record<string, string>;
}

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
        headers: { type: 'string', value: '\'{"x-tenant":"acme"}\'', description: 'Headers sent with every delivery, as a JSON object (not the signature, hop-by-hop or framing headers)' },
        asymmetric: { type: 'boolean', description: 'Also sign with ed25519 (Standard Webhooks v1a); the public key is printed with the endpoint' },
      },
      examples: [
        "diwan webhooks add --company co_… --url https://example.com/hooks --topics 'invoice.*,crm.lead.created' --json",
        'diwan webhooks add --company co_… --url https://example.com/hooks --topics \'*\' --headers \'{"x-tenant":"acme"}\' --asymmetric',
      ],
      async run(ctx) {
        const svc = await ctx.services({ webhooks: true });
        const company = await companyOf(ctx, svc);
        const topics = String(ctx.opts.topics).split(',').map((t) => t.trim()).filter((t) => t !== '');
        const data = await svc.webhooks.endpoints.create(scopeOf(ctx, company.id), {
          url: String(ctx.opts.url), topics, description: (ctx.opts.description as string | undefined) ?? null, enabled: ctx.opts.disabled !== true,
          headers: headersOption(ctx.opts.headers), asymmetric: ctx.opts.asymmetric === true,
        });
        const { secret, warnings, ...rest } = data;
        const notes = warnings.map((w) => `\nwarning (${w.pointer}): ${w.message}`).join('');
        const shown = { ...rest, topics: rest.topics.join(', '), headers: Object.entries(rest.headers).map(([k, v]) => `${k}: ${v}`).join('; ') };
        return { data, text: `${say(ctx.lang, 'added', { id: data.id, company: company.id })}\n\n  ${secret}\n\n${record(shown as never)}${notes}` };
      },
    },
    {
      name: 'list',
      summary: "List a company's webhook endpoints (never their secrets)",
      options: { company: companyOption, ...pageOptions('Endpoints', 100) },
      async run(ctx) {
        const q = pageOf(ctx, 100);
        const services = await ctx.services({ webhooks: true });
        const { data, total } = await services.webhooks.endpoints.list((await companyOf(ctx, services)).id, q, ctx.lang);
        // Health at a glance: healthy, failing since when, or disabled and why.
        const health = (e: (typeof data)[number]) =>
          !e.enabled
            ? say(ctx.lang, 'disabledWhy', { reason: e.disabledReason ?? 'manual' })
            : e.failingSince
              ? say(ctx.lang, 'failingSince', { at: e.failingSince })
              : say(ctx.lang, 'healthy');
        const rows = data.map((e) => ({ ...e, topics: e.topics.join(','), health: health(e) }));
        return {
          data: { data, total, page: q.page, pageSize: q.pageSize },
          text: data.length
            ? table(rows as never, [
                { key: 'id', label: 'ID' },
                { key: 'url', label: 'URL' },
                { key: 'topics', label: 'TOPICS' },
                { key: 'health', label: 'HEALTH' },
                { key: 'description', label: 'DESCRIPTION' },
                { key: 'createdAt', label: 'CREATED' },
              ], ctx.lang)
            : say(ctx.lang, 'none'),
        };
      },
    },
    {
      name: 'remove',
      summary: 'Delete a webhook endpoint with its delivery log',
      args: [endpointArg],
      options: { company: companyOption },
      async run(ctx) {
        const services = await ctx.services({ webhooks: true });
        const company = await companyOf(ctx, services);
        const data = await services.webhooks.endpoints.remove(scopeOf(ctx, company.id), String(ctx.args.endpointId));
        return { data, text: say(ctx.lang, 'removed', { id: data.id }) };
      },
    },
    ...(['enable', 'disable'] as const).map((step) => ({
      name: step,
      summary:
        step === 'enable'
          ? 'Enable an endpoint again (one the host disabled for failing, or one disabled by hand); deliveries resume'
          : 'Disable an endpoint by hand: no deliveries until it is enabled again',
      args: [endpointArg],
      options: { company: companyOption },
      async run(ctx: CommandContext) {
        const services = await ctx.services({ webhooks: true });
        const company = await companyOf(ctx, services);
        const id = String(ctx.args.endpointId);
        const endpoints = services.webhooks.endpoints;
        const data = step === 'enable' ? await endpoints.enable(scopeOf(ctx, company.id), id) : (({ warnings: _, ...ep }) => ep)(await endpoints.update(scopeOf(ctx, company.id), id, { enabled: false }));
        return { data, text: say(ctx.lang, data.enabled ? 'enabled' : 'disabled', { id: data.id }) };
      },
    })),
    {
      name: 'rotate',
      summary: 'A new signing secret, printed this once; the previous one keeps signing during the grace period',
      args: [endpointArg],
      options: { company: companyOption },
      async run(ctx) {
        const svc = await ctx.services({ webhooks: true });
        const company = await companyOf(ctx, svc);
        const data = await svc.webhooks.endpoints.rotate(scopeOf(ctx, company.id), String(ctx.args.endpointId));
        const grace = data.previousSecretValidUntil ? say(ctx.lang, 'graceUntil', { at: data.previousSecretValidUntil }) : say(ctx.lang, 'graceNone');
        return { data, text: `${say(ctx.lang, 'rotated', { id: data.id })}

  ${data.secret}

${grace}` };
      },
    },
    {
      name: 'log',
      summary: "An endpoint's deliveries, newest first; with --delivery, every attempt of one delivery",
      args: [endpointArg],
      options: {
        company: companyOption,
        state: {
          type: 'string',
          value: 'state',
          choices: DELIVERY_FILTERS,
          description: `Only deliveries in this state: ${DELIVERY_FILTERS.join(', ')} (retrying: pending after a failed attempt, shown as retrying; failed: retrying or dead)`,
        },
        delivery: { type: 'string', value: 'id', description: 'One delivery (dlv_…): every attempt with its status, duration, failure and response excerpt' },
        ...pageOptions('Deliveries', 100),
      },
      examples: ['diwan webhooks log whe_… --company co_… --state failed', 'diwan webhooks log whe_… --company co_… --delivery dlv_… --json'],
      async run(ctx) {
        const services = await ctx.services({ webhooks: true });
        const company = await companyOf(ctx, services);
        const ep = await services.webhooks.endpoints.get(company.id, String(ctx.args.endpointId), ctx.lang);
        if (typeof ctx.opts.delivery === 'string') {
          const d = await services.webhooks.deliveries.get(ep.id, ctx.opts.delivery);
          return { data: d, text: attemptsText(d, ctx.lang) };
        }
        const q = { ...pageOf(ctx, 100), state: ctx.opts.state as DeliveryFilter | undefined };
        const { data, total } = await services.webhooks.deliveries.list(ep.id, q);
        return {
          data: { data, total, page: q.page, pageSize: q.pageSize },
          text: data.length
            ? `${table(data.map((d) => ({ ...d, state: shownState(d) })), [
                { key: 'id', label: 'DELIVERY' },
                { key: 'topic', label: 'TOPIC' },
                { key: 'state', label: 'STATE' },
                { key: 'attemptCount', label: 'ATTEMPTS' },
                { key: 'lastStatus', label: 'STATUS' },
                { key: 'lastFailure', label: 'FAILURE' },
                { key: 'nextAttemptAt', label: 'NEXT' },
                { key: 'createdAt', label: 'CREATED' },
              ], ctx.lang)}\n${say(ctx.lang, 'everyAttempt', { id: ep.id, company: company.id })}`
            : say(ctx.lang, 'noDeliveries'),
        };
      },
    },
    {
      name: 'retry',
      summary: 'Schedule a new attempt of one delivery now (dead ones included)',
      args: [{ name: 'deliveryId', required: true, description: 'The delivery id (dlv_…)' }],
      options: { company: companyOption },
      async run(ctx) {
        const services = await ctx.services({ webhooks: true });
        const company = await companyOf(ctx, services);
        const deliveryId = String(ctx.args.deliveryId);
        // The delivery names its endpoint; a read, in the company only.
        const endpointId = await services.storage.deliveries.endpointOf(company.id, deliveryId);
        if (!endpointId) throw new DiwanError('NOT_FOUND', [{ resource: 'webhook-deliveries', id: deliveryId }]);
        const data = await services.webhooks.deliveries.retry(scopeOf(ctx, company.id), endpointId, deliveryId);
        return { data, text: say(ctx.lang, 'retried', { id: data.id }) };
      },
    },
  ],
};
