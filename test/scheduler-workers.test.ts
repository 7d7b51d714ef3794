// The scheduler with several workers, and with a firing that fails. Each (document, schedule,
// date value) fires once: the claim is a row inserted in the transaction that writes the event,
// so two workers on one PostgreSQL database ticking over the same due documents at the same
// time fire each once between them (each skips what the other is firing at that moment). A firing that fails is rolled back (left for the next tick)
// and the rest of the tick still runs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Host } from '../core/host.ts';
import { ManualClock } from '../core/kernel/clock.ts';
import { databases } from './db.ts';
import { pgHosts, type PgHosts } from './pg-hosts.ts';
import { createCompany, invoiceBody, invoicingSources, type TestCompany } from './helpers.ts';

const DAY = 86_400_000;
const START = Date.UTC(2026, 2, 10, 9, 0, 0);
const DUE = '2026-03-10';

/** Sent invoices due today (overdue from tomorrow); their ids, in creation order. */
async function sentInvoices(host: Host, co: TestCompany, n: number): Promise<string[]> {
  const c = co.as('Owner');
  const customer = await c.post('/api/v1/customers', { name: 'Acme' });
  expect(customer.statusCode, customer.body).toBe(201);
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const inv = await c.post('/api/v1/invoices', invoiceBody(customer.json().data.id, { date: DUE, dueDate: DUE }));
    expect(inv.statusCode, inv.body).toBe(201);
    const id = inv.json().data.id as string;
    const sent = await c.post(`/api/v1/invoices/${id}/send`);
    expect(sent.statusCode, sent.body).toBeLessThan(300);
    ids.push(id);
  }
  return ids;
}

/** invoice.overdue events per invoice id. */
async function overdueByInvoice(host: Host, companyId: string): Promise<Map<string, number>> {
  const id = host.storage.db.dialect.jsonField('data', 'id', 'text');
  const rows = await host.storage.db.all<{ id: string; n: number }>(
    `SELECT ${id} AS id, count(*) AS n FROM outbox WHERE company_id = ? AND topic = 'invoice.overdue' GROUP BY ${id}`,
    [companyId],
  );
  return new Map(rows.map((r) => [r.id, Number(r.n)]));
}

