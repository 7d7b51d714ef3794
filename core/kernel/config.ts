// Every setting of the host, read once from the environment, with its default.
import path from 'node:path';
import { DEFAULT_LADDER, parseLadder } from './durations.ts';
import { boolSetting, intSetting, parsedSetting, SettingError, textSetting, MAX_TIMER_MS } from './setting-readers.ts';

export interface HostConfig {
  port: number;
  host: string;
  /** Where people reach the console: the base of the one-time links the host prints. */
  publicUrl: string;
  /** A signed-in person's session ends after this long unused. */
  sessionIdleSeconds: number;
  /** What this process runs: the API, the worker (fan-out, delivery, scheduler, pruning), or both. */
  roles: { api: boolean; worker: boolean };
  /** Folder of the SQLite database and of uploaded app packages. */
  dataDir: string;
  /** The apps a new company gets when its creator names none (DIWAN_DEFAULT_APPS); undefined: every first-party app. */
  defaultApps?: string[];
  /** `postgres://…`: the host's database on PostgreSQL instead of the SQLite file in `dataDir`. */
  databaseUrl?: string;
  /** Largest request body accepted, in bytes. */
  bodyLimit: number;
  /** Requests per minute per API key; 0 turns the limit off. */
  rateLimitPerMinute: number;
  /** Deepest nesting of arrays and objects accepted in a JSON body. */
  jsonMaxDepth: number;
  /** Time allowed for a request's line and headers, and for the whole request; 0 turns one off. */
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  /** Failed authentications allowed per client address and window; 0 turns the throttle off. */
  authFailLimit: number;
  authFailWindowSeconds: number;
  /** Most client addresses whose failures are remembered at once. */
  authFailMaxTracked: number;
  /** Days events (their payloads), deliveries and attempts are kept; 0 keeps them forever. */
  eventRetentionDays: number;
  /** An endpoint failing without a single success for this long is disabled by the host; 0 never disables. */
  webhookDisableAfterSeconds: number;
  webhooks: {
    /** Seconds between attempts; the spec's ladder unless replaced. */
    ladder: number[];
    timeoutMs: number;
    allowLoopback: boolean;
    allowPrivate: boolean;
    /** Attempts in flight at once per endpoint, unless the endpoint sets its own. */
    maxInFlightPerEndpoint: number;
    /** How long an old secret keeps signing after a rotation. */
    rotationGraceSeconds: number;
    /**
     * Fraction of a retry step each retry time moves by at random, either way (0.1: ±10 %), kept
     * under half the gap to the neighbouring steps (core/webhooks/ladder.ts). Loaded from
     * DIWAN_WEBHOOK_JITTER (percent, default 10); absent in a config built by hand: none.
     */
    jitter?: number;
    /**
     * How long a worker holds a delivery it took (ms): past it, another worker may take it again.
     * Longer than `timeoutMs`; default the larger of 30 s and `timeoutMs` + 5 s.
     */
    leaseMs?: number;
  };
}

/** The value is not echoed in the message: it may hold a password. */
function databaseUrlSetting(env: NodeJS.ProcessEnv): string | undefined {
  const v = env.DIWAN_DATABASE_URL?.trim();
  if (!v) return undefined;
  if (!/^postgres(ql)?:\/\/\S+$/.test(v)) {
    throw new SettingError('DIWAN_DATABASE_URL', 'must be a PostgreSQL URL such as postgres://user:password@127.0.0.1:5432/diwan (unset for the embedded SQLite database)');
  }
  return v;
}

/** The address the server binds when HOST is unset. */
export const DEFAULT_HOST = '127.0.0.1';

/** The default lease of a delivery for an attempt timeout. */
export const leaseMsFor = (timeoutMs: number): number => Math.max(30_000, timeoutMs + 5000);

