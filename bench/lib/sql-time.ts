// Time spent in each SQL statement of this process (better-sqlite3's run/all/get/iterate and
// exec, wall time on the calling thread), for a bench to say where a path's database time goes.
// Call before the database is opened; only what runs between start() and stop() counts.
import Database from 'better-sqlite3';

export function sqlTimer() {
  const totals = new Map<string, { n: number; us: number }>();
  let on = false;
  const note = (sql: string, t0: bigint) => {
    if (!on) return;
    const key = sql.replace(/\s+/g, ' ').trim().slice(0, 100);
    const e = totals.get(key) ?? { n: 0, us: 0 };
    e.n++;
    e.us += Number(process.hrtime.bigint() - t0) / 1000;
    totals.set(key, e);
  };
  type Fn = (...a: unknown[]) => unknown;
  const timed = (f: Fn, sqlOf: (a: unknown[]) => string): Fn =>
    function (this: unknown, ...a: unknown[]) {
      const t0 = process.hrtime.bigint();
      try {
        return f.apply(this, a);
      } finally {
        note(sqlOf(a), t0);
      }
    };
  const db = Database.prototype as unknown as Record<string, Fn>;
  const prepare = db.prepare;
  db.exec = timed(db.exec, (a) => String(a[0]));
  db.prepare = function (this: unknown, ...a: unknown[]) {
    const st = prepare.apply(this, a) as Record<string, Fn>;
    for (const m of ['run', 'all', 'get', 'iterate']) st[m] = timed(st[m], () => String(a[0]));
    return st;
  };
  return {
    start: () => void (on = true),
    stop: () => void (on = false),
    /** The statements that took longest, with calls, total and mean, and their share per `unit` (e.g. per delivery). */
    report(units: number, unit: string, top = 15): string {
      const rows = [...totals].sort((a, b) => b[1].us - a[1].us).slice(0, top);
      const all = [...totals.values()].reduce((s, e) => s + e.us, 0);
      return [
        `SQL: ${(all / 1000).toFixed(0)} ms in all, ${(all / units).toFixed(1)} µs per ${unit}`,
        ...rows.map(([sql, e]) => `${String(e.n).padStart(8)} × ${(e.us / e.n).toFixed(1).padStart(7)} µs = ${(e.us / 1000).toFixed(0).padStart(5)} ms (${(e.us / units).toFixed(1).padStart(5)} µs/${unit})  ${sql}`),
      ].join('\n');
    },
  };
}
