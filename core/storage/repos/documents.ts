// The table of one document type: the columns every document has, its JSON body, and indexes
// for the fields it can be filtered by and the dates its schedules watch. One instance per
// document type, shared by every company (each row carries its company).
import type { Db } from '../db.ts';
import { ident, type JsonKind } from '../dialect.ts';
import type { TableDef } from '../schema.ts';
import { migrate } from '../migrate.ts';

export interface DocRow {
  id: string;
  state: string | null;
  /** The body as JSON text. */
  data: string;
  created_at: string;
  updated_at: string;
  state_changed_at: string;
}

/** A manifest's test on one field (exactly one comparison). */
export interface Condition {
  field: string;
  equals?: string | number | boolean;
  in?: (string | number)[];
  present?: boolean;
  below?: number;
  above?: number;
}

export interface FilterField {
  name: string;
  kind: JsonKind;
}

/** `doc_<app>_<type>`, lower case. */
export function docTableName(appId: string, typeName: string): string {
  return `doc_${appId.replace(/-/g, '_')}_${typeName.toLowerCase()}`;
}

/** What a list shows of a document: a page need not read the column only writes use. */
export type ListRow = Omit<DocRow, 'state_changed_at'>;
const LIST_COLUMNS = 'id, state, data, created_at, updated_at';
const LIST_SELECT = `SELECT ${LIST_COLUMNS} FROM`;
const SELECT = `SELECT ${LIST_COLUMNS}, state_changed_at FROM`;

/** The columns of the dates every document has. */
const SYSTEM_DATES: Record<string, string> = { createdAt: 'created_at', updatedAt: 'updated_at', stateChangedAt: 'state_changed_at' };

export class DocumentTable {
  private readonly t: string;
  /** The texts of the statements a child's write runs on each parent it moves, made once: a text built per call is hashed again to find its prepared statement. */
  private readonly lockedSql: string;
  private readonly updateDataSql: string;

  constructor(
    private db: Db,
    readonly table: string,
    private filters: FilterField[],
    /** Dates that schedules watch: body fields (compared with a day) and the system times (createdAt, updatedAt, stateChangedAt). */
    private dates: string[] = [],
  ) {
    if (!/^[a-z][a-z0-9_]*$/.test(table)) throw new Error(`unsafe table name ${table}`);
    this.t = ident(db.dialect.stored(table));
    this.lockedSql = `${SELECT} ${this.t} WHERE company_id = ? AND id = ? ${db.dialect.forUpdate}`;
    this.updateDataSql = `UPDATE ${this.t} SET data = ?, updated_at = ? WHERE company_id = ? AND id = ?`;
  }

  private field(name: string): string {
    if (name === 'state') return 'state';
    const f = this.filters.find((x) => x.name === name);
    return this.db.dialect.jsonField('data', name, f?.kind ?? 'text');
  }

  definition(): TableDef {
    const indexes: TableDef['indexes'] = {
      [`${this.table}_company`]: { columns: ['company_id', 'seq'] },
      [`${this.table}_state`]: { columns: ['company_id', 'state', 'seq'] },
    };
    for (const f of this.filters) indexes[`${this.table}_f_${f.name.toLowerCase()}`] = { columns: ['company_id', this.field(f.name), 'seq'] };
    for (const d of this.dates) indexes[`${this.table}_d_${d.toLowerCase()}`] = { columns: ['state', SYSTEM_DATES[d] ?? this.db.dialect.jsonField('data', d, 'text')] };
    return {
      name: this.table,
      columns: {
        seq: { type: 'serial' },
        id: { type: 'text', notNull: true, unique: true },
        company_id: { type: 'text', notNull: true },
        state: { type: 'text' },
        data: { type: 'text', notNull: true },
        created_at: { type: 'text', notNull: true },
        updated_at: { type: 'text', notNull: true },
        // When the document entered its state (schedules such as "pending longer than 3 days").
        state_changed_at: { type: 'text', notNull: true, default: '' },
      },
      indexes,
    };
  }

  /** Creates the table and its indexes where missing. */
  async ensure(): Promise<void> {
    await migrate(this.db, { tables: [this.definition()] });
  }

  /**
   * The id of a company's document, other than `exceptId`, whose reference field `field` (of a
   * line of `lines`, when given) names `id`: what a delete of that document must not orphan.
   */
  async findReferencing(companyId: string, field: string, id: string, lines?: string, exceptId = ''): Promise<string | undefined> {
    if (!lines) return this.findOther(companyId, [[field, id]], exceptId);
    const where = this.db.dialect.jsonLinesHave('data', lines, field);
    const row = await this.db.get<{ id: string }>(`SELECT id FROM ${this.t} WHERE company_id = ? AND ${where} AND id <> ? LIMIT 1`, [companyId, id, exceptId]);
    return row?.id;
  }