export function loadConfig(env: NodeJS.ProcessEnv = process.env): HostConfig {
  const ms = { min: 0, max: MAX_TIMER_MS, unit: 'milliseconds' };
  const config: HostConfig = {
    port: intSetting(env, 'PORT', 3000, { min: 0, max: 65535 }),
    // Loopback unless told: a laptop does not serve the API and console to its whole network
    // (a container sets HOST=0.0.0.0 to be reachable from outside it).
    host: textSetting(env, 'HOST', DEFAULT_HOST, (v) => (/^[\w.:%[\]-]+$/.test(v) ? undefined : 'must be an IP address or a host name')),
    // DIWAN_DATA_DIR, or DATA_DIR, its older name, still read.
    dataDir: path.resolve(textSetting(env, 'DIWAN_DATA_DIR', textSetting(env, 'DATA_DIR', './data'))),
    databaseUrl: databaseUrlSetting(env),
    defaultApps: parsedSetting<string[] | undefined>(env, 'DIWAN_DEFAULT_APPS', () => undefined, (v) => {
      const ids = v.split(',').map((p) => p.trim()).filter(Boolean);
      const bad = ids.filter((id) => !/^[a-z][a-z0-9-]{1,39}$/.test(id));
      if (bad.length) throw new Error(`must be app ids separated by commas (not ${bad.join(', ')})`);
      return ids;
    }),
    publicUrl: textSetting(env, 'DIWAN_PUBLIC_URL', `http://localhost:${env.PORT && /^\d+$/.test(env.PORT) ? env.PORT : 3000}`, (v) =>
      /^https?:\/\/[^\s/]+(\/[^\s]*)?$/.test(v) ? undefined : 'must be an http(s) URL such as https://diwan.example.com',
    ).replace(/\/$/, ''),
    sessionIdleSeconds: intSetting(env, 'DIWAN_SESSION_IDLE', 12 * 3600, { min: 60, max: 90 * 86_400, unit: 'seconds' }),
    roles: parsedSetting(env, 'DIWAN_ROLES', () => ({ api: true, worker: true }), (v) => {
      const parts = v.split(',').map((p) => p.trim()).filter(Boolean);
      const bad = parts.filter((p) => p !== 'api' && p !== 'worker');
      if (bad.length || parts.length === 0) throw new Error('must be api, worker or api,worker');
      return { api: parts.includes('api'), worker: parts.includes('worker') };
    }),
    bodyLimit: intSetting(env, 'DIWAN_BODY_LIMIT', 1024 * 1024, { min: 1, max: 2 ** 30, unit: 'bytes' }),
    rateLimitPerMinute: intSetting(env, 'DIWAN_RATE_LIMIT', 6000, { min: 0 }),
    // Beyond a few hundred levels, validation and serialisation recurse deep enough to overflow.
    jsonMaxDepth: intSetting(env, 'DIWAN_JSON_MAX_DEPTH', 32, { min: 1, max: 1000 }),
    headersTimeoutMs: intSetting(env, 'DIWAN_HEADERS_TIMEOUT_MS', 10_000, ms),
    requestTimeoutMs: intSetting(env, 'DIWAN_REQUEST_TIMEOUT_MS', 30_000, ms),
    authFailLimit: intSetting(env, 'DIWAN_AUTH_FAIL_LIMIT', 30, { min: 0 }),
    authFailWindowSeconds: intSetting(env, 'DIWAN_AUTH_FAIL_WINDOW', 60, { min: 1, max: Math.floor(MAX_TIMER_MS / 1000), unit: 'seconds' }),
    authFailMaxTracked: intSetting(env, 'DIWAN_AUTH_FAIL_MAX_TRACKED', 50_000, { min: 1 }),
    eventRetentionDays: intSetting(env, 'DIWAN_EVENT_RETENTION_DAYS', 30, { min: 0, max: 36_500, unit: 'days' }),
    webhookDisableAfterSeconds: intSetting(env, 'DIWAN_WEBHOOK_DISABLE_AFTER', 5 * 86_400, { min: 0, unit: 'seconds' }),
    webhooks: {
      ladder: parsedSetting(env, 'DIWAN_WEBHOOK_LADDER', () => [...DEFAULT_LADDER], parseLadder),
      timeoutMs: intSetting(env, 'DIWAN_WEBHOOK_TIMEOUT_MS', 10_000, { ...ms, min: 1 }),
      allowLoopback: boolSetting(env, 'DIWAN_WEBHOOK_ALLOW_LOOPBACK', false),
      allowPrivate: boolSetting(env, 'DIWAN_WEBHOOK_ALLOW_PRIVATE', false),
      maxInFlightPerEndpoint: intSetting(env, 'DIWAN_WEBHOOK_MAX_IN_FLIGHT', 4, { min: 1, max: 1000 }),
      rotationGraceSeconds: intSetting(env, 'DIWAN_WEBHOOK_ROTATION_GRACE', 24 * 3600, { min: 0, unit: 'seconds' }),
      jitter: intSetting(env, 'DIWAN_WEBHOOK_JITTER', 10, { min: 0, max: 50, unit: 'percent' }) / 100,
    },
  };
  const w = config.webhooks;
  w.leaseMs = intSetting(env, 'DIWAN_WEBHOOK_LEASE_MS', leaseMsFor(w.timeoutMs), { ...ms, min: 1 });
  // A lease that ends while its attempt may still run would let a second worker send it at the same time.
  if (w.leaseMs < w.timeoutMs + 1000) {
    throw new SettingError('DIWAN_WEBHOOK_LEASE_MS', `(${w.leaseMs}) must be at least DIWAN_WEBHOOK_TIMEOUT_MS + 1000 (${w.timeoutMs + 1000})`);
  }
  // Node refuses a headers limit longer than the whole-request one.
  if (config.headersTimeoutMs > 0 && config.requestTimeoutMs > 0 && config.headersTimeoutMs > config.requestTimeoutMs) {
    throw new SettingError('DIWAN_HEADERS_TIMEOUT_MS', `(${config.headersTimeoutMs}) must not be longer than DIWAN_REQUEST_TIMEOUT_MS (${config.requestTimeoutMs})`);
  }
  return config;
}
