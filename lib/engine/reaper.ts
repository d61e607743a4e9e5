/**
 * The reaper (ADR-003 §1.7): the database is the source of truth and a queue may lose messages, so no job may
 * stay open without a live lease or a message on its way. Each run is three indexed queries when nothing is
 * stuck (docs/state-machine.md, "Recovery").
 * - Expired leases (a crashed or frozen consumer, beyond a grace period): attempts left → the lease is released
 *   and the job re-enqueued through the outbox for its next attempt; none left → `failed` with LEASE_EXPIRED.
 * - Overdue retries: a released lease stores when its retry is due (`lockUntil`); overdue by more than
 *   `overdueRetryMs` → re-enqueued once per attempt; if that re-enqueue was published longer ago than the job
 *   queue's bound for a first delivery (`queuedBoundMs`, at least `overdueRetryMs`) and the retry still has not
 *   started → `failed` with LEASE_EXPIRED. A retry waiting its turn in a backlog is given as long as a new job.
 * - Queued jobs nobody picked up: ./reaper-queued.ts.
 * Re-enqueue dedupe keys carry the attempt number (a new SQS deduplication id), and the message goes to a
 * message group of its own, so it never waits behind a hidden original of the same FIFO group. A message that
 * was not lost after all only causes a duplicate delivery, which the lease (lockJob) turns away.
 */
import type { AiJob, Db, Prisma, PrismaDb } from '../db/client.ts';
import { markFailed, releaseLock, type LeaseFence } from '../jobs/lifecycle-repository.ts';
import { findExpiredLocks } from '../jobs/lifecycle-queries.ts';
import { LeaseLostError, StaleTransitionError } from '../jobs/lifecycle-errors.ts';
import { buildEnqueueEvent, insertOutboxEvents } from '../outbox/outbox-writer.ts';
import type { QueueName } from '../queue/queue-definitions.ts';
import { MAX_RETRY_DELAY_MS } from './retry-policy.ts';
import { publishStatus } from '../stream/status-entries.ts';

export const LEASE_EXPIRED = 'LEASE_EXPIRED';

export interface ReaperOptions {
  /** Beyond the lease's end, before the reaper steps in (the heartbeat may just be late). */
  graceMs: number;
  /** How far past its due time a released job's retry may be before it is re-enqueued (once per attempt). */
  overdueRetryMs: number;
  /**
   * How long a queued job may wait for its first delivery, per queue, before it counts as lost; a retry's
   * re-enqueue gets as long (or `overdueRetryMs`, if longer) before the job fails.
   */
  queuedBoundMs: Record<QueueName, number>;
  limit: number;
  now?: Date;
}

/** Defaults; the reaper Lambda and the local runtime read overrides from the environment (reaper-run.ts). */
export const DEFAULT_REAPER_OPTIONS: ReaperOptions = {
  graceMs: 30_000, overdueRetryMs: 60_000, queuedBoundMs: { interactive: 5 * 60_000, background: 30 * 60_000 }, limit: 200,
};

export interface ReapCounts {
  released: number;
  reenqueued: number;
  failed: number;
  skipped: number;
}

export const ACTOR = 'reaper';

export function emptyCounts(): ReapCounts {
  return { released: 0, reenqueued: 0, failed: 0, skipped: 0 };
}

export async function reapExpiredLeases(db: PrismaDb, opts: ReaperOptions = DEFAULT_REAPER_OPTIONS): Promise<ReapCounts> {
  const counts = emptyCounts();
  const now = opts.now ?? new Date();
  for (const job of await findExpiredLocks(db, opts)) {
    const fence = { holder: job.lockedBy, leaseVersion: job.leaseVersion };
    await guarded(counts, async () => {
      if (job.attemptCount >= job.maxAttempts) {
        await markFailed(db, job.id, fence, leaseExpired('lease expired on the last attempt'));
        counts.failed += 1;
        return;
      }
      const released = await db.$transaction(async (tx) => {
        const row = await releaseLock(tx, job.id, fence, { ...leaseExpired('lease expired; released for the next attempt'), retryAt: now });
        await reenqueue(tx, job, nextAttemptLabel(job));
        return row;
      });
      publishStatus(released); // the retry scheduled, now that it committed
      counts.released += 1;
      counts.reenqueued += 1;
    });
  }
  return counts;
}

/**
 * Released jobs whose retry is overdue (their message is presumably gone): re-enqueue once per attempt; fail
 * the job only once that re-enqueue has been published for longer than its queue's bound ({@link lostRetryCutoff}).
 * Served by the (lifecycleStatus, createdAt) index over running jobs only (open work, never history).
 */