  // Writes answer the statement's own promise rather than one of their own: under a unit of work
  // every promise made pays the async context's hooks.
  insert(companyId: string, r: DocRow): Promise<unknown> {
    return this.db.run(`INSERT INTO ${this.t} (id, company_id, state, data, created_at, updated_at, state_changed_at) VALUES (?, ?, ?, ?, ?, ?, ?)`, [
      r.id, companyId, r.state, r.data, r.created_at, r.updated_at, r.state_changed_at,
    ]);
  }

  get(companyId: string, id: string): Promise<DocRow | undefined> {
    return this.db.get<DocRow>(`${SELECT} ${this.t} WHERE company_id = ? AND id = ?`, [companyId, id]);
  }

  /**
   * The row, locked to the end of the current transaction (begun here in a lazy unit of work):
   * another writer of the same document waits, then reads what this one wrote.
   */
  getLocked(companyId: string, id: string): Promise<DocRow | undefined> {
    if (this.db.inTransaction()) return this.db.get<DocRow>(this.lockedSql, [companyId, id]);
    return this.db.transaction(() => this.db.get<DocRow>(this.lockedSql, [companyId, id]));
  }

  /**
   * The id of a company's document, other than `exceptId`, whose fields equal the values given
   * and whose state is not one of `exceptStates` (a uniqueness check).
   */
  async findOther(companyId: string, equals: [field: string, value: string | number | boolean][], exceptId?: string, exceptStates: readonly string[] = []): Promise<string | undefined> {
    const kind = (v: unknown): JsonKind => (typeof v === 'number' ? 'number' : typeof v === 'boolean' ? 'boolean' : 'text');
    const where = equals.map(([f, v]) => `${this.db.dialect.jsonField('data', f, kind(v))} = ?`).join(' AND ');
    const states = exceptStates.length ? ` AND (state IS NULL OR state NOT IN (${exceptStates.map(() => '?').join(', ')}))` : '';
    const row = await this.db.get<{ id: string }>(`SELECT id FROM ${this.t} WHERE company_id = ? AND ${where} AND id <> ?${states} LIMIT 1`, [
      companyId, ...equals.map(([, v]) => (typeof v === 'boolean' ? Number(v) : v)), exceptId ?? '', ...exceptStates,
    ]);
    return row?.id;
  }

  update(companyId: string, r: DocRow): Promise<unknown> {
    return this.db.run(`UPDATE ${this.t} SET state = ?, data = ?, updated_at = ?, state_changed_at = ? WHERE company_id = ? AND id = ?`, [
      r.state, r.data, r.updated_at, r.state_changed_at, companyId, r.id,
    ]);
  }

  /**
   * A body and its time, the state left as it is (a parent's totals moved by a child's write):
   * the indexes on the state and its time are not rewritten.
   */
  updateData(companyId: string, id: string, data: string, updatedAt: string): Promise<unknown> {
    return this.db.run(this.updateDataSql, [data, updatedAt, companyId, id]);
  }

  async remove(companyId: string, id: string): Promise<void> {
    await this.db.run(`DELETE FROM ${this.t} WHERE company_id = ? AND id = ?`, [companyId, id]);
  }

  async purgeCompany(companyId: string): Promise<number> {
    return (await this.db.run(`DELETE FROM ${this.t} WHERE company_id = ?`, [companyId])).changes;
  }

  /**
   * A page of a company's documents with equality filters (field names sorted by the caller), in
   * creation order or by a filterable field or the state (`order.field`), ties in creation order.
   */
  async page(companyId: string, filters: [string, unknown][], page: number, pageSize: number, order?: { field: string; desc: boolean }): Promise<{ rows: ListRow[]; total: number }> {
    const args: unknown[] = [companyId];
    for (const [, v] of filters) args.push(typeof v === 'boolean' ? Number(v) : v);
    const sql = this.pageSql(filters, order);
    const total = (await this.db.get<{ n: number }>(sql.count, args))!.n;
    const rows = await this.db.all<ListRow>(sql.rows, [...args, pageSize, (page - 1) * pageSize]);
    return { rows, total: Number(total) };
  }

  /** The list's two statements by filter names and order (few per type), built once: the list is the hot path. */
  private pageSqls = new Map<string, { count: string; rows: string }>();

