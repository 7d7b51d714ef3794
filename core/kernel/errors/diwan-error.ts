import { errorCodes, type ErrorCode } from './codes.ts';

export type ErrorDetail = Record<string, unknown>;

/** The only error the host throws on purpose; leaves as `{ error: { code, message, details } }`. */
export class DiwanError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    readonly details: ErrorDetail[] = [],
    /** Interpolation values for the message template. */
    readonly params: Record<string, unknown> = {},
    /** Extra response headers, e.g. `Allow` or `Retry-After`. */
    readonly headers: Record<string, string> = {},
  ) {
    super(`${code}: ${errorCodes[code].en}`);
    this.status = errorCodes[code].status;
  }
}

/** A single-field validation failure, shaped like the ones ajv produces. */
export function fieldError(pointer: string, rule: string, message: string, extra: ErrorDetail = {}): DiwanError {
  return new DiwanError('VALIDATION_ERROR', [{ in: 'body', pointer, rule, message, ...extra }], { summary: message });
}

/**
 * The SDK's `AppError` (an app bundles its own copy of the SDK, so it is recognised by the
 * contract's brand, not by class) becomes a DiwanError; a code outside the table is the app's fault.
 */
export function fromAppError(err: unknown, appId: string): DiwanError | undefined {
  if (typeof err !== 'object' || err === null || (err as Record<symbol, unknown>)[Symbol.for('diwan.app-error')] !== true) return undefined;
  const e = err as { code: string; details?: ErrorDetail[]; params?: Record<string, unknown> };
  if (!(e.code in errorCodes) || e.code === 'INTERNAL') {
    return new DiwanError('APP_ERROR', [{ app: appId, rule: 'unknown_code', code: e.code }], { app: appId, reason: `unknown error code ${e.code}` });
  }
  return new DiwanError(e.code as ErrorCode, Array.isArray(e.details) ? e.details : [], e.params ?? {});
}
