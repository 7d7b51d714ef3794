// Every package the code imports is declared in package.json, so an install from the lockfile
// alone runs it (fast-json-stringify was imported while only Fastify brought it in). What ships
// (core, cli, sdk, web, apps-installed) imports `dependencies`; tests, benchmarks and scripts may
// also import `devDependencies`, as may a type-only import (erased before it runs). And every
// declared package has a use, so the table of reasons in README.md stays true.
import fs from 'node:fs';
import path from 'node:path';
import { builtinModules } from 'node:module';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../core/apps/app-source.ts';
import { lineOf, parse, sourceFiles } from './source-files.ts';

const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { name: string; dependencies: Record<string, string>; devDependencies: Record<string, string> };
const SHIPPED = ['core', 'cli', 'sdk', 'web', 'apps-installed'];
const DEVELOPMENT = ['test', 'bench', 'scripts'];
/** Declared and used, but never imported: run as a program. */
const PROGRAMS: Record<string, string> = { 'dependency-cruiser': 'test/architecture.test.ts runs its bin' };

export interface Import {
  line: number;
  specifier: string;
  typeOnly: boolean;
}

/** Every module a source text names: import and export `from`, `import()`, `require()`, `createRequire(…)(…)`. */
export function importsOf(file: string, text: string): Import[] {
  const sf = parse(file, text);
  const out: Import[] = [];
  const add = (node: ts.Node, spec: ts.Expression | undefined, typeOnly = false) => {
    if (spec && ts.isStringLiteralLike(spec)) out.push({ line: lineOf(sf, node), specifier: spec.text, typeOnly });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) add(node, node.moduleSpecifier, !!node.importClause?.isTypeOnly);
    else if (ts.isExportDeclaration(node)) add(node, node.moduleSpecifier, node.isTypeOnly);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add(node, node.argument.literal as ts.Expression, true);
    else if (ts.isCallExpression(node)) {
      const callee = node.expression;
      const loads =
        callee.kind === ts.SyntaxKind.ImportKeyword ||
        (ts.isIdentifier(callee) && callee.text === 'require') ||
        (ts.isPropertyAccessExpression(callee) && ts.isIdentifier(callee.expression) && callee.expression.text === 'require' && callee.name.text === 'resolve') ||
        (ts.isCallExpression(callee) && ts.isIdentifier(callee.expression) && callee.expression.text === 'createRequire');
      if (loads) add(node, node.arguments[0]);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

/** The package a bare specifier names (`@scope/name/sub` → `@scope/name`), or undefined for a file or a built-in. */
export function packageOf(specifier: string): string | undefined {
  if (specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('node:') || specifier.startsWith('virtual:')) return undefined;
  const parts = specifier.split('/');
  const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
  return builtinModules.includes(name) ? undefined : name;
}

const isTest = (file: string) => /\.test\.tsx?$/.test(file);

function usesOf(dirs: string[]): { file: string; line: number; name: string; typeOnly: boolean }[] {
  return dirs.flatMap((d) => sourceFiles(d)).flatMap((file) =>
    importsOf(file, fs.readFileSync(path.join(REPO_ROOT, file), 'utf8')).flatMap((i) => {
      const name = packageOf(i.specifier);
      return name ? [{ file, line: i.line, name, typeOnly: i.typeOnly }] : [];
    }),
  );
}

describe('declared dependencies', () => {
  const shipped = usesOf(SHIPPED);
  const development = [...usesOf(DEVELOPMENT), ...['vitest.config.ts'].flatMap((f) => importsOf(f, fs.readFileSync(path.join(REPO_ROOT, f), 'utf8')).map((i) => ({ file: f, line: i.line, name: packageOf(i.specifier), typeOnly: i.typeOnly })))];
  // The package's own name (`diwan/sdk`, as apps import it) is no dependency.
  const own = (name: string | undefined) => name === pkg.name;

  it('what ships imports only `dependencies` (a type-only import may name a devDependency)', () => {
    const wrong = shipped
      .filter((u) => !own(u.name) && !(u.name in pkg.dependencies))
      .filter((u) => !(isTest(u.file) || u.typeOnly) || !(u.name in pkg.devDependencies))
      .map((u) => `${u.file}:${u.line}: ${u.name}`);
    expect(shipped.length).toBeGreaterThan(100);
    expect(wrong).toEqual([]);
  });

  it('tests, benchmarks and scripts import only declared packages', () => {
    const declared = { ...pkg.dependencies, ...pkg.devDependencies };
    const wrong = development.filter((u) => u.name && !own(u.name) && !(u.name in declared)).map((u) => `${u.file}:${u.line}: ${u.name}`);
    expect(development.length).toBeGreaterThan(100);
    expect(wrong).toEqual([]);
  });

  it('every declared package is used: imported, a type package, or run as a program', () => {
    const used = new Set([...shipped, ...development].map((u) => u.name));
    const idle = Object.keys({ ...pkg.dependencies, ...pkg.devDependencies }).filter((name) => !used.has(name) && !name.startsWith('@types/') && !(name in PROGRAMS));
    expect(idle).toEqual([]);
  });

  it('reads every form of import, and tells packages from files and built-ins', () => {
    const src = [
      "import a from 'alpha';",
      "import type { B } from '@scope/beta/sub';",
      "export { c } from 'gamma/x.js';",
      "const d = await import('delta');",
      "const e = require('epsilon');",
      "const f = createRequire(import.meta.url)('zeta');",
      "import g from './local.ts'; import h from 'node:fs'; import i from 'path';",
      "type J = import('eta').J;",
    ].join('\n');
    const found = importsOf('x.ts', src).map((i) => `${i.line} ${packageOf(i.specifier) ?? '-'}${i.typeOnly ? ' (type)' : ''}`);
    expect(found).toEqual(['1 alpha', '2 @scope/beta (type)', '3 gamma', '4 delta', '5 epsilon', '6 zeta', '7 -', '7 -', '7 -', '8 eta (type)']);
  });
});
