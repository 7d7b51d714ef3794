// The baseline of bench/http.ts: bare Fastify + better-sqlite3, no auth, no validation, no
// audit or events, on a file database with the host's pragmas and the same table shape.
// It answers the same list query (count + LIMIT/OFFSET, the same JSON envelope, spliced from
// the stored JSON as the host does) and inserts an invoice row as one plain INSERT.
//   node --import tsx bench/lib/bare-server.ts <bare.db> <company id>
import { randomBytes } from 'node:crypto';
import Fastify from 'fastify';
import Database from 'better-sqlite3';

const [dbFile, companyId] = process.argv.slice(2);
if (!dbFile || !companyId) throw new Error('usage: bare-server.ts <bare.db> <company id>');

const db = new Database(dbFile);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.pragma('foreign_keys = ON');
db.pragma('busy_timeout = 5000');

const customers = '"doc_invoicing_customer"';
const invoices = '"doc_invoicing_invoice"';
const count = db.prepare(`SELECT count(*) AS n FROM ${customers} WHERE company_id = ?`).pluck();
const rows = db.prepare(`SELECT id, state, data, created_at, updated_at FROM ${customers} WHERE company_id = ? ORDER BY seq LIMIT ? OFFSET ?`);
const insert = db.prepare(`INSERT INTO ${invoices} (id, company_id, state, data, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`);
// For the "same rows" reference: what the host writes per create besides the document.
const customerById = db.prepare(`SELECT id FROM ${customers} WHERE company_id = ? AND id = ?`);
const auditInsert = db.prepare(
  `INSERT INTO audit_log (id, company_id, actor_type, actor_id, app_id, action, resource, resource_id, before_json, after_json, request_id, at)
   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
);
const outboxInsert = db.prepare('INSERT INTO outbox (id, company_id, topic, data, test, created_at) VALUES (?, ?, ?, ?, 0, ?)');

interface Row {
  id: string;
  state: string | null;
  data: string;
  created_at: string;
  updated_at: string;
}

const toJson = (r: Row) => {
  const inner = r.data.length > 2 ? `${r.data.slice(1, -1)},` : '';
  const state = r.state !== null ? `"state":${JSON.stringify(r.state)},` : '';
  return `{"id":"${r.id}",${state}${inner}"createdAt":"${r.created_at}","updatedAt":"${r.updated_at}"}`;
};

const app = Fastify({ logger: false });

app.get('/api/v1/customers', (request, reply) => {
  const q = request.query as { page?: string; pageSize?: string };
  const page = Number(q.page) || 1;
  const pageSize = Number(q.pageSize) || 20;
  const total = count.get(companyId) as number;
  const list = rows.all(companyId, pageSize, (page - 1) * pageSize) as Row[];
  reply.type('application/json; charset=utf-8');
  return reply.send(`{"data":[${list.map(toJson).join(',')}],"total":${total},"page":${page},"pageSize":${pageSize}}`);
});

app.post('/api/v1/invoices', (request, reply) => {
  const now = new Date().toISOString();
  const id = `inv_${randomBytes(10).toString('hex')}`;
  const data = JSON.stringify(request.body);
  insert.run(id, companyId, 'draft', data, now, now);
  reply.code(201).type('application/json; charset=utf-8');
  return reply.send(`{"data":${toJson({ id, state: 'draft', data, created_at: now, updated_at: now })}}`);
});

// Not a baseline of the target: the same SQL the host runs per create (reference lookup, the
// document, its audit row, two outbox rows, one transaction), with none of the host's JS around
// it. It tells how much of the create cost is the write design rather than the code path.
const writeAll = db.transaction((id: string, data: string, now: string, customerId: string) => {
  if (!customerById.get(companyId, customerId)) throw new Error('unknown customer');
  insert.run(id, companyId, 'draft', data, now, now);
  const doc = toJson({ id, state: 'draft', data, created_at: now, updated_at: now });
  const auditId = `aud_${randomBytes(10).toString('hex')}`;
  auditInsert.run(auditId, companyId, 'key', 'bench', 'invoicing', 'create', 'invoices', id, null, doc, 'req-1', now);
  outboxInsert.run(`evt_${randomBytes(10).toString('hex')}`, companyId, 'invoice.created', doc, now);
  const auditRow = `{"id":"${auditId}","companyId":"${companyId}","actor":{"type":"key","id":"bench"},"appId":"invoicing","action":"create","resource":"invoices","resourceId":"${id}","before":null,"after":${doc},"requestId":"req-1","at":"${now}"}`;
  outboxInsert.run(`evt_${randomBytes(10).toString('hex')}`, companyId, 'audit.invoices.create', auditRow, now);
  return doc;
});

app.post('/api/v1/invoices-same-rows', (request, reply) => {
  const now = new Date().toISOString();
  const id = `inv_${randomBytes(10).toString('hex')}`;
  const body = request.body as { customerId: string };
  const doc = writeAll(id, JSON.stringify(body), now, body.customerId);
  reply.code(201).type('application/json; charset=utf-8');
  return reply.send(`{"data":${doc}}`);
});

await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
process.send?.({ port: typeof address === 'object' && address ? address.port : 0, pid: process.pid });

process.once('SIGTERM', async () => {
  await app.close();
  db.close();
  process.exit(0);
});
