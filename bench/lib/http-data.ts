// Data for bench/http.ts: one company with 10,000 invoicing customers and 10,000 documents of a
// manifest-only app written into the temp folder, an Owner key, and a bare database with the
// same table shape and the same customer rows for the baseline server.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { buildHost } from '../../core/host.ts';
import { firstPartySources, validManifest, type AppSource } from '../../core/apps/app-source.ts';
import type { Caller } from '../../core/apps/doc-type.ts';
import { sqliteDialect } from '../../core/storage/dialect.ts';
import { DocumentTable, docTableName } from '../../core/storage/repos/documents.ts';
import type { Db } from '../../core/storage/db.ts';

export const CONTACTS_APP_ID = 'bench-contacts';
export const CONTACTS_RESOURCE = 'bench-contacts';

export interface HttpBenchData {
  dataDir: string;
  appsDir: string;
  bareDb: string;
  companyId: string;
  key: string;
  customers: number;
  customerIds: string[];
}

/** A manifest-only app: one document type shaped like invoicing's customer (4 strings, 2 filterable). */
export function writeContactsApp(appsDir: string): string {
  const dir = path.join(appsDir, CONTACTS_APP_ID);
  fs.mkdirSync(dir, { recursive: true });
  const label = (en: string, ar: string) => ({ en, ar });
  const manifest = {
    id: CONTACTS_APP_ID,
    version: '1.0.0',
    host: '^0.1.0',
    name: label('Bench contacts', 'جهات اتصال للقياس'),
    description: label('A manifest-only app used by the HTTP benchmark.', 'تطبيق بلا شيفرة خادم يستعمله قياس الأداء.'),
    strings: { en: { title: 'Bench contacts' }, ar: { title: 'جهات اتصال للقياس' } },
    eventFamilies: [{ family: 'bench contacts', prefix: 'benchcontact', label: label('Bench contacts', 'جهات اتصال للقياس'), topics: [] }],
    documentTypes: [
      {
        name: 'contact',
        resource: CONTACTS_RESOURCE,
        idPrefix: 'bct',
        label: label('Contact', 'جهة اتصال'),
        labelPlural: label('Contacts', 'جهات الاتصال'),
        fields: [
          { name: 'name', type: 'string', required: true, minLength: 1, maxLength: 200, filterable: true, label: label('Name', 'الاسم') },
          { name: 'email', type: 'string', maxLength: 254, filterable: true, label: label('Email', 'البريد الإلكتروني') },
          { name: 'phone', type: 'string', maxLength: 40, label: label('Phone', 'الهاتف') },
          { name: 'taxId', type: 'string', maxLength: 40, label: label('Tax number', 'الرقم الضريبي') },
        ],
      },
    ],
  };
  fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2));
  return dir;
}

/** What the host server loads: invoicing (first party) and the manifest-only app as a package. */
export function httpBenchSources(appsDir: string): AppSource[] {
  const dir = path.join(appsDir, CONTACTS_APP_ID);
  const manifest = validManifest(JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8')));
  return [...firstPartySources().filter((s) => s.manifest.id === 'invoicing'), { manifest, dir, origin: 'package' }];
}

function party(i: number) {
  return {
    name: `Customer ${String(i).padStart(5, '0')} Trading LLC`,
    email: `accounts${i}@customer${i}.example.com`,
    phone: `+9665${String(10_000_000 + i).slice(-8)}`,
    taxId: `3${String(100_000_000_000_000 + i * 7919).slice(-14)}`,
  };
}

/** Seeds `dataDir` through the DocType API, in one transaction per type, then builds the bare copy. */
export async function seedHttpBench(dataDir: string, customers = 10_000): Promise<HttpBenchData> {
  const appsDir = path.join(dataDir, 'bench-apps');
  writeContactsApp(appsDir);
  const host = await buildHost({ config: { dataDir, rateLimitPerMinute: 0 }, sources: httpBenchSources(appsDir), defaultApps: [], logger: false });
  try {
    const { company } = await host.createCompany({ name: 'Bench Trading Co', currency: 'SAR', apps: ['invoicing', CONTACTS_APP_ID] });
    const actor = { type: 'cli' as const, id: 'bench' };
    const key = (await host.keys.create({ companyId: company.id, actor, appId: 'core' }, { role: 'Owner', scopes: ['*'], name: 'bench owner' })).key;
    const caller: Caller = { company, actor, lang: 'en', requestId: null };
    const customerType = host.runtime.get('invoicing')!.docTypes.get('customer')!;
    const contactType = host.runtime.get(CONTACTS_APP_ID)!.docTypes.get('contact')!;
    const customerIds: string[] = [];
    await host.storage.db.transaction(async () => {
      for (let i = 0; i < customers; i++) customerIds.push((await customerType.create(caller, party(i))).id);
    });
    await host.storage.db.transaction(async () => {
      for (let i = 0; i < customers; i++) await contactType.create(caller, party(i));
    });
    await host.storage.db.exec('PRAGMA wal_checkpoint(TRUNCATE)');

    // The baseline's database: same DDL (columns and indexes) and the very same customer rows.
    const bareDb = path.join(dataDir, 'bare', 'bare.db');
    fs.mkdirSync(path.dirname(bareDb), { recursive: true });
    const bare = new Database(bareDb);
    bare.pragma('journal_mode = WAL');
    bare.pragma('synchronous = NORMAL');
    const customersTable = docTableName('invoicing', 'customer');
    const invoicesTable = docTableName('invoicing', 'invoice');
    // The same DDL the host's storage gives these tables.
    const shape = { dialect: sqliteDialect } as Db;
    for (const t of [
      new DocumentTable(shape, customersTable, [{ name: 'name', kind: 'text' }, { name: 'email', kind: 'text' }]),
      new DocumentTable(shape, invoicesTable, [{ name: 'customerId', kind: 'text' }]),
    ]) {
      const def = t.definition();
      bare.exec(sqliteDialect.createTable(def));
      for (const [name, ix] of Object.entries(def.indexes ?? {})) bare.exec(sqliteDialect.createIndex(def.name, name, ix));
    }
    bare.prepare('ATTACH DATABASE ? AS h').run(path.join(dataDir, 'diwan.db'));
    // Row by row in the host's order (ORDER BY turns off SQLite's transfer optimisation, which
    // would copy the indexes packed ~98% full): the baseline's indexes are then built as the
    // host's were, ~88–91% full, and its count reads as many pages.
    bare.exec(`INSERT INTO main."${customersTable}" SELECT * FROM h."${customersTable}" ORDER BY seq`);
    // Empty copies of the host's audit and outbox tables, with their indexes, for the "same rows" reference.
    for (const t of ['audit_log', 'outbox']) {
      const ddl = bare.prepare(`SELECT sql FROM h.sqlite_master WHERE tbl_name = ? AND sql IS NOT NULL`).pluck().all(t) as string[];
      for (const stmt of ddl) bare.exec(stmt);
    }
    bare.exec('DETACH DATABASE h');
    bare.pragma('wal_checkpoint(TRUNCATE)');
    bare.close();
    return { dataDir, appsDir, bareDb, companyId: company.id, key, customers, customerIds };
  } finally {
    await host.close();
  }
}
