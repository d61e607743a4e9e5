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
      orderBy: { id: 'asc' }, take: 500,
    });
    if (jobs.length === 0) return counts;
    cursor = jobs.at(-1)?.id;
    const leased = jobs.filter((j) => j.lifecycleStatus === 'running' && j.lockedBy !== null);
    for (const job of leased) if (await releaseInterrupted(db, job, now)) counts.released += 1;
    const due = jobs.filter((j) => j.lifecycleStatus === 'queued' || j.lockedBy !== null || j.lockUntil === null || j.lockUntil <= now);
    // One insert per page: a restart after a busy run has many open jobs to hand out again.
    if (due.length > 0) await db.$transaction((tx) => insertOutboxEvents(tx, due.map((job) => bootMessage(job, bootId))));
    counts.reenqueued += due.length;
  }
}

/** The lease of a job the dead run was executing: released, the attempt given back. False if it moved on. */
async function releaseInterrupted(db: PrismaDb, job: AiJob, now: Date): Promise<boolean> {
  try {
    await releaseLock(db, job.id, { holder: job.lockedBy, leaseVersion: job.leaseVersion }, {
      actor: 'local-runtime', reason: 'the previous local runtime stopped while the job ran; attempt given back',
      errorCode: 'RUNTIME_RESTARTED', publicMessage: 'The job was interrupted and will be retried', retryAt: now, refundAttempt: true,
    });
    return true;
  } catch (err) {
    if (err instanceof LeaseLostError || err instanceof StaleTransitionError) return false;
    throw err;
  }
}

function bootMessage(job: AiJob, bootId: string) {
  const event = buildEnqueueEvent({ jobId: job.id, queueName: job.queueName, messageGroupId: `${job.id}:boot-${bootId}` });
  return { ...event, dedupeKey: `${event.dedupeKey}:boot-${bootId}` };
}
