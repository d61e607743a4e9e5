/**
 * Cancel semantics (ADR-003 §5.4): a queued job is cancelled at once; a running job between attempts (lease
 * released, waiting for its backoff or a Retry-After) is cancelled at once too, fenced by its released lease;
 * a running job with a lease holder gets `cancelRequestedAt` and the engine that holds its lease finishes it
 * (and can no longer succeed: markSucceeded requires no cancel request). A terminal job refuses with a typed
 * error the API maps to JOB_NOT_CANCELLABLE / JOB_ALREADY_CANCELLED.
 *
 * `execution.cancellable: false` refuses (JOB_NOT_CANCELLABLE) once the job is `running`, between attempts
 * included: work has started whose effect the definition says must not be cut short. A queued job of such
 * a type may still be cancelled: nothing has run, nothing was billed, no side effect exists to protect.
 */
import type { AiJob, Db } from '../db/client.ts';
import { isDeadlock } from '../db/connection-errors.ts';
import { markCancelled } from './lifecycle-repository.ts';
import {
  JobAlreadyCancelledError, JobNotCancellableError, JobNotFoundError, LeaseLostError, StaleTransitionError,
} from './lifecycle-errors.ts';

export type CancelOutcome = { outcome: 'cancelled' | 'cancel_requested'; job: AiJob };

export interface CancelOptions {
  /** Recorded in the transition history: `api:<userId>`, `admin:<userId>`. */
  actor: string;
  /** When given, another user's job is reported as not found (no enumeration). Admins omit it. */
  ownerId?: string;
  now?: Date;
  /** Whether a job type may be cancelled while running (`execution.cancellable`); unknown types may. */
  isCancellable?: (jobType: string) => boolean;
}

/**
 * Requests cancellation. Idempotent for a running job whose cancel was already requested.
 * @throws JobNotFoundError, JobAlreadyCancelledError, JobNotCancellableError
 */
export async function requestCancel(db: Db, jobId: string, opts: CancelOptions): Promise<CancelOutcome> {
  const now = opts.now ?? new Date();
  // A few rounds: the job may move (start, release, re-lock) between our read and our write.
  for (let round = 0; round < 3; round += 1) {
    const job = await db.aiJob.findUnique({ where: { id: jobId } });
    if (!job || (opts.ownerId !== undefined && job.userId !== opts.ownerId)) throw new JobNotFoundError(jobId);
    refuseFinished(job);
    const meta = { actor: opts.actor, now };
    if (job.lifecycleStatus === 'queued') {
      const cancelled = await movedOn(() => markCancelled(db, jobId, { ...meta, reason: 'cancelled while queued' }));
      if (cancelled) return { outcome: 'cancelled', job: cancelled };
      continue;
    }
    if (opts.isCancellable && !opts.isCancellable(job.jobType)) {
      throw new JobNotCancellableError(jobId, job.lifecycleStatus, 'This kind of job cannot be cancelled once it has started');
    }
    if (job.lockedBy === null) {
      const fence = { holder: null, leaseVersion: job.leaseVersion };
      const cancelled = await movedOn(() => markCancelled(db, jobId, { ...meta, fence, reason: 'cancelled between attempts' }));
      if (cancelled) return { outcome: 'cancelled', job: cancelled };
      continue;
    }
    await db.aiJob.updateMany({
      where: { id: jobId, lifecycleStatus: 'running', cancelRequestedAt: null },
      data: { cancelRequestedAt: now },
    });
    const after = await db.aiJob.findUniqueOrThrow({ where: { id: jobId } });
    if (after.lifecycleStatus === 'running' && after.cancelRequestedAt !== null) return { outcome: 'cancel_requested', job: after };
  }
  const settled = await db.aiJob.findUniqueOrThrow({ where: { id: jobId } });
  refuseFinished(settled);
  throw new JobNotCancellableError(jobId, settled.lifecycleStatus, 'The job is changing state; try again');
}

function refuseFinished(job: AiJob): void {
  if (job.lifecycleStatus === 'cancelled') throw new JobAlreadyCancelledError(job.id);
  if (job.lifecycleStatus === 'succeeded' || job.lifecycleStatus === 'failed') {
    throw new JobNotCancellableError(job.id, job.lifecycleStatus);
  }
}

/**
 * Runs a compare-and-set; undefined when someone moved the job first (the caller reads it again). A deadlock
 * counts as that too: the server rolled our transaction back whole, and the other one (a worker taking the job,
 * say) went first.
 */
async function movedOn(cas: () => Promise<AiJob>): Promise<AiJob | undefined> {
  try {
    return await cas();
  } catch (err) {
    if (err instanceof StaleTransitionError || err instanceof LeaseLostError || isDeadlock(err)) return undefined;
    throw err;
  }
}

/** {@link CancelOptions.isCancellable} read from the registered definitions. */
export function cancellableIn(registry: { has(jobType: string): boolean; get(jobType: string): { execution: { cancellable: boolean } } }) {
  return (jobType: string): boolean => !registry.has(jobType) || registry.get(jobType).execution.cancellable;
}
