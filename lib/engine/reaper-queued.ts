/**
 * Queued jobs nobody picked up (issue 15): the enqueue message was published but no consumer took the job
 * within the queue's bound — the queue lost it (a purge, the local runtime's in-memory queue on a crash).
 * First the job is re-enqueued with a new deduplication id in a message group of its own; if that message
 * was published and the job is still queued a bound later, the job fails with QUEUED_NOT_PICKED_UP.
 * A job whose enqueue row is not published yet is the dispatcher's (DISPATCH_FAILED), not ours.
 * Served by the (lifecycleStatus, createdAt) index (a range of queued jobs that old); nothing is read when nothing is.
 */
import type { Prisma, PrismaDb } from '../db/client.ts';
import { failBeforeAttempt } from '../jobs/lifecycle-repository.ts';
import { JOB_QUEUE_NAMES } from '../queue/queue-definitions.ts';
import { ACTOR, emptyCounts, enqueueKey, guarded, reenqueue, type ReapCounts, type ReaperOptions } from './reaper.ts';

export const QUEUED_NOT_PICKED_UP = 'QUEUED_NOT_PICKED_UP';

/** Jobs of `queueName` still queued since before `cutoff` (now − the queue's bound): what the reaper considers here. */
export function unpickedQueuedWhere(queueName: string, cutoff: Date): Prisma.AiJobWhereInput {
  return { queueName, lifecycleStatus: 'queued', createdAt: { lt: cutoff } };
}

export async function reapUnpickedQueuedJobs(db: PrismaDb, opts: ReaperOptions): Promise<ReapCounts> {
  const counts = emptyCounts();
  const now = opts.now ?? new Date();
  for (const queueName of JOB_QUEUE_NAMES) {
    const cutoff = new Date(now.getTime() - opts.queuedBoundMs[queueName]);
    const candidates = await db.aiJob.findMany({ where: unpickedQueuedWhere(queueName, cutoff), orderBy: { createdAt: 'asc' }, take: opts.limit });
    for (const job of candidates) {
      await guarded(counts, async () => {
        const [original, again] = await Promise.all([`ai.job.enqueue:${job.id}`, enqueueKey(job.id, 1)].map((dedupeKey) =>
          db.outboxEvent.findUnique({ where: { dedupeKey }, select: { publishedAt: true } })));
        if (!original?.publishedAt || original.publishedAt > cutoff) return; // not lost: not sent yet, or sent late
        if (!again) {
          await db.$transaction((tx) => reenqueue(tx, job, 1));
          counts.reenqueued += 1;
          return;
        }
        if (!again.publishedAt || again.publishedAt > cutoff) return; // the re-enqueue is still on its way
        await failBeforeAttempt(db, job.id, {
          actor: ACTOR, reason: 'no consumer picked the job up, even after a re-enqueue', errorCode: QUEUED_NOT_PICKED_UP,
          publicMessage: 'The job could not be started; please try again', internalMessage: `queued since ${job.createdAt.toISOString()}; re-enqueued once`,
        });
        counts.failed += 1;
      });
    }
  }
  return counts;
}
