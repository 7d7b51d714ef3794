// Calendar dates as documents hold them (`YYYY-MM-DD`, no time zone): what an app counts days
// with. An impossible date (30 February) is refused, not rolled into the next month.

const DAY_MS = 86_400_000;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** The date's day number since 1970-01-01; a RangeError for text that is not a real date. */
function dayOf(date: string): number {
  const m = DATE.exec(date);
  const ms = m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) : NaN;
  if (!m || new Date(ms).toISOString().slice(0, 10) !== date) throw new RangeError(`not a date: ${date}`);
  return ms / DAY_MS;
}

/** Calendar days from `from` to `to`, both included (1 for the same day; 0 or less when `to` is before `from`). */
export function calendarDays(from: string, to: string): number {
  return dayOf(to) - dayOf(from) + 1;
}
