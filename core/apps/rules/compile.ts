// Checked CEL programs turned into JavaScript functions, once per manifest version (at a
// program's first evaluation). cel-js walks the syntax tree at every evaluation, looking up each
// variable in a context chain and each field's type; after the type check most of that is
// known, so here it is written once: the variable's read, the field's class, the overload's
// handler (cel-js's own, called as cel-js calls it, so overflow, division by zero, no_such_key
// and the other errors are its own), and for operators on two values of one primitive type the
// operator itself. One function per program, rather than a tree of closures shared by every
// program, lets V8 inline and specialise each (the rules of a write ran about 1.5× faster).
// Each node evaluates as cel-js's evaluator does, in the same order, with the same errors; a
// program with a node this does not know (a macro run by its own evaluator: `cel.bind`,
// `orValue`, `or`) stays cel-js's. compile.test.ts holds it to cel-js.
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
  right?: unknown;
}

type Fn = (a: Record<string, unknown>) => unknown;

/** A compiled program: callable like cel-js's, with its tree, cel-js's own program beside it, and whether its function runs it (compiled then if not yet). */
export type Compiled = ParseResult & { interpreted: ParseResult; covered(): boolean; source?: string };

class Unsupported extends Error {}

/** Where a name resolves at compile time: a comprehension's variable (its local), or the activation. */
interface Scope {
  vars: Map<string, number>;
  /** The local of the innermost comprehension's accumulator. */
  accu?: number;
}

/**
 * The program as a function, or cel-js's own when a node is not covered. `env` is the environment
 * that checked it (its evaluator is the one cel-js's handlers are called with).
 */
export function compileProgram(env: Environment, program: ParseResult & { source?: string }): Compiled {
  // Compiled on the first evaluation: a manifest checked at install or boot is not run then.
  let fn: Fn | null | undefined;
  const build = () => (fn === undefined ? (fn = generate(env, program) ?? null) : fn);
  const run = (a?: unknown) => {
    // What cel-js's root context takes besides a plain object (a Map, nothing, a wrong value), it does itself.
    if (typeof a !== 'object' || a === null || a instanceof Map) return program(a as never);
    const f = fn ?? build();
    return f ? f(a as Record<string, unknown>) : program(a as never);
  };
  const parts = { ast: program.ast, check: program.check, interpreted: program, covered: () => build() !== null };
  return Object.assign(run, parts, program.source !== undefined ? { source: program.source } : {}) as Compiled;
}

/** The program's function, or undefined when a node is not covered (or the environment's evaluator is not known). */
function generate(env: Environment, program: ParseResult): Fn | undefined {
  const ev = catchEvaluator(env) as Evaluator | undefined;
  const root = program.ast as unknown as Node;
  if (!ev || !root.checkedType) return undefined;
  try {
    const g = new Gen(ev);
    return g.function(g.node(root, { vars: new Map() }));
  } catch {
    // Unsupported (or anything unforeseen in a tree): cel-js runs it, as it did before.
    return undefined;
  }
}

const MAX_INT = 9223372036854775807n;
const MIN_INT = -9223372036854775808n;
const TAGS: Record<string, string> = { int: 'bigint', double: 'number', string: 'string', bool: 'boolean' };
const OPERATORS = new Set(['==', '!=', '<', '<=', '>', '>=', '+', '-', '*']);

/**
 * Writes one program as the source of a JavaScript function. Nothing of the expression's text
 * reaches the source: every value, node, handler and class is a constant passed in (`k3`), field
 * names are written as JSON string literals, and locals are numbered (`v7`). Each node's code
 * assigns its value to a local, in cel-js's order of evaluation.
 */
class Gen {
  private consts: unknown[] = [];
  private lines: string[] = [];
  private slots: string[] = [];
  private n = 0;

  constructor(private ev: Evaluator) {}

  /** A constant's name in the source. */
  private k(v: unknown): string {
    let i = this.consts.indexOf(v);
    if (i < 0) i = this.consts.push(v) - 1;
    return `k${i}`;
  }

