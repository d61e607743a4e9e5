/**
 * Typed refusals of the capacity and spend repositories. Both are bad input from an admin or a configuration
 * (the API maps them to 400); neither is retryable.
 */
import { EngineError } from '../errors.ts';

/** A limit or cap value that is not a whole number within its bounds, or not a number at all. */
export class InvalidLimitError extends EngineError {
  readonly code = 'INVALID_LIMIT';
  constructor(readonly field: string, reason: string) {
    super(`${field} ${reason}`);
  }
}

/** A provider/model no route of the configuration names (and no `provider/*` entry covers). */
export class UnknownModelError extends EngineError {
  readonly code = 'UNKNOWN_MODEL';
  constructor(readonly provider: string, readonly model: string) {
    super(`no configured route uses ${provider}/${model}`);
  }
}