describe.each(databases())('a failing firing ($name)', ({ name, buildHost }) => {
  let host: Host;
  let clock: ManualClock;
  let co: TestCompany;

  beforeAll(async () => {
    clock = new ManualClock(START);
    host = await buildHost({ clock, sources: invoicingSources(), config: { rateLimitPerMinute: 0 } });
    co = await createCompany(host);
  });
  afterAll(() => host?.close());

  it('does not stop the rest of the tick; it is not claimed, and fires on a later tick once it can', async () => {
    const ids = await sentInvoices(host, co, 4);
    // The database refuses the first invoice's firing (a real failure inside the firing's transaction).
    const refused = ids[0];
    const db = host.storage.db;
    if (name === 'sqlite') {
      await db.exec(`CREATE TRIGGER refuse_one BEFORE INSERT ON schedule_firings WHEN NEW.doc_id = '${refused}' BEGIN SELECT RAISE(ABORT, 'refused for the test'); END`);
    } else {
      await db.exec(`CREATE FUNCTION refuse_one() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.doc_id = '${refused}' THEN RAISE EXCEPTION 'refused for the test'; END IF; RETURN NEW; END $$;
        CREATE TRIGGER refuse_one BEFORE INSERT ON schedule_firings FOR EACH ROW EXECUTE FUNCTION refuse_one();`);
    }
    clock.advance(2 * DAY);
    expect(await host.scheduler.tick()).toBe(3);
    expect(host.scheduler.lastTickFailures).toBe(1);
    expect(String(host.scheduler.lastTickErrors[0])).toContain('refused for the test');
    const metrics = await host.app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.body).toMatch(/^diwan_scheduler_failures_total 1$/m);
    let events = await overdueByInvoice(host, co.company.id);
    expect(ids.map((id) => events.get(id) ?? 0)).toEqual([0, 1, 1, 1]);

    await db.exec(name === 'sqlite' ? 'DROP TRIGGER refuse_one' : 'DROP TRIGGER refuse_one ON schedule_firings; DROP FUNCTION refuse_one()');
    expect(await host.scheduler.tick()).toBe(1);
    expect(host.scheduler.lastTickFailures).toBe(0);
    expect(await host.scheduler.tick()).toBe(0);
    events = await overdueByInvoice(host, co.company.id);
    expect(ids.map((id) => events.get(id) ?? 0)).toEqual([1, 1, 1, 1]);
  });

  it('a whole batch of failing firings does not hide the due documents behind it', async () => {
    const ids = await sentInvoices(host, co, 5);
    clock.advance(2 * DAY);
    const [a, b] = ids;
    const db = host.storage.db;
    if (name === 'sqlite') {
      await db.exec(`CREATE TRIGGER refuse_two BEFORE INSERT ON schedule_firings WHEN NEW.doc_id IN ('${a}', '${b}') BEGIN SELECT RAISE(ABORT, 'refused for the test'); END`);
    } else {
      await db.exec(`CREATE FUNCTION refuse_two() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.doc_id IN ('${a}', '${b}') THEN RAISE EXCEPTION 'refused for the test'; END IF; RETURN NEW; END $$;
        CREATE TRIGGER refuse_two BEFORE INSERT ON schedule_firings FOR EACH ROW EXECUTE FUNCTION refuse_two();`);
    }
    try {
      // Batches of 2: the first batch is the two refused firings (oldest first), tick after tick.
      const invoices = host.runtime.get('invoicing')!.docTypes.get('invoice')!;
      const failed: string[] = [];
      const fired = await invoices.fireDue(clock.now(), (id) => host.companies.get(id), (_err, f) => failed.push(f.docId), 2);
      expect(failed).toEqual([a, b]);
      expect(fired).toBe(3);
      const events = await overdueByInvoice(host, co.company.id);
      expect(ids.map((id) => events.get(id) ?? 0)).toEqual([0, 0, 1, 1, 1]);
    } finally {
      await db.exec(name === 'sqlite' ? 'DROP TRIGGER refuse_two' : 'DROP TRIGGER refuse_two ON schedule_firings; DROP FUNCTION refuse_two()');
    }
  });
});

describe('two workers on one PostgreSQL database', () => {
  let pg: PgHosts;
  let clock: ManualClock;
  let co: TestCompany;

  beforeAll(async () => {
    clock = new ManualClock(START);
    // An API process that writes the documents, and two worker processes.
    pg = await pgHosts(3, (i) => ({ clock, sources: invoicingSources(), config: { rateLimitPerMinute: 0, roles: i === 0 ? { api: true, worker: false } : { api: false, worker: true } } }));
    co = await createCompany(pg.hosts[0]);
  });
  afterAll(() => pg?.close());

  it('fires each due document once between them when both tick at the same time', async () => {
    const [api, w1, w2] = pg.hosts;
    const ids = await sentInvoices(api, co, 60);
    clock.advance(2 * DAY);
    // Both at once, twice over (the second pair finds what the first left, which is nothing).
    const first = await Promise.all([w1.scheduler.tick(), w2.scheduler.tick()]);
    const second = await Promise.all([w1.scheduler.tick(), w2.scheduler.tick()]);
    console.log(`two workers ticking at once fired ${first.join(' + ')} (then ${second.join(' + ')}) of ${ids.length}`);
    expect([...first, ...second].reduce((a, b) => a + b, 0)).toBe(ids.length);
    expect(w1.scheduler.lastTickFailures + w2.scheduler.lastTickFailures).toBe(0);
    const events = await overdueByInvoice(api, co.company.id);
    expect(ids.filter((id) => events.get(id) !== 1)).toEqual([]);
    expect([...events.values()].reduce((a, b) => a + b, 0)).toBe(ids.length);
    expect(Number((await api.storage.db.get<{ n: number }>("SELECT count(*) AS n FROM schedule_firings WHERE company_id = ?", [co.company.id]))!.n)).toBe(ids.length);
  }, 120_000);
});
