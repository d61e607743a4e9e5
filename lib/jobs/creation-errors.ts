/** Typed failures of job creation (seed #289). */
import { EngineError } from '../errors.ts';

/** The idempotency key was used before for this user and job type with a different input. */
export class IdempotencyConflictError extends EngineError {
  readonly code = 'IDEMPOTENCY_KEY_REUSED';
  constructor(
    readonly existingJobId: string,
    readonly idempotencyKey: string,
  ) {
    super('This Idempotency-Key was already used with a different request body');
  }
}

/** The caller asked for a credential mode the job type does not allow. */
export class CredentialModeNotAllowedError extends EngineError {
  readonly code = 'VALIDATION_FAILED';
  constructor(
    readonly jobType: string,
    readonly mode: string,
  ) {
    super(`Credential mode ${mode} is not allowed for ${jobType}`);
  }
}