  private v(): string {
    return `v${this.n++}`;
  }

  private emit(line: string): void {
    this.lines.push(line);
  }

  /** The node's code, emitted where the caller is; answers the local that holds its value. */
  node(node: Node, scope: Scope): string {
    const n = node.meta.alternate ?? node;
    if (n.meta.macro || !n.checkedType) throw new Unsupported(n.op);
    const out = this.v();
    // cel-js's overload for the node and the node itself, as its handlers take them.
    const h = () => this.k(n.handle);
    const at = () => this.k(n);
    switch (n.op) {
      case 'value': {
        this.emit(`const ${out} = ${this.k(n.args)};`);
        return out;
      }
      case 'id':
        return this.variable(n, scope, out);
      case '.':
        return this.fieldRead(n, scope, out);
      case '.?': {
        const left = this.node(n.args[0], scope);
        this.emit(`const ${out} = ${h()}(${left}, ${this.k(n.right)}, ${at()}, ev);`);
        return out;
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
        const left = this.node(n.args[0], scope);
        const list = n.op === 'in' ? constantList(n.args[1]) : undefined;
        if (list) {
          const strings = (n.args[0] as Node).checkedType!.name === 'string';
          const slow = `${h()}(${left}, ${this.k(list)}, ${at()}, ev)`;
          this.emit(`const ${out} = ${strings ? `typeof ${left} === "string" ? ${this.k(new Set(list))}.has(${left}) : ${slow}` : slow};`);
          return out;
        }
        const right = this.node(n.args[1], scope);
        const slow = `${h()}(${left}, ${right}, ${at()}, ev)`;
        const tag = this.primitive(n);
        if (!tag) this.emit(`const ${out} = ${slow};`);
        else if (tag === 'bigint' && '+-*'.includes(n.op)) {
          // Ints are checked for overflow: cel-js's overload answers the error.
          this.emit(`let ${out};`);
          this.emit(`if (typeof ${left} === "bigint" && typeof ${right} === "bigint") { ${out} = ${left} ${n.op} ${right}; if (${out} > ${this.k(MAX_INT)} || ${out} < ${this.k(MIN_INT)}) ${out} = ${slow}; } else ${out} = ${slow};`);
        } else {
          const op = n.op === '==' ? '===' : n.op === '!=' ? '!==' : n.op;
          this.emit(`const ${out} = typeof ${left} === "${tag}" && typeof ${right} === "${tag}" ? ${left} ${op} ${right} : ${slow};`);
        }
        return out;
      }
      case '!_':
      case '-_': {
        const arg = this.node(n.args, scope);
        this.emit(`const ${out} = ${h()}(${arg}, ${at()}, ev);`);
        return out;
      }
      case 'call': {
        const args = this.operands(n.args[1] as Node[], scope);
        this.emit(`const ${out} = ${h()}([${args}], ${at()}, ev);`);
        return out;
      }
      case 'rcall': {
        const args = this.operands([n.args[1] as Node, ...(n.args[2] as Node[])], scope);
        this.emit(`const ${out} = ${h()}([${args}], ev, ${at()});`);
        return out;
      }
      case 'list': {
        const items = this.operands(n.args as Node[], scope);
        this.emit(`const ${out} = [${items}];`);
        return out;
      }
      case 'map': {
        this.emit(`const ${out} = {};`);
        for (const [k, v] of n.args as [Node, Node][]) {
          const key = this.node(k, scope);
          const value = this.node(v, scope);
          this.emit(`if (${key} !== "__proto__" && ${key} !== "constructor" && ${key} !== "prototype") ${out}[${key}] = ${value};`);
        }
        return out;
      }
      case '?:':
        return this.ternary(n, scope, out);
      case '||':
      case '&&':
        return this.logical(n, scope, out);
      case 'comprehension':
        return this.comprehension(n, scope, out);
      case 'accuValue':
        // Its value now: a step may change the accumulator after this is read.
        this.emit(`const ${out} = ${this.accu(scope)};`);
        return out;
      case 'accuInc':
        this.emit(`const ${out} = (${this.accu(scope)} += 1);`);
        return out;
      case 'accuPush': {
        const arr = this.accu(scope);
        this.emit(`const ${out} = ${arr};`);
        const item = this.node(n.args, scope);
        this.emit(`${out}.push(${item});`);
        return out;
      }
      default:
        throw new Unsupported(n.op);
    }
  }

