// Test helper: an operation's shared responses (`#/components/responses/…`) and their shared
// examples written out, so a test reads a route's error answers as a client's tool would.

type Obj = Record<string, any>;

function resolve(doc: Obj, value: Obj, kind: 'responses' | 'examples'): Obj {
  const prefix = `#/components/${kind}/`;
  if (typeof value?.$ref !== 'string' || !value.$ref.startsWith(prefix)) return value;
  const target = doc.components?.[kind]?.[value.$ref.slice(prefix.length)];
  if (!target) throw new Error(`unresolved ${value.$ref}`);
  return target;
}

/** The operation with its referenced responses (and their examples) inlined; other members keep their identity. */
export function inlineResponses<T extends { responses: Obj }>(doc: unknown, op: T): T {
  const responses: Obj = {};
  for (const [status, r] of Object.entries(op.responses)) {
    const response = resolve(doc as Obj, r, 'responses');
    if (response === r) {
      responses[status] = r;
      continue;
    }
    const content: Obj = {};
    for (const [type, media] of Object.entries<Obj>(response.content ?? {})) {
      content[type] = media.examples
        ? { ...media, examples: Object.fromEntries(Object.entries<Obj>(media.examples).map(([k, e]) => [k, resolve(doc as Obj, e, 'examples')])) }
        : media;
    }
    responses[status] = { ...response, ...(response.content ? { content } : {}) };
  }
  return { ...op, responses };
}

/** Every operation of the document with its responses inlined (a copy). */
export function inlineAllResponses<D>(doc: D): D {
  const out = structuredClone(doc) as Obj;
  for (const item of Object.values<Obj>(out.paths ?? {})) {
    for (const [method, op] of Object.entries<Obj>(item)) {
      if (op && typeof op === 'object' && 'responses' in op) item[method] = inlineResponses(out, op as { responses: Obj });
    }
  }
  return out as D;
}
