/** Read-only lifecycle queries (ADR-003 §1.4). */
import type { AiJob, Db } from '../db/client.ts';
import type { JobState } from './states.ts';

/**
 * Running jobs whose lease expired more than `graceMs` ago (a crashed or frozen consumer). Served by the
 * (lifecycleStatus, createdAt) index, over running jobs only (open work, never history). Released leases
 * (lockedBy NULL) are not included: their job is waiting for its next delivery, not abandoned.
 */
export async function findExpiredLocks(
  db: Db, opts: { graceMs: number; limit?: number; now?: Date },
): Promise<AiJob[]> {
  const cutoff = new Date((opts.now ?? new Date()).getTime() - opts.graceMs);
  return db.aiJob.findMany({
    where: { lifecycleStatus: 'running', lockedBy: { not: null }, lockUntil: { lt: cutoff } },
    orderBy: { lockUntil: 'asc' },
    take: opts.limit ?? 100,
  });
}

export async function findByLifecycleStatus(
  db: Db, statuses: JobState[], opts: { queueName?: string; limit?: number } = {},
): Promise<AiJob[]> {
  return db.aiJob.findMany({
    where: { lifecycleStatus: { in: statuses }, ...(opts.queueName ? { queueName: opts.queueName } : {}) },
    orderBy: { id: 'asc' },
    take: opts.limit ?? 100,
  });
}
