import type { Db } from '../db.ts';

/** Request counts per key and fixed window, shared by every process on the database. */
export class RateWindowsRepo {
  constructor(private db: Db) {}

  /**
   * Adds `n` to the key's window and answers the count with them. One statement: processes
   * counting the same key at once each add theirs (the row lock orders them).
   */
  async hit(key: string, windowStart: number, n = 1): Promise<number> {
    const row = await this.db.get<{ count: number }>(
      'INSERT INTO rate_windows (key, window_start, count) VALUES (?, ?, ?) ON CONFLICT (key, window_start) DO UPDATE SET count = rate_windows.count + excluded.count RETURNING count',
      [key, windowStart, n],
    );
    return Number(row!.count);
  }

  /** Removes the windows that started before `windowStart`; answers how many. */
  async prune(windowStart: number): Promise<number> {
    return (await this.db.run('DELETE FROM rate_windows WHERE window_start < ?', [windowStart])).changes;
  }
}
