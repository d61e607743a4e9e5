/** Turns a compare-and-set that matched no row into the typed error that says why. */
import type { Prisma } from '../db/client.ts';
import type { TransitionName } from './states.ts';
import { JobNotFoundError, LeaseHeldError, StaleTransitionError } from './lifecycle-errors.ts';

export async function explainRefusal(
  tx: Prisma.TransactionClient, jobId: string, via: TransitionName, now = new Date(),
): Promise<Error> {
  const job = await tx.aiJob.findUnique({
    where: { id: jobId },
    select: { lifecycleStatus: true, lockedBy: true, lockUntil: true },
  });
  if (!job) return new JobNotFoundError(jobId);
  const leaseLive = job.lockedBy !== null && job.lockUntil !== null && job.lockUntil >= now;
  if (via === 'lockJob' && job.lifecycleStatus === 'running' && leaseLive) return new LeaseHeldError(jobId);
  // Wrong state, or the row changed between the compare-and-set and this read: someone else moved first.
  return new StaleTransitionError(jobId, via, job.lifecycleStatus);
}
