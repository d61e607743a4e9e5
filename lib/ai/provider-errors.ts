/**
 * Maps what the `openai` SDK throws onto the job failure taxonomy (lib/jobs/failures.ts), by `instanceof` and
 * HTTP status only, never by message text. Messages name the provider and the status, never the prompt or
 * the key; the SDK error is kept as `cause` for logs and the admin view.
 *
 * | SDK error                                   | failure                                   |
 * |---------------------------------------------|-------------------------------------------|
 * | `APIError` 429                              | ProviderRateLimitedError (+ retryAfterMs) |
 * | `APIError` 401, 403                         | CredentialInvalidError                    |
 * | `APIError` 408, `APIConnectionTimeoutError` | ProviderTimeoutError                      |
 * | `APIError` 5xx, `APIConnectionError`        | ProviderUnavailableError                  |
 * | `APIError` other 4xx (400, 402, 404, 422)   | ProviderUnavailableError: this provider refused the request; another route may accept it |
 * | `APIError` without a status: an error event inside a 200 stream, rate-limit code/type | ProviderRateLimitedError (no Retry-After) |
 * | `APIError` without a status, any other error event | ProviderUnavailableError             |
 * | anything else (e.g. a 200 that is not JSON) | ProviderUnavailableError                  |
 *
 * An error event inside the stream is how OpenAI-compatible providers report a failure after the 200 went out:
 * `data: {"error": {"message": …, "type": …, "code": …}}`; the SDK raises it as an `APIError` whose `status` is
 * undefined and whose `code`/`type` are the event's. A rate limit there reads `code: "rate_limit_exceeded"`
 * (OpenAI) or `type: "rate_limit_error"` (gateways such as LiteLLM); those structured fields decide, never
 * the message. Aborts are not mapped here: the provider checks its signals first (see `OpenAiCompatibleProvider`).
 */
import { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';
import {
  CredentialInvalidError,
  type JobFailure,
  ProviderRateLimitedError,
  ProviderTimeoutError,
  ProviderUnavailableError,
} from '../jobs/failures.ts';

/** Longest wait we take from a provider's `Retry-After`; anything later is clamped (a day is a misconfiguration). */
export const MAX_RETRY_AFTER_MS = 15 * 60_000;

/**
 * The wait a 429 asks for: `retry-after-ms` (OpenAI's extension), else `Retry-After` as delta-seconds or an
 * HTTP-date. Undefined when absent or unparsable; clamped to [0, {@link MAX_RETRY_AFTER_MS}].
 */
export function retryAfterMsOf(headers: Headers | undefined, now: number = Date.now()): number | undefined {
  const ms = headers?.get('retry-after-ms')?.trim();
  if (ms && /^\d+(\.\d+)?$/.test(ms)) return clampWait(Number(ms));
  const value = headers?.get('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return clampWait(Number(value) * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : clampWait(at - now);
}

function clampWait(ms: number): number {
  return Math.min(Math.max(Math.round(ms), 0), MAX_RETRY_AFTER_MS);
}

/** Classifies one SDK error from `provider`; `timeoutMs` is the provider's request deadline (for the message). */
export function toProviderFailure(err: unknown, provider: string, timeoutMs: number): JobFailure {
  const cause = { cause: err };
  if (err instanceof APIConnectionTimeoutError) {
    return new ProviderTimeoutError(`${provider} did not answer within ${timeoutMs} ms`, cause);
  }
  if (err instanceof APIConnectionError) {
    return new ProviderUnavailableError(`${provider} could not be reached`, cause);
  }
  if (err instanceof APIError && typeof err.status === 'number') {
    return fromStatus(err.status, err.headers, provider, cause);
  }
  if (err instanceof APIError) return fromStreamErrorEvent(err, provider, cause);
  return new ProviderUnavailableError(`${provider} returned an unusable response`, cause);
}

/** `code` and `type` values of an in-stream error event that mean a rate limit. */
const RATE_LIMIT_TAGS: ReadonlySet<string> = new Set(['rate_limit_exceeded', 'rate_limit_error']);

function fromStreamErrorEvent(err: APIError, provider: string, cause: { cause: unknown }): JobFailure {
  const tags = [err.code, err.type].filter((t): t is string => typeof t === 'string').map((t) => t.slice(0, 64));
  if (tags.some((t) => RATE_LIMIT_TAGS.has(t))) {
    return new ProviderRateLimitedError(`${provider} reported a rate limit mid-stream`, undefined, cause);
  }
  return new ProviderUnavailableError(`${provider} reported an error mid-stream${tags.length > 0 ? ` (${tags.join(', ')})` : ''}`, cause);
}

function fromStatus(status: number, headers: Headers | undefined, provider: string, cause: { cause: unknown }): JobFailure {
  const what = `${provider} answered HTTP ${status}`;
  if (status === 429) return new ProviderRateLimitedError(what, retryAfterMsOf(headers), cause);
  if (status === 401 || status === 403) return new CredentialInvalidError(what, cause);
  if (status === 408) return new ProviderTimeoutError(what, cause);
  if (status >= 500) return new ProviderUnavailableError(what, cause);
  return new ProviderUnavailableError(`${what} (request refused)`, cause);
}
