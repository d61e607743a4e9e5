/**
 * Cancel semantics (ADR-003 §5.4): a queued job is cancelled at once; a running job gets
 * `cancelRequestedAt` and the engine that holds its lease finishes it; a terminal job refuses with a typed
 * error the API maps to JOB_NOT_CANCELLABLE / JOB_ALREADY_CANCELLED.
 */
import type { AiJob, Db } from '../db/client.ts';
import { markCancelled } from './lifecycle-repository.ts';
import { JobAlreadyCancelledError, JobNotCancellableError, JobNotFoundError, StaleTransitionError } from './lifecycle-errors.ts';

export type CancelOutcome = { outcome: 'cancelled' | 'cancel_requested'; job: AiJob };

/**
 * Requests cancellation. When `ownerId` is given, another user's job is reported as not found (no
 * enumeration). Idempotent for a running job whose cancel was already requested.
 */
export async function requestCancel(
  db: Db, jobId: string, opts: { actor: string; ownerId?: string; now?: Date },
): Promise<CancelOutcome> {
  const now = opts.now ?? new Date();
  // Two rounds: a queued job may start running between our read and our write.
  for (let round = 0; round < 2; round += 1) {
    const job = await db.aiJob.findUnique({ where: { id: jobId } });
    if (!job || (opts.ownerId !== undefined && job.userId !== opts.ownerId)) throw new JobNotFoundError(jobId);
    if (job.lifecycleStatus === 'cancelled') throw new JobAlreadyCancelledError(jobId);
    if (job.lifecycleStatus === 'succeeded' || job.lifecycleStatus === 'failed') {
      throw new JobNotCancellableError(jobId, job.lifecycleStatus);
    }
    if (job.lifecycleStatus === 'queued') {
      try {
        const cancelled = await markCancelled(db, jobId, { actor: opts.actor, reason: 'cancelled while queued', now });
        return { outcome: 'cancelled', job: cancelled };
      } catch (err) {
        if (err instanceof StaleTransitionError) continue;
        throw err;
      }
    }
    await db.aiJob.updateMany({
      where: { id: jobId, lifecycleStatus: 'running', cancelRequestedAt: null },
      data: { cancelRequestedAt: now },
    });
    const after = await db.aiJob.findUniqueOrThrow({ where: { id: jobId } });
    if (after.lifecycleStatus !== 'running') continue;
    return { outcome: 'cancel_requested', job: after };
  }
  const settled = await db.aiJob.findUniqueOrThrow({ where: { id: jobId } });
  if (settled.lifecycleStatus === 'cancelled') throw new JobAlreadyCancelledError(jobId);
  throw new JobNotCancellableError(jobId, settled.lifecycleStatus);
}
