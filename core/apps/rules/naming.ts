// Naming series (`naming` of a document type): `INV-{YYYY}-{#####}` gives INV-2026-00001, then
// 00002…, gap-free per company, type and period, because the number is a sequence taken in the
// write's transaction (storage's sequences): a write that fails gives its number back.
import type { DocumentTypeDecl, NamingDecl } from '../../../manifests/manifest.schema.ts';

const NUMBER = /\{(#+)\}/;

/** The format with its date tokens filled: what a series counts within (one counter per period). */
export function periodOf(format: string, date: string): string {
  return format.replace(/\{YYYY\}/g, date.slice(0, 4)).replace(/\{YY\}/g, date.slice(2, 4)).replace(/\{MM\}/g, date.slice(5, 7));
}

/** The counter's key: the type, the field and the period (`invoice.number:INV-2026-{#}`). */
export const seriesKey = (type: string, n: NamingDecl, date: string): string => `${type}.${n.field}:${periodOf(n.format, date).replace(NUMBER, '{#}')}`;

/** The name: the period's format with the number padded to as many digits as it has `#`. */
export function formatName(n: NamingDecl, date: string, number: number): string {
  return periodOf(n.format, date).replace(NUMBER, (_, hashes: string) => String(number).padStart(hashes.length, '0'));
}

/** The date a document's name is made from: its `date` field when it has one, else today. */
export function namingDate(n: NamingDecl, doc: Record<string, unknown>, today: string): string {
  const v = n.date ? doc[n.date] : undefined;
  return typeof v === 'string' && /^\d{4}-\d{2}-\d{2}/.test(v) ? v : today;
}

/** What a manifest gets wrong about its series, each at its pointer. */
export function namingProblems(dt: DocumentTypeDecl, at: string): { pointer: string; rule: string; message: string }[] {
  const n = dt.naming;
  if (!n) return [];
  const out: { pointer: string; rule: string; message: string }[] = [];
  const add = (pointer: string, rule: string, message: string) => out.push({ pointer: `${at}/naming/${pointer}`, rule, message });
  const field = dt.fields.find((f) => f.name === n.field);
  if (!field) add('field', 'field', `"${n.field}" is not a field of ${dt.name}`);
  else if (field.type !== 'string' || !field.readOnly || field.compute !== undefined) add('field', 'namingField', `${n.field} gets its name from the series: it must be a read-only string field (readOnly: true, not computed)`);
  if ((n.format.match(/\{#+\}/g) ?? []).length !== 1) add('format', 'namingFormat', 'the format has exactly one number, {#…}');
  const unknown = n.format.replace(/\{#+\}|\{YYYY\}|\{YY\}|\{MM\}/g, '').match(/\{[^}]*\}/);
  if (unknown) add('format', 'namingFormat', `${unknown[0]} is not a token of a series ({YYYY}, {YY}, {MM}, {#…})`);
  if (n.on !== undefined && !(dt.transitions ?? []).some((t) => t.name === n.on)) add('on', 'transition', `${dt.name} has no transition "${n.on}"`);
  if (n.date !== undefined && dt.fields.find((f) => f.name === n.date)?.type !== 'date') add('date', 'dateField', `"${n.date}" is not a date field of ${dt.name}`);
  return out;
}
