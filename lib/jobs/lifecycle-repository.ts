/**
 * The only writer of `AiJob.lifecycleStatus` (ADR-003 §1.4). Each function is one edge of the table in
 * ./states.ts, done as a compare-and-set on the expected state (and, where a lease is involved, on holder and
 * lease version — the fencing token), together with its AiJobTransition audit row in the same transaction.
 * A lost race raises a typed error and writes nothing. The lock (queued → running, one round trip on the raw
 * pool) lives in ./lifecycle-lock.ts; the engine's running → succeeded edge, as the projection takes it, in
 * ./lifecycle-success.ts; the compare-and-set of the other edges in ./lifecycle-cas.ts. Every audit row is also
 * the job's status entry in its stream log, at the position `seq` the edge's compare-and-set took (./stream-seq.ts).
 */
import { inTransaction, type AiJob, type Db, type Prisma } from '../db/client.ts';
import { newId } from '../db/ids.ts';
import { executeInTransaction, executeTogether, insertStatement, type SqlExpression, type SqlStatement } from '../db/sql.ts';
import { publishStatus } from '../stream/status-entries.ts';
import { claimSuccess, successStatements } from './lifecycle-success.ts';
import { casTransition, fencedTransition, type EdgeMeta } from './lifecycle-cas.ts';
import { DEFAULT_LEASE_MS } from './lifecycle-lock.ts';
import { JobNotFoundError, LeaseLostError, StaleTransitionError } from './lifecycle-errors.ts';

export { DEFAULT_LEASE_MS, lockJob, lockJobForAttempt } from './lifecycle-lock.ts';

/**
 * Identifies one lease: only its holder, at this version, may extend, release or finish the job.
 * `holder: null` fences a released lease (the reaper acting on a job waiting for redelivery).
 */
export interface LeaseFence {
  holder: string | null;
  leaseVersion: number;
}

export interface TransitionMeta {
  /** Who moved the job: a worker id, `api:<userId>`, `dispatcher`, `reaper`, `admin:<id>`. */
  actor: string;
  reason?: string;
}

export interface JobFailure extends TransitionMeta {
  errorCode: string;
  /** Safe for the job's owner to read. */
  publicMessage: string;
  /** Admins only: provider detail, stack summary. */
  internalMessage?: string;
}

/** The columns a creator chooses; lifecycle, lease and outcome columns start at their defaults. */
export type NewJobRow = Pick<
  AiJob,
  | 'id' | 'userId' | 'jobType' | 'triggerType' | 'targetType' | 'targetId' | 'idempotencyKey' | 'inputHash'
  | 'queueName' | 'priority' | 'maxAttempts' | 'timeoutMs' | 'inputSchemaVersion' | 'outputSchemaVersion'
  | 'promptKey' | 'promptVersion' | 'modelTier' | 'credentialMode' | 'credentialId' | 'parentJobId'
> & Partial<Pick<AiJob, 'modelProvider' | 'modelName'>>;

/** Inserts a `queued` job and its first transition row inside the caller's creating transaction. */
export async function createJob(tx: Prisma.TransactionClient, row: NewJobRow, meta: TransitionMeta): Promise<AiJob> {
  const { job, statements } = queuedJobInsert(row, meta);
  await executeInTransaction(tx, statements);
  return job;
}

/**
 * The SQL that creates a `queued` job and its first transition row, and the job exactly as stored — for
 * callers that run the creating transaction on the raw driver in one round trip (lib/jobs/create-job.ts).
 * `computed` columns are stored as the server computes them; the returned job holds the row's values for them
 * until the caller reads the stored ones back.
 */
export function queuedJobInsert(
  row: NewJobRow, meta: TransitionMeta, now = new Date(), computed: Readonly<Partial<Record<keyof NewJobRow, SqlExpression>>> = {},
): { job: AiJob; statements: SqlStatement[] } {
  // The `queued` status entry is the job's first: `seq` 1, nothing to wait for.
  const job: AiJob = {
    modelProvider: null, modelName: null, ...row, lifecycleStatus: 'queued', attemptCount: 0, lockedBy: null,
    lockedAt: null, lockUntil: null, leaseVersion: 0, cancelRequestedAt: null, progress: 0, startedAt: null,
    finishedAt: null, errorCode: null, publicErrorMessage: null, internalErrorMessage: null, outputHash: null,
    statusSeq: 1, createdAt: now, updatedAt: now,
  };
  const transition = insertStatement('AiJobTransition', {
    id: newId(), jobId: job.id, fromStatus: null, toStatus: 'queued', actor: meta.actor.slice(0, 128),
    reason: meta.reason?.slice(0, 255) ?? null, seq: 1, attempt: 0, createdAt: now,
  });
  return { job, statements: [insertStatement('AiJob', storedColumns(job, computed), computed as Record<string, SqlExpression>), transition] };
}

/** Columns a new job leaves to their defaults when it holds them: the server parses a shorter INSERT. */
const NEW_JOB_DEFAULTS: Readonly<Partial<Record<keyof AiJob, unknown>>> = { lifecycleStatus: 'queued', attemptCount: 0, leaseVersion: 0, progress: 0 };

/**
 * The new job's row without the columns the table fills the same way (NULL for every nullable column, the
 * {@link NEW_JOB_DEFAULTS}): the INSERT's text, which the server parses on every create, is about half as long.
 */
function storedColumns(job: AiJob, computed: Readonly<Partial<Record<string, SqlExpression>>>): Record<string, AiJob[keyof AiJob] | undefined> {
  const row: Record<string, AiJob[keyof AiJob] | undefined> = {};
  for (const [column, value] of Object.entries(job) as [keyof AiJob, AiJob[keyof AiJob]][]) {
    const defaulted = value === null || NEW_JOB_DEFAULTS[column] === value;
    if (!defaulted || computed[column]) row[column] = value;
  }
  return row;
}