  /** The type both operands share, when cel-js's overload for it is the JavaScript operator itself. */
  private primitive(n: Node): string | undefined {
    if (!OPERATORS.has(n.op)) return undefined;
    const lt = (n.args[0] as Node).checkedType!;
    const rt = (n.args[1] as Node).checkedType!;
    const tag = lt.name === rt.name ? TAGS[lt.name] : undefined;
    if (!tag) return undefined;
    if (tag === 'boolean' && n.op !== '==' && n.op !== '!=') return undefined;
    if (n.op === '+') return tag === 'boolean' ? undefined : tag;
    if (n.op === '-' || n.op === '*') return tag === 'bigint' || tag === 'number' ? tag : undefined;
    return tag;
  }

  /** Operands of a call or a list, evaluated from the last to the first as cel-js does. */
  private operands(nodes: Node[], scope: Scope): string {
    const out = new Array<string>(nodes.length);
    for (let i = nodes.length - 1; i >= 0; i--) out[i] = this.node(nodes[i], scope);
    return out.join(', ');
  }

  private accu(scope: Scope): string {
    if (scope.accu === undefined) throw new Unsupported('accu');
    return this.slots[scope.accu];
  }

  /** A test that `x` is of a checked type, where cel-js's matcher says the same for it; undefined otherwise. */
  private test(type: CelType, x: string): string | undefined {
    const tag = type.kind === 'message' ? undefined : TAGS[type.name];
    if (tag) return `typeof ${x} === "${tag}"`;
    if (type.kind === 'list') return `(${x} != null && ${x}.constructor === Array)`;
    if (type.kind !== 'message') return undefined;
    const ctor = this.ev.objectTypes.get(type.name)?.ctor;
    // Only when the class maps back to this very type (as cel-js's matcher asks).
    if (typeof ctor !== 'function' || this.ev.objectTypesByConstructor.get(ctor)?.type !== type) return undefined;
    return `(${x} != null && ${x}.constructor === ${this.k(ctor)})`;
  }

  /** A value for a variable of `type` as cel-js takes it: as it is, a map converted to the message it stands for, or a type mismatch. */
  private typed(type: CelType, name: string, node?: Node): (v: unknown) => unknown {
    const ev = this.ev;
    return (v) => {
      if (type.matchesValueType(v, ev)) return v;
      const valueType = ev.debugType(v);
      if (type.kind === 'message' && valueType.kind === 'map') {
        const c = ev.objectTypes.get(type.name)?.convert?.(v);
        if (c) return c;
      }
      throw ev.createError('variable_type_mismatch', `Variable '${name}' is not of type '${type}', got '${valueType}'`, node);
    };
  }

  /** A variable: a comprehension's from its local, else the activation's, checked against its type as cel-js's root context does. */
  private variable(n: Node, scope: Scope, out: string): string {
    const name = n.args as string;
    const slot = scope.vars.get(name);
    if (slot !== undefined) return this.slots[slot];
    const type = n.checkedType!;
    const ev = this.ev;
    const typed = this.typed(type, name, n);
    const slow = (v: unknown) => {
      if (v === undefined) throw ev.createError('unknown_variable', `Unknown variable: ${name}`, n);
      return typed(v);
    };
    this.emit(`let ${out} = a[${JSON.stringify(name)}];`);
    const fast = this.test(type, out);
    this.emit(fast ? `if (!${fast}) ${out} = ${this.k(slow)}(${out});` : `${out} = ${this.k(slow)}(${out});`);
    return out;
  }