  private pageSql(filters: [string, unknown][], order?: { field: string; desc: boolean }): { count: string; rows: string } {
    const dir = order?.desc ? 'DESC' : 'ASC';
    const field = order?.field ?? 'seq';
    const key = filters.length ? `${filters.map(([f]) => f).join(',')} ${field} ${dir}` : `${field} ${dir}`;
    let sql = this.pageSqls.get(key);
    if (!sql) {
      const where = ['company_id = ?', ...filters.map(([f]) => `${this.field(f)} = ?`)].join(' AND ');
      const by = field === 'seq' ? `seq ${dir}` : `${this.field(field)} ${dir}, seq ${dir}`;
      sql = { count: `SELECT count(*) AS n FROM ${this.t} WHERE ${where}`, rows: `${LIST_SELECT} ${this.t} WHERE ${where} ORDER BY ${by} LIMIT ? OFFSET ?` };
      this.pageSqls.set(key, sql);
    }
    return sql;
  }

  /**
   * Documents, of every company, that a schedule finds due and that have not fired for this date
   * value yet: in one of `states`, with `date` (a body field, or a system column) at or before
   * `cutoff` (a `YYYY-MM-DD` or ISO time), in companies where the app is enabled. Indexed by state and date.
   */
  async due(
    schedule: string,
    q: { appId: string; date: string; states?: string[]; when?: Condition; cutoff: string; limit: number; afterSeq?: number },
  ): Promise<(DocRow & { company_id: string; occurrence: string; seq: number })[]> {
    // Columns are qualified, and the enabled companies are a semi-join: company_apps has a state
    // and an updated_at of its own.
    const dateSql = q.date in SYSTEM_DATES ? `d.${SYSTEM_DATES[q.date]}` : this.db.dialect.jsonField('data', q.date, 'text');
    const where = [
      "d.company_id IN (SELECT a.company_id FROM company_apps a WHERE a.app_id = ? AND a.state = 'enabled')",
      `${dateSql} IS NOT NULL`, `${dateSql} <> ''`, `${dateSql} <= ?`,
    ];
    const args: unknown[] = [q.appId, q.cutoff];
    if (q.afterSeq !== undefined) {
      where.push('d.seq > ?');
      args.push(q.afterSeq);
    }
    if (q.states) {
      where.push(`d.state IN (${q.states.map(() => '?').join(', ')})`);
      args.push(...q.states);
    }
    if (q.when) {
      const c = this.condition(q.when);
      where.push(c.sql);
      args.push(...c.args);
    }
    return this.db.all(
      `SELECT d.seq, d.id, d.company_id, d.state, d.data, d.created_at, d.updated_at, d.state_changed_at, ${dateSql} AS occurrence FROM ${this.t} d
       WHERE ${where.join(' AND ')}
         AND NOT EXISTS (SELECT 1 FROM schedule_firings f WHERE f.doc_table = ? AND f.doc_id = d.id AND f.schedule = ? AND f.occurrence = ${dateSql})
       ORDER BY d.seq LIMIT ?`,
      [...args, this.table, schedule, q.limit],
    );
  }

  /** A manifest condition as SQL over the document's row. */
  private condition(c: Condition): { sql: string; args: unknown[] } {
    const kind: JsonKind = typeof c.equals === 'number' || c.below !== undefined || c.above !== undefined ? 'number' : typeof c.equals === 'boolean' ? 'boolean' : 'text';
    const f = c.field === 'state' ? 'd.state' : this.db.dialect.jsonField('data', c.field, kind);
    if (c.equals !== undefined) return { sql: `${f} = ?`, args: [typeof c.equals === 'boolean' ? Number(c.equals) : c.equals] };
    if (c.in !== undefined) return { sql: `${f} IN (${c.in.map(() => '?').join(', ')})`, args: c.in };
    if (c.present !== undefined) return { sql: c.present ? `${f} IS NOT NULL` : `${f} IS NULL`, args: [] };
    if (c.below !== undefined) return { sql: `${f} < ?`, args: [c.below] };
    return { sql: `${f} > ?`, args: [c.above] };
  }

  /** Claims a schedule's firing for a document; false if it already fired (another process, or before a restart). */
  async claim(companyId: string, docId: string, schedule: string, occurrence: string, at: string): Promise<boolean> {
    // Where workers run at once, one firing now under way in another is skipped rather than
    // waited for (its claim would make this insert wait for that transaction's end): each worker
    // fires what the others are not firing; one that fails leaves it for the next tick.
    if (this.db.dialect.tryLock) {
      const lock = await this.db.get<{ locked: boolean }>(this.db.dialect.tryLock, [`firing:${this.table}:${docId}:${schedule}:${occurrence}`]);
      if (!lock?.locked) return false;
    }
    const { changes } = await this.db.run(
      'INSERT INTO schedule_firings (doc_table, doc_id, schedule, occurrence, company_id, fired_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING',
      [this.table, docId, schedule, occurrence, companyId, at],
    );
    return changes === 1;
  }
}
