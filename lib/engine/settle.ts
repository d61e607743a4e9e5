/**
 * Ends an attempt that did not succeed: cancel → `cancelled`; retryable with attempts left → lease released
 * (the job stays `running`, the message comes back after the backoff); otherwise → `failed` with the last
 * code, the safe public message and the internal detail for admins. Every write is fenced by the lease.
 */
import type { AiJob } from '../db/client.ts';
import type { JobDefinition } from '../jobs/definition.ts';
import { InfrastructureError, JobCancelledError, MAX_INFRASTRUCTURE_REFUNDS, type JobFailure } from '../jobs/failures.ts';
import { markCancelled, markFailed, releaseLock, type LeaseFence } from '../jobs/lifecycle-repository.ts';
import { redactText } from '../jobs/redaction.ts';
import type { EngineDeps } from './engine-deps.ts';
import type { RunOutcome } from './outcome.ts';
import { decideAfterFailure } from './retry-policy.ts';
import { CapacityWaitError } from '../capacity/capacity-wait.ts';
import { settleCapacityWait } from './capacity-park.ts';

const MAX_INTERNAL_MESSAGE = 4000;

export async function settleFailure(
  job: AiJob, def: JobDefinition, fence: LeaseFence, failure: JobFailure, previousErrorCode: string | null, deps: EngineDeps,
): Promise<RunOutcome> {
  const actor = deps.instanceId;
  if (failure instanceof JobCancelledError) {
    await markCancelled(deps.db, job.id, { fence, actor, reason: 'cancel requested while running' });
    return { kind: 'cancelled', jobId: job.id };
  }
  // No route could take the call: not the job's failure (./capacity-park.ts).
  if (failure instanceof CapacityWaitError) return settleCapacityWait(job, def, fence, failure, deps);
  const detail = {
    actor, errorCode: failure.code, publicMessage: failure.publicMessage,
    internalMessage: internalDetail(failure),
  };
  if (failure instanceof InfrastructureError) {
    const refunded = await refundInfrastructureAttempt(job, fence, detail, deps);
    if (refunded) return refunded;
  }
  const decision = decideAfterFailure(job, def, failure, previousErrorCode);
  if (decision.action === 'retry') {
    const retryAt = new Date(Date.now() + decision.delayMs);
    await releaseLock(deps.db, job.id, fence, { ...detail, retryAt, reason: `attempt ${job.attemptCount} failed; retry in ${decision.delayMs} ms` });
    return { kind: 'retry', jobId: job.id, code: failure.code, delayMs: decision.delayMs };
  }
  await markFailed(deps.db, job.id, fence, { ...detail, reason: decision.reason });
  return { kind: 'failed', jobId: job.id, code: failure.code };
}

export { MAX_INFRASTRUCTURE_REFUNDS };

/** Backoff before the redelivery after the n-th (0-based) infrastructure failure: 2 s, 4 s, 8 s. */
export function infrastructureBackoffMs(n: number): number {
  return Math.min(2_000 * 2 ** n, 30_000);
}

/**
 * An infrastructure failure (database lost mid-attempt) is the platform's, not the job's: the lease is
 * released with the attempt given back, and the message comes back after a short backoff. Undefined once
 * {@link MAX_INFRASTRUCTURE_REFUNDS} were spent (counted from the job's transition history).
 */
async function refundInfrastructureAttempt(
  job: AiJob, fence: LeaseFence, detail: { actor: string; errorCode: string; publicMessage: string; internalMessage: string }, deps: EngineDeps,
): Promise<RunOutcome | undefined> {
  const spent = await deps.db.aiJobTransition.count({ where: { jobId: job.id, errorCode: detail.errorCode, toStatus: 'running', fromStatus: 'running' } });
  if (spent >= MAX_INFRASTRUCTURE_REFUNDS) return undefined;
  const delayMs = infrastructureBackoffMs(spent);
  deps.logger.warn('infrastructure failure during an attempt; attempt given back', { jobId: job.id, attempt: job.attemptCount, refund: spent + 1, delayMs });
  await releaseLock(deps.db, job.id, fence, {
    ...detail, retryAt: new Date(Date.now() + delayMs), refundAttempt: true,
    reason: `infrastructure failure ${spent + 1}/${MAX_INFRASTRUCTURE_REFUNDS}; attempt ${job.attemptCount} given back`,
  });
  return { kind: 'retry', jobId: job.id, code: detail.errorCode, delayMs };
}

/**
 * Admin-only text: the failure's message and its cause chain, bounded, with secret-shaped substrings
 * redacted (a provider's error text may quote a key or token; the provider itself removes the exact key it
 * used). Never the input.
 */
export function internalDetail(failure: JobFailure): string {
  const parts = [failure.message];
  let cause = failure.cause;
  for (let depth = 0; cause instanceof Error && depth < 3; depth += 1) {
    parts.push(`caused by ${cause.name}: ${cause.message}`);
    cause = cause.cause;
  }
  return redactText(parts.join(' | ')).slice(0, MAX_INTERNAL_MESSAGE);
}
