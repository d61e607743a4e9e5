/**
 * Per-user limits of a job type, from its definition (`limits.maxActiveJobsPerUser`, `limits.dailyQuotaPerUser`),
 * checked before a user's job is created.
 *
 * Soft limits: the counts and the insert are not one transaction, so two concurrent requests may both pass
 * at the edge and exceed a limit by one. That is accepted: the limits protect capacity and cost, not an
 * invariant, and a lock per user on every create would cost more than the overshoot.
 */
import type { SqlRunner } from '../db/sql-pool.ts';
import { placeholders } from '../outbox/outbox-claims.ts';
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

/** What a user's create needs to know before it writes, read in ONE round trip ({@link readCreationPreflight}). */
export interface CreationPreflight {
  /** The user's queued + running jobs of this type (index `userId, lifecycleStatus, createdAt`: the user's open jobs). */
  active: number;
  /** The jobs of this type the user created since midnight UTC (index `userId, createdAt`). */
  today: number;
  /** True when a job with this idempotency key exists already (a replay is never refused by the limits). */
  replay: boolean;
  /** The user's active DeepSeek key, when the type allows user keys and the user stored one. */
  userKeyId: string | null;
}

/**
 * The limit counts, the idempotency replay check and the user's active key as one SELECT of scalar
 * subqueries on the raw pool: one round trip instead of four Prisma queries on the create path.
 */
export async function readCreationPreflight(
  sql: SqlRunner, userId: string, def: JobDefinition, now: Date, opts: { idempotencyKey?: string | undefined; userKeys: boolean },
): Promise<CreationPreflight> {
  const columns = [
    `(SELECT COUNT(*) FROM AiJob WHERE userId = ? AND lifecycleStatus IN (${placeholders(ACTIVE_STATES.length)}) AND jobType = ?) AS active`,
    '(SELECT COUNT(*) FROM AiJob WHERE userId = ? AND createdAt >= ? AND jobType = ?) AS today',
  ];
  const values: unknown[] = [userId, ...ACTIVE_STATES, def.jobType, userId, startOfUtcDay(now), def.jobType];
  if (opts.idempotencyKey !== undefined) {
    columns.push('(SELECT id FROM AiJob WHERE userId = ? AND jobType = ? AND idempotencyKey = ?) AS replayId');
    values.push(userId, def.jobType, opts.idempotencyKey);
  }
  if (opts.userKeys) {
    columns.push("(SELECT id FROM UserModelCredential WHERE userId = ? AND provider = 'deepseek' AND status = 'active' ORDER BY id DESC LIMIT 1) AS userKeyId");
    values.push(userId);
  }
  const [row] = (await sql.query(`SELECT ${columns.join(', ')}`, values)) as Record<string, unknown>[];
  return {
    active: Number(row?.active ?? 0), today: Number(row?.today ?? 0),
    replay: row?.replayId != null, userKeyId: row?.userKeyId == null ? null : String(row.userKeyId),
  };
}

/**
 * Refuses a new job over the type's per-user limits (a replay of an existing idempotency key never is).
 * @throws TooManyJobsError when the user's queued + running jobs of this type reach `maxActiveJobsPerUser`
 * @throws QuotaExceededError when the jobs of this type the user created since midnight UTC reach
 *   `dailyQuotaPerUser`
 */
export function assertWithinLimits(pre: Pick<CreationPreflight, 'active' | 'today' | 'replay'>, def: JobDefinition, now: Date): void {
  if (pre.replay) return;
  if (pre.today >= def.limits.dailyQuotaPerUser) {
    throw new QuotaExceededError(def.jobType, def.limits.dailyQuotaPerUser, secondsUntilNextUtcDay(now));
  }
  if (pre.active >= def.limits.maxActiveJobsPerUser) {
    throw new TooManyJobsError(def.jobType, def.limits.maxActiveJobsPerUser, TOO_MANY_JOBS_RETRY_AFTER_SECONDS);
  }
}
