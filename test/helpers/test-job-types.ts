/**
 * Variants of synthetic_job with short timings for engine tests (same prompt and projector, so they go
 * through the whole pipeline), in a registry of their own.
 */
import { defineJob, type JobDefinitionSpec } from '../../lib/jobs/definition.ts';
import { createRegistry } from '../../lib/jobs/registry.ts';
import { jobDefinitions } from '../../lib/job-types/index.ts';
import { syntheticJob } from '../../lib/job-types/synthetic-job.ts';

/** synthetic_job with 100 ms backoff and `maxRetries` retries. */
export const quickRetryJob = defineJob({
  ...syntheticJob,
  jobType: 'quick_retry_job',
  execution: { ...syntheticJob.execution, maxRetries: 2, retryBackoff: { type: 'exponential', delayMs: 100, maxDelayMs: 1_000 } },
});

/**
 * Times out after 3 s and fails (abortStrategy fail). Not shorter: the attempt must reach its provider call
 * before the deadline, and on a loaded machine opening the pools' connections on demand took over 1 s.
 */
export const shortTimeoutJob = defineJob({
  ...syntheticJob,
  jobType: 'short_timeout_job',
  execution: { ...syntheticJob.execution, timeoutMs: 3_000, maxRetries: 0 },
});

/** Times out after 3 s and retries (abortStrategy retry). */
export const retryOnTimeoutJob = defineJob({
  ...shortTimeoutJob,
  jobType: 'retry_timeout_job',
  execution: { ...shortTimeoutJob.execution, abortStrategy: 'retry', maxRetries: 1, retryBackoff: { type: 'exponential', delayMs: 100, maxDelayMs: 1_000 } },
});

/** May not be cancelled once running (`execution.cancellable: false`); queued it still may. */
export const uncancellableJob = defineJob({
  ...quickRetryJob,
  jobType: 'uncancellable_job',
  execution: { ...quickRetryJob.execution, cancellable: false },
});

/** Its output is redacted before it is stored or shown (`security.outputRedaction: true`). */
export const redactedOutputJob = defineJob({
  ...syntheticJob,
  jobType: 'redacted_output_job',
  security: { ...syntheticJob.security, outputRedaction: true },
});

/** One attempt only (maxRetries 0): any failure that uses an attempt ends it. */
export const singleAttemptJob = defineJob({
  ...quickRetryJob,
  jobType: 'single_attempt_job',
  execution: { ...quickRetryJob.execution, maxRetries: 0 },
});

/** Has no projector: nothing but the job row records its success. */
export const noProjectorJob = defineJob({ ...syntheticJob, jobType: 'no_projector_job', projector: undefined });

export function testRegistry(...extra: JobDefinitionSpec[]) {
  return createRegistry([
    ...jobDefinitions, quickRetryJob, shortTimeoutJob, retryOnTimeoutJob, uncancellableJob, redactedOutputJob, noProjectorJob, singleAttemptJob, ...extra,
  ]);
}
