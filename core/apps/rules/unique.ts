// Unique fields: `unique: true` (once per company) or `uniqueWithin: "<reference field>"` (once per
// parent, a cheque number once per book), but for documents in the states `uniqueExceptIn` names
// (a cancelled booking frees its slot), and, with `uniqueValues`, only for those values (Hajj
// leave once per employee, other leave as often as granted). The check runs in the write's
// transaction under a lock named for the value (doc-type.ts), so two concurrent writes of one
// value cannot both pass.
import type { DocumentTypeDecl } from '../../../manifests/manifest.schema.ts';

/** The lock a uniqueness check holds: one per table, company, field, parent and value. */
export const uniqueLockName = (table: string, companyId: string, field: string, parent: unknown, value: unknown): string =>
  `unique:${table}:${companyId}:${field}:${String(parent ?? '')}:${JSON.stringify(value)}`;

/** What a manifest gets wrong about unique fields. */
export function uniqueProblems(dt: DocumentTypeDecl, at: string): { pointer: string; rule: string; message: string }[] {
  const out: { pointer: string; rule: string; message: string }[] = [];
  // uniqueExceptIn and uniqueValues narrow a uniqueness: without one they mean nothing.
  const needsUnique = (f: DocumentTypeDecl['fields'][number], option: string, pointer: string) => {
    if (!f.unique && f.uniqueWithin === undefined) out.push({ pointer, rule: 'unique', message: `${f.name} is not unique: ${option} goes with unique or uniqueWithin` });
  };
  dt.fields.forEach((f, i) => {
    if (f.uniqueWithin === undefined) return;
    const parent = dt.fields.find((p) => p.name === f.uniqueWithin);
    if (parent?.type !== 'reference') out.push({ pointer: `${at}/fields/${i}/uniqueWithin`, rule: 'field', message: `"${f.uniqueWithin}" is not a reference field of ${dt.name}` });
    if (f.unique) out.push({ pointer: `${at}/fields/${i}/unique`, rule: 'unique', message: `${f.name} is unique in the company or within ${f.uniqueWithin}, not both` });
  });
  dt.fields.forEach((f, i) => {
    if (f.uniqueExceptIn === undefined) return;
    const pointer = `${at}/fields/${i}/uniqueExceptIn`;
    needsUnique(f, 'uniqueExceptIn', pointer);
    f.uniqueExceptIn.forEach((st, j) => {
      if (!(dt.states ?? []).includes(st)) out.push({ pointer: `${pointer}/${j}`, rule: 'state', message: `"${st}" is not a state of ${dt.name}` });
    });
  });
  dt.fields.forEach((f, i) => {
    if (f.uniqueValues === undefined) return;
    const pointer = `${at}/fields/${i}/uniqueValues`;
    needsUnique(f, 'uniqueValues', pointer);
    // The values are strings: a number's or a reference's (an id of one install) would never match.
    if (!['string', 'enum', 'date'].includes(f.type)) out.push({ pointer, rule: 'unique', message: `uniqueValues are for a string, enum or date field (${f.name} is ${f.type})` });
    if (f.type === 'enum') {
      f.uniqueValues.forEach((v, j) => {
        if (!(f.values ?? []).includes(v)) out.push({ pointer: `${pointer}/${j}`, rule: 'enum', message: `"${v}" is not one of the values of ${f.name}` });
      });
    }
  });
  dt.fields.forEach((f, i) => {
    if ((f.unique || f.uniqueWithin) && (f.type === 'lines' || f.secret)) out.push({ pointer: `${at}/fields/${i}`, rule: 'unique', message: `${f.name} cannot be unique (a lines or secret field)` });
  });
  return out;
}
