/**
 * The error taxonomy of a job attempt (ADR-003 §5.2). The engine classifies with `instanceof` only:
 * `retryable` says whether another attempt may help, `code` is what the job records, `publicMessage` is what
 * its owner may read. Provider detail stays in `message`/`cause` (logs and the admin view).
 */
import { EngineError } from '../errors.ts';
import { isDatabaseUnavailable } from '../db/connection-errors.ts';

/**
 * Deliveries a job may spend on infrastructure failures without using up an attempt (lib/engine/settle.ts);
 * beyond them an infrastructure failure counts like any retryable one (so an endless outage still ends the
 * job). The queues' receive budget counts them too (lib/queue/receive-budget.ts).
 */
export const MAX_INFRASTRUCTURE_REFUNDS = 3;

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

/**
 * The provider sent no token of its answer within the job type's first-token deadline
 * (`execution.firstTokenTimeoutMs`, lib/jobs/definition.ts), its total deadline not yet passed. A provider
 * timeout like any other (same code, retryable, fallback-eligible): nothing of the answer exists yet, so the
 * next route starts clean, and a slow provider is no reason to fail the job.
 */
export class ProviderFirstTokenTimeoutError extends ProviderTimeoutError {}

/**
 * The provider's stream ended before the answer was complete: the connection was cut mid-answer, or the stream
 * closed without a finish reason. The provider failed, not the model's output: retryable and fallback-eligible
 * like any unavailable provider (the gateway falls back only while nothing of the call was shown, see
 * lib/ai/gateway.ts), and never SCHEMA_VALIDATION, whose retry would tell the model its answer was malformed.
 */
export class ProviderStreamCutError extends ProviderUnavailableError {}

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

/**
 * The platform failed, not the job: the database was unreachable or dropped the connection mid-attempt.
 * Retryable, and its attempt is given back a bounded number of times (lib/engine/settle.ts), so a short
 * outage does not use up the job's attempts.
 */
export class InfrastructureError extends JobFailure {
  readonly code = 'INFRASTRUCTURE';
  override readonly retryable = true;
  readonly publicMessage = 'A platform service was briefly unavailable; the job will be retried';
}

/** Prisma's and the driver's codes for a lost connection, beyond those isDatabaseUnavailable reads. */
const CONNECTION_LOST_CODES: ReadonlySet<string> = new Set([
  'P1001', 'P1002', 'P1008', 'P1017', 'P2024', 'P2028', 'P2039',
  'ER_SOCKET_UNEXPECTED_CLOSE', 'ER_CONNECTION_KILLED', 'ER_CONNECTION_ALREADY_CLOSED', 'ER_CMD_CONNECTION_CLOSED',
]);

/**
 * True for errors that say the database is unreachable or the connection was lost: known codes, or
 * SQLSTATE class 08 (connection exception), anywhere in the cause chain. Codes only, never message text.
 */
export function isInfrastructureFailure(err: unknown): boolean {
  if (isDatabaseUnavailable(err)) return true;
  for (let e: unknown = err, depth = 0; e && typeof e === 'object' && depth < 6; depth += 1) {
    const { code, sqlState, cause } = e as { code?: unknown; sqlState?: unknown; cause?: unknown };
    if (typeof code === 'string' && CONNECTION_LOST_CODES.has(code)) return true;
    if (typeof sqlState === 'string' && sqlState.startsWith('08')) return true;
    e = cause;
  }
  return false;
}

/** Wraps an unknown error; a JobFailure passes through unchanged; a lost database is infrastructure. */
export function asJobFailure(err: unknown): JobFailure {
  if (err instanceof JobFailure) return err;
  const message = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  if (isInfrastructureFailure(err)) return new InfrastructureError(message, { cause: err });
  return new InternalJobError(message, { cause: err });
}
