// Checked CEL programs turned into trees of JavaScript closures, once per manifest version (at
// a program's first evaluation). cel-js walks the syntax tree at every evaluation, looking up
// each variable in a context chain and each field's type; after the type check most of that is
// known, so here it is bound once: the variable's slot, the field's class, the overload's
// handler (cel-js's own, called as cel-js calls it, so overflow, division by zero, no_such_key
// and the other errors are its own). Each node evaluates as cel-js's evaluator does, in the same
// order, with the same errors; a program with a node this does not know (a macro run by its own
// evaluator: `cel.bind`, `orValue`, `or`) stays cel-js's. compile.test.ts holds it to cel-js.
import type { Environment, ParseResult } from '@marcbachmann/cel-js';
import { catchEvaluator } from './environment.ts';

/** cel-js's evaluator of one environment (its registry, error factory, type helpers). */
interface Evaluator {
  createError(code: string, message: string, node?: unknown): Error;
  debugType(v: unknown): CelType;
  debugRuntimeType(v: unknown, checked?: CelType): CelType;
  objectTypes: Map<string, { ctor?: unknown; type: CelType; fields?: Record<string, CelType>; convert?: (v: unknown) => unknown }>;
  objectTypesByConstructor: Map<unknown, { type: CelType }>;
}

interface CelType {
  kind: string;
  name: string;
  type: string;
  matchesValueType(v: unknown, ev: Evaluator): boolean;
}

/** A node of a checked tree: what cel-js's type check left on it (`checkedType`, `handle`). */
interface Node {
  op: string;
  args: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  meta: { alternate?: Node; macro?: unknown; label?: string };
  checkedType?: CelType;
  handle?: (...a: unknown[]) => unknown;
  left?: Node;
  right?: unknown;
  condition?: Node;
}

type Closure = (a: Record<string, unknown>) => unknown;

/** A compiled program: callable like cel-js's, with its tree, cel-js's own program beside it, and whether closures run it (compiled then if not yet). */
export type Compiled = ParseResult & { interpreted: ParseResult; covered(): boolean; source?: string };

class Unsupported extends Error {}

/** Where a name resolves at compile time: a comprehension's variable (its slot), or the activation. */
interface Scope {
  vars: Map<string, number>;
  /** The slot of the innermost comprehension's accumulator. */
  accu?: number;
}

/** cel-js takes an Array or a Set as a list; a plain Array (what values.ts builds) is the fast case. */
const IS_LIST = (v: unknown) => v !== null && v !== undefined && (v as object).constructor === Array;

/** A fast test that a value is of a checked type, where it is one cel-js's matcher says the same for; undefined otherwise. */
function fastMatch(type: CelType, ev: Evaluator): ((v: unknown) => boolean) | undefined {
  switch (type.kind === 'message' ? 'message' : type.name) {
    case 'int':
      return (v) => typeof v === 'bigint';
    case 'double':
      return (v) => typeof v === 'number';
    case 'string':
      return (v) => typeof v === 'string';
    case 'bool':
      return (v) => typeof v === 'boolean';
    case 'message': {
      const ctor = ev.objectTypes.get(type.name)?.ctor;
      // Only when the class maps back to this very type (as cel-js's matcher asks).
      if (typeof ctor !== 'function' || ev.objectTypesByConstructor.get(ctor)?.type !== type) return undefined;
      return (v) => v !== null && v !== undefined && (v as object).constructor === ctor;
    }
  }
  if (type.kind === 'list') return IS_LIST;
  return undefined;
}

/**
 * The program as closures, or cel-js's own when a node is not covered. `env` is the environment
 * that checked it (its evaluator is the one cel-js's handlers are called with).
 */
