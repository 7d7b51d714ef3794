// Which properties a response schema leaves optional yet every answer carried: candidates for
// `required` (a generated client types them as possibly absent). Counted across success answers
// by walking each body beside its declared schema. A heuristic, so the bench reports it and a
// person decides; the test asserts only what the host guarantees.
import { flatten, type GenContext, type Schema } from './schema-arbitrary.ts';

export type PresenceStats = Map<string, { present: number; absent: number }>;

export function observePresence(stats: PresenceStats, where: string, schema: Schema, value: unknown, ctx: Pick<GenContext, 'resolve'>, at = ''): void {
  const s = flatten(schema, ctx);
  if (Array.isArray(value)) {
    if (s.items !== undefined) for (const v of value) observePresence(stats, where, s.items as Schema, v, ctx, `${at}/*`);
    return;
  }
  if (!value || typeof value !== 'object') return;
  const props = (s.properties ?? {}) as Record<string, Schema>;
  const required = new Set((s.required as string[] | undefined) ?? []);
  for (const [name, sub] of Object.entries(props)) {
    const v = (value as Record<string, unknown>)[name];
    if (!required.has(name)) {
      const key = `${where} ${at}/${name}`;
      const c = stats.get(key) ?? { present: 0, absent: 0 };
      if (v === undefined) c.absent++;
      else c.present++;
      stats.set(key, c);
    }
    if (v !== undefined) observePresence(stats, where, sub, v, ctx, `${at}/${name}`);
  }
}

/** Optional properties seen at least `min` times and never absent. */
export function alwaysPresent(stats: PresenceStats, min = 3): string[] {
  return [...stats].filter(([, c]) => c.absent === 0 && c.present >= min).map(([k, c]) => `${k} (${c.present}×)`).sort();
}
