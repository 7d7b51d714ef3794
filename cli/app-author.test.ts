import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DiwanError } from '../core/kernel/errors/diwan-error.ts';
import { checkManifest } from '../core/apps/manifest-check.ts';
import { readPackage, unpackTo } from '../core/apps/app-package.ts';
import * as tar from 'tar';
import { diwanDependency, newApp, packAppCommand, scaffoldResource, validateApp } from './app-author.ts';
import { isUsageError } from './output.ts';

const REPO = path.resolve(import.meta.dirname, '..');

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
    expect(files).toEqual(['.gitignore', 'field-notes.test.ts', 'manifest.json', 'package.json', 'server.ts', 'web/index.html']);
    for (const f of files) expect(fs.readFileSync(path.join(dir, f), 'utf8')).not.toMatch(/__[A-Z_]+__/);

    // A complete npm project whose diwan is, by default, the diwan that scaffolded it.
    const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
    expect(pkg).toMatchObject({
      name: 'field-notes',
      private: true,
      type: 'module',
      scripts: { test: 'diwan app test', validate: 'diwan app validate', pack: 'diwan app pack --out dist/' },
      devDependencies: { diwan: `file:${REPO}` },
    });
    expect(pkg.version).toBeUndefined();
    expect(fs.readFileSync(path.join(dir, '.gitignore'), 'utf8').split('\n')).toEqual(expect.arrayContaining(['node_modules/', 'dist/', 'data/']));

    const { manifest, problems } = checkManifest(JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8')));
    expect(problems).toEqual([]);
    expect(manifest).toMatchObject({ id: 'field-notes', name: { en: 'Field Notes', ar: 'ملاحظات ميدانية' }, server: 'server.ts', web: 'web' });
    // Editors find the schema in the diwan the project installs.
    expect(manifest!.$schema).toBe('./node_modules/diwan/manifests/manifest.schema.json');
    expect(fs.existsSync(path.join(REPO, 'manifests/manifest.schema.json'))).toBe(true);
    const dt = manifest!.documentTypes![0];
    expect(dt).toMatchObject({ name: 'note', resource: 'field-notes-notes', states: ['draft', 'done'], initialState: 'draft' });
    expect(dt.fields.find((f) => f.name === 'title')).toMatchObject({ type: 'string', required: true });
    expect(dt.fields.find((f) => f.name === 'priority')).toMatchObject({ type: 'enum', filterable: true });
    expect(dt.transitions).toEqual([expect.objectContaining({ name: 'complete', from: ['draft'], to: 'done' })]);
    const family = manifest!.eventFamilies![0];
    expect(family.prefix).toBe('field-notes');
    // Manifests v2: a document type emits only the topics whose source names it, so the scaffold declares them.
    expect(family.topics.map((t) => [t.topic, t.source])).toEqual([
      ['field-notes.note.created', { type: 'note', on: 'create' }],
      ['field-notes.note.completed', { type: 'note', on: 'transition', transition: 'complete' }],
      ['field-notes.note.reminded', { on: 'operation', operation: 'POST /field-notes-notes/:id/remind' }],
    ]);
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

  it('writes the diwan dependency it is given', () => {
    const { dir } = newApp('pinned-app', path.join(root, 'pinned'), { diwan: '^0.1.0' });
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).devDependencies).toEqual({ diwan: '^0.1.0' });
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

describe('diwanDependency (app new --diwan)', () => {
  function usage(value: string) {
    try {
      diwanDependency(value, root);
    } catch (e) {
      expect(isUsageError(e)).toBe(true);
      return (e as DiwanError).details[0];
    }
    throw new Error(`expected --diwan "${value}" to be refused`);
  }

  it('defaults to the folder of the diwan that runs it', () => {
    expect(diwanDependency(undefined, root)).toBe(`file:${REPO}`);
  });

  it('turns a diwan folder or packed tarball into an absolute file: spec, and keeps a range', async () => {
    const rel = path.relative(root, REPO);
    expect(diwanDependency(rel, root)).toBe(`file:${REPO}`);
    expect(diwanDependency(`file:${rel}`, root)).toBe(`file:${REPO}`);
    // What `npm pack` makes: the package under package/.
    const stage = fs.mkdtempSync(path.join(root, 'npm-pack-'));
    fs.mkdirSync(path.join(stage, 'package'));
    fs.writeFileSync(path.join(stage, 'package/package.json'), JSON.stringify({ name: 'diwan', version: '0.1.0' }));
    await tar.create({ gzip: true, file: path.join(root, 'diwan-0.1.0.tgz'), cwd: stage }, ['package']);
    expect(diwanDependency('diwan-0.1.0.tgz', root)).toBe(`file:${path.join(root, 'diwan-0.1.0.tgz')}`);
    expect(diwanDependency('^0.1.0', root)).toBe('^0.1.0');
    expect(diwanDependency('0.1.0', root)).toBe('0.1.0');
  });

  it('refuses with a usage error on --diwan what is not diwan', async () => {
    expect(usage('')).toMatchObject({ in: 'argv', pointer: '--diwan', rule: 'required' });
    expect(usage('  ')).toMatchObject({ pointer: '--diwan', rule: 'required' });
    expect(usage('latest')).toMatchObject({ pointer: '--diwan', rule: 'format', message: expect.stringContaining('"latest"') });
    expect(usage('not a range!')).toMatchObject({ rule: 'format' });
    expect(usage('./nowhere')).toMatchObject({ rule: 'notFound', message: expect.stringContaining(path.join(root, 'nowhere')) });
    expect(usage('nowhere.tgz')).toMatchObject({ rule: 'notFound' });
    // A folder or file that exists but is not diwan: another npm project, a text file, an app package.
    const other = path.join(root, 'other-project');
    fs.mkdirSync(other);
    fs.writeFileSync(path.join(other, 'package.json'), JSON.stringify({ name: 'other' }));
    expect(usage(other)).toMatchObject({ rule: 'notDiwan' });
    fs.mkdirSync(path.join(root, 'empty-folder'));
    expect(usage('empty-folder')).toMatchObject({ rule: 'notDiwan' });
    fs.writeFileSync(path.join(root, 'notes.txt'), 'hello');
    expect(usage('notes.txt')).toMatchObject({ rule: 'notDiwan' });
    const { dir } = scaffold('packed-app');
    const pkg = await packAppCommand(dir);
    expect(usage(pkg.file)).toMatchObject({ rule: 'notDiwan', message: expect.stringContaining('is not diwan') });
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
    // Labels: a field without one, a state named in neither language.
    delete m.documentTypes[0].fields[0].label;
    delete m.strings.en['state.done'];
    delete m.strings.ar['state.done'];
    fs.writeFileSync(file, JSON.stringify(m));
    const res = await validateApp(dir);
    expect(res.ok).toBe(false);
    expect(res.problems.map((p) => [p.pointer, p.rule])).toEqual(
      expect.arrayContaining([
        ['/version', 'semver'],
        ['/strings/ar/noteDone', 'missingTranslation'],
        ['/menu/0/permission', 'undeclared'],
        ['/documentTypes/0/transitions/0', 'state'],
        ['/documentTypes/0/fields/0/label', 'missingLabel'],
        ['/strings/en/state.done', 'missingLabel'],
        ['/strings/ar/state.done', 'missingLabel'],
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

  it('lists each rule whose expression does not check, with its pointer', async () => {
    const { dir } = scaffold('rules-app');
    const file = path.join(dir, 'manifest.json');
    const m = JSON.parse(fs.readFileSync(file, 'utf8'));
    const fields = m.documentTypes[0].fields;
    fields.push({ name: 'shout', type: 'string', label: { en: 'Shout', ar: 'صياح' }, compute: 'doc.title + 1' });
    m.documentTypes[0].validations = [{ rule: 'doc.title', message: { en: 'A title', ar: 'عنوان' } }];
    m.documentTypes[0].transitions[0].guard = { rule: 'doc.title ==', message: { en: 'Ready', ar: 'جاهز' } };
    fs.writeFileSync(file, JSON.stringify(m));
    const res = await validateApp(dir);
    expect(res.ok).toBe(false);
    expect(res.problems.map((p) => [p.pointer, p.rule])).toEqual([
      [`/documentTypes/0/fields/${fields.length - 1}/compute`, 'expressionType'],
      ['/documentTypes/0/validations/0/rule', 'expressionType'],
      ['/documentTypes/0/transitions/0/guard/rule', 'expression'],
    ]);
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

  it('writes into a folder given as --out (ending in a slash, or existing) under the default name', async () => {
    const { dir } = scaffold('dist-app');
    const res = await packAppCommand(dir, path.join(dir, 'dist') + '/');
    expect(res.file).toBe(path.join(dir, 'dist', 'dist-app-0.1.0.diwan.tgz'));
    expect(fs.existsSync(res.file)).toBe(true);
    const again = await packAppCommand(dir, path.join(dir, 'dist'));
    expect(again.file).toBe(res.file);
    expect(again.hash).toBe(res.hash);
    // The package holds the app, never the project around it (package.json, tests, dist/).
    expect([...(await readPackage(res.file)).files.keys()].sort()).toEqual(['manifest.json', 'server.mjs', 'web/index.html']);
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