export function compileProgram(env: Environment, program: ParseResult & { source?: string }): Compiled {
  // Compiled on the first evaluation: a manifest checked at install or boot is not run then.
  let fn: Closure | null | undefined;
  const build = () => (fn === undefined ? (fn = closures(env, program) ?? null) : fn);
  const run = (a?: unknown) => {
    // What cel-js's root context takes besides a plain object (a Map, nothing, a wrong value), it does itself.
    if (typeof a !== 'object' || a === null || a instanceof Map) return program(a as never);
    const f = fn ?? build();
    return f ? f(a as Record<string, unknown>) : program(a as never);
  };
  const parts = { ast: program.ast, check: program.check, interpreted: program, covered: () => build() !== null };
  return Object.assign(run, parts, program.source !== undefined ? { source: program.source } : {}) as Compiled;
}

/** The closures of a checked program, or undefined when a node is not covered (or the environment's evaluator is not known). */
function closures(env: Environment, program: ParseResult): Closure | undefined {
  const ev = catchEvaluator(env) as Evaluator | undefined;
  const root = program.ast as unknown as Node;
  if (!ev || !root.checkedType) return undefined;
  try {
    return compileNode(root, { vars: new Map() }, ev, []);
  } catch {
    // Unsupported (or anything unforeseen in a tree): cel-js runs it, as it did before.
    return undefined;
  }
}

function compileNode(node: Node, scope: Scope, ev: Evaluator, slots: unknown[]): Closure {
  const n = node.meta.alternate ?? node;
  if (n.meta.macro || !n.checkedType) throw new Unsupported(n.op);
  const sub = (c: Node, s: Scope = scope) => compileNode(c, s, ev, slots);
  const handle = n.handle!;
  switch (n.op) {
    case 'value': {
      const v = n.args;
      return () => v;
    }
    case 'id':
      return variable(n, scope, ev, slots);
    case '.':
      return fieldRead(n, sub(n.args[0]), ev, scope, slots);
    case '.?': {
      const left = sub(n.args[0]);
      const key = n.right;
      return (a) => handle(left(a), key, n, ev);
    }
    case '[]':
    case '[?]':
    case '==':
    case '!=':
    case '<':
    case '<=':
    case '>':
    case '>=':
    case '+':
    case '-':
    case '*':
    case '/':
    case '%':
    case 'in': {
      // Left, then right, then the overload cel-js bound at the check (or its run-time lookup).
      const left = sub(n.args[0]);
      const list = n.op === 'in' ? constantList(n.args[1]) : undefined;
      if (list) return membership(n, left, list, ev);
      const right = sub(n.args[1]);
      return primitive(n, left, right, ev) ?? ((a) => {
        const l = left(a);
        return handle(l, right(a), n, ev);
      });
    }
    case '!_':
    case '-_': {
      const arg = sub(n.args);
      return (a) => handle(arg(a), n, ev);
    }
    case 'call': {
      const args = arrayOf((n.args[1] as Node[]).map((c) => sub(c)));
      return (a) => handle(args(a), n, ev);
    }
    case 'rcall': {
      const args = arrayOf((n.args[2] as Node[]).map((c) => sub(c)), sub(n.args[1]));
      return (a) => handle(args(a), ev, n);
    }
    case 'list': {
      if (!n.args.length) return () => [];
      return arrayOf((n.args as Node[]).map((c) => sub(c)));
    }
    case 'map':
      return mapLiteral(n, sub);
    case '?:':
      return ternary(n, sub(n.args[0]), sub(n.args[1]), sub(n.args[2]), ev);
    case '||':
    case '&&':
      return logical(n, n.op === '||', sub(n.args[0]), sub(n.args[1]), ev);
    case 'comprehension':
      return comprehension(n, scope, ev, slots, sub);
    case 'accuValue': {
      const at = accuSlot(scope);
      return () => slots[at];
    }
    case 'accuInc': {
      const at = accuSlot(scope);
      return () => ((slots[at] as number) += 1);
    }
    case 'accuPush': {
      const at = accuSlot(scope);
      const item = sub(n.args);
      return (a) => {
        const arr = slots[at] as unknown[];
        arr.push(item(a));
        return arr;
      };
    }
    default:
      throw new Unsupported(n.op);
  }
}

function accuSlot(scope: Scope): number {
  if (scope.accu === undefined) throw new Unsupported('accu');
  return scope.accu;
}

