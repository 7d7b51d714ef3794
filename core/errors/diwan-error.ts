import { errorCodes, type ErrorCode } from './codes.ts';

export type ErrorDetail = Record<string, unknown>;

const BRAND = Symbol.for('diwan.error');

/** The only error the host and apps throw on purpose; leaves as `{ error: { code, message, details } }`. */
export class DiwanError extends Error {
  // A packed app bundles its own copy of the SDK, so `instanceof` checks a registry-wide brand
  // rather than this class's identity.
  static override [Symbol.hasInstance](value: unknown): boolean {
    if (this !== DiwanError) return Function.prototype[Symbol.hasInstance].call(this, value);
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
  }
  readonly [BRAND] = true;
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
