/**
 * The reaper (ADR-003 §1.7): no job may stay `running` without a live lease and without a message on its way.
 * - Expired leases (a crashed or frozen consumer, beyond a grace period): attempts left → the lease is released
 *   and the job re-enqueued through the outbox for its next attempt; none left → `failed` with LEASE_EXPIRED.
 * - Released leases that waited far longer than their retry backoff (their message is presumably gone):
 *   re-enqueued once per attempt; if that re-enqueue also led nowhere → `failed` with LEASE_EXPIRED.
 * Re-enqueue dedupe keys carry the attempt number, so a message that was not lost after all only causes a
 * duplicate delivery, which the lease (lockJob) turns away.
 */
import type { AiJob, Db, Prisma, PrismaDb } from '../db/client.ts';
import type { JobDefinitionRegistry } from '../jobs/registry.ts';
import { markFailed, releaseLock, type LeaseFence } from '../jobs/lifecycle-repository.ts';
import { findExpiredLocks } from '../jobs/lifecycle-queries.ts';
import { LeaseLostError, StaleTransitionError } from '../jobs/lifecycle-errors.ts';
import { buildEnqueueEvent, insertOutboxEvents } from '../outbox/outbox-writer.ts';

export const LEASE_EXPIRED = 'LEASE_EXPIRED';

export interface ReaperOptions {
  /** Beyond the lease's end, before the reaper steps in (the heartbeat may just be late). */
  graceMs: number;
  /** Extra wait beyond a definition's longest backoff before a released job counts as stalled. */
  stalledMarginMs: number;
  limit: number;
  now?: Date;
}

export const DEFAULT_REAPER_OPTIONS: ReaperOptions = { graceMs: 30_000, stalledMarginMs: 10 * 60_000, limit: 200 };

export interface ReapCounts {
  released: number;
  reenqueued: number;
  failed: number;
  skipped: number;
}

const ACTOR = 'reaper';

export async function reapExpiredLeases(db: PrismaDb, opts: ReaperOptions = DEFAULT_REAPER_OPTIONS): Promise<ReapCounts> {
  const counts: ReapCounts = { released: 0, reenqueued: 0, failed: 0, skipped: 0 };
  for (const job of await findExpiredLocks(db, opts)) {
    const fence = { holder: job.lockedBy, leaseVersion: job.leaseVersion };
    await guarded(counts, async () => {
      if (job.attemptCount >= job.maxAttempts) {
        await markFailed(db, job.id, fence, leaseExpired('lease expired on the last attempt'));
        counts.failed += 1;
        return;
      }
      await db.$transaction(async (tx) => {
        await releaseLock(tx, job.id, fence, leaseExpired('lease expired; released for the next attempt'));
        await reenqueue(tx, job);
      });
      counts.released += 1;
      counts.reenqueued += 1;
    });
  }
  return counts;
}

/** Released jobs whose redelivery never came: re-enqueue once per attempt, then give up. */
export async function reapStalledJobs(
  db: PrismaDb, registry: JobDefinitionRegistry, opts: ReaperOptions = DEFAULT_REAPER_OPTIONS,
): Promise<ReapCounts> {
  const counts: ReapCounts = { released: 0, reenqueued: 0, failed: 0, skipped: 0 };
  const now = opts.now ?? new Date();
  const candidates = await db.aiJob.findMany({
    where: { lifecycleStatus: 'running', lockedBy: null, updatedAt: { lt: new Date(now.getTime() - opts.stalledMarginMs) } },
    orderBy: { updatedAt: 'asc' }, take: opts.limit,
  });
  for (const job of candidates) {
    const longestBackoff = registry.has(job.jobType) ? registry.get(job.jobType).execution.retryBackoff.maxDelayMs : 0;
    if (job.updatedAt.getTime() > now.getTime() - longestBackoff - opts.stalledMarginMs) continue;
    const fence: LeaseFence = { holder: null, leaseVersion: job.leaseVersion };
    await guarded(counts, async () => {
      const already = await db.outboxEvent.count({ where: { dedupeKey: reenqueueKey(job) } });
      if (already > 0) {
        await markFailed(db, job.id, fence, leaseExpired('re-enqueued once already; the job made no progress'));
        counts.failed += 1;
        return;
      }
      await db.$transaction(async (tx) => {
        // Touch the row (fenced) so the next run measures the wait from this re-enqueue.
        const { count } = await tx.aiJob.updateMany({ where: { id: job.id, lifecycleStatus: 'running', lockedBy: null, leaseVersion: job.leaseVersion }, data: { updatedAt: now } });
        if (count === 0) throw new LeaseLostError(job.id, job.leaseVersion);
        await reenqueue(tx, job);
      });
      counts.reenqueued += 1;
    });
  }
  return counts;
}

function reenqueueKey(job: Pick<AiJob, 'id' | 'attemptCount'>): string {
  return buildEnqueueEvent({ jobId: job.id, queueName: '', messageGroupId: '', attempt: job.attemptCount + 1 }).dedupeKey;
}

async function reenqueue(tx: Prisma.TransactionClient, job: AiJob): Promise<void> {
  const groupId = await messageGroupOf(tx, job);
  await insertOutboxEvents(tx, [buildEnqueueEvent({ jobId: job.id, queueName: job.queueName, messageGroupId: groupId, attempt: job.attemptCount + 1 })]);
}

/** Keeps the message group the job was first enqueued with (job id, or user id for per-user ordering). */
async function messageGroupOf(db: Db, job: AiJob): Promise<string> {
  const first = await db.outboxEvent.findUnique({ where: { dedupeKey: `ai.job.enqueue:${job.id}` }, select: { messageGroupId: true } });
  return first?.messageGroupId ?? job.id;
}

function leaseExpired(reason: string) {
  return {
    actor: ACTOR, reason, errorCode: LEASE_EXPIRED,
    publicMessage: 'The job stopped responding and could not be completed',
    internalMessage: reason,
  };
}

/** Another actor moving the job first is normal (a late heartbeat, a redelivery): count and move on. */
async function guarded(counts: ReapCounts, fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (err) {
    if (err instanceof LeaseLostError || err instanceof StaleTransitionError) counts.skipped += 1;
    else throw err;
  }
}
