// The OpenAPI document, built once per set of apps (the runtime's version); concurrent first
// requests share one build, and a build that failed is tried again by the next request.
import type { AppRuntime } from '../apps/runtime.ts';
import type { CatalogueService } from '../apps/catalogue-service.ts';
import { HOST_VERSION } from '../apps/lifecycle.ts';
import type { RouteDoc } from '../kernel/route-doc.ts';
import { errorCodes } from '../kernel/errors/codes.ts';
import { buildOpenApiDocument } from './build-document.ts';
import { webhooksFromCatalogue } from './webhooks.ts';
import { openApiText, type OpenApiText } from './openapi-text.ts';

const DESCRIPTION =
  'One REST API for every app of a multi-tenant business platform. Every route needs `Authorization: Bearer <key>` and `X-Company-Id`; failures answer `{ error: { code, message, details } }`.';

export function openApiCache(deps: { runtime: AppRuntime; catalogue: CatalogueService; routes: () => RouteDoc[] }): () => Promise<OpenApiText> {
  const { runtime, catalogue } = deps;
  let cache: { version: number; doc: Promise<OpenApiText> } | undefined;
  const build = async () =>
    openApiText(
      buildOpenApiDocument({
        webhooks: webhooksFromCatalogue(await catalogue.catalogue(undefined, { lang: 'en' })),
        title: 'Diwan API',
        version: HOST_VERSION,
        description: DESCRIPTION,
        serverUrl: '/',
        routes: deps.routes(),
        errorCodes: Object.entries(errorCodes).map(([code, e]) => ({ code, status: e.status, description: e.description })),
        tags: [{ name: 'core', description: 'The host: company, keys, apps, audit log, events, webhooks' }, ...runtime.list().map((a) => ({ name: a.manifest.id, description: a.manifest.description.en }))],
      }),
    );
  return () => {
    if (cache?.version !== runtime.version) {
      const doc = build();
      cache = { version: runtime.version, doc };
      doc.catch(() => {
        if (cache?.doc === doc) cache = undefined;
      });
    }
    return cache.doc;
  };
}
