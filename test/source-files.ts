// The project's own source files, listed and parsed for the tests that read code as text
// (test/sql-in-storage-only.test.ts, test/declared-deps.test.ts).
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { REPO_ROOT } from '../core/apps/app-source.ts';

export const SOURCE_EXTENSIONS = /\.(ts|tsx|js|mjs|cjs)$/;

/** Source files under `dir` (relative to the repository), `skip`ped folders and node_modules left out. */
export function sourceFiles(dir: string, skip: string[] = []): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(path.join(REPO_ROOT, dir), { withFileTypes: true })) {
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'node_modules' && !skip.includes(rel)) out.push(...sourceFiles(rel, skip));
    } else if (SOURCE_EXTENSIONS.test(e.name)) out.push(rel);
  }
  return out;
}

/** A file parsed as what its extension says (JSX in .tsx, JavaScript in .js/.mjs/.cjs). */
export function parse(file: string, text = fs.readFileSync(path.join(REPO_ROOT, file), 'utf8')): ts.SourceFile {
  const kind = file.endsWith('.tsx') ? ts.ScriptKind.TSX : /\.[mc]?js$/.test(file) ? ts.ScriptKind.JS : ts.ScriptKind.TS;
  return ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind);
}

/** The 1-based line a node starts on. */
export const lineOf = (sf: ts.SourceFile, node: ts.Node): number => sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
