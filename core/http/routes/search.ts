// GET /api/v1/search: documents across every enabled app the caller may read, found by id
// (`inv_…`) or by the exact value of a filterable text field (a number, a code, a name). The
// lists filter by equality on indexed columns, so each type costs one indexed query per field.
import { direction } from '../../kernel/i18n/i18n.ts';
import { core, type Route } from '../route.ts';
import { docHit, hitOf, readableTypes, type DocHit, type ReachDeps } from './documents-reach.ts';

const PER_TYPE = 5;

export function searchRoutes(deps: ReachDeps): Route[] {
  return [
    core(
      {
        method: 'GET', url: '/api/v1/search', operationId: 'core.searchDocuments',
        summary: "Documents of the company's enabled apps found by id or by the exact value of a filterable text field (number, code, name)",
        permission: 'apps:read',
        schema: {
          querystring: {
            type: 'object', additionalProperties: false, required: ['q'],
            properties: {
              q: { type: 'string', minLength: 1, maxLength: 200, description: 'An id, or the exact value of a filterable text field' },
              limit: { type: 'integer', minimum: 1, maximum: 50, default: 20, description: 'At most this many documents' },
            },
          },
          response: {
            200: {
              type: 'object', additionalProperties: false, required: ['data', 'lang', 'dir'],
              properties: { data: { type: 'array', items: docHit }, lang: { type: 'string', enum: ['en', 'ar'] }, dir: { type: 'string', enum: ['ltr', 'rtl'] } },
            },
          },
        },
      },
      async (req) => {
        const { q: raw, limit = 20 } = req.query as { q: string; limit?: number };
        const q = raw.trim();
        const hits: DocHit[] = [];
        if (q) {
          const companyId = req.company.id;
          for (const dt of await readableTypes(deps, req)) {
            if (hits.length >= limit) break;
            if (q.startsWith(`${dt.decl.idPrefix}_`)) {
              const doc = await dt.get(companyId, q);
              if (doc) hits.push(hitOf(dt, doc));
              continue;
            }
            const fields = dt.decl.fields.filter((f) => f.filterable && f.type === 'string' && !f.secret);
            const seen = new Set<string>();
            for (const f of fields) {
              const page = await dt.list(companyId, { pageSize: PER_TYPE, sort: '-createdAt', filters: { [f.name]: q } });
              for (const d of page.data) if (!seen.has(d.id)) (seen.add(d.id), hits.push(hitOf(dt, d)));
            }
          }
        }
        return { body: { data: hits.slice(0, limit), lang: req.lang, dir: direction(req.lang) } };
      },
    ),
  ];
}
