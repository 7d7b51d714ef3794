// Failed authentications per client address: after `limit` failures within `windowMs` of the
// first one, the address is refused (429) until that window ends, before its key is even
// looked at. Without it a client can try thousands of keys a second, each costing a lookup
// and a hash. Memory is bounded: windows expire, and at most `maxTracked` addresses are kept
// (the stalest are dropped first).
//
// Where several servers share the database (PostgreSQL), failures are also counted there
// (`shared`): each failure adds one to the address's shared window and this process adopts the
// shared count. Refusing stays a memory lookup, so requests that authenticate cost nothing
// more; a process learns that an address is over the limit at that address's next failure on
// it, so across N processes an address gets at most N - 1 failures beyond the limit per window.
import ipaddr from 'ipaddr.js';

export interface AuthThrottleOptions {
  /** Failures allowed per address and window; 0 turns the throttle off. */
  limit: number;
  windowMs: number;
  maxTracked: number;
  now(): number;
  /** The database's counters, where several servers share it (storage's throttles). */
  shared?: SharedFailures;
}

export interface SharedFailures {
  hitWindow(key: string, nowMs: number, windowMs: number): Promise<{ count: number; windowStart: number }>;
  prune(prefix: string, before: number): Promise<number>;
}

/** The shared counters' keys. */
const SHARED_PREFIX = 'auth:address:';

export interface AuthThrottle {
  readonly limit: number;
  readonly windowSeconds: number;
  /** Seconds the address must wait (then refuse it), or 0 when it may try. */
  check(ip: string): number;
  /** Records one failed authentication from the address (in the database too, when shared). */
  fail(ip: string): void | Promise<void>;
  /** Addresses currently tracked (for tests and metrics). */
  size(): number;
}

interface Window {
  start: number;
  failures: number;
}

/**
 * The unit a client controls: an IPv4 address (IPv4-mapped IPv6 included), or an IPv6 /64,
 * since one IPv6 client commonly holds a whole /64 and could otherwise rotate through it.
 */
export function clientKey(ip: string): string {
  if (!ipaddr.isValid(ip)) return ip;
  const addr = ipaddr.process(ip);
  if (addr.kind() === 'ipv4') return addr.toString();
  const parts = (addr as ipaddr.IPv6).parts.slice(0, 4);
  return `${parts.map((p) => p.toString(16)).join(':')}::/64`;
}

export function createAuthThrottle(opts: AuthThrottleOptions): AuthThrottle {
  // Insertion order is window-start order (a renewed window is re-inserted), so the first
  // entries are always the stalest: expiry and eviction read from the front.
  const windows = new Map<string, Window>();
  const expired = (w: Window, now: number) => now - w.start >= opts.windowMs;
  let pruned = 0;

  /** Adopts the address's shared window (every process's failures); ended windows are pruned once per window. */
  const countShared = async (shared: SharedFailures, key: string, w: Window, now: number) => {
    if (now - pruned >= opts.windowMs) {
      pruned = now;
      void shared.prune(SHARED_PREFIX, now - opts.windowMs).catch(() => {});
    }
    const s = await shared.hitWindow(SHARED_PREFIX + key, now, opts.windowMs);
    w.start = s.windowStart;
    w.failures = s.count;
  };

  const sweep = (now: number) => {
    for (const [key, w] of windows) {
      if (!expired(w, now)) break;
      windows.delete(key);
    }
  };

  return {
    limit: opts.limit,
    windowSeconds: Math.round(opts.windowMs / 1000),
    check(ip) {
      // No failures tracked (the usual case): no address to parse.
      if (opts.limit <= 0 || windows.size === 0) return 0;
      const now = opts.now();
      const w = windows.get(clientKey(ip));
      if (!w || expired(w, now) || w.failures < opts.limit) return 0;
      return Math.max(1, Math.ceil((w.start + opts.windowMs - now) / 1000));
    },
    fail(ip) {
      if (opts.limit <= 0) return;
      const now = opts.now();
      const key = clientKey(ip);
      let w = windows.get(key);
      if (!w || expired(w, now)) {
        windows.delete(key);
        sweep(now);
        while (windows.size >= opts.maxTracked) windows.delete(windows.keys().next().value as string);
        windows.set(key, (w = { start: now, failures: 0 }));
      }
      w.failures++;
      // The database unreachable: this process's own count still holds, and the answer stays 401.
      if (opts.shared) return countShared(opts.shared, key, w, now).catch(() => {});
    },
    size: () => windows.size,
  };
}
