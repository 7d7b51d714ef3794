// What an app's code threw (a hook, a custom route), as the caller learns it: the host's own
// errors and the database's "not now" (answered 503 by the pipeline) pass through unchanged; an
// AppError becomes its stable code; anything else is APP_ERROR naming the app and the place,
// the app's own message kept in the log only (it may carry anything).
import { DiwanError, fromAppError } from '../kernel/errors/diwan-error.ts';
import { isTransientDbError } from '../storage/transient.ts';

export function appFault(err: unknown, appId: string, where: Record<string, string>, reason: string): unknown {
  if (err instanceof DiwanError || isTransientDbError(err)) return err;
  const mapped = fromAppError(err, appId);
  if (mapped) return mapped;
  const fault = new DiwanError('APP_ERROR', [{ app: appId, ...where }], { app: appId, reason });
  fault.cause = err;
  return fault;
}