export async function reapOverdueRetries(db: PrismaDb, opts: ReaperOptions = DEFAULT_REAPER_OPTIONS): Promise<ReapCounts> {
  const counts = emptyCounts();
  const now = opts.now ?? new Date();
  const cutoff = new Date(now.getTime() - opts.overdueRetryMs);
  const candidates = await db.aiJob.findMany({ where: overdueRetryWhere(cutoff), orderBy: { lockUntil: 'asc' }, take: opts.limit });
  for (const job of candidates) {
    const fence: LeaseFence = { holder: null, leaseVersion: job.leaseVersion };
    await guarded(counts, async () => {
      const previous = await db.outboxEvent.findUnique({ where: { dedupeKey: enqueueKey(job.id, nextAttemptLabel(job)) }, select: { publishedAt: true } });
      if (previous) {
        if (!previous.publishedAt || previous.publishedAt > lostRetryCutoff(job, opts, now)) return; // still on its way, or waiting its turn
        await markFailed(db, job.id, fence, leaseExpired('re-enqueued once already; the retry never started'));
        counts.failed += 1;
        return;
      }
      await db.$transaction(async (tx) => {
        // Fenced touch: the retry is due again now, so the next run measures from this re-enqueue.
        const { count } = await tx.aiJob.updateMany({ where: { id: job.id, lifecycleStatus: 'running', lockedBy: null, leaseVersion: job.leaseVersion }, data: { lockUntil: now } });
        if (count === 0) throw new LeaseLostError(job.id, job.leaseVersion);
        await reenqueue(tx, job, nextAttemptLabel(job));
      });
      counts.reenqueued += 1;
    });
  }
  return counts;
}

/**
 * A retry's re-enqueue published before this is lost: the job's queue gives a message as long as it gives a new
 * job's first delivery (a backlog delays both alike), and never less than `overdueRetryMs`.
 */
export function lostRetryCutoff(job: Pick<AiJob, 'queueName'>, opts: ReaperOptions, now: Date): Date {
  const queueBound = opts.queuedBoundMs[job.queueName as QueueName] ?? 0; // an unknown queue: the overdue bound
  return new Date(now.getTime() - Math.max(opts.overdueRetryMs, queueBound));
}

/**
 * Released jobs whose retry was due before `cutoff` (now − overdueRetryMs): what {@link reapOverdueRetries}
 * considers, and what the admin reaper report lists. Leases released before retry times were stored have
 * lockUntil NULL: overdue once the longest possible delay passed.
 */
export function overdueRetryWhere(cutoff: Date): Prisma.AiJobWhereInput {
  const legacyCutoff = new Date(cutoff.getTime() - MAX_RETRY_DELAY_MS);
  return {
    lifecycleStatus: 'running', lockedBy: null,
    OR: [{ lockUntil: { lt: cutoff } }, { lockUntil: null, updatedAt: { lt: legacyCutoff } }],
  };
}

/**
 * What a re-enqueue of `job`'s released or expired lease is for: the next attempt's number, qualified by the
 * lease when the job was released more than once for that number (an attempt given back after an
 * infrastructure failure or a capacity wait: then leaseVersion ≠ attemptCount), so each release is re-enqueued
 * at most once and two releases never share a deduplication id.
 */
export function nextAttemptLabel(job: Pick<AiJob, 'attemptCount' | 'leaseVersion'>): number | string {
  const next = job.attemptCount + 1;
  return job.leaseVersion === job.attemptCount ? next : `${next}-lease-${job.leaseVersion}`;
}

/** The dedupe key (and SQS deduplication id) of the enqueue message for `attempt`. */
export function enqueueKey(jobId: string, attempt: number | string): string {
  return buildEnqueueEvent({ jobId, queueName: '', messageGroupId: '', attempt }).dedupeKey;
}

/** Enqueues `job` again for `attempt`, in a message group of its own (never behind a hidden original). */
export async function reenqueue(tx: Prisma.TransactionClient, job: AiJob, attempt: number | string): Promise<void> {
  const groupId = `${await messageGroupOf(tx, job)}:r${attempt}`.slice(0, 128);
  await insertOutboxEvents(tx, [buildEnqueueEvent({ jobId: job.id, queueName: job.queueName, messageGroupId: groupId, attempt })]);
}

/** The message group the job was first enqueued with (job id, or user id for per-user ordering). */
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
export async function guarded(counts: ReapCounts, fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (err) {
    if (err instanceof LeaseLostError || err instanceof StaleTransitionError) counts.skipped += 1;
    else throw err;
  }
}
