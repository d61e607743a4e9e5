/**
 * PREPARE (ADR-003 §5.1): load the job, acknowledge duplicates of finished jobs, fail jobs whose type is no
 * longer registered, honour a cancel requested before this attempt, and take the lease.
 */
import type { AiJob, AiJobSnapshot } from '../db/client.ts';
import type { JobDefinition } from '../jobs/definition.ts';
import { failBeforeAttempt, lockJobForAttempt, markCancelled, markFailed, type LeaseFence } from '../jobs/lifecycle-repository.ts';
import { JobNotFoundError, LeaseHeldError, StaleTransitionError } from '../jobs/lifecycle-errors.ts';
import type { JobMessage } from '../queue/job-message.ts';
import type { EngineDeps } from './engine-deps.ts';
import type { RunOutcome } from './outcome.ts';

export const UNKNOWN_JOB_TYPE = 'UNKNOWN_JOB_TYPE';

/** A locked job ready for its attempt, with the input snapshot read in the lock's round trip. */
export type Prepared = { kind: 'ready'; job: AiJob; def: JobDefinition; fence: LeaseFence; snapshot: AiJobSnapshot | null };

export async function prepare(message: Pick<JobMessage, 'jobId' | 'jobType'>, deps: EngineDeps): Promise<Prepared | RunOutcome> {
  const { jobId } = message;
  // The message carries the job type, so the common path goes straight to the lock (one round trip).
  if (!deps.registry.has(message.jobType)) {
    const found = await deps.db.aiJob.findUnique({ where: { id: jobId } });
    if (found?.lifecycleStatus === 'queued' && !deps.registry.has(found.jobType)) {
      await failBeforeAttempt(deps.db, jobId, unknownType(found.jobType)).catch(ignoreStale);
      return { kind: 'failed', jobId, code: UNKNOWN_JOB_TYPE };
    }
  }
  let job: AiJob;
  let snapshot: AiJobSnapshot | null;
  try {
    ({ job, snapshot } = await lockJobForAttempt(deps.db, jobId, deps.instanceId, { leaseMs: deps.timing.leaseMs }));
  } catch (err) {
    if (err instanceof JobNotFoundError) return { kind: 'acknowledged', jobId, reason: 'not_found' };
    if (err instanceof LeaseHeldError) return { kind: 'acknowledged', jobId, reason: 'lease_held' };
    if (err instanceof StaleTransitionError) return { kind: 'acknowledged', jobId, reason: 'terminal' };
    throw err;
  }
  const fence = { holder: deps.instanceId, leaseVersion: job.leaseVersion };
  if (job.cancelRequestedAt) {
    await markCancelled(deps.db, jobId, { fence, actor: deps.instanceId, reason: 'cancel requested before the attempt' });
    return { kind: 'cancelled', jobId };
  }
  if (!deps.registry.has(job.jobType)) {
    // A retry of a job whose type was removed by a deploy: nothing can run it any more.
    await markFailed(deps.db, jobId, fence, unknownType(job.jobType));
    return { kind: 'failed', jobId, code: UNKNOWN_JOB_TYPE };
  }
  return { kind: 'ready', job, def: deps.registry.get(job.jobType), fence, snapshot };
}

function unknownType(jobType: string) {
  return {
    actor: 'engine', reason: 'job type not registered', errorCode: UNKNOWN_JOB_TYPE,
    publicMessage: 'This kind of job is no longer supported', internalMessage: `jobType ${jobType} is not registered`,
  };
}

function ignoreStale(err: unknown): void {
  if (!(err instanceof StaleTransitionError)) throw err;
}
