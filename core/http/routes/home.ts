// GET /api/v1/home: what the console's launcher shows beside the apps — how many documents
// wait for the caller (by type and state, see waitingStates) and the latest documents.
import { direction } from '../../kernel/i18n/i18n.ts';
import { core, type Route } from '../route.ts';
import { docHit, hitOf, readableTypes, waitingStates, type DocHit, type ReachDeps } from './documents-reach.ts';

const RECENT = 8;

export function homeRoutes(deps: ReachDeps): Route[] {
  return [
    core(
      {
        method: 'GET', url: '/api/v1/home', operationId: 'core.getHome',
        summary: 'Documents waiting for the caller (in a state from which they may move them on) and the latest documents, across enabled apps',
        permission: 'apps:read',
        schema: {
          response: {
            200: {
              type: 'object', additionalProperties: false, required: ['data', 'lang', 'dir'],
              properties: {
                data: {
                  type: 'object', additionalProperties: false, required: ['waiting', 'recent'],
                  properties: {
                    waiting: {
                      type: 'array',
                      items: {
                        type: 'object', additionalProperties: false, required: ['app', 'resource', 'state', 'count'],
                        properties: { app: { type: 'string' }, resource: { type: 'string' }, state: { type: 'string' }, count: { type: 'integer', minimum: 1 } },
                      },
                    },
                    recent: { type: 'array', items: docHit },
                  },
                },
                lang: { type: 'string', enum: ['en', 'ar'] },
                dir: { type: 'string', enum: ['ltr', 'rtl'] },
              },
            },
          },
        },
      },
      async (req) => {
        const companyId = req.company.id;
        const allows = (p: string) => deps.permissions.allows(req.principal, p);
        const waiting: { app: string; resource: string; state: string; count: number }[] = [];
        let recent: DocHit[] = [];
        for (const dt of await readableTypes(deps, req)) {
          for (const state of waitingStates(dt, allows)) {
            const { total } = await dt.list(companyId, { pageSize: 1, filters: { state } });
            if (total > 0) waiting.push({ app: dt.appId, resource: dt.resource, state, count: total });
          }
          const latest = await dt.list(companyId, { pageSize: RECENT, sort: '-createdAt' });
          recent = [...recent, ...latest.data.map((d) => hitOf(dt, d))].sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0)).slice(0, RECENT);
        }
        return { body: { data: { waiting, recent }, lang: req.lang, dir: direction(req.lang) } };
      },
    ),
  ];
}