  /**
   * `x.f`: on a value of the declared class with a value of the field's type, read directly;
   * anything else as cel-js reads it. `doc.f` and a comprehension's `l.f` read their object
   * themselves, and check it as a variable only when the direct read does not answer.
   */
  private fieldRead(n: Node, scope: Scope, out: string): string {
    const key = n.args[1] as string;
    const of = n.args[0] as Node;
    const leftType = of.checkedType!;
    const h = () => this.k(n.handle);
    const at = () => this.k(n);
    const fieldType = leftType.kind === 'message' ? this.ev.objectTypes.get(leftType.name)?.fields?.[key] : undefined;
    const o = this.v();
    const x = this.v();
    const isOwner = leftType.kind === 'message' ? this.test(leftType, o) : undefined;
    const isValue = fieldType ? this.test(fieldType, x) : undefined;
    const prop = JSON.stringify(key);
    if (!isOwner || !isValue) {
      const left = this.node(of, scope);
      this.emit(`const ${out} = ${h()}(${left}, ${prop}, ${at()}, ev);`);
      return out;
    }
    const id = of.meta.alternate ? undefined : of.op === 'id' ? (of.args as string) : undefined;
    if (id === undefined) {
      const left = this.node(of, scope);
      this.emit(`const ${o} = ${left};`);
      this.emit(`let ${x};`);
      this.emit(`const ${out} = ${isOwner} && (${x} = ${o}[${prop}], ${isValue}) ? ${x} : ${h()}(${o}, ${prop}, ${at()}, ev);`);
      return out;
    }
    const slot = scope.vars.get(id);
    this.emit(`const ${o} = ${slot !== undefined ? this.slots[slot] : `a[${JSON.stringify(id)}]`};`);
    this.emit(`let ${x};`);
    this.emit(`let ${out};`);
    this.emit(`if (${isOwner} && (${x} = ${o}[${prop}], ${isValue})) ${out} = ${x}; else {`);
    const left = this.node(of, scope);
    this.emit(`${out} = ${h()}(${left}, ${prop}, ${at()}, ev); }`);
    return out;
  }

  private ternary(n: Node, scope: Scope, out: string): string {
    const condNode = n.args[0] as Node;
    const ev = this.ev;
    const fail = (c: unknown) => ev.createError('invalid_condition_type', `${condNode.meta.label || 'Ternary condition must be bool'}, got '${ev.debugRuntimeType(c)}'`, condNode);
    const c = this.node(condNode, scope);
    this.emit(`let ${out};`);
    this.emit(`if (${c} === true) {`);
    this.emit(`${out} = ${this.node(n.args[1], scope)}; } else if (${c} === false) {`);
    this.emit(`${out} = ${this.node(n.args[2], scope)}; } else throw ${this.k(fail)}(${c});`);
    return out;
  }

  /**
   * `||` (`exp` true) and `&&` (false) as cel-js runs them: an error on the left is absorbed when
   * the right decides the result, else it is the error; a non-bool operand is an error.
   */
  private logical(n: Node, scope: Scope, out: string): string {
    const exp = n.op === '||';
    const leftNode = n.args[0] as Node;
    const ev = this.ev;
    const operandError = (v: unknown) => ev.createError('invalid_logical_operand', `Logical operator requires bool operands, got '${ev.debugRuntimeType(v)}'`, leftNode);
    const decide = (l: unknown, r: unknown) => {
      if (r === exp) return exp;
      if (r === !exp) {
        if (l === r) return r;
        throw l instanceof Error ? l : operandError(l);
      }
      throw operandError(r);
    };
    const l = this.v();
    this.emit(`let ${l};`);
    this.emit(`try {`);
    this.emit(`${l} = ${this.node(leftNode, scope)}; } catch (e) { ${l} = e; }`);
    this.emit(`let ${out};`);
    this.emit(`if (${l} === ${exp}) ${out} = ${exp}; else {`);
    const r = this.node(n.args[1], scope);
    this.emit(`${out} = ${l} === ${!exp} && typeof ${r} === "boolean" ? ${r} : ${this.k(decide)}(${l}, ${r}); }`);
    return out;
  }

