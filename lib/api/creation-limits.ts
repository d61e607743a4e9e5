/**
 * Per-user limits of a job type, from its definition (`limits.maxActiveJobsPerUser`, `limits.dailyQuotaPerUser`),
 * checked before a user's job is created.
 *
 * Soft limits: the counts and the insert are not one transaction, so two concurrent requests may both pass
 * at the edge and exceed a limit by one. That is accepted: the limits protect capacity and cost, not an
 * invariant, and a lock per user on every create would cost more than the overshoot.
 */
import type { Db } from '../db/client.ts';
import type { JobDefinition } from '../jobs/definition.ts';
import { ACTIVE_STATES } from '../jobs/states.ts';
import { QuotaExceededError, TooManyJobsError } from './http-errors.ts';

/** Retry-After of TOO_MANY_JOBS: active jobs usually finish within this. */
export const TOO_MANY_JOBS_RETRY_AFTER_SECONDS = 30;

/** Midnight UTC that starts the day of `now`. */
export function startOfUtcDay(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
}

/** Whole seconds from `now` to the next midnight UTC (at least 1). */
export function secondsUntilNextUtcDay(now: Date): number {
  const next = startOfUtcDay(now).getTime() + 86_400_000;
  return Math.max(1, Math.ceil((next - now.getTime()) / 1000));
}

/**
 * @throws TooManyJobsError when the user's queued + running jobs of this type reach `maxActiveJobsPerUser`
 *   (index `userId, lifecycleStatus, createdAt`: the user's open jobs)
 * @throws QuotaExceededError when the jobs of this type the user created since midnight UTC reach
 *   `dailyQuotaPerUser` (index `userId, createdAt`)
 */
export async function assertWithinLimits(db: Db, userId: string, def: JobDefinition, now: Date): Promise<void> {
  const [active, today] = await Promise.all([
    db.aiJob.count({ where: { userId, lifecycleStatus: { in: [...ACTIVE_STATES] }, jobType: def.jobType } }),
    db.aiJob.count({ where: { userId, createdAt: { gte: startOfUtcDay(now) }, jobType: def.jobType } }),
  ]);
  if (today >= def.limits.dailyQuotaPerUser) {
    throw new QuotaExceededError(def.jobType, def.limits.dailyQuotaPerUser, secondsUntilNextUtcDay(now));
  }
  if (active >= def.limits.maxActiveJobsPerUser) {
    throw new TooManyJobsError(def.jobType, def.limits.maxActiveJobsPerUser, TOO_MANY_JOBS_RETRY_AFTER_SECONDS);
  }
}
