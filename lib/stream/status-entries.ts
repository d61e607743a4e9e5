/**
 * Status entries of the stream log (docs/streaming.md, "Status entries"). A job's status entries are its
 * transition rows (AiJobTransition, `seq` = the position in the log): no row of their own. Two views of one entry,
 * which must agree field for field:
 * - {@link statusEntryOfTransition}: from the stored row, for the read API;
 * - {@link statusEntryOfJob}: from the job row as the transition left it (`statusSeq` = the entry's `seq`,
 *   `updatedAt` = its time), for the push published once the transition committed ({@link publishStatus}).
 *
 * What the owner sees of each transition:
 * | transition | entry |
 * | --- | --- |
 * | created | `queued` |
 * | lock (queued → running, or a new attempt) | `running`, `attempt` = the new attempt: a new segment starts |
 * | releaseLock (a retryable failure) | `queued` with `retryAt` and the public error |
 * | parked (waiting for provider capacity or a spending cap; lib/jobs/lifecycle-wait.ts) | `queued` with `retryAt` and `waitingFor` |
 * | succeeded | `succeeded` with `resultUrl` |
 * | failed | `failed` with the public error |
 * | cancelled | `cancelled` |
 */
import type { AiJob } from '../db/client.ts';
import type { AiJobStatus } from '../db/generated/enums.ts';
import { USER_ROUTES } from '../api/routes.ts';
import { publishPush } from './publisher-registry.ts';
import type { StatusEntry, StreamPublisher } from './protocol.ts';

/** The columns of a transition row a status entry is read from. */
export interface TransitionEntryRow {
  seq: number;
  toStatus: AiJobStatus;
  errorCode: string | null;
  publicMessage: string | null;
  retryAt: Date | null;
  attempt: number | null;
  createdAt: Date;
}

/** The API path of a succeeded job's result: its type's result route, else (a type without one) its status. */
export function resultPathOf(job: Pick<AiJob, 'id' | 'jobType'>): string {
  const route = USER_ROUTES.find((r) => r.action === 'getJobResult' && r.jobType === job.jobType);
  return (route?.path ?? '/api/ai/jobs/{jobId}').replace('{jobId}', job.id);
}

/** The audit row's error code of a park → why the job waits (lib/capacity/, lib/jobs/lifecycle-wait.ts). */
export const WAIT_REASON_OF_CODE: Readonly<Record<string, 'provider_capacity' | 'spend_cap'>> = {
  PROVIDER_CAPACITY: 'provider_capacity',
  SPEND_LIMIT_REACHED: 'spend_cap',
};

function errorOf(code: string | null, message: string | null): StatusEntry['error'] {
  return code !== null && message !== null ? { code, message } : undefined;
}

/** The entry a stored transition row of `job` is. */
export function statusEntryOfTransition(row: TransitionEntryRow, job: Pick<AiJob, 'id' | 'jobType'>): StatusEntry {
  const base = { seq: row.seq, attempt: row.attempt ?? 0, at: row.createdAt.toISOString(), type: 'status' as const };
  switch (row.toStatus) {
    case 'running':
      // The lock writes no error code; a released lease (a retry scheduled) always does.
      if (row.errorCode === null) return { ...base, status: 'running' };
      if (Object.hasOwn(WAIT_REASON_OF_CODE, row.errorCode) && row.retryAt) {
        const until = row.retryAt.toISOString();
        return { ...base, status: 'queued', retryAt: until, waitingFor: { reason: WAIT_REASON_OF_CODE[row.errorCode]!, until } };
      }
      return withDefined({ ...base, status: 'queued', retryAt: row.retryAt?.toISOString(), error: errorOf(row.errorCode, row.publicMessage) });
    case 'succeeded':
      return { ...base, status: 'succeeded', resultUrl: resultPathOf(job) };
    case 'failed':
      return withDefined({ ...base, status: 'failed', error: errorOf(row.errorCode, row.publicMessage) });
    case 'queued':
    case 'cancelled':
      return { ...base, status: row.toStatus };
  }
}

/** The entry of `job`'s latest transition, from the job row as that transition left it. */
export function statusEntryOfJob(job: AiJob): StatusEntry {
  return statusEntryOfTransition({
    seq: job.statusSeq,
    toStatus: job.lifecycleStatus,
    // A running job with a holder was just locked (its row may keep the previous attempt's error: not the entry's).
    errorCode: job.lifecycleStatus === 'running' && job.lockedBy !== null ? null : job.errorCode,
    publicMessage: job.publicErrorMessage,
    retryAt: job.lifecycleStatus === 'running' && job.lockedBy === null ? job.lockUntil : null,
    attempt: job.attemptCount,
    createdAt: job.updatedAt,
  }, job);
}

/**
 * Publishes the status entry of `job`'s latest transition, after its transaction committed. Best effort: never
 * throws, never waits (./publisher-registry.ts); a job row from before the log (`statusSeq` 0) publishes nothing.
 */
export function publishStatus(job: AiJob, publisher?: StreamPublisher): void {
  if (!(job.statusSeq >= 1)) return;
  let entry: StatusEntry;
  try {
    entry = statusEntryOfJob(job);
  } catch {
    return;
  }
  publishPush({ userId: job.userId, jobId: job.id, entries: [entry] }, publisher);
}

/** Drops `undefined` fields (the entry schemas are strict: an optional field is absent, never undefined). */
function withDefined<T extends object>(entry: T): T {
  return Object.fromEntries(Object.entries(entry).filter(([, v]) => v !== undefined)) as T;
}
