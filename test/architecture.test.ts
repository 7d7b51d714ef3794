// Imports run one way (kernel → storage → domains → http → host and cli), only storage knows
// the database driver, the SDK imports nothing from core, apps import only the SDK: the rules
// live in .dependency-cruiser.cjs, checked here on every test run.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '..');

describe('architecture', () => {
  it('every import follows the layer rules', { timeout: 60_000 }, async () => {
    const bin = path.join(root, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [bin, 'core', 'sdk', 'cli', 'apps-installed', 'manifests', '--config', '.dependency-cruiser.cjs', '--output-type', 'json'],
      { cwd: root, maxBuffer: 64 * 1024 * 1024 },
    ).catch((e: { stdout?: string }) => ({ stdout: e.stdout ?? '' }));
    const result = JSON.parse(stdout) as { summary: { violations: { rule: { name: string }; from: string; to: string }[]; totalCruised: number } };
    expect(result.summary.totalCruised).toBeGreaterThan(100);
    expect(result.summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`)).toEqual([]);
  });
});

// Back-edges that imports do not show: a forward declaration the composition root fills in
// later (`let runtime!: AppRuntime`, so that something built before it can call up into it), and
// a callback slot on another object overwritten from outside (`outbox.onEmit = () => …`) or a
// `let` holding a function reassigned once its real target exists. Each hides a dependency
// running against the layer order; listeners (`on`, `listen`) and constructor arguments do not.
export function backEdges(source: string): { line: number; rule: string; text: string }[] {
  const found: { line: number; rule: string; text: string }[] = [];
  const fn = String.raw`(?:async\s*)?(?:\([^()]*\)|\w+)\s*(?::[^=]+)?=>|function\b`;
  // A `let` that starts as a function (a placeholder) and is given another later.
  const lets = new Set([...source.matchAll(new RegExp(String.raw`\blet\s+(\w+)\s*(?::[^=]+)?=\s*(?:${fn})`, 'g'))].map((m) => m[1]));
  source.split('\n').forEach((text, i) => {
    const code = text.replace(/\/\/.*$/, '');
    if (/\blet\s+\w+\s*!\s*:/.test(code)) found.push({ line: i + 1, rule: 'forward-declaration', text: text.trim() });
    const slot = new RegExp(String.raw`(?:^|[^\w.])((?:\w+\.)+)(\w+)\s*=\s*(?:${fn})`).exec(code);
    if (slot && slot[1] !== 'this.') found.push({ line: i + 1, rule: 'callback-slot', text: text.trim() });
    const local = new RegExp(String.raw`^\s*(\w+)\s*=\s*(?:${fn})`).exec(code);
    if (local && lets.has(local[1])) found.push({ line: i + 1, rule: 'reassigned-callback', text: text.trim() });
  });
  return found;
}

describe('runtime back-edges', () => {
  it('the detector sees each kind, and not listeners, own fields or declarations', () => {
    const bad = [
      'let runtime!: AppRuntime;',
      'this.deps.outbox.onEmit = () => this.eventsWritten();',
      'outbox.onEmit = async (x) => wake(x);',
      'let log = (_e: unknown) => {};\nlog = (e) => app.log.error(e);',
    ];
    expect(bad.map((s) => backEdges(s).map((f) => f.rule))).toEqual([['forward-declaration'], ['callback-slot'], ['callback-slot'], ['reassigned-callback']]);
    const fine = [
      'this.unlisten = this.deps.outbox.listen(() => this.eventsWritten());',
      'this.onError = (err) => log(err);',
      'const log = (e: unknown) => app.log.error(e);',
      "storage.changes.on('packages', () => sync());",
      'let n = 0;\nn = 1;',
      'const cmp = (a: number, b: number) => a - b; // x.y = () => z',
    ];
    expect(fine.flatMap((s) => backEdges(s))).toEqual([]);
  });

  it('no module of core or the CLI has one', () => {
    const files: string[] = [];
    const walk = (dir: string) => {
      for (const e of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
        const rel = `${dir}/${e.name}`;
        if (e.isDirectory()) walk(rel);
        else if (/\.tsx?$/.test(e.name) && !/\.test\.tsx?$/.test(e.name)) files.push(rel);
      }
    };
    for (const d of ['core', 'cli', 'sdk']) walk(d);
    const found = files.flatMap((f) => backEdges(fs.readFileSync(path.join(root, f), 'utf8')).map((b) => `${f}:${b.line} ${b.rule}: ${b.text}`));
    expect(found).toEqual([]);
  });
});
