// /api/v1/jobs: the apps' durable jobs of the caller's company, with their attempts, and the
// retry of one that used up its ladder. Another company's job answers 404 NOT_FOUND, as an
// unknown one does.
import { actorOf } from '../../identity/principal.ts';
import { jobSchema, jobWithAttemptsSchema, type AppJobs } from '../../apps/jobs.ts';
import { JOB_STATES, type JobStateName } from '../../storage/repos/app-jobs.ts';
import { core, dataOf, idParams, listOf, ok, paging, type Route } from '../route.ts';

const BASE = '/api/v1/jobs';

export function jobRoutes(jobs: AppJobs): Route[] {
  return [
    core(
      {
        method: 'GET', url: BASE, operationId: 'core.listJobs', summary: "The company's apps' jobs, newest first",
        permission: 'jobs:read',
        schema: {
          querystring: {
            type: 'object', additionalProperties: false,
            properties: {
              ...paging,
              app: { type: 'string', maxLength: 64, description: 'Only jobs of this app (its id)' },
              name: { type: 'string', maxLength: 100, description: 'Only jobs of this name' },
              state: { type: 'string', enum: [...JOB_STATES], description: '`failed`: every attempt of its ladder failed (retry it with POST …/retry)' },
            },
          },
          response: { 200: listOf(jobSchema) },
        },
      },
      async (req) => {
        const q = req.query as { page: number; pageSize: number; app?: string; name?: string; state?: JobStateName };
        const { data, total } = await jobs.page(req.company.id, q);
        return { body: { data, total, page: q.page, pageSize: q.pageSize } };
      },
    ),
    core(
      {
        method: 'GET', url: `${BASE}/:id`, operationId: 'core.getJob', summary: 'One job with every attempt (those before a retry included)',
        permission: 'jobs:read', errors: ['NOT_FOUND'],
        schema: { params: idParams, response: { 200: dataOf(jobWithAttemptsSchema) } },
      },
      async (req) => ok(await jobs.show(req.company.id, req.params.id)),
    ),
    core(
      {
        method: 'POST', url: `${BASE}/:id/retry`, operationId: 'core.retryJob',
        summary: 'Put a failed job back to pending now, with a fresh set of attempts (its earlier attempts stay in its log)',
        description: 'Only a `failed` job is retried: any other state answers CONFLICT (reason `job_not_failed`, with the state). Audited as `retry` of `jobs`.',
        permission: 'jobs:manage', errors: ['NOT_FOUND', 'CONFLICT'],
        schema: { params: idParams, response: { 202: dataOf(jobSchema) } },
      },
      async (req) => {
        const data = await jobs.retry({ companyId: req.company.id, actor: actorOf(req.principal), appId: 'core', requestId: req.id, lang: req.lang }, req.params.id);
        return { status: 202, body: { data } };
      },
    ),
  ];
}
