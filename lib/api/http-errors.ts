/**
 * Failures the HTTP API raises itself. Each carries its HTTP status, stable public `code` and a message safe
 * to show the caller; `expose = status < 500` as in middy's HttpError. Errors raised by other capabilities
 * (jobs, credentials) keep their own classes and are mapped in ./error-mapper.ts.
 */
import { EngineError } from '../errors.ts';
import type { IssueDetail } from '../jobs/errors.ts';

export abstract class HttpError extends EngineError {
  abstract readonly status: number;
  /** Extra response headers, e.g. `Retry-After`. */
  readonly headers: Readonly<Record<string, string>> = {};

  /** Whether `message` may reach the client; a 5xx is always replaced by a generic message. */
  get expose(): boolean {
    return this.status < 500;
  }
}

/** No JWT claims reached the handler, or they carry no usable `sub`. */
export class UnauthorizedError extends HttpError {
  readonly status = 401;
  readonly code = 'UNAUTHORIZED';
  constructor(message = 'Authentication required', options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** Authenticated, but not allowed (admin routes without `SUPER_ADMIN`). Never used to hide another user's job. */
export class ForbiddenError extends HttpError {
  readonly status = 403;
  readonly code = 'FORBIDDEN';
  constructor(message = 'This operation requires the SUPER_ADMIN role') {
    super(message);
  }
}

/** The event's `routeKey` is not one of this function's routes (a deployment mismatch, or `$default`). */
export class RouteNotFoundError extends HttpError {
  readonly status = 404;
  readonly code = 'ROUTE_NOT_FOUND';
  constructor(readonly routeKey: string) {
    super('No such route');
  }
}

/**
 * The request is malformed: body, query, path parameter or header. `issues` name each field as
 * `<location>.<path>` (`body.concept`, `query.limit`, `path.jobId`, `header.idempotency-key`), never its value.
 */
export class RequestValidationError extends HttpError {
  readonly status = 400;
  readonly code = 'VALIDATION_FAILED';
  constructor(readonly issues: readonly IssueDetail[]) {
    super(`Request is invalid: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`);
  }
}

export class PayloadTooLargeError extends HttpError {
  readonly status = 413;
  readonly code = 'PAYLOAD_TOO_LARGE';
  constructor(readonly limitBytes: number) {
    super(`Request body exceeds ${limitBytes} bytes`);
  }
}

/** A request body whose `Content-Type` is not `application/json` (UTF-8). */
export class UnsupportedMediaTypeError extends HttpError {
  readonly status = 415;
  readonly code = 'UNSUPPORTED_MEDIA_TYPE';
  constructor() {
    super('Send the body as application/json (UTF-8)');
  }
}

/** The user has as many active (queued or running) jobs of this type as its definition allows. */
export class TooManyJobsError extends HttpError {
  readonly status = 429;
  readonly code = 'TOO_MANY_JOBS';
  override readonly headers: Readonly<Record<string, string>>;
  constructor(readonly jobType: string, readonly limit: number, readonly retryAfterSeconds: number) {
    super(`You already have ${limit} active ${jobType} jobs; wait for one to finish`);
    this.headers = { 'retry-after': String(retryAfterSeconds) };
  }
}

/** The user created as many jobs of this type today (UTC) as its definition allows. */
export class QuotaExceededError extends HttpError {
  readonly status = 429;
  readonly code = 'QUOTA_EXCEEDED';
  override readonly headers: Readonly<Record<string, string>>;
  constructor(readonly jobType: string, readonly limit: number, readonly retryAfterSeconds: number) {
    super(`Daily quota of ${limit} ${jobType} jobs reached; it resets at 00:00 UTC`);
    this.headers = { 'retry-after': String(retryAfterSeconds) };
  }
}

/** What a reached cap limits, in words a user can read (no internal scope names). */
const SPEND_LIMIT_TEXT: Readonly<Record<string, string>> = {
  user_day: 'your daily spending limit', user_month: 'your monthly spending limit',
  job_type_day: 'the daily spending limit of this kind of job', platform_day: "the service's daily spending limit",
};

/**
 * A spending cap that applies to the new job is reached (lib/spend/); nothing was created. `Retry-After` is the end
 * of the cap's period: the next midnight UTC, or the first day of the next month (UTC) for the monthly cap.
 */
export class SpendLimitReachedError extends HttpError {
  readonly status = 429;
  readonly code = 'SPEND_LIMIT_REACHED';
  override readonly headers: Readonly<Record<string, string>>;
  constructor(readonly scope: string, readonly retryAfterSeconds: number) {
    super(`${SPEND_LIMIT_TEXT[scope] ?? 'A spending limit'} was reached; try again after it resets (${scope === 'user_month' ? 'on the 1st of next month' : 'at 00:00'} UTC)`.replace(/^./, (c) => c.toUpperCase()));
    this.headers = { 'retry-after': String(retryAfterSeconds) };
  }
}

/** The user stored as many keys within the last hour as one hour allows (each store calls KMS and adds a row). */
export class TooManyKeyWritesError extends HttpError {
  readonly status = 429;
  readonly code = 'TOO_MANY_KEY_WRITES';
  override readonly headers: Readonly<Record<string, string>>;
  constructor(readonly limit: number, readonly retryAfterSeconds: number) {
    super(`You stored ${limit} keys within the last hour; wait before storing another`);
    this.headers = { 'retry-after': String(retryAfterSeconds) };
  }
}

/** Admin retry of a job that is not failed or cancelled, or whose snapshot can no longer be run. */
export class JobNotRetryableError extends HttpError {
  readonly status = 409;
  readonly code = 'JOB_NOT_RETRYABLE';
  constructor(readonly jobId: string, reason: string, options?: { cause?: unknown }) {
    super(`Job cannot be retried: ${reason}`, options);
  }
}

/** Admin retry of a job whose input snapshot expired (ADR-003 §8.4) or was deleted by retention. */
export class SnapshotExpiredError extends HttpError {
  readonly status = 409;
  readonly code = 'SNAPSHOT_EXPIRED';
  constructor(readonly jobId: string, expiredAt: Date | null) {
    super(`Job cannot be retried: its input snapshot ${expiredAt ? `expired at ${expiredAt.toISOString()}` : 'no longer exists'} (retention)`);
  }
}

/** A result route for a job that has not succeeded (yet, or ever). */
export class JobResultNotAvailableError extends HttpError {
  readonly status = 409;
  readonly code = 'JOB_RESULT_NOT_AVAILABLE';
  constructor(readonly jobId: string, readonly lifecycleStatus: string) {
    super(`The job has no result: it is ${lifecycleStatus}`);
  }
}
