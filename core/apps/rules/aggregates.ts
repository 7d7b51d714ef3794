// Aggregates over child documents: a field of a parent type that sums or counts the documents of
// another type of the app that reference it (or counts the different values of one of their
// fields), counting only those in the given states. They
// are kept by deltas, in the unit of work of each child's write: what the child counted for
// before the write is taken from the parent it named, what it counts for after is added to the
// parent it names now (a payslip moved to another run moves its pay), so a write costs the same
// however many children a parent has. Money moves in minor units, exactly.
import type { AggregateDecl, DocumentTypeDecl, FieldDecl, LineFieldDecl, Manifest } from '../../../manifests/manifest.schema.ts';
import { toMinor } from './values.ts';

/** An aggregate of a parent type over the type at hand. */
export interface AggregatedBy {
  /** The parent type's name (in the same app). */
  parent: string;
  field: FieldDecl & { aggregate: AggregateDecl };
  /** The child's field summed (absent for a count). */
  summed?: FieldDecl;
}

/** Field name → how much it moves: minor units (money), a count or an integer as bigint; a number as a double. */
export type Deltas = Map<string, bigint | number>;

/** The aggregates of the app's types over `child`. */
export function aggregatedBy(types: readonly DocumentTypeDecl[], child: DocumentTypeDecl): AggregatedBy[] {
  const out: AggregatedBy[] = [];
  for (const p of types) {
    for (const f of p.fields) {
      if (f.aggregate?.type !== child.name) continue;
      const summed = f.aggregate.field === undefined ? undefined : child.fields.find((x) => x.name === f.aggregate!.field);
      out.push({ parent: p.name, field: f as AggregatedBy['field'], summed });
    }
  }
  return out;
}

/** What one document counts for in an aggregate (undefined: nothing, it names no parent or is in another state). */
function contribution(a: AggregatedBy, doc: Record<string, unknown> | undefined, digits: number): { parent: string; value: bigint | number } | undefined {
  const agg = a.field.aggregate;
  const parent = doc?.[agg.via];
  if (typeof parent !== 'string') return undefined;
  if (agg.states && !agg.states.includes(doc!.state as string)) return undefined;
  if (agg.op === 'count') return { parent, value: 1n };
  if (agg.op === 'countDistinct') {
    const v = doc![agg.field!];
    return v === undefined || v === null || v === '' ? undefined : { parent, value: 1n };
  }
  const v = doc![agg.field!];
  const type = a.summed!.type;
  if (type === 'number') return { parent, value: typeof v === 'number' ? v : 0 };
  if (typeof v !== 'number') return { parent, value: 0n };
  return { parent, value: type === 'money' ? toMinor(v, digits) : BigInt(v) };
}

const negate = (v: bigint | number) => -v;
const plus = (a: bigint | number | undefined, b: bigint | number) => (a === undefined ? b : typeof a === 'bigint' ? a + (b as bigint) : a + (b as number));
const isZero = (v: bigint | number) => v === 0n || v === 0;

/** A parent a child's write moves, with how much each of its aggregates moves. */
export interface ParentMove {
  parentType: string;
  parent: string;
  deltas: Deltas;
}

/** Adds `v` to the parent's move of `a`'s field (a list, not maps of maps: a write moves one parent or two). */
function move(out: ParentMove[], a: AggregatedBy, parent: string, v: bigint | number): void {
  let m: ParentMove | undefined;
  for (const x of out) if (x.parent === parent && x.parentType === a.parent) m = x;
  if (!m) out.push((m = { parentType: a.parent, parent, deltas: new Map() }));
  m.deltas.set(a.field.name, plus(m.deltas.get(a.field.name), v));
}

/**
 * Parents in the order they are locked: by type, as first moved, then by id, so that concurrent
 * writes lock them in the same order. Sorts `moves` (stable) and answers it.
 */
export function inLockOrder(moves: ParentMove[]): ParentMove[] {
  if (moves.length < 2) return moves;
  const types = [...new Set(moves.map((m) => m.parentType))];
  return moves.sort((x, y) => types.indexOf(x.parentType) - types.indexOf(y.parentType) || (x.parent < y.parent ? -1 : x.parent > y.parent ? 1 : 0));
}

/**
 * How a write of a child (`before` → `after`; undefined for a create's before and a delete's
 * after) moves its parents' aggregates, in the order the parents are locked. Parents that do not
 * move, and fields that do not, are left out.
 */
export function aggregateDeltas(list: readonly AggregatedBy[], before: Record<string, unknown> | undefined, after: Record<string, unknown> | undefined, digits: number): ParentMove[] {
  const out: ParentMove[] = [];
  for (const a of list) {
    if (a.field.aggregate.op === 'countDistinct') continue;
    const was = contribution(a, before, digits);
    const is = contribution(a, after, digits);
    if (was) move(out, a, was.parent, negate(was.value));
    if (is) move(out, a, is.parent, is.value);
  }
  // Ordered before the parents that do not move are dropped: a type keeps its place.
  inLockOrder(out);
  let kept = 0;
  for (const m of out) {
    for (const [f, v] of m.deltas) if (isZero(v)) m.deltas.delete(f);
    if (m.deltas.size) out[kept++] = m;
  }
  if (kept < out.length) out.length = kept;
  return out;
}

