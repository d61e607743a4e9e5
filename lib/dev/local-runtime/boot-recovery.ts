/**
 * The local runtime's queues live in its process (fauxqs in memory): a crash or Ctrl-C loses every message
 * it held. The database is the source of truth, so at boot, before any consumer starts, every job the
 * previous run left open is given a message again:
 * - `queued` → re-enqueued;
 * - `running` with a lease (held by the previous, dead process: the local runtime is its database's only
 *   consumer) → lease released with the attempt given back (the crash was not the job's), re-enqueued;
 * - `running` between attempts → re-enqueued if its retry is due; otherwise the reaper re-enqueues it once
 *   it is overdue (REAPER_OVERDUE_RETRY_MS past its backoff).
 * Each message has a deduplication id and message group unique to this boot. A message that survived anyway
 * causes only a duplicate delivery, which the lease turns away.
 */
import type { AiJob, PrismaDb } from '../../db/client.ts';
import { releaseLock } from '../../jobs/lifecycle-repository.ts';
import { LeaseLostError, StaleTransitionError } from '../../jobs/lifecycle-errors.ts';
import { buildEnqueueEvent, insertOutboxEvents } from '../../outbox/outbox-writer.ts';

export interface BootRecovery {
  reenqueued: number;
  released: number;
}

/** Gives every open job of the previous run a message again; `bootId` makes this boot's dedupe ids unique. */
export async function recoverOpenJobs(db: PrismaDb, bootId: string, now = new Date()): Promise<BootRecovery> {
  const counts: BootRecovery = { reenqueued: 0, released: 0 };
  for (let cursor: string | undefined; ;) {
    const jobs = await db.aiJob.findMany({
      where: { lifecycleStatus: { in: ['queued', 'running'] }, ...(cursor ? { id: { gt: cursor } } : {}) },
      orderBy: { id: 'asc' }, take: 200,
    });
    if (jobs.length === 0) return counts;
    cursor = jobs.at(-1)?.id;
    for (const job of jobs) await recoverOne(db, job, bootId, now, counts);
  }
}

async function recoverOne(db: PrismaDb, job: AiJob, bootId: string, now: Date, counts: BootRecovery): Promise<void> {
  const releasedNotDue = job.lifecycleStatus === 'running' && job.lockedBy === null && job.lockUntil !== null && job.lockUntil > now;
  if (releasedNotDue) return;
  try {
    await db.$transaction(async (tx) => {
      if (job.lifecycleStatus === 'running' && job.lockedBy !== null) {
        await releaseLock(tx, job.id, { holder: job.lockedBy, leaseVersion: job.leaseVersion }, {
          actor: 'local-runtime', reason: 'the previous local runtime stopped while the job ran; attempt given back',
          errorCode: 'RUNTIME_RESTARTED', publicMessage: 'The job was interrupted and will be retried', retryAt: now, refundAttempt: true,
        });
        counts.released += 1;
      }
      const event = buildEnqueueEvent({ jobId: job.id, queueName: job.queueName, messageGroupId: `${job.id}:boot-${bootId}` });
      await insertOutboxEvents(tx, [{ ...event, dedupeKey: `${event.dedupeKey}:boot-${bootId}` }]);
    });
    counts.reenqueued += 1;
  } catch (err) {
    if (!(err instanceof LeaseLostError || err instanceof StaleTransitionError)) throw err;
  }
}
