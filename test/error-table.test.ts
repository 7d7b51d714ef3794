// The one error table: every code has a status, a description and an English and an Arabic
// message; docs/errors.md documents every code and is what scripts/gen-docs.ts writes.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { errorCodes } from '../core/kernel/errors/codes.ts';
import { createTranslator } from '../core/kernel/i18n/i18n.ts';
import { CORE_PERMISSIONS, PermissionRegistry } from '../core/identity/permissions.ts';
import { REPO_ROOT } from '../core/apps/app-source.ts';
import { errorsMarkdown, permissionRow } from '../scripts/gen-docs.ts';
import { ARABIC, invoicingSources } from './helpers.ts';

const docsFile = (name: string) => path.join(REPO_ROOT, 'docs', name);
const placeholders = (s: string) => [...s.matchAll(/\{\{(\w+)\}\}/g)].map((m) => m[1]).sort();
const entries = Object.entries(errorCodes);

describe('error table', () => {
  it('has stable upper-case codes with a 4xx or 5xx status', () => {
    expect(entries.length).toBeGreaterThan(0);
    for (const [code, e] of entries) {
      expect(code).toMatch(/^[A-Z][A-Z_]*[A-Z]$/);
      expect(Number.isInteger(e.status), code).toBe(true);
      expect(e.status, code).toBeGreaterThanOrEqual(400);
      expect(e.status, code).toBeLessThan(600);
    }
  });

  it.each(entries)('%s has a description and non-empty English and Arabic messages', (code, e) => {
    expect(e.description.trim().length, code).toBeGreaterThan(0);
    expect(e.en.trim().length, code).toBeGreaterThan(0);
    expect(e.ar.trim().length, code).toBeGreaterThan(0);
    expect(e.ar, code).toMatch(ARABIC);
    expect(e.en, code).not.toMatch(ARABIC);
    // The same values are filled in whatever the language.
    expect(placeholders(e.ar), code).toEqual(placeholders(e.en));
  });

  it('gives every code a message through the translator in both languages', () => {
    const tr = createTranslator();
    for (const [code, e] of entries) {
      const params = Object.fromEntries(placeholders(e.en).map((p) => [p, 'X']));
      const en = tr.t('en', `error.${code}`, params);
      const ar = tr.t('ar', `error.${code}`, params);
      expect(en, code).not.toBe(`error.${code}`);
      expect(ar, code).toMatch(ARABIC);
      expect(en).not.toContain('{{');
      expect(ar).not.toContain('{{');
    }
  });

  it('documents every code in docs/errors.md with its status and both messages', () => {
    expect(fs.existsSync(docsFile('errors.md')), 'docs/errors.md is missing: run npx tsx scripts/gen-docs.ts').toBe(true);
    const text = fs.readFileSync(docsFile('errors.md'), 'utf8');
    for (const [code, e] of entries) {
      const row = text.split('\n').find((l) => l.startsWith(`| \`${code}\` |`));
      expect(row, `${code} is not documented in docs/errors.md`).toBeDefined();
      expect(row).toContain(` ${e.status} `);
      expect(row).toContain(e.en.replace(/\|/g, '\\|'));
      expect(row).toContain(e.ar.replace(/\|/g, '\\|'));
    }
  });

  it("has APP_ERROR (500) for an app's own faults, naming the app, documented with its details", () => {
    expect(errorCodes.APP_ERROR.status).toBe(500);
    expect(placeholders(errorCodes.APP_ERROR.en)).toEqual(['app', 'reason']);
    const tr = createTranslator();
    expect(tr.t('en', 'error.APP_ERROR', { app: 'gadgets', reason: 'POST /api/v1/gadgets failed' })).toContain('gadgets');
    expect(tr.t('ar', 'error.APP_ERROR', { app: 'gadgets', reason: 'x' })).toContain('gadgets');
    const text = fs.readFileSync(docsFile('errors.md'), 'utf8');
    expect(text).toMatch(/- `APP_ERROR`: .*`app` names the app and `rule`/);
  });

  it('has docs/errors.md up to date with the table (run `npx tsx scripts/gen-docs.ts`)', () => {
    expect(fs.readFileSync(docsFile('errors.md'), 'utf8')).toBe(errorsMarkdown());
  });
});

describe('permissions doc', () => {
  it('lists the host and invoicing permissions as the registry has them (run `npx tsx scripts/gen-docs.ts`)', () => {
    expect(fs.existsSync(docsFile('permissions.md')), 'docs/permissions.md is missing: run npx tsx scripts/gen-docs.ts').toBe(true);
    const text = fs.readFileSync(docsFile('permissions.md'), 'utf8');
    // Built from the manifest alone, so the check does not depend on the other apps.
    const registry = new PermissionRegistry();
    const m = invoicingSources()[0].manifest;
    registry.add((m.permissions ?? []).map((p) => ({ ...p, permission: `${p.resource}:${p.action}`, owner: m.id })));
    const wanted = [...CORE_PERMISSIONS.map((p) => p.permission), ...(m.permissions ?? []).map((p) => `${p.resource}:${p.action}`)];
    expect(wanted).toContain('invoices:create');
    for (const permission of wanted) expect(text, permission).toContain(permissionRow(registry.get(permission)!));
  });
});
