// Imports run one way (kernel → storage → domains → http → host and cli), only storage knows
// the database driver, the SDK imports nothing from core, apps import only the SDK: the rules
// live in .dependency-cruiser.cjs, checked here on every test run.
import { execFile } from 'node:child_process';
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
