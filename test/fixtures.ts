// Small apps written into a temp folder, for platform tests.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Manifest } from '../manifests/manifest.schema.ts';
import type { AppSource } from '../core/apps/app-source.ts';
import { validManifest } from '../core/apps/app-source.ts';

/** A label in English and Arabic. */
export const bi = (en: string, ar: string) => ({ en, ar });

export function tempDir(prefix = 'diwan-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export function libraryManifest(version = '1.0.0', extra: Partial<Manifest> = {}): Manifest {
  return {
    id: 'library', version, host: '^0.1.0',
    name: bi('Library', 'المكتبة'), description: bi('Books and lending', 'الكتب والإعارة'),
    strings: {
      en: { title: 'Library', books_one: '{{count}} book', books_other: '{{count}} books', 'state.shelved': 'On the shelf', 'state.lent': 'Lent' },
      ar: { title: 'المكتبة', books_one: 'كتاب واحد', books_other: '{{count}} كتاب', 'state.shelved': 'على الرف', 'state.lent': 'مُعار' },
    },
    permissions: [{ resource: 'books', action: 'delete', role: 'Admin', description: bi('Delete books', 'حذف الكتب') }],
    menu: [
      { id: 'books', label: bi('Books', 'الكتب'), documentType: 'book', permission: 'books:read', order: 5 },
      { id: 'newBook', label: bi('New book', 'كتاب جديد'), path: '/books/new', permission: 'books:create', order: 6 },
    ],
    documentTypes: [{
      name: 'book', resource: 'books', idPrefix: 'bk', label: bi('Book', 'كتاب'), labelPlural: bi('Books', 'الكتب'),
      fields: [
        { name: 'title', type: 'string', required: true, maxLength: 200, filterable: true, label: bi('Title', 'العنوان') },
        { name: 'pages', type: 'integer', minimum: 1, label: bi('Pages', 'عدد الصفحات') },
        { name: 'genre', type: 'enum', values: ['novel', 'poetry', 'history'], filterable: true, label: bi('Genre', 'النوع الأدبي') },
        { name: 'published', type: 'date', label: bi('Published', 'تاريخ النشر') },
        { name: 'price', type: 'money', label: bi('Price', 'السعر') },
        { name: 'available', type: 'boolean', filterable: true, label: bi('Available', 'متاح') },
      ],
      states: ['shelved', 'lent'], initialState: 'shelved',
      transitions: [
        { name: 'lend', label: bi('Lend', 'إعارة'), from: ['shelved'], to: 'lent' },
        { name: 'giveBack', label: bi('Give back', 'إرجاع'), from: ['lent'], to: 'shelved' },
      ],
    }],
    // v2: a document type emits only the topics whose source names it.
    eventFamilies: [{
      family: 'library', prefix: 'library', label: bi('Library', 'المكتبة'),
      topics: [
        { topic: 'library.book.created', description: bi('A book was added.', 'أُضيف كتاب.'), source: { on: 'create', type: 'book' } },
        { topic: 'library.book.updated', description: bi('A book was changed.', 'عُدّل كتاب.'), source: { on: 'update', type: 'book' } },
        { topic: 'library.book.deleted', description: bi('A book was removed.', 'حُذف كتاب.'), source: { on: 'delete', type: 'book' } },
        { topic: 'library.book.lent', description: bi('A book was lent.', 'أُعير كتاب.'), source: { on: 'transition', type: 'book', transition: 'lend' } },
        { topic: 'library.book.returned', description: bi('A book was given back.', 'أُعيد كتاب.'), source: { on: 'transition', type: 'book', transition: 'giveBack' } },
      ],
    }],
    ...extra,
  } as Manifest;
}

export function loansManifest(range = '^1.0.0'): Manifest {
  return {
    id: 'loans', version: '1.0.0', host: '^0.1.0', dependencies: { library: range },
    name: bi('Loans', 'الإعارات'), description: bi('Who has which book', 'من استعار أي كتاب'),
    strings: { en: {}, ar: {} },
    documentTypes: [{
      name: 'loan', resource: 'loans', idPrefix: 'ln', label: bi('Loan', 'إعارة'),
      fields: [{ name: 'bookId', type: 'reference', to: 'library/book', required: true, label: bi('Book', 'الكتاب') }, { name: 'borrower', type: 'string', required: true, label: bi('Borrower', 'المستعير') }],
    }],
    eventFamilies: [{ family: 'loans', prefix: 'loans', label: bi('Loans', 'الإعارات'), topics: [] }],
  } as Manifest;
}

/** Writes an app folder (manifest.json and, if given, server.ts) and returns its source. */
export function writeApp(root: string, manifest: Manifest, server?: string): AppSource {
  const dir = path.join(root, `${manifest.id}-${manifest.version}`);
  fs.mkdirSync(dir, { recursive: true });
  const m = server ? { ...manifest, server: 'server.ts' } : manifest;
  fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(m, null, 2));
  if (server) fs.writeFileSync(path.join(dir, 'server.ts'), server);
  return { manifest: validManifest(m), dir, origin: 'package' };
}
