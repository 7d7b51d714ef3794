import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DiwanError } from '../core/errors/diwan-error.ts';
import { checkManifest } from '../core/apps/manifest-check.ts';
import { readPackage, unpackTo } from '../core/apps/app-package.ts';
import { newApp, packAppCommand, scaffoldResource, validateApp } from './app-author.ts';

let root: string;

beforeAll(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'diwan-app-author-test-'));
});

afterAll(() => {
  fs.rmSync(root, { recursive: true, force: true });
});

function thrown(fn: () => unknown): DiwanError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(DiwanError);
    return e as DiwanError;
  }
  throw new Error('expected a DiwanError');
}

/** A fresh scaffold in its own parent folder, so tests can break copies without stepping on each other. */
function scaffold(id: string, name = id) {
  return newApp(id, path.join(root, name));
}

describe('newApp', () => {
  it('scaffolds manifest, server, web page and test with the id filled in', () => {
    const { dir, files } = newApp('field-notes', root, { nameEn: 'Field Notes', nameAr: 'ملاحظات ميدانية' });
    expect(dir).toBe(path.join(root, 'field-notes'));
    expect(files).toEqual(['field-notes.test.ts', 'manifest.json', 'server.ts', 'web/index.html']);
    for (const f of files) expect(fs.readFileSync(path.join(dir, f), 'utf8')).not.toMatch(/__[A-Z_]+__/);

    const { manifest, problems } = checkManifest(JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8')));
    expect(problems).toEqual([]);
    expect(manifest).toMatchObject({ id: 'field-notes', name: { en: 'Field Notes', ar: 'ملاحظات ميدانية' }, server: 'server.ts', web: 'web' });
    const dt = manifest!.documentTypes![0];
    expect(dt).toMatchObject({ name: 'note', resource: 'field-notes-notes', states: ['draft', 'done'], initialState: 'draft' });
    expect(dt.fields.find((f) => f.name === 'title')).toMatchObject({ type: 'string', required: true });
    expect(dt.fields.find((f) => f.name === 'priority')).toMatchObject({ type: 'enum', filterable: true });
    expect(dt.transitions).toEqual([expect.objectContaining({ name: 'complete', from: ['draft'], to: 'done' })]);
    const family = manifest!.eventFamilies![0];
    expect(family.prefix).toBe('field-notes');
    expect(family.topics.map((t) => t.topic)).toEqual(['field-notes.note.reminded']);
    expect(Object.keys(manifest!.strings.en).sort()).toEqual(Object.keys(manifest!.strings.ar).sort());
    expect(manifest!.permissions).toHaveLength(1);
    expect(manifest!.menu).toEqual([expect.objectContaining({ permission: 'field-notes-notes:read' })]);

    const server = fs.readFileSync(path.join(dir, 'server.ts'), 'utf8');
    expect(server).toContain("from 'diwan/sdk'");
    expect(server).toContain("id: 'field-notes'");
    expect(server).toContain("url: '/field-notes-notes/:id/remind'");
    const test = fs.readFileSync(path.join(dir, 'field-notes.test.ts'), 'utf8');
    expect(test).toContain("from 'diwan/sdk/testing'");
    expect(test).toContain("createTestHost({ apps: [import.meta.dirname] })");
  });

  it('derives the names from the id and keeps the resource within 40 characters', () => {
    const { dir } = scaffold('crm-lite');
    const m = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
    expect(m.name.en).toBe('Crm Lite');
    expect(m.name.ar).toBe('تطبيق Crm Lite');
    expect(scaffoldResource('a'.repeat(40))).toBe('a'.repeat(40));
  });

  it('refuses an invalid or reserved id and an existing folder', () => {
    for (const bad of ['Bad', '1abc', 'a', 'has space', 'under_score', 'x'.repeat(41)]) {
      const err = thrown(() => newApp(bad, root));
      expect(err.code).toBe('VALIDATION_ERROR');
      expect(err.details[0]).toMatchObject({ pointer: '/id', rule: 'pattern' });
    }
    expect(thrown(() => newApp('audit', root)).details[0]).toMatchObject({ pointer: '/id', rule: 'reserved' });
    fs.mkdirSync(path.join(root, 'taken'));
    expect(thrown(() => newApp('taken', root)).code).toBe('CONFLICT');
    expect(fs.readdirSync(path.join(root, 'taken'))).toEqual([]);
  });
});

describe('validateApp', () => {
  it('accepts a fresh scaffold', async () => {
    const { dir } = scaffold('good-app');
    const res = await validateApp(dir);
    expect(res.problems).toEqual([]);
    expect(res.ok).toBe(true);
    expect(res.manifest?.id).toBe('good-app');
  });

  it('lists the problems of a broken manifest with their pointers', async () => {
    const { dir } = scaffold('broken-app');
    const file = path.join(dir, 'manifest.json');
    const m = JSON.parse(fs.readFileSync(file, 'utf8'));
    m.version = 'first';
    delete m.strings.ar.noteDone;
    m.menu[0].permission = 'broken-app-notes:export';
    m.documentTypes[0].transitions[0].to = 'archived';
    fs.writeFileSync(file, JSON.stringify(m));
    const res = await validateApp(dir);
    expect(res.ok).toBe(false);
    expect(res.problems.map((p) => [p.pointer, p.rule])).toEqual(
      expect.arrayContaining([
        ['/version', 'semver'],
        ['/strings/ar/noteDone', 'missingTranslation'],
        ['/menu/0/permission', 'undeclared'],
        ['/documentTypes/0/transitions/0', 'state'],
      ]),
    );
    for (const p of res.problems) expect(p.message).toEqual(expect.any(String));

    m.version = '0.1.0';
    m.name = { en: 'Only English' };
    fs.writeFileSync(file, JSON.stringify(m));
    expect((await validateApp(dir)).problems).toEqual(expect.arrayContaining([expect.objectContaining({ pointer: '/name/ar', rule: 'required' })]));

    fs.writeFileSync(file, '{ not json');
    expect((await validateApp(dir)).problems).toEqual([expect.objectContaining({ pointer: '', rule: 'json' })]);
  });

  it('finds a route permission the manifest does not declare', async () => {
    const { dir } = scaffold('perm-app');
    const file = path.join(dir, 'server.ts');
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace("permission: 'perm-app-notes:remind'", "permission: 'perm-app-notes:nudge'"));
    const res = await validateApp(dir);
    expect(res.ok).toBe(false);
    expect(res.problems).toEqual([expect.objectContaining({ pointer: 'server.ts#/routes/0/permission', rule: 'undeclared' })]);
  });

  it('finds hooks for unknown types, a server with another id, and missing entries', async () => {
    const { dir } = scaffold('entry-app');
    const server = path.join(dir, 'server.ts');
    fs.writeFileSync(server, fs.readFileSync(server, 'utf8').replace('    note: {', '    memo: {'));
    expect((await validateApp(dir)).problems).toEqual([expect.objectContaining({ pointer: 'server.ts#/hooks/memo', rule: 'hooks' })]);

    fs.writeFileSync(server, fs.readFileSync(server, 'utf8').replace("id: 'entry-app'", "id: 'other-app'"));
    expect((await validateApp(dir)).problems).toEqual([expect.objectContaining({ pointer: '/server', rule: 'defineApp' })]);

    fs.rmSync(server);
    fs.rmSync(path.join(dir, 'web/index.html'));
    const res = await validateApp(dir);
    expect(res.problems.map((p) => [p.pointer, p.rule])).toEqual([
      ['/server', 'missing'],
      ['/web', 'missing'],
    ]);
  });
});

