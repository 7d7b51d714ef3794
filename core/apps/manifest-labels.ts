// Every word a person reads from a manifest, in both languages: field labels (lines' fields
// too), transition labels and state names (the app's `state.<name>` strings, shared by its
// types, and a type's own `state.<type>.<name>`, which must name one of its states). The schema already makes names, descriptions, menu entries and type labels bilingual;
// a plural label or an English fallback is derived by the host and not asked for here.
import type { Manifest } from '../../manifests/manifest.schema.ts';

const LANGS = ['en', 'ar'] as const;

/** One missing label, shaped as manifest-check.ts's Problem (which imports this file). */
export interface LabelProblem {
  pointer: string;
  rule: 'missingLabel' | 'unknownState';
  message: string;
}
/** A JSON pointer's token: `~` and `/` escaped (RFC 6901). */
const token = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

export function labelProblems(m: Manifest): LabelProblem[] {
  const problems: LabelProblem[] = [];
  const missing = (pointer: string, what: string) => problems.push({ pointer, rule: 'missingLabel', message: `${what} has no label in ${pointer.includes('/ar/') ? 'Arabic' : pointer.includes('/en/') ? 'English' : 'English and Arabic'}` });
  const stateSeen = new Set<string>();
  (m.documentTypes ?? []).forEach((dt, i) => {
    const at = `/documentTypes/${i}`;
    dt.fields.forEach((f, j) => {
      if (!f.label) missing(`${at}/fields/${j}/label`, `field ${dt.name}.${f.name}`);
      (f.fields ?? []).forEach((lf, k) => {
        if (!lf.label) missing(`${at}/fields/${j}/fields/${k}/label`, `field ${dt.name}.${f.name}.${lf.name}`);
      });
    });
    (dt.transitions ?? []).forEach((t, j) => {
      if (!t.label) missing(`${at}/transitions/${j}/label`, `transition ${dt.name}.${t.name}`);
    });
    for (const s of dt.states ?? []) {
      if (stateSeen.has(s)) continue;
      stateSeen.add(s);
      for (const l of LANGS) if (!m.strings[l][`state.${s}`]) missing(`/strings/${l}/${token(`state.${s}`)}`, `state ${s}`);
    }
  });
  // A type's own state label (`state.<type>.<name>`) names a state of one of the app's types: a
  // misspelt one would never be shown.
  for (const l of LANGS) {
    for (const key of Object.keys(m.strings[l] ?? {})) {
      const [prefix, type, state, ...rest] = key.split('.');
      if (prefix !== 'state' || state === undefined || rest.length) continue;
      if ((m.documentTypes ?? []).find((dt) => dt.name === type)?.states?.includes(state)) continue;
      problems.push({ pointer: `/strings/${l}/${token(key)}`, rule: 'unknownState', message: `${key} names no state of a document type ${type}` });
    }
  }
  return problems;
}
