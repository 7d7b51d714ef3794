// What the console's launcher and palette read across every enabled app: the document types
// the caller may read, a document's title, and which states wait for the caller. Shared by
// routes/search.ts and routes/home.ts.
import type { AppRuntime } from '../../apps/runtime.ts';
import type { DocType } from '../../apps/doc-type.ts';
import { isReadOnly } from '../../apps/doc-schemas.ts';
import type { PermissionRegistry } from '../../identity/permissions.ts';
import type { ApiRequest } from '../route.ts';

export interface ReachDeps {
  runtime: AppRuntime;
  permissions: PermissionRegistry;
}

/** A document as the launcher and the palette list it. */
export const docHit = {
  type: 'object',
  additionalProperties: false,
  required: ['app', 'resource', 'id', 'title', 'createdAt'],
  properties: {
    app: { type: 'string' },
    resource: { type: 'string' },
    id: { type: 'string' },
    title: { type: ['string', 'null'], description: "Its title field's value, when the type has one" },
    state: { type: 'string' },
    createdAt: { type: 'string' },
  },
} as const;

export type DocHit = { app: string; resource: string; id: string; title: string | null; state?: string; createdAt: string };

/** The document types of the company's enabled apps that the caller may read. */
export async function readableTypes(deps: ReachDeps, req: ApiRequest): Promise<DocType[]> {
  const installs = await deps.runtime.installs(req.company.id);
  return deps.runtime
    .list()
    .filter((a) => installs.get(a.manifest.id)?.state === 'enabled')
    .flatMap((a) => [...a.docTypes.values()])
    .filter((dt) => deps.permissions.allows(req.principal, `${dt.resource}:read`));
}

/** The field a person knows a document by (never a secret one), as the console's meta names it. */
export function titleField(dt: DocType): string | null {
  const fs = dt.decl.fields.filter((f) => f.type === 'string' && !isReadOnly(f) && !f.secret);
  return (fs.find((f) => f.required) ?? fs.find((f) => f.filterable))?.name ?? null;
}

export function hitOf(dt: DocType, doc: Record<string, unknown>): DocHit {
  const tf = titleField(dt);
  const title = tf && typeof doc[tf] === 'string' ? (doc[tf] as string) : null;
  return {
    app: dt.appId,
    resource: dt.resource,
    id: String(doc.id),
    title,
    ...(typeof doc.state === 'string' ? { state: doc.state } : {}),
    createdAt: String(doc.createdAt),
  };
}

/**
 * The states in which a document waits for the caller: states other than the initial one
 * (a draft is its author's own work in progress, not something handed to them) from which
 * a transition leads that the caller may perform — submitted, to approve, pending…
 */
export function waitingStates(dt: DocType, allows: (permission: string) => boolean): string[] {
  const initial = dt.decl.initialState ?? dt.decl.states?.[0];
  const out = new Set<string>();
  for (const t of dt.decl.transitions ?? []) {
    if (!allows(`${dt.resource}:${t.name}`)) continue;
    for (const s of t.from) if (s !== initial) out.add(s);
  }
  return (dt.decl.states ?? []).filter((s) => out.has(s));
}
