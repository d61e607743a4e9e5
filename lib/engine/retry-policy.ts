/**
 * What happens after an attempt failed (ADR-003 §5.2, §5.5). The definition's retry count and exponential
 * backoff decide; a provider's Retry-After is honoured; INTERNAL errors are retried once; non-retryable
 * failures end the job at once.
 */
import type { AiJob } from '../db/client.ts';
import type { JobDefinition } from '../jobs/definition.ts';
import { InternalJobError, ProviderRateLimitedError, type JobFailure } from '../jobs/failures.ts';

export type FailureDecision = { action: 'retry'; delayMs: number } | { action: 'fail'; reason: string };

/** SQS cannot delay a redelivery longer than its 12 h visibility limit. */
export const MAX_RETRY_DELAY_MS = 12 * 60 * 60 * 1000;

/**
 * Decides retry or fail for `job` (its attemptCount already counts the attempt that failed).
 * `previousErrorCode` is the code the previous attempt released the job with (null on attempt 1).
 */
export function decideAfterFailure(
  job: Pick<AiJob, 'attemptCount' | 'maxAttempts'>,
  def: Pick<JobDefinition, 'execution'>,
  failure: JobFailure,
  previousErrorCode: string | null,
): FailureDecision {
  if (!failure.retryable) return { action: 'fail', reason: `${failure.code} is not retryable` };
  if (failure instanceof InternalJobError && previousErrorCode === failure.code) {
    return { action: 'fail', reason: 'INTERNAL is retried once' };
  }
  if (job.attemptCount >= job.maxAttempts) return { action: 'fail', reason: `retries exhausted (${job.attemptCount}/${job.maxAttempts})` };
  return { action: 'retry', delayMs: retryDelayMs(def, job.attemptCount, failure) };
}

/** Exponential backoff: delayMs × 2^(attempt−1), capped by maxDelayMs, never shorter than Retry-After. */
export function retryDelayMs(def: Pick<JobDefinition, 'execution'>, failedAttempt: number, failure?: JobFailure): number {
  const { delayMs, maxDelayMs } = def.execution.retryBackoff;
  const exponential = Math.min(delayMs * 2 ** Math.max(0, failedAttempt - 1), maxDelayMs);
  const retryAfter = failure instanceof ProviderRateLimitedError ? (failure.retryAfterMs ?? 0) : 0;
  return Math.min(Math.max(exponential, retryAfter), MAX_RETRY_DELAY_MS);
}
