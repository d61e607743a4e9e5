/**
 * The error taxonomy of a job attempt (ADR-003 §5.2). The engine classifies with `instanceof` only:
 * `retryable` says whether another attempt may help, `code` is what the job records, `publicMessage` is what
 * its owner may read. Provider detail stays in `message`/`cause` (logs and the admin view).
 */
import { EngineError } from '../errors.ts';

/** A failure of one attempt. Unknown errors are wrapped as {@link InternalJobError}. */
export abstract class JobFailure extends EngineError {
  /** Safe for the job's owner: no provider text, URL, key or stack. */
  abstract readonly publicMessage: string;
  /** Consulted by the router: try the next provider/model before spending an attempt. */
  readonly fallbackEligible: boolean = false;
}

/** HTTP 429 from the provider. Honour `retryAfterMs` when the provider sent `Retry-After`. */
export class ProviderRateLimitedError extends JobFailure {
  readonly code = 'PROVIDER_RATE_LIMITED';
  override readonly retryable = true;
  override readonly fallbackEligible = true;
  readonly publicMessage = 'The AI provider is busy; the job will be retried';
  constructor(message: string, readonly retryAfterMs?: number, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** The provider did not answer within its own request deadline (distinct from the job's timeout). */
export class ProviderTimeoutError extends JobFailure {
  readonly code = 'PROVIDER_TIMEOUT';
  override readonly retryable = true;
  override readonly fallbackEligible = true;
  readonly publicMessage = 'The AI provider did not answer in time';
}

/** 5xx or a network failure reaching the provider. */
export class ProviderUnavailableError extends JobFailure {
  readonly code = 'PROVIDER_UNAVAILABLE';
  override readonly retryable = true;
  override readonly fallbackEligible = true;
  readonly publicMessage = 'The AI provider is unavailable';
}

/** The model's output was not JSON or broke the output schema; the retry tells the model what was wrong. */
export class SchemaValidationError extends JobFailure {
  readonly code = 'SCHEMA_VALIDATION';
  override readonly retryable = true;
  readonly publicMessage = 'The AI returned an answer in the wrong shape';
  constructor(message: string, readonly problems: readonly string[], options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** The output is well-formed but violates a business rule (e.g. an answer index out of range). Projector. */
export class BusinessValidationError extends JobFailure {
  readonly code = 'BUSINESS_VALIDATION';
  readonly publicMessage = 'The AI answer did not pass validation';
}

/** The output refers to something that does not exist or is not the user's. Projector. */
export class ReferenceValidationError extends JobFailure {
  readonly code = 'REFERENCE_VALIDATION';
  readonly publicMessage = 'The AI answer referred to unknown data';
}

/** The content safety check refused the input or the output. */
export class ContentSafetyError extends JobFailure {
  readonly code = 'CONTENT_SAFETY';
  readonly publicMessage = 'The content was blocked by the safety check';
}

/** The credential is missing, revoked, undecryptable or refused by the provider (401/403). */
export class CredentialInvalidError extends JobFailure {
  readonly code = 'CREDENTIAL_INVALID';
  readonly publicMessage = 'The AI credential is invalid or was revoked';
}

/** The job's own deadline (definition `timeoutMs`) passed; retryable only with `abortStrategy: 'retry'`. */
export class JobTimeoutError extends JobFailure {
  readonly code = 'TIMEOUT';
  readonly publicMessage = 'The job took too long';
  override readonly retryable: boolean;
  constructor(readonly timeoutMs: number, retryOnTimeout: boolean) {
    super(`Attempt exceeded ${timeoutMs} ms`);
    this.retryable = retryOnTimeout;
  }
}

/** The job was cancelled while running; never retried. */
export class JobCancelledError extends JobFailure {
  readonly code = 'CANCELLED';
  readonly publicMessage = 'The job was cancelled';
}

/** Anything else (database hiccup, a bug). Retried once (see the retry policy), then failed. */
export class InternalJobError extends JobFailure {
  readonly code = 'INTERNAL';
  override readonly retryable = true;
  readonly publicMessage = 'Something went wrong on our side';
}

/** Wraps an unknown error; a JobFailure passes through unchanged. */
export function asJobFailure(err: unknown): JobFailure {
  if (err instanceof JobFailure) return err;
  const message = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return new InternalJobError(message, { cause: err });
}