/** A variable: a comprehension's from its slot, else the activation's, checked against its type as cel-js's root context does. */
function variable(n: Node, scope: Scope, ev: Evaluator, slots: unknown[]): Closure {
  const name = n.args as string;
  const slot = scope.vars.get(name);
  if (slot !== undefined) return () => slots[slot];
  const type = n.checkedType!;
  const fast = fastMatch(type, ev);
  const slow = (v: unknown) => {
    if (v === undefined) throw ev.createError('unknown_variable', `Unknown variable: ${name}`, n);
    if (type.matchesValueType(v, ev)) return v;
    const valueType = ev.debugType(v);
    if (type.kind === 'message' && valueType.kind === 'map') {
      const c = ev.objectTypes.get(type.name)?.convert?.(v);
      if (c) return c;
    }
    throw ev.createError('variable_type_mismatch', `Variable '${name}' is not of type '${type}', got '${valueType}'`, n);
  };
  if (!fast) return (a) => slow(a[name]);
  return (a) => {
    const v = a[name];
    return fast(v) ? v : slow(v);
  };
}

/**
 * `x.f`: on a value of the declared class with a value of the field's type, read directly; anything
 * else as cel-js reads it. `doc.f` and a comprehension's `l.f` read their object themselves.
 */
function fieldRead(n: Node, left: Closure, ev: Evaluator, scope: Scope, slots: unknown[]): Closure {
  const key = n.args[1] as string;
  const handle = n.handle!;
  const of = n.args[0] as Node;
  const leftType = of.checkedType!;
  const fieldType = leftType.kind === 'message' ? ev.objectTypes.get(leftType.name)?.fields?.[key] : undefined;
  const isOwner = leftType.kind === 'message' ? fastMatch(leftType, ev) : undefined;
  const isValue = fieldType ? fastMatch(fieldType, ev) : undefined;
  if (!isOwner || !isValue) return (a) => handle(left(a), key, n, ev);
  // The object a variable holds: when it is of its class, the variable's closure would answer it as it is.
  const id = of.meta.alternate ? undefined : of.op === 'id' ? (of.args as string) : undefined;
  const slot = id === undefined ? undefined : scope.vars.get(id);
  if (slot !== undefined)
    return (a) => {
      const o = slots[slot];
      if (isOwner(o)) {
        const v = (o as Record<string, unknown>)[key];
        if (isValue(v)) return v;
      }
      return handle(left(a), key, n, ev);
    };
  if (id !== undefined)
    return (a) => {
      const o = a[id];
      if (isOwner(o)) {
        const v = (o as Record<string, unknown>)[key];
        if (isValue(v)) return v;
      }
      return handle(left(a), key, n, ev);
    };
  return (a) => {
    const o = left(a);
    if (isOwner(o)) {
      const v = (o as Record<string, unknown>)[key];
      if (isValue(v)) return v;
    }
    return handle(o, key, n, ev);
  };
}

const MAX_INT = 9223372036854775807n;
const MIN_INT = -9223372036854775808n;
const TAGS: Record<string, string> = { int: 'bigint', double: 'number', string: 'string', bool: 'boolean' };

/**
 * An operator on two operands of one primitive type, inline: cel-js's overloads for them are
 * these very operators (ints checked for overflow). Operands of another type at run time, or an
 * overflow, go to cel-js's overload, which answers or throws as it does.
 */
