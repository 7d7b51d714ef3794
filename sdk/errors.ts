// Errors an app throws to refuse a request; the host answers them in the standard envelope.
import { DiwanError, fieldError } from '../core/errors/diwan-error.ts';

export { DiwanError as AppError, fieldError };
export type { ErrorCode } from '../core/errors/codes.ts';