  /**
   * A macro's loop (`map`, `filter`, `all`, `exists`, `exists_one`) as cel-js's runComprehension
   * and runQualifier run it: its variable and accumulator in locals of the program; each element
   * checked against the variable's type; a quantifier keeps the first error of a step and throws
   * it only when the other elements do not decide the result.
   */
  private comprehension(n: Node, scope: Scope, out: string): string {
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
    const ev = this.ev;
    const iterable = this.node(args.iterable, scope);
    const item = this.slots.push(`s${this.slots.length}`) - 1;
    const accu = this.slots.push(`s${this.slots.length}`) - 1;
    const inner: Scope = { vars: new Map(scope.vars).set(args.iterVarName, item), accu };
    const { iterVarName } = args;
    const iterType = args.iterCtx.iterType;
    const setItem = this.typed(iterType, iterVarName);
    const itemsOf = (coll: unknown): unknown[] => {
      if (Array.isArray(coll)) return coll;
      if (coll instanceof Set) return [...coll];
      if (coll instanceof Map) return [...coll.keys()];
      if (coll && typeof coll === 'object') return Object.keys(coll);
      throw ev.createError('invalid_comprehension_range', `Expression of type '${ev.debugType(coll)}' cannot be range of a comprehension (must be list, map, or dynamic).`, args.iterable);
    };
    const [si, sa] = [this.slots[item], this.slots[accu]];
    const items = this.v();
    const acc = this.v();
    const i = this.v();
    this.emit(`const ${items} = ${this.k(itemsOf)}(${iterable});`);
    this.emit(`${sa} = ${this.node(args.init, inner)};`);
    this.emit(`let ${acc} = ${sa};`);
    const fast = this.test(iterType, `${items}[${i}]`);
    const set = `${si} = ${fast ? `${fast} ? ${items}[${i}] : ` : ''}${this.k(setItem)}(${items}[${i}]);`;
    const cond = args.condition && this.k(args.condition);
    const result = this.k(args.result);
    if (args.errorsAreFatal) {
      this.emit(`for (let ${i} = 0; ${i} < ${items}.length; ${i}++) {`);
      if (cond) this.emit(`if (!${cond}(${acc})) break;`);
      this.emit(set);
      this.emit(`${acc} = ${this.node(args.step, inner)}; }`);
      this.emit(`const ${out} = ${result}(${acc});`);
      return out;
    }
    const err = this.v();
    const stop = this.v();
    const step = this.v();
    this.emit(`let ${err}, ${stop} = false;`);
    this.emit(`for (let ${i} = 0; ${i} < ${items}.length; ${i}++) {`);
    this.emit(`if (!${cond}(${acc})) { ${stop} = true; break; }`);
    this.emit(set);
    this.emit(`let ${step};`);
    this.emit(`try {`);
    this.emit(`${step} = ${this.node(args.step, inner)}; } catch (e) { ${step} = e; }`);
    this.emit(`if (${step} instanceof Error) { ${err} ??= ${step}; continue; }`);
    this.emit(`${acc} = ${step}; }`);
    this.emit(`if (!${stop} && ${err} && ${cond}(${acc})) throw ${err};`);
    this.emit(`const ${out} = ${result}(${acc});`);
    return out;
  }

  /** The function: its constants bound once, its locals declared, its body. */
  function(result: string): Fn {
    const names = this.consts.map((_, i) => `k${i}`);
    const locals = this.slots.length ? `let ${this.slots.join(', ')};\n` : '';
    const source = `return function program(a) {\n${locals}${this.lines.join('\n')}\nreturn ${result};\n};`;
    return new Function('ev', ...names, source)(this.ev, ...this.consts) as Fn;
  }
}

/** The right side of `x in [...]` when every element is a literal: built once (membership only reads it). */
function constantList(node: Node): unknown[] | undefined {
  const n = node.meta.alternate ?? node;
  if (n.op !== 'list' || !n.args.length || !(n.args as Node[]).every((c) => !c.meta.alternate && c.op === 'value')) return undefined;
  return (n.args as Node[]).map((c) => c.args);
}
