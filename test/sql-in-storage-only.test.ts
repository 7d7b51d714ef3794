// Only core/storage speaks SQL: every other file of the product (core, cli, sdk, the apps, the
// console) reaches the database through a repository or a narrow Storage method. A file is read
// with the TypeScript parser, so only string and template literals are judged (comments and JSX
// text are prose), and calls of the `Db` methods that take SQL (`get`, `all`, `run`, `exec`, and
// better-sqlite3's `prepare`) on anything named `db` or `…Db` are refused too. `transaction` is no
// SQL: a unit of work opens one. bench/ keeps its SQL: a benchmark's bare baseline is the point.
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../core/apps/app-source.ts';
import { lineOf, parse, sourceFiles, SOURCE_EXTENSIONS } from './source-files.ts';

const ROOTS = ['core', 'cli', 'sdk', 'apps-installed', 'web'];
const STORAGE = path.join('core', 'storage');

// SQL is written in capitals here, so capitals are matched as they are; lower case only in the
// shapes prose never takes (a table then `(`, `set x =`, a placeholder after `where`).
const STATEMENTS: RegExp[] = [
  /\bSELECT\s+(DISTINCT\s+)?[\w*"(]/,
  /\bINSERT\s+(OR\s+\w+\s+)?INTO\b/,
  /\bUPDATE\s+["\w.]+\s+SET\b/,
  /\bDELETE\s+FROM\b/,
  /\b(CREATE|DROP|ALTER)\s+(UNIQUE\s+)?(TABLE|INDEX|VIEW|TRIGGER|SCHEMA|DATABASE)\b/,
  /\bPRAGMA\s+\w/,
  /\binsert\s+into\s+["\w.]+\s*\(/i,
  /\bupdate\s+["\w.]+\s+set\s+["\w]+\s*=/i,
  /\bdelete\s+from\s+["\w.]+\s+where\b/i,
  /\bcreate\s+(unique\s+)?(table|index)\s+(if\s+not\s+exists\s+)?["\w]/i,
  /\bselect\b.+\bfrom\s+["\w.]+.*\bwhere\b.*(\?|\$\d)/i,
];
const SQL_METHODS = new Set(['get', 'all', 'run', 'exec', 'prepare']);
const isDbName = (name: string) => name === 'db' || /[a-z]Db$/.test(name);

export interface Finding {
  line: number;
  what: string;
}

const clip = (s: string) => (s.length > 80 ? `${s.slice(0, 77)}…` : s).replace(/\s+/g, ' ');

/** The SQL statements and `Db` calls of one source text. */
export function findSql(fileName: string, text: string): Finding[] {
  const sf = parse(fileName, text);
  const out: Finding[] = [];
  const at = (node: ts.Node) => lineOf(sf, node);
  const judge = (node: ts.Node, literal: string) => {
    if (STATEMENTS.some((re) => re.test(literal))) out.push({ line: at(node), what: `SQL ${JSON.stringify(clip(literal))}` });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) judge(node, node.text);
    else if (ts.isTemplateExpression(node)) {
      // Each `${…}` read as a word, so `SELECT ${cols} FROM t` keeps its shape.
      judge(node, node.head.text + node.templateSpans.map((s) => ` x ${s.literal.text}`).join(''));
    } else if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && SQL_METHODS.has(node.expression.name.text)) {
      const target = node.expression.expression;
      const name = ts.isIdentifier(target) ? target.text : ts.isPropertyAccessExpression(target) ? target.name.text : '';
      if (isDbName(name)) out.push({ line: at(node), what: `${target.getText(sf)}.${node.expression.name.text}(…)` });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

const scan = (files: string[]) =>
  files.flatMap((f) => findSql(f, fs.readFileSync(path.join(REPO_ROOT, f), 'utf8')).map((x) => `${f}:${x.line}: ${x.what}`));

describe('SQL lives in core/storage only', () => {
  it('no file of core (but core/storage), cli, sdk, apps-installed or web holds a SQL statement or calls a Db method', () => {
    const files = ROOTS.flatMap((r) => sourceFiles(r, [STORAGE]));
    expect(files.length).toBeGreaterThan(100);
    expect(files.some((f) => f.startsWith(STORAGE))).toBe(false);
    expect(scan(files)).toEqual([]);
  });

  it("finds storage's own SQL, so a clean scan means something", () => {
    const repos = path.join(STORAGE, 'repos');
    const found = scan(fs.readdirSync(path.join(REPO_ROOT, repos)).filter((f) => SOURCE_EXTENSIONS.test(f)).map((f) => path.join(repos, f)));
    expect(found.length).toBeGreaterThan(50);
    expect(found.some((f) => f.startsWith(path.join(STORAGE, 'repos', 'webhook-deliveries.ts')) && f.includes('SELECT endpoint_id'))).toBe(true);
    expect(found.some((f) => /this\.db\.(get|all|run)\(…\)/.test(f))).toBe(true);
  });

  it('flags statements in strings and templates, and Db calls, with their lines', () => {
    const src = [
      "const a = 'SELECT id FROM t WHERE x = ?';",
      'const b = `INSERT INTO ${table} (a) VALUES (?)`;',
      'const c = `UPDATE ${t} SET a = ?`;',
      "const d = 'delete from people where id = ?';",
      "await storage.db.get('x');",
      'await this.sqliteDb.exec(ddl);',
      "const e = 'CREATE UNIQUE INDEX ix ON t (a)';",
      "const f = 'select name from users where id = $1';",
    ].join('\n');
    expect(findSql('x.ts', src).map((f) => f.line)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it('leaves prose, JSX, comments and other get/run calls alone', () => {
    const src = [
      '// SELECT id FROM t WHERE x = ?  (a comment)',
      "const a = 'Select an app';",
      "const b = 'Could not copy: select the text and copy it yourself.';",
      "const c = 'Update the company name, then set its currency';",
      'const d = <select id="company-switch" value={v}>Select a company from the list</select>;',
      "map.get('db'); cache.run(job); headers.get('x'); dbName.get(1);",
      "const e = 'Delete from this list where you see fit';",
    ].join('\n');
    expect(findSql('x.tsx', src)).toEqual([]);
  });
});
