// The caller's company and its seller's profile (what its tax invoices name): any member reads
// it; the Owner changes it (`company:manage`), every problem listed at once, audited.
import type { Companies } from '../../tenancy/companies.ts';
import { companySchema } from '../../tenancy/companies.ts';
import { profilePatchSchema } from '../../tenancy/company-profile.ts';
import type { Translator } from '../../kernel/i18n/i18n.ts';
import { actorOf } from '../../identity/principal.ts';
import { core, dataOf, ok, type Route } from '../route.ts';

export function companyRoutes(deps: { companies: Companies; tr: Translator }): Route[] {
  return [
    core(
      { method: 'GET', url: '/api/v1/company', operationId: 'core.getCompany', summary: "The caller's company and its seller's profile", permission: 'company:read', schema: { response: { 200: dataOf(companySchema) } } },
      async (req) => ok(req.company),
    ),
    core(
      {
        method: 'PATCH', url: '/api/v1/company', operationId: 'core.updateCompany', summary: "Change the company's name or its seller's profile",
        description:
          'The legal name in English and Arabic, the VAT number (15 digits, the first and the last 3), the commercial registration (10 digits), ' +
          'the national address (in Saudi Arabia a 4-digit building number and a 5-digit postal code) and the standard VAT rate (15 by default). ' +
          '`null` clears an optional field. Every problem is listed at once.',
        permission: 'company:manage', errors: ['NOT_FOUND'], schema: { body: profilePatchSchema, response: { 200: dataOf(companySchema) } },
      },
      async (req) => ok(await deps.companies.update(req.company.id, req.body as Record<string, unknown>, { actor: actorOf(req.principal), requestId: req.id, lang: req.lang, tr: deps.tr })),
    ),
  ];
}
