/**
 * Part of the lifecycle repository (./lifecycle-repository.ts): the compare-and-set every edge but the lock and
 * the engine's success runs, with its audit row (which is also the job's status entry in its stream log:
 * ./stream-seq.ts) and, on a terminal edge, its `ai.job.*` event — one transaction. When the transaction is its
 * own (not the caller's), the status entry is published once it committed (lib/stream/status-entries.ts).
 */
import { inTransaction, type AiJob, type Db, type Prisma } from '../db/client.ts';
import { newId } from '../db/ids.ts';
import type { SqlValue } from '../db/sql.ts';
import { addJobTerminalEvent } from '../outbox/job-events.ts';
import { publishStatus } from '../stream/status-entries.ts';
import { JobNotFoundError, LeaseLostError, StaleTransitionError } from './lifecycle-errors.ts';
import { explainRefusal } from './lifecycle-refusals.ts';
import { isTerminal, type JobState, type TransitionName } from './states.ts';
import { NEXT_STATUS_SEQ } from './stream-seq.ts';

/** Columns an edge sets besides the state, `updatedAt` and `statusSeq`. */
export type JobColumns = Partial<Record<
  'lockedBy' | 'lockUntil' | 'errorCode' | 'publicErrorMessage' | 'internalErrorMessage' | 'finishedAt', SqlValue
>>;

/** The lease an edge is fenced by (./lifecycle-repository.ts `LeaseFence`). */
interface Fence {
  holder: string | null;
  leaseVersion: number;
}

/** What an edge records beyond the columns: who and why, and what its status entry shows. */
export interface EdgeMeta {
  /** Who moved the job (./lifecycle-repository.ts `TransitionMeta`). */
  actor: string;
  reason?: string | undefined;
  errorCode?: string;
  /** The public error of a failure or scheduled retry (the status entry's `error.message`). */
  publicMessage?: string;
  /** A scheduled retry: when the next attempt is due. */
  retryAt?: Date;
  now: Date;
  /** Gives the attempt back (`attemptCount - 1`): an infrastructure failure is not the job's. */
  refundAttempt?: boolean;
}

/** running → `to`, fenced by the lease (holder and version). */
export async function fencedTransition(
  db: Db, jobId: string, fence: Fence, via: TransitionName, to: JobState, meta: EdgeMeta, columns: JobColumns,
): Promise<AiJob> {
  return published(db, inTransaction(db, async (tx) => {
    const count = await tx.$executeRawUnsafe(...update(jobId, to, meta, columns, 'lifecycleStatus = \'running\' AND lockedBy <=> ? AND leaseVersion = ?', [fence.holder, fence.leaseVersion]));
    if (count === 0) {
      const current = await tx.aiJob.findUnique({ where: { id: jobId }, select: { lifecycleStatus: true } });
      if (!current) throw new JobNotFoundError(jobId);
      if (current.lifecycleStatus !== 'running') throw new StaleTransitionError(jobId, via, current.lifecycleStatus);
      throw new LeaseLostError(jobId, fence.leaseVersion);
    }
    return finishTransition(tx, jobId, 'running', to, meta, fence.leaseVersion);
  }));
}

/** `from` → `to`, fenced by the state alone (edges out of `queued`, where no lease exists). */
export async function casTransition(
  db: Db, jobId: string, from: JobState, via: TransitionName, to: JobState, meta: EdgeMeta, columns: JobColumns,
): Promise<AiJob> {
  return published(db, inTransaction(db, async (tx) => {
    const count = await tx.$executeRawUnsafe(...update(jobId, to, meta, columns, 'lifecycleStatus = ?', [from]));
    if (count === 0) throw await explainRefusal(tx, jobId, via);
    return finishTransition(tx, jobId, from, to, meta, null);
  }));
}

/** Publishes the committed transition's status entry when `db` was not a caller's transaction (else the caller does). */
async function published(db: Db, transition: Promise<AiJob>): Promise<AiJob> {
  const job = await transition;
  if ('$transaction' in db) publishStatus(job);
  return job;
}

/** The compare-and-set: `UPDATE … WHERE id = ? AND <guard>`, as `$executeRawUnsafe` arguments. */
function update(jobId: string, to: JobState, meta: EdgeMeta, columns: JobColumns, guard: string, guardValues: SqlValue[]): [string, ...unknown[]] {
  const entries = Object.entries(columns).filter((e): e is [string, SqlValue] => e[1] !== undefined);
  const sets = [
    ...entries.map(([column]) => `\`${column}\` = ?`),
    ...(meta.refundAttempt ? ['attemptCount = attemptCount - 1'] : []),
    'lifecycleStatus = ?', 'updatedAt = ?', NEXT_STATUS_SEQ,
  ];
  return [
    `UPDATE \`AiJob\` SET ${sets.join(', ')} WHERE id = ? AND ${guard}`,
    ...entries.map(([, value]) => value), to, meta.now, jobId, ...guardValues,
  ];
}

/** The job as the update left it, its audit row (= its status entry), and on a terminal edge its event. */
async function finishTransition(
  tx: Prisma.TransactionClient, jobId: string, from: JobState, to: JobState, meta: EdgeMeta, leaseVersion: number | null,
): Promise<AiJob> {
  const job = await tx.aiJob.findUniqueOrThrow({ where: { id: jobId } });
  await tx.aiJobTransition.createMany({
    data: [{
      id: newId(), jobId, fromStatus: from, toStatus: to, actor: meta.actor.slice(0, 128),
      reason: meta.reason?.slice(0, 255) ?? null, errorCode: meta.errorCode ?? null, leaseVersion,
      seq: job.statusSeq, attempt: job.attemptCount, publicMessage: meta.publicMessage?.slice(0, 512) ?? null,
      retryAt: meta.retryAt ?? null, createdAt: meta.now,
    }],
  });
  // Every terminal transition announces itself (ai.job.succeeded / failed / cancelled) in the same transaction.
  if (from !== to && isTerminal(to)) await addJobTerminalEvent(tx, job);
  return job;
}
