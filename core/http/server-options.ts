// The Fastify options that decide how the Node server treats a connection: time-outs suited to
// an API (Node's defaults let a slow client hold a connection for minutes), every refusal in
// the error envelope (core/http/client-errors.ts), and Host checked by the host, not by Node.
import type { ServerOptions } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Translator } from '../kernel/i18n/i18n.ts';
import { clientErrorHandler, type RequestTimeouts } from './client-errors.ts';

/**
 * How often Node looks for connections past a time-out. Node's default (30 s) would let a
 * 10 s limit run to 40 s; a tenth of the shortest limit, between 50 ms and 1 s, keeps the cut
 * prompt without a busy timer.
 */
export function checkingIntervalMs(t: RequestTimeouts): number {
  const limits = [t.headersTimeoutMs, t.requestTimeoutMs].filter((ms) => ms > 0);
  if (limits.length === 0) return 30_000;
  return Math.min(1000, Math.max(50, Math.floor(Math.min(...limits) / 10)));
}

export interface ServerConnectionOptions {
  requestTimeout: number;
  http: ServerOptions;
  clientErrorHandler: (this: FastifyInstance, err: Error & { code?: string }, socket: Socket) => void;
}

export function serverOptions(tr: Translator, t: RequestTimeouts): ServerConnectionOptions {
  return {
    requestTimeout: t.requestTimeoutMs,
    http: {
      headersTimeout: t.headersTimeoutMs,
      requestTimeout: t.requestTimeoutMs,
      connectionsCheckingInterval: checkingIntervalMs(t),
      requireHostHeader: false,
    },
    clientErrorHandler: clientErrorHandler(tr, t),
  };
}
