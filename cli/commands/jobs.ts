// `diwan jobs list|show|retry`: the apps' durable jobs of a company, their attempts, and the
// retry of one that used up its ladder (audited in its transaction, as the API's is). The
// database only: no app loads; the running server's workers run a retried job.
import { JOB_STATES } from '../../core/storage/repos/app-jobs.ts';
import type { Lang } from '../../core/kernel/i18n/i18n.ts';
import { record, table } from '../output.ts';
import { companyOf, companyOption, pageOf, pageOptions, scopeOf, type CommandContext, type CommandGroup } from './command.ts';

const words: Record<Lang, Record<'none' | 'noAttempts' | 'retried' | 'everyAttempt', string>> = {
  en: {
    none: 'No jobs.',
    noAttempts: 'No attempts yet.',
    retried: 'Job {{id}} is pending again, with a fresh set of attempts; the running server runs it.',
    everyAttempt: 'Every attempt of one: diwan jobs show <id> --company {{company}}',
  },
  ar: {
    none: 'لا توجد مهام.',
    noAttempts: 'لا محاولات بعد.',
    retried: 'عادت المهمة {{id}} إلى الانتظار بمجموعة محاولات جديدة؛ يشغّلها الخادم العامل.',
    everyAttempt: 'كل محاولات مهمة واحدة: diwan jobs show <id> --company {{company}}',
  },
};
const say = (lang: Lang, key: keyof (typeof words)['en'], params: Record<string, unknown> = {}) =>
  words[lang][key].replace(/\{\{(\w+)\}\}/g, (_, k: string) => String(params[k] ?? ''));

const jobArg = { name: 'jobId', required: true, description: 'The job id (job_…)' };

/** The jobs domain on the database alone (core/apps/jobs.ts, loaded when a jobs command runs). */
async function jobsOf(ctx: CommandContext) {
  const svc = await ctx.services();
  const { AppJobs } = await import('../../core/apps/jobs.ts');
  return { svc, jobs: new AppJobs({ db: svc.storage.db, repo: svc.storage.jobs, clock: svc.clock, uow: svc.uow }) };
}

export const jobs: CommandGroup = {
  name: 'jobs',
  summary: "The apps' durable jobs: list, show with their attempts, retry a failed one",
  commands: [
    {
      name: 'list',
      summary: "A company's jobs, newest first",
      options: {
        company: companyOption,
        app: { type: 'string', value: 'id', description: 'Only jobs of this app (invoicing, …)' },
        name: { type: 'string', value: 'name', description: 'Only jobs of this name (submitToZatca, …)' },
        state: { type: 'string', value: 'state', choices: JOB_STATES, description: `Only jobs in this state: ${JOB_STATES.join(', ')} (failed: every attempt of its ladder failed)` },
        ...pageOptions('Jobs', 100),
      },
      examples: ['diwan jobs list --company co_… --state failed', 'diwan jobs list --company co_… --app invoicing --json'],
      async run(ctx) {
        const { svc, jobs } = await jobsOf(ctx);
        const company = await companyOf(ctx, svc);
        const q = { ...pageOf(ctx, 100), app: ctx.opts.app as string | undefined, name: ctx.opts.name as string | undefined, state: ctx.opts.state as (typeof JOB_STATES)[number] | undefined };
        const { data, total } = await jobs.page(company.id, q);
        return {
          data: { data, total, page: q.page, pageSize: q.pageSize },
          text: data.length
            ? `${table(data as never, [
                { key: 'id', label: 'ID' },
                { key: 'appId', label: 'APP' },
                { key: 'name', label: 'NAME' },
                { key: 'key', label: 'KEY' },
                { key: 'state', label: 'STATE' },
                { key: 'attempts', label: 'ATTEMPTS' },
                { key: 'nextRunAt', label: 'NEXT' },
                { key: 'lastError', label: 'FAILURE' },
                { key: 'createdAt', label: 'CREATED' },
              ], ctx.lang)}\n${say(ctx.lang, 'everyAttempt', { company: company.id })}`
            : say(ctx.lang, 'none'),
        };
      },
    },
    {
      name: 'show',
      summary: 'One job with every attempt (those before a retry included)',
      args: [jobArg],
      options: { company: companyOption },
      examples: ['diwan jobs show job_… --company co_… --json'],
      async run(ctx) {
        const { svc, jobs } = await jobsOf(ctx);
        const company = await companyOf(ctx, svc);
        const job = await jobs.show(company.id, String(ctx.args.jobId));
        const { attemptLog, ...rest } = job;
        const head = record(rest as never, ['id', 'appId', 'name', 'key', 'state', 'attempts', 'nextRunAt', 'lastError', 'createdAt', 'finishedAt']);
        const rows = attemptLog.map((a) => ({ ...a, durationMs: `${a.durationMs} ms` }));
        return {
          data: job,
          text: `${head}\n\n${rows.length ? table(rows, [
            { key: 'attempt', label: 'ATTEMPT' },
            { key: 'startedAt', label: 'AT' },
            { key: 'durationMs', label: 'DURATION' },
            { key: 'outcome', label: 'STATUS' },
            { key: 'error', label: 'FAILURE' },
          ], ctx.lang) : say(ctx.lang, 'noAttempts')}`,
        };
      },
    },
    {
      name: 'retry',
      summary: 'Put a failed job back to pending now, with a fresh set of attempts',
      args: [jobArg],
      options: { company: companyOption },
      examples: ['diwan jobs retry job_… --company co_… --json'],
      async run(ctx) {
        const { svc, jobs } = await jobsOf(ctx);
        const company = await companyOf(ctx, svc);
        const data = await jobs.retry({ ...scopeOf(ctx, company.id), lang: ctx.lang }, String(ctx.args.jobId));
        return { data, text: say(ctx.lang, 'retried', { id: data.id }) };
      },
    },
  ],
};
