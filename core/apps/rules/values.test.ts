// The CEL view written as one function per set of fields (toCel) against the loop over the
// fields it stands for (toCelEach): every first-party type's fields, its write view's, its
// lines' and its referenced documents', on generated documents, in two currencies.
import { describe, expect, it } from 'vitest';
import { random, sampleDocument, samplePrograms } from '../../../test/rule-samples.ts';
import type { FieldDecl } from '../../../manifests/manifest.schema.ts';
import { UNSET } from './presence.ts';
import { toCel, toCelEach } from './values.ts';

/** The object's fields and its unset list, bigints written out. */
const text = (o: Record<string | symbol, unknown>) =>
  JSON.stringify([o, o[UNSET] ?? null, Object.getPrototypeOf(o)?.constructor?.name], (_k, v) => (typeof v === 'bigint' ? `${v}n` : v));

describe('the CEL view, written per set of fields', () => {
  it('converts as the loop over the fields does', () => {
    const { types } = samplePrograms();
    let conversions = 0;
    const differences: string[] = [];
    for (const { app, dt, rules, refTypes } of types) {
      const shapes = rules.shapes!;
      const views: [string, readonly FieldDecl[], new () => Record<string, unknown>][] = [
        ['fields', dt.fields, shapes.doc],
        ['view', rules.view!.doc, shapes.doc],
        ...[...shapes.ref].map(([name, s]) => [`ref ${name}`, rules.view!.refs.get(name) ?? s.fields, s.ctor] as [string, readonly FieldDecl[], new () => Record<string, unknown>]),
      ];
      const r = random(dt.name.length * 31 + app.length);
      for (let i = 0; i < 20; i++) {
        for (const [what, fields, ctor] of views) {
          const doc = sampleDocument(r, what.startsWith('ref') ? (refTypes.get(what.slice(4)) ?? fields) : dt.fields);
          for (const digits of [2, 3]) {
            conversions++;
            let got: string;
            let want: string;
            try {
              got = text(toCel(fields, doc, digits, ctor, shapes));
            } catch (e) {
              got = `throws ${(e as Error).name}`;
            }
            try {
              want = text(toCelEach(fields, doc, digits, ctor, shapes));
            } catch (e) {
              want = `throws ${(e as Error).name}`;
            }
            if (got !== want) differences.push(`${app}.${dt.name} ${what}: ${got} ≠ ${want}`);
          }
        }
      }
    }
    expect(differences.slice(0, 3)).toEqual([]);
    expect(conversions).toBeGreaterThan(10_000);
  });

  it('keeps a number left out as 0 and unset, and a line as its own class', () => {
    const fields = [
      { name: 'a', type: 'money' },
      { name: 'n', type: 'integer' },
      { name: 'x', type: 'number' },
      { name: 's', type: 'string' },
      { name: 'lines', type: 'lines', fields: [{ name: 'q', type: 'integer' }] },
    ] as FieldDecl[];
    const Doc = class {} as unknown as new () => Record<string, unknown>;
    const Line = class {} as unknown as new () => Record<string, unknown>;
    const out = toCel(fields, { a: 1234.5, s: null, lines: [{ q: 2 }, {}] }, 2, Doc, { doc: Doc, lines: new Map([['lines', Line]]), ref: new Map() });
    expect(Object.entries(out)).toEqual(Object.entries({ a: 123450n, n: 0n, x: 0, lines: (out.lines as object[]) }));
    expect((out.lines as Record<string, unknown>[]).map((l) => l.q)).toEqual([2n, 0n]);
    expect(out[UNSET as unknown as string]).toEqual(['n', 'x']);
    expect((out.lines as object[])[1]).toBeInstanceOf(Line);
    expect(() => toCel(fields, { n: 1.5 }, 2, Doc)).toThrow(RangeError);
  });
});
