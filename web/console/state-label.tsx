// A document's state as a badge, in the page's language (the app's `state.<name>` string, as
// GET /api/v1/document-types answers it), wherever the console shows a state.
import type { DocTypeMeta } from './types.ts';
import { useWorkspace } from './workspace.tsx';

export function StateBadge({ meta, state }: { meta: DocTypeMeta; state?: string }) {
  if (!state) return null;
  return <span class={`badge state-${state}`}>{meta.states.find((s) => s.name === state)?.label ?? state}</span>;
}

/** The same badge for a document known by its resource only (the launcher, the palette). */
export function StateLabel({ resource, state }: { resource: string; state: string }) {
  const meta = useWorkspace().byResource.get(resource);
  return meta ? <StateBadge meta={meta} state={state} /> : <span class={`badge state-${state}`}>{state}</span>;
}
