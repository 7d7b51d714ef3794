/**
 * Remembers the last results of a pure function of a string (a company's certificate, its key):
 * parsing them costs more than the signature itself, and a host stamps with few of them.
 */
export function memoByString<T>(fn: (key: string) => T, max = 64): (key: string) => T {
  const cache = new Map<string, T>();
  return (key) => {
    let value = cache.get(key);
    if (value === undefined) {
      value = fn(key);
      if (cache.size >= max) cache.delete(cache.keys().next().value as string);
      cache.set(key, value);
    }
    return value;
  };
}