describe('packAppCommand', () => {
  it('packs the scaffold into a package that reads back and loads', async () => {
    const { dir } = scaffold('pack-app');
    const res = await packAppCommand(dir);
    expect(res.file).toBe(path.join(root, 'pack-app', 'pack-app-0.1.0.diwan.tgz'));
    expect(res.bytes).toBeGreaterThan(0);
    expect(res.manifest).toMatchObject({ id: 'pack-app', server: 'server.mjs', web: 'web' });

    const pkg = await readPackage(res.file, { expectedHash: res.hash });
    expect([...pkg.files.keys()].sort()).toEqual(['manifest.json', 'server.mjs', 'web/index.html']);
    const out = path.join(root, 'pack-app-installed');
    await unpackTo(pkg, out);
    const def = (await import(pathToFileURL(path.join(out, 'server.mjs')).href)).default;
    expect(def.id).toBe('pack-app');
    expect(def.routes.map((r: { method: string; url: string }) => `${r.method} ${r.url}`)).toEqual(['POST /pack-app-notes/:id/remind']);

    // The hook trims the title, and refuses one that is blank once trimmed.
    const ctx = { t: (k: string) => k };
    const doc: Record<string, unknown> = { title: '  Call the supplier ' };
    def.hooks.note.beforeCreate(doc, ctx);
    expect(doc.title).toBe('Call the supplier');
    expect(() => def.hooks.note.beforeCreate({ title: '   ' }, ctx)).toThrow(/VALIDATION_ERROR/);
  });

  it('refuses to pack an app that does not validate', async () => {
    const { dir } = scaffold('nopack-app');
    const file = path.join(dir, 'server.ts');
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace("permission: 'nopack-app-notes:remind'", "permission: 'nopack-app-notes:nudge'"));
    const err = await packAppCommand(dir).then(
      () => undefined,
      (e: unknown) => e as DiwanError,
    );
    expect(err).toBeInstanceOf(DiwanError);
    expect(err!.code).toBe('MANIFEST_INVALID');
    expect(err!.details).toEqual([expect.objectContaining({ rule: 'undeclared' })]);
    expect(fs.existsSync(path.join(root, 'nopack-app', 'nopack-app-0.1.0.diwan.tgz'))).toBe(false);
  });
});
