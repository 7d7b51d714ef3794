// Readers for settings from the environment. A value that is set but wrong stops the start
// with a SettingError naming the variable and what is wrong, instead of quietly falling back
// to the default (PORT=abc used to listen on 3000). Unset or empty means the default.

export type Env = Record<string, string | undefined>;

/** A setting with a wrong value; the message is one line, starting with the variable's name. */
export class SettingError extends Error {
  constructor(
    readonly setting: string,
    problem: string,
  ) {
    super(`${setting} ${problem}`);
    this.name = 'SettingError';
  }
}

/** Quoted on one line, whatever the value holds. */
export const shown = (value: string): string => JSON.stringify(value);

const given = (env: Env, name: string): string | undefined => {
  const v = env[name];
  return v === undefined || v.trim() === '' ? undefined : v.trim();
};

export interface IntRange {
  min: number;
  max?: number;
  /** Named in the message: "a whole number of {unit}". */
  unit?: string;
}

/** Largest delay Node's timers accept (about 24.8 days); also a sane cap for other counts. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

export function intSetting(env: Env, name: string, fallback: number, range: IntRange): number {
  const text = given(env, name);
  if (text === undefined) return fallback;
  const max = range.max ?? Number.MAX_SAFE_INTEGER;
  const n = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n) || n < range.min || n > max) {
    const what = range.unit ? `a whole number of ${range.unit}` : 'a whole number';
    const bounds = range.max === undefined ? `of at least ${range.min}` : `from ${range.min} to ${max}`;
    throw new SettingError(name, `must be ${what} ${bounds}, got ${shown(env[name] ?? '')}`);
  }
  return n;
}

const TRUE = new Set(['1', 'true', 'yes', 'on']);
const FALSE = new Set(['0', 'false', 'no', 'off']);

export function boolSetting(env: Env, name: string, fallback: boolean): boolean {
  const text = given(env, name);
  if (text === undefined) return fallback;
  const v = text.toLowerCase();
  if (TRUE.has(v)) return true;
  if (FALSE.has(v)) return false;
  throw new SettingError(name, `must be one of 1, true, yes, on, 0, false, no, off; got ${shown(env[name] ?? '')}`);
}

export function textSetting(env: Env, name: string, fallback: string, check?: (value: string) => string | undefined): string {
  const text = given(env, name);
  if (text === undefined) return fallback;
  const problem = check?.(text);
  if (problem) throw new SettingError(name, `${problem}, got ${shown(env[name] ?? '')}`);
  return text;
}

/** A setting read by a parser that throws on bad input; its message is kept, prefixed by the name. */
export function parsedSetting<T>(env: Env, name: string, fallback: () => T, parse: (text: string) => T): T {
  const text = env[name];
  if (text === undefined) return fallback();
  try {
    return parse(text);
  } catch (err) {
    throw new SettingError(name, `is not valid: ${(err as Error).message.replace(/\s*\n\s*/g, ' ')}`);
  }
}
