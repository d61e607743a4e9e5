/**
 * Ends an attempt that did not succeed: cancel → `cancelled`; retryable with attempts left → lease released
 * (the job stays `running`, the message comes back after the backoff); otherwise → `failed` with the last
 * code, the safe public message and the internal detail for admins. Every write is fenced by the lease.
 */
import type { AiJob } from '../db/client.ts';
import type { JobDefinition } from '../jobs/definition.ts';
import { JobCancelledError, type JobFailure } from '../jobs/failures.ts';
import { markCancelled, markFailed, releaseLock, type LeaseFence } from '../jobs/lifecycle-repository.ts';
import type { EngineDeps } from './engine-deps.ts';
import type { RunOutcome } from './outcome.ts';
import { decideAfterFailure } from './retry-policy.ts';

const MAX_INTERNAL_MESSAGE = 4000;

export async function settleFailure(
  job: AiJob, def: JobDefinition, fence: LeaseFence, failure: JobFailure, previousErrorCode: string | null, deps: EngineDeps,
): Promise<RunOutcome> {
  const actor = deps.instanceId;
  if (failure instanceof JobCancelledError) {
    await markCancelled(deps.db, job.id, { fence, actor, reason: 'cancel requested while running' });
    return { kind: 'cancelled', jobId: job.id };
  }
  const detail = {
    actor, errorCode: failure.code, publicMessage: failure.publicMessage,
    internalMessage: internalDetail(failure),
  };
  const decision = decideAfterFailure(job, def, failure, previousErrorCode);
  if (decision.action === 'retry') {
    await releaseLock(deps.db, job.id, fence, { ...detail, reason: `attempt ${job.attemptCount} failed; retry in ${decision.delayMs} ms` });
    return { kind: 'retry', jobId: job.id, code: failure.code, delayMs: decision.delayMs };
  }
  await markFailed(deps.db, job.id, fence, { ...detail, reason: decision.reason });
  return { kind: 'failed', jobId: job.id, code: failure.code };
}

/** Admin-only text: the failure's message and its cause chain, bounded. Never the input or a key. */
function internalDetail(failure: JobFailure): string {
  const parts = [failure.message];
  let cause = failure.cause;
  for (let depth = 0; cause instanceof Error && depth < 3; depth += 1) {
    parts.push(`caused by ${cause.name}: ${cause.message}`);
    cause = cause.cause;
  }
  return parts.join(' | ').slice(0, MAX_INTERNAL_MESSAGE);
}