/**
 * Heartbeat: pushes lockUntil forward for the current lease and reports whether a cancel was requested.
 * Throws LeaseLostError when the lease is no longer ours.
 */
export async function extendLock(
  db: Db, jobId: string, fence: LeaseFence, opts: { leaseMs?: number; now?: Date } = {},
): Promise<{ lockUntil: Date; cancelRequested: boolean }> {
  const now = opts.now ?? new Date();
  const lockUntil = new Date(now.getTime() + (opts.leaseMs ?? DEFAULT_LEASE_MS));
  const { count } = await db.aiJob.updateMany({
    where: { id: jobId, lifecycleStatus: 'running', lockedBy: fence.holder, leaseVersion: fence.leaseVersion },
    data: { lockUntil },
  });
  if (count === 0) throw new LeaseLostError(jobId, fence.leaseVersion);
  const row = await db.aiJob.findUnique({ where: { id: jobId }, select: { cancelRequestedAt: true } });
  return { lockUntil, cancelRequested: row?.cancelRequestedAt != null };
}

/**
 * Gives the lease back after a retryable failure: the job stays `running` with no holder, so the next
 * delivery re-locks it (new lease version). Records the attempt's error for admins.
 * `retryAt` is stored in `lockUntil` (a released lease has no other use for it): when the next delivery is
 * due, so the reaper finds overdue retries among the running jobs ((lifecycleStatus, createdAt) index: open jobs only).
 * `refundAttempt` gives the attempt back (an infrastructure failure is not the job's; the caller bounds it).
 * Its status entry: `queued` with `retryAt` and the public error.
 */
export async function releaseLock(
  db: Db, jobId: string, fence: LeaseFence, failure: JobFailure & { retryAt?: Date; refundAttempt?: boolean; now?: Date },
): Promise<AiJob> {
  return fencedTransition(db, jobId, fence, 'releaseLock', 'running', edgeMeta(failure, { retryAt: failure.retryAt, refundAttempt: failure.refundAttempt }), {
    lockedBy: null, lockUntil: failure.retryAt ?? null, ...failureColumns(failure),
  });
}

/**
 * running → succeeded, fenced by the lease AND by the absence of a cancel request: a cancel accepted before
 * this commits always wins (CancelRequestedError; the caller settles the job `cancelled`). A cancel arriving
 * after the UPDATE waits for its row lock and then finds the job succeeded. Pass the projector's transaction
 * so both commit together. The same claim and audit/event statements as the engine's projection
 * (./lifecycle-success.ts); a job that already succeeded is a StaleTransitionError here.
 */
export async function markSucceeded(
  db: Db, jobId: string, fence: LeaseFence,
  result: TransitionMeta & { outputHash: string; model?: { provider: string; model: string }; now?: Date },
): Promise<AiJob> {
  const succeeded = await inTransaction(db, async (tx) => {
    const job = await tx.aiJob.findUnique({ where: { id: jobId } });
    if (!job) throw new JobNotFoundError(jobId);
    const outcome = await claimSuccess(tx, job, fence, result);
    if ('kind' in outcome) throw new StaleTransitionError(jobId, 'markSucceeded', 'succeeded');
    await executeTogether(tx, successStatements(outcome, fence, result));
    return outcome;
  });
  if ('$transaction' in db) publishStatus(succeeded);
  return succeeded;
}

/** running → failed, fenced by the lease (the reaper passes the expired lease it observed). */
export async function markFailed(db: Db, jobId: string, fence: LeaseFence, failure: JobFailure & { now?: Date }): Promise<AiJob> {
  const meta = edgeMeta(failure);
  return fencedTransition(db, jobId, fence, 'markFailed', 'failed', meta, {
    ...failureColumns(failure), finishedAt: meta.now, lockedBy: null, lockUntil: null,
  });
}

/**
 * → cancelled. Without a fence: from `queued` only (cancel before any attempt). With a fence: from
 * `running`, by the lease holder that observed the cancel request.
 */
export async function markCancelled(
  db: Db, jobId: string, meta: TransitionMeta & { fence?: LeaseFence; now?: Date },
): Promise<AiJob> {
  const edge = { actor: meta.actor, reason: meta.reason, now: meta.now ?? new Date() };
  const columns = {
    errorCode: 'CANCELLED', publicErrorMessage: 'The job was cancelled', internalErrorMessage: null,
    finishedAt: edge.now, lockedBy: null, lockUntil: null,
  };
  if (meta.fence) return fencedTransition(db, jobId, meta.fence, 'markCancelled', 'cancelled', edge, columns);
  return casTransition(db, jobId, 'queued', 'markCancelled', 'cancelled', edge, columns);
}

/**
 * The documented exception: queued → failed for a system failure before any attempt started (the message
 * could not be dispatched, the job type is no longer registered). The reason is recorded.
 */
export async function failBeforeAttempt(db: Db, jobId: string, failure: JobFailure & { now?: Date }): Promise<AiJob> {
  const meta = edgeMeta(failure);
  return casTransition(db, jobId, 'queued', 'failBeforeAttempt', 'failed', meta, { ...failureColumns(failure), finishedAt: meta.now });
}

/** A failure as an edge records it: its code and public message also make its status entry. */
function edgeMeta(f: JobFailure & { now?: Date }, extra: Partial<EdgeMeta> = {}): EdgeMeta {
  return { actor: f.actor, reason: f.reason, errorCode: f.errorCode, publicMessage: f.publicMessage, now: f.now ?? new Date(), ...extra };
}

function failureColumns(f: JobFailure) {
  return { errorCode: f.errorCode, publicErrorMessage: f.publicMessage, internalErrorMessage: f.internalMessage ?? null };
}