/** A value a child brings into (+1) or takes out of (−1) a parent's distinct count, if no other child counted there has it. */
export interface DistinctMove {
  parentType: string;
  parent: string;
  /** The parent's aggregate field. */
  field: string;
  by: 1n | -1n;
  a: AggregatedBy;
  value: string | number | boolean;
}

/**
 * The values a write of a child moves in its parents' distinct counts. Whether each moves the
 * count depends on the other children, asked once the parent is locked (doc-type.ts), so that
 * children written at the same time take turns.
 */
export function distinctMoves(list: readonly AggregatedBy[], before: Record<string, unknown> | undefined, after: Record<string, unknown> | undefined): DistinctMove[] {
  const out: DistinctMove[] = [];
  for (const a of list) {
    if (a.field.aggregate.op !== 'countDistinct') continue;
    const was = contribution(a, before, 0) && (before![a.field.aggregate.field!] as DistinctMove['value']);
    const is = contribution(a, after, 0) && (after![a.field.aggregate.field!] as DistinctMove['value']);
    const parentOf = (doc: Record<string, unknown> | undefined) => doc?.[a.field.aggregate.via] as string;
    if (was !== undefined && is !== undefined && parentOf(before) === parentOf(after) && was === is) continue;
    if (was !== undefined) out.push({ parentType: a.parent, parent: parentOf(before), field: a.field.name, by: -1n, a, value: was });
    if (is !== undefined) out.push({ parentType: a.parent, parent: parentOf(after), field: a.field.name, by: 1n, a, value: is });
  }
  return out;
}

/** The states of the child whose documents do not count in an aggregate (none when all count). */
export const statesNotCounted = (a: AggregatedBy, child: DocumentTypeDecl): string[] =>
  a.field.aggregate.states ? (child.states ?? []).filter((st) => !a.field.aggregate.states!.includes(st)) : [];

/** A parent's stored aggregate moved by a delta, as the value stored. */
export function addToAggregate(field: FieldDecl, current: unknown, delta: bigint | number, digits: number): number {
  const now = typeof current === 'number' ? current : 0;
  if (typeof delta === 'number') return now + delta;
  if (field.type === 'money') return Number(toMinor(now, digits) + delta) / 10 ** digits;
  return Number(BigInt(now) + delta);
}

interface Problem {
  pointer: string;
  rule: string;
  message: string;
}

const NUMERIC = ['money', 'integer', 'number'];

/** What a manifest's aggregates must be: over a type of the app that references this one, summing a number of the same kind, in states it has. */
export function aggregateProblems(m: Manifest): Problem[] {
  const problems: Problem[] = [];
  const types = m.documentTypes ?? [];
  types.forEach((dt, i) =>
    dt.fields.forEach((f, j) => {
      const agg = f.aggregate;
      if (!agg) return;
      const at = `/documentTypes/${i}/fields/${j}/aggregate`;
      const add = (pointer: string, rule: string, message: string) => problems.push({ pointer: `${at}${pointer}`, rule, message });
      const child = types.find((t) => t.name === agg.type);
      if (!child) return add('/type', 'reference', `"${agg.type}" is not a document type of this app`);
      const via = child.fields.find((x) => x.name === agg.via);
      if (via?.type !== 'reference' || via.to !== dt.name) add('/via', 'reference', `"${agg.via}" is not a reference field of ${child.name} naming ${dt.name}`);
      if (agg.op === 'count') {
        if (agg.field !== undefined) add('/field', 'unexpected', 'a count sums no field');
        if (f.type !== 'integer') add('', 'aggregateType', `a count is an integer field; ${f.name} is ${f.type}`);
      } else if (agg.op === 'countDistinct') {
        const counted = child.fields.find((x) => x.name === agg.field);
        if (agg.field === undefined) add('/field', 'required', 'a distinct count names the field whose values it counts');
        else if (!counted || counted.type === 'lines' || counted.secret) add('/field', 'field', `"${agg.field}" is not a field of ${child.name} whose values can be counted`);
        if (f.type !== 'integer') add('', 'aggregateType', `a count is an integer field; ${f.name} is ${f.type}`);
      } else {
        const summed: FieldDecl | LineFieldDecl | undefined = child.fields.find((x) => x.name === agg.field);
        if (agg.field === undefined) add('/field', 'required', 'a sum names the field it sums');
        else if (!summed || !NUMERIC.includes(summed.type)) add('/field', 'field', `"${agg.field}" is not a money, integer or number field of ${child.name}`);
        else if (summed.type !== f.type) add('', 'aggregateType', `${f.name} is ${f.type}, the sum of ${child.name}.${agg.field} is ${summed.type}`);
      }
      for (const st of agg.states ?? []) if (!(child.states ?? []).includes(st)) add('/states', 'state', `"${st}" is not a state of ${child.name}`);
      if (f.compute !== undefined) add('', 'computed', `${f.name} is an aggregate: it cannot also be computed`);
      if (f.required) add('', 'required', `an aggregate is always there (it starts at 0): leave out "required"`);
    }),
  );
  return problems;
}
