/**
 * Typed error → HTTP response, by `instanceof` only (never by message text). The body is always
 * `{ "error": { "code", "message" } }` (plus `details` for VALIDATION_FAILED). Anything not listed here —
 * Prisma errors, configuration errors, bugs — becomes `500 INTERNAL` with a generic message; its detail is
 * logged server-side and never sent. A 5xx never exposes its message (middy's `expose = status < 500`).
 */
import { CredentialKeyFormatError, CredentialNotFoundError, CredentialServiceUnavailableError, UnsupportedKeyProviderError } from '../credentials/errors.ts';
import { CredentialModeNotAllowedError, IdempotencyConflictError } from '../jobs/creation-errors.ts';
import { CanonicalJsonError, InputValidationError, SnapshotLimitError, type IssueDetail } from '../jobs/errors.ts';
import { JobAlreadyCancelledError, JobNotCancellableError, JobNotFoundError } from '../jobs/lifecycle-errors.ts';
import { isDatabaseUnavailable, isLockConflict } from '../db/connection-errors.ts';
import { isIllFormedTextError } from '../db/text-guard.ts';
import { HttpError, RequestValidationError } from './http-errors.ts';

export interface ErrorBody {
  error: { code: string; message: string; details?: IssueDetail[] };
}

export interface MappedError {
  status: number;
  body: ErrorBody;
  headers: Record<string, string>;
  /** False for 5xx: the caller must log the original error, which the body does not describe. */
  expose: boolean;
}

type ErrorClass = abstract new (...args: never[]) => Error;

interface Mapping {
  type: ErrorClass;
  status: number;
  /** Public code when it differs from the error's own `code`. */
  code?: string;
  /** Field paths for VALIDATION_FAILED. */
  details?: (err: never) => IssueDetail[];
}

const VALIDATION = 'VALIDATION_FAILED';
const bodyIssues = (err: { issues: readonly IssueDetail[] }) => err.issues.map((i) => ({ path: i.path ? `body.${i.path}` : 'body', message: i.message }));

/** Errors of other capabilities that the API exposes, first match wins. */
const MAPPINGS: readonly Mapping[] = [
  { type: JobNotFoundError, status: 404 },
  { type: JobNotCancellableError, status: 409 },
  { type: JobAlreadyCancelledError, status: 409 },
  { type: IdempotencyConflictError, status: 409 },
  { type: InputValidationError, status: 400, details: bodyIssues },
  { type: CredentialModeNotAllowedError, status: 400 },
  { type: SnapshotLimitError, status: 400, code: VALIDATION, details: (e: SnapshotLimitError) => [{ path: e.path ? `body.${e.path}` : 'body', message: e.message }] },
  { type: CanonicalJsonError, status: 400, code: VALIDATION, details: (e: CanonicalJsonError) => [{ path: e.path ? `body.${e.path}` : 'body', message: e.message }] },
  { type: CredentialKeyFormatError, status: 400, code: VALIDATION, details: (e: CredentialKeyFormatError) => [{ path: 'body.apiKey', message: e.message }] },
  { type: UnsupportedKeyProviderError, status: 400, code: VALIDATION },
  { type: CredentialNotFoundError, status: 404 },
  { type: CredentialServiceUnavailableError, status: 503, code: 'PLATFORM_UNAVAILABLE' },
];

/** Public messages of the statuses whose own message is never shown. */
const GENERIC_MESSAGES: Readonly<Record<number, { code: string; message: string }>> = {
  500: { code: 'INTERNAL', message: 'Internal server error' },
  503: { code: 'PLATFORM_UNAVAILABLE', message: 'The service is temporarily unavailable; try again shortly' },
};

/** Seconds a client should wait after a 503 before trying again. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;
/** Seconds after a 503 caused by lock contention (a deadlock that outlived the retries, a lock-wait timeout). */
export const CONTENTION_RETRY_AFTER_SECONDS = 1;

/** The response for `err`. Pure: logging is the caller's job (see `expose`). */
export function mapError(err: unknown): MappedError {
  if (err instanceof HttpError) {
    const details = err instanceof RequestValidationError ? [...err.issues] : undefined;
    return build(err.status, err.code, err.message, details, { ...err.headers });
  }
  if (isDatabaseUnavailable(err)) return build(503, 'PLATFORM_UNAVAILABLE', '', undefined, {});
  // Still deadlocked after the write path's bounded retries, or a lock-wait timeout: contention, try again soon.
  if (isLockConflict(err)) return build(503, 'PLATFORM_UNAVAILABLE', '', undefined, { 'retry-after': String(CONTENTION_RETRY_AFTER_SECONDS) });
  // The boundary (./well-formed.ts) refuses ill-formed text first; this is the database door's second line.
  if (isIllFormedTextError(err)) return build(400, VALIDATION, 'Request is invalid: text must be well-formed Unicode', [{ path: 'body', message: 'must be well-formed Unicode' }], {});
  const mapping = MAPPINGS.find((m) => err instanceof m.type);
  if (mapping) {
    const e = err as Error & { code: string };
    const details = mapping.details?.(e as never);
    return build(mapping.status, mapping.code ?? e.code, e.message, details, {});
  }
  return build(500, 'INTERNAL', '', undefined, {});
}

function build(status: number, code: string, message: string, details: IssueDetail[] | undefined, headers: Record<string, string>): MappedError {
  const expose = status < 500;
  if (!expose) {
    const generic = GENERIC_MESSAGES[status] ?? GENERIC_MESSAGES[500]!;
    const retry: Record<string, string> = status === 503 ? { 'retry-after': String(UNAVAILABLE_RETRY_AFTER_SECONDS) } : {};
    return { status, expose, headers: { ...retry, ...headers }, body: { error: { code: generic.code, message: generic.message } } };
  }
  const error: ErrorBody['error'] = { code, message };
  if (code === VALIDATION) error.details = details ?? [];
  return { status, expose, headers, body: { error } };
}
