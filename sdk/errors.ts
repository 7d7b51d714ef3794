// Errors an app throws to refuse a request; the host answers them in its envelope with the same
// code, details and message parameters. The host recognises them by the brand below (part of
// the contract), so an app that bundles its own copy of the SDK works the same.

/** The host's error codes an app may use (see the host's docs/errors.md). */
export type ErrorCode =
  | 'VALIDATION_ERROR' | 'BAD_REQUEST' | 'FORBIDDEN' | 'NOT_FOUND' | 'CONFLICT' | 'RATE_LIMITED' | 'UNAUTHENTICATED';

const BRAND = Symbol.for('diwan.app-error');

export class AppError extends Error {
  readonly [BRAND] = true;
  constructor(
    readonly code: ErrorCode,
    readonly details: Record<string, unknown>[] = [],
    /** Values for the host's message template (e.g. `reason` for CONFLICT, `summary` for VALIDATION_ERROR). */
    readonly params: Record<string, unknown> = {},
  ) {
    super(`${code}${params.reason ? `: ${String(params.reason)}` : params.summary ? `: ${String(params.summary)}` : ''}`);
    this.name = 'AppError';
  }
}

/** A single-field validation failure: `fieldError('/dueDate', 'dateOrder', 'the due date is before the date')`. */
export function fieldError(pointer: string, rule: string, message: string, extra: Record<string, unknown> = {}): AppError {
  return new AppError('VALIDATION_ERROR', [{ in: 'body', pointer, rule, message, ...extra }], { summary: message });
}

const RETRY_BRAND = Symbol.for('diwan.retry-later');

/**
 * Thrown by a job handler when the other side asked to be called again later (a 429's or 503's
 * Retry-After): the attempt fails as any throw does, and the next one waits at least `afterMs`
 * (at most an hour), or the ladder's step when that is longer. It still uses a step of the ladder.
 */
export class RetryLater extends Error {
  readonly [RETRY_BRAND] = true;
  constructor(
    message: string,
    readonly afterMs: number,
  ) {
    super(message);
    this.name = 'RetryLater';
  }
}
