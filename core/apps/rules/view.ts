// What of a document (its lines, the documents it references) a write's rules read, found in
// their checked syntax trees, so that the CEL view a write builds holds those fields only. A
// payslip's rules read six of an employee's thirty fields; converting the others (money to
// minor units, at every write) was most of what building the view cost.
import type { ParseResult } from '@marcbachmann/cel-js';
import type { FieldDecl } from '../../../manifests/manifest.schema.ts';

interface Node {
  op: string;
  args: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  meta?: { alternate?: Node };
  checkedType?: { name: string; toString(): string };
  right?: unknown;
}

/** CEL type name → the fields read of it by name, or null when a value of it is read whole (passed on, compared, listed). */
export type FieldsRead = Map<string, Set<string> | null>;

const TYPE_NAME = /\b(Document|References|Lines_\w+|Ref_\w+)\b/g;

/** The fields the programs read of each of the document's types (`Document`, `Lines_<f>`, `Ref_<f>`, `References`). */
export function fieldsRead(programs: readonly ParseResult[]): FieldsRead {
  const read: FieldsRead = new Map();
  const field = (type: string, name: string) => {
    const set = read.get(type);
    if (set === null) return;
    if (set) set.add(name);
    else read.set(type, new Set([name]));
  };
  // Every type a value of `t` holds (a list of lines holds their type) is read whole.
  const whole = (t: Node['checkedType']) => {
    for (const m of String(t ?? '').matchAll(TYPE_NAME)) read.set(m[1], null);
  };
  /** `use`: how the parent uses the node's value: a field is selected from it, it is iterated or indexed, or anything else. */
  const visit = (node: Node, use: 'select' | 'range' | 'value'): void => {
    const n = node.meta?.alternate ?? node;
    const type = n.checkedType;
    if (use === 'value' || (use === 'range' && !String(type).startsWith('list<'))) whole(type);
    switch (n.op) {
      case '.':
      case '.?': {
        const of = n.args[0] as Node;
        field(String((of.meta?.alternate ?? of).checkedType), (n.op === '.' ? n.args[1] : n.right) as string);
        return visit(of, 'select');
      }
      case '[]':
      case '[?]':
        visit(n.args[0], 'range');
        return visit(n.args[1], 'value');
      case 'call': {
        const [name, args] = n.args as [string, Node[]];
        // has(x.f), as isSet(x, "f") runs it, reads f; size() reads no field of what it counts.
        if (name === 'isSet' && args[1]?.op === 'value' && typeof args[1].args === 'string') {
          field(String((args[0].meta?.alternate ?? args[0]).checkedType), args[1].args);
          return visit(args[0], 'select');
        }
        if (name === 'size' && args.length === 1) return visit(args[0], 'range');
        return args.forEach((a) => visit(a, 'value'));
      }
      case 'rcall': {
        const [name, receiver, args] = n.args as [string, Node, Node[]];
        visit(receiver, name === 'size' && !args.length ? 'range' : 'value');
        return args.forEach((a) => visit(a, 'value'));
      }
      case 'comprehension': {
        const c = n.args as Record<string, Node>;
        visit(c.iterable, 'range');
        visit(c.init, 'value');
        return visit(c.step, 'value');
      }
      case 'value':
      case 'id':
      case 'accuValue':
      case 'accuInc':
        return;
      case 'map':
        return (n.args as [Node, Node][]).forEach(([k, v]) => (visit(k, 'value'), visit(v, 'value')));
      default:
        if (Array.isArray(n.args)) return (n.args as Node[]).forEach((a) => visit(a, 'value'));
        if (n.args && typeof n.args === 'object' && 'op' in n.args) return visit(n.args as Node, 'value');
    }
  };
  for (const p of programs) visit(p.ast as unknown as Node, 'value');
  return read;
}

/** The fields of a type the programs read (its lines fields always, with their lines' fields narrowed too); all when it is read whole. */
export function narrowed(fields: readonly FieldDecl[], type: string, read: FieldsRead): readonly FieldDecl[] {
  const names = read.get(type);
  if (names === null) return fields;
  return fields.flatMap((f) => {
    if (f.type !== 'lines') return names?.has(f.name) ? [f] : [];
    // Kept even when no rule names it: a line's computed fields are written into the view's lines.
    const lines = read.get(`Lines_${f.name}`);
    return [lines === null ? f : { ...f, fields: (f.fields ?? []).filter((lf) => lines?.has(lf.name)) }];
  });
}