function primitive(n: Node, left: Closure, right: Closure, ev: Evaluator): Closure | undefined {
  const lt = (n.args[0] as Node).checkedType!;
  const rt = (n.args[1] as Node).checkedType!;
  const tag = lt.name === rt.name ? TAGS[lt.name] : undefined;
  if (!tag) return undefined;
  const handle = n.handle!;
  type P = string & number & bigint;
  const op = (f: (x: P, y: P) => unknown): Closure => (a) => {
    const x = left(a);
    const y = right(a);
    return typeof x === tag && typeof y === tag ? f(x as P, y as P) : handle(x, y, n, ev);
  };
  const checked = (f: (x: bigint, y: bigint) => bigint): Closure => (a) => {
    const x = left(a);
    const y = right(a);
    if (typeof x === 'bigint' && typeof y === 'bigint') {
      const v = f(x, y);
      if (v <= MAX_INT && v >= MIN_INT) return v;
    }
    return handle(x, y, n, ev);
  };
  switch (n.op) {
    case '==':
      return op((x, y) => x === y);
    case '!=':
      return op((x, y) => x !== y);
    case '<':
      return tag === 'boolean' ? undefined : op((x, y) => x < y);
    case '<=':
      return tag === 'boolean' ? undefined : op((x, y) => x <= y);
    case '>':
      return tag === 'boolean' ? undefined : op((x, y) => x > y);
    case '>=':
      return tag === 'boolean' ? undefined : op((x, y) => x >= y);
    case '+':
      return tag === 'bigint' ? checked((x, y) => x + y) : tag === 'number' || tag === 'string' ? op((x, y) => x + y) : undefined;
    case '-':
      return tag === 'bigint' ? checked((x, y) => x - y) : tag === 'number' ? op((x, y) => x - y) : undefined;
    case '*':
      return tag === 'bigint' ? checked((x, y) => x * y) : tag === 'number' ? op((x, y) => x * y) : undefined;
    default:
      return undefined;
  }
}

/** `x in [literals]`: a string's membership is the set's (cel-js compares a string to each element with ===). */
function membership(n: Node, left: Closure, list: unknown[], ev: Evaluator): Closure {
  const handle = n.handle!;
  const set = new Set(list);
  const strings = (n.args[0] as Node).checkedType!.name === 'string';
  return (a) => {
    const x = left(a);
    return strings && typeof x === 'string' ? set.has(x) : handle(x, list, n, ev);
  };
}

/** The operands of a call (cel-js evaluates them from the last to the first), as a fresh array. */
function arrayOf(fs: Closure[], receiver?: Closure): Closure {
  const all = receiver ? [receiver, ...fs] : fs;
  switch (all.length) {
    case 0:
      return () => [];
    case 1: {
      const [f0] = all;
      return (a) => [f0(a)];
    }
    case 2: {
      const [f0, f1] = all;
      return (a) => {
        const v1 = f1(a);
        return [f0(a), v1];
      };
    }
    case 3: {
      const [f0, f1, f2] = all;
      return (a) => {
        const v2 = f2(a);
        const v1 = f1(a);
        return [f0(a), v1, v2];
      };
    }
    default:
      return (a) => {
        let i = all.length;
        const out = new Array(i);
        while (i--) out[i] = all[i](a);
        return out;
      };
  }
}

/** The right side of `x in [...]` when every element is a literal: built once (membership only reads it). */
function constantList(node: Node): unknown[] | undefined {
  const n = node.meta.alternate ?? node;
  if (n.op !== 'list' || !n.args.length || !(n.args as Node[]).every((c) => !c.meta.alternate && c.op === 'value')) return undefined;
  return (n.args as Node[]).map((c) => c.args);
}

function mapLiteral(n: Node, sub: (c: Node) => Closure): Closure {
  const entries = (n.args as [Node, Node][]).map(([k, v]) => [sub(k), sub(v)] as const);
  if (!entries.length) return () => ({});
  return (a) => {
    const obj: Record<string, unknown> = {};
    for (const [k, v] of entries) {
      const key = k(a) as string;
      const value = v(a);
      if (key === '__proto__' || key === 'constructor' || key === 'prototype') continue;
      obj[key] = value;
    }
    return obj;
  };
}

function ternary(n: Node, cond: Closure, left: Closure, right: Closure, ev: Evaluator): Closure {
  const condNode = n.args[0] as Node;
  return (a) => {
    const c = cond(a);
    if (c === true) return left(a);
    if (c === false) return right(a);
    throw ev.createError('invalid_condition_type', `${condNode.meta.label || 'Ternary condition must be bool'}, got '${ev.debugRuntimeType(c)}'`, condNode);
  };
}

/**
 * `||` (`exp` true) and `&&` (false) as cel-js runs them: an error on the left is absorbed when
 * the right decides the result, else it is the error; a non-bool operand is an error.
 */
