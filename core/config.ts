// Every setting of the host, read once from the environment, with its default.
import path from 'node:path';
import { DEFAULT_LADDER, parseLadder } from './webhooks/ladder.ts';

export interface HostConfig {
  port: number;
  host: string;
  /** Folder of the SQLite database and of uploaded app packages. */
  dataDir: string;
  /** Largest request body accepted, in bytes. */
  bodyLimit: number;
  /** Requests per minute per API key; 0 turns the limit off. */
  rateLimitPerMinute: number;
  webhooks: {
    /** Seconds between attempts; the spec's ladder unless replaced. */
    ladder: number[];
    timeoutMs: number;
    allowLoopback: boolean;
    allowPrivate: boolean;
    maxInFlightPerEndpoint: number;
    /** How long an old secret keeps signing after a rotation. */
    rotationGraceSeconds: number;
  };
}

function int(value: string | undefined, fallback: number): number {
  const n = Number(value);
  return value !== undefined && value !== '' && Number.isFinite(n) ? Math.trunc(n) : fallback;
}

function bool(value: string | undefined): boolean {
  return value === '1' || value === 'true' || value === 'yes';
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): HostConfig {
  return {
    port: int(env.PORT, 3000),
    host: env.HOST ?? '0.0.0.0',
    dataDir: path.resolve(env.DATA_DIR ?? './data'),
    bodyLimit: int(env.DIWAN_BODY_LIMIT, 1024 * 1024),
    rateLimitPerMinute: int(env.DIWAN_RATE_LIMIT, 6000),
    webhooks: {
      ladder: env.DIWAN_WEBHOOK_LADDER !== undefined ? parseLadder(env.DIWAN_WEBHOOK_LADDER) : [...DEFAULT_LADDER],
      timeoutMs: int(env.DIWAN_WEBHOOK_TIMEOUT_MS, 10_000),
      allowLoopback: bool(env.DIWAN_WEBHOOK_ALLOW_LOOPBACK),
      allowPrivate: bool(env.DIWAN_WEBHOOK_ALLOW_PRIVATE),
      maxInFlightPerEndpoint: int(env.DIWAN_WEBHOOK_MAX_IN_FLIGHT, 4),
      rotationGraceSeconds: int(env.DIWAN_WEBHOOK_ROTATION_GRACE, 24 * 3600),
    },
  };
}