function logical(n: Node, exp: boolean, left: Closure, right: Closure, ev: Evaluator): Closure {
  const leftNode = n.args[0] as Node;
  const operandError = (v: unknown) => ev.createError('invalid_logical_operand', `Logical operator requires bool operands, got '${ev.debugRuntimeType(v)}'`, leftNode);
  const decide = (l: unknown, r: unknown) => {
    if (r === exp) return exp;
    if (r === !exp) {
      if (l === r) return r;
      throw l instanceof Error ? l : operandError(l);
    }
    throw operandError(r);
  };
  return (a) => {
    let l: unknown;
    try {
      l = left(a);
    } catch (e) {
      l = e;
    }
    if (l === exp) return exp;
    if (l === !exp) {
      const r = right(a);
      if (typeof r === 'boolean') return r;
      return decide(l, r);
    }
    return decide(l, right(a));
  };
}

/**
 * A macro's loop (`map`, `filter`, `all`, `exists`, `exists_one`) as cel-js's runComprehension
 * and runQualifier run it: its variable and accumulator in slots of the program; each element
 * checked against the variable's type; a quantifier keeps the first error of a step and throws
 * it only when the other elements do not decide the result.
 */
function comprehension(n: Node, scope: Scope, ev: Evaluator, slots: unknown[], sub: (c: Node, s?: Scope) => Closure): Closure {
  const args = n.args as {
    iterable: Node;
    iterVarName: string;
    init: Node;
    step: Node;
    condition?: (accu: unknown) => boolean;
    result: (accu: unknown) => unknown;
    errorsAreFatal: boolean;
    iterCtx: { iterType: CelType };
  };
  const iterable = sub(args.iterable);
  const iterSlot = slots.push(undefined) - 1;
  const accu = slots.push(undefined) - 1;
  const inner: Scope = { vars: new Map(scope.vars).set(args.iterVarName, iterSlot), accu };
  const init = sub(args.init, inner);
  const step = sub(args.step, inner);
  const { condition, result, errorsAreFatal, iterVarName } = args;
  const iterType = args.iterCtx.iterType;
  const fast = fastMatch(iterType, ev);
  const setItem = (v: unknown) => {
    if ((fast && fast(v)) || iterType.matchesValueType(v, ev)) return void (slots[iterSlot] = v);
    const valueType = ev.debugType(v);
    if (iterType.kind === 'message' && valueType.kind === 'map') {
      const c = ev.objectTypes.get(iterType.name)?.convert?.(v);
      if (c) return void (slots[iterSlot] = c);
    }
    throw ev.createError('variable_type_mismatch', `Variable '${iterVarName}' is not of type '${iterType}', got '${valueType}'`);
  };
  const itemsOf = (coll: unknown): unknown[] => {
    if (Array.isArray(coll)) return coll;
    if (coll instanceof Set) return [...coll];
    if (coll instanceof Map) return [...coll.keys()];
    if (coll && typeof coll === 'object') return Object.keys(coll);
    throw ev.createError('invalid_comprehension_range', `Expression of type '${ev.debugType(coll)}' cannot be range of a comprehension (must be list, map, or dynamic).`, args.iterable);
  };
  if (errorsAreFatal) {
    return (a) => {
      const items = itemsOf(iterable(a));
      let acc = (slots[accu] = init(a));
      for (let i = 0; i < items.length; i++) {
        if (condition && !condition(acc)) break;
        setItem(items[i]);
        acc = step(a);
      }
      return result(acc);
    };
  }
  return (a) => {
    const items = itemsOf(iterable(a));
    let acc = (slots[accu] = init(a));
    let error: unknown;
    for (let i = 0; i < items.length; i++) {
      if (!condition!(acc)) return result(acc);
      setItem(items[i]);
      let stp: unknown;
      try {
        stp = step(a);
      } catch (e) {
        stp = e;
      }
      if (stp instanceof Error && (error ??= stp)) continue;
      acc = stp;
    }
    if (error && condition!(acc)) throw error;
    return result(acc);
  };
}
