/**
 * Per-user limits of a job type, from its definition (`limits.maxActiveJobsPerUser`, `limits.dailyQuotaPerUser`),
 * checked by the transaction that creates a user's job ({@link limitsGuard}).
 *
 * Soft limits: the guard's counts are plain reads, which do not see the rows of other creates still in flight, so
 * concurrent creates of one user at the edge may all pass: a limit is exceeded by at most the number of that
 * user's creates of the type in flight at once, minus one. That is accepted: the limits protect capacity and
 * cost, not an invariant, and a lock per user on every create would cost more than the overshoot. A create the
 * guard refused is only ever retried guarded ({@link createWithinLimits}), so creates refused together do not
 * all get through when one job ends.
 */
import type { SqlRunner } from '../db/sql-pool.ts';
import type { SqlStatement } from '../db/sql.ts';
import { placeholders } from '../outbox/outbox-claims.ts';
import type { JobDefinition } from '../jobs/definition.ts';
import { ACTIVE_STATES } from '../jobs/states.ts';
import { QuotaExceededError, SpendLimitReachedError, TooManyJobsError } from './http-errors.ts';
import { spendReachedConditions, spendReachedSql, type SpendAdmission } from '../spend/admission.ts';
import { periodEnd, type SpendScope } from '../spend/caps.ts';

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

/** The user's queued + running jobs of a type (index `userId, lifecycleStatus, createdAt`: the user's open jobs). */
const ACTIVE_COUNT_SQL = `(SELECT COUNT(*) FROM AiJob WHERE userId = ? AND lifecycleStatus IN (${placeholders(ACTIVE_STATES.length)}) AND jobType = ?)`;
const activeCountValues = (userId: string, def: JobDefinition) => [userId, ...ACTIVE_STATES, def.jobType];

/** The jobs of a type the user created since midnight UTC (index `userId, createdAt`). */
const TODAY_COUNT_SQL = '(SELECT COUNT(*) FROM AiJob WHERE userId = ? AND createdAt >= ? AND jobType = ?)';
const todayCountValues = (userId: string, def: JobDefinition, now: Date) => [userId, startOfUtcDay(now), def.jobType];

/**
 * What a user's create needs to know to explain a refusal of the {@link limitsGuard}, read in ONE round trip
 * ({@link readCreationPreflight}).
 */
export interface CreationPreflight {
  /** The user's queued + running jobs of this type (index `userId, lifecycleStatus, createdAt`: the user's open jobs). */
  active: number;
  /** The jobs of this type the user created since midnight UTC (index `userId, createdAt`). */
  today: number;
  /** True when a job with this idempotency key exists already (a replay is never refused by the limits). */
  replay: boolean;
  /** The spending caps that would refuse the job (lib/spend/admission.ts), and the database's now to time them. */
  spend?: { reached: SpendScope[]; dbNow: Date };
}

/**
 * The limit counts and the idempotency replay check as one SELECT of scalar subqueries on the raw pool. Read only after the {@link limitsGuard} stopped a create: to say which limit was
 * reached, or to let a replay of an existing idempotency key through.
 */
export async function readCreationPreflight(
  sql: SqlRunner, userId: string, def: JobDefinition, now: Date, opts: { idempotencyKey?: string | undefined; spend?: SpendAdmission | undefined },
): Promise<CreationPreflight> {
  const columns = [`${ACTIVE_COUNT_SQL} AS active`, `${TODAY_COUNT_SQL} AS today`];
  const values: unknown[] = [...activeCountValues(userId, def), ...todayCountValues(userId, def, now)];
  if (opts.idempotencyKey !== undefined) {
    columns.push('(SELECT id FROM AiJob WHERE userId = ? AND jobType = ? AND idempotencyKey = ?) AS replayId');
    values.push(userId, def.jobType, opts.idempotencyKey);
  }
  const spend = opts.spend ? spendReachedConditions(opts.spend) : [];
  for (const c of spend) {
    columns.push(`${c.sql} AS \`spend_${c.scope}\``);
    values.push(...c.values);
  }
  if (opts.spend) columns.push('UTC_TIMESTAMP(3) AS dbNow');
  const [row] = (await sql.query(`SELECT ${columns.join(', ')}`, values)) as Record<string, unknown>[];
  return {
    active: Number(row?.active ?? 0), today: Number(row?.today ?? 0),
    replay: row?.replayId != null,
    ...(opts.spend ? { spend: { reached: spend.filter((c) => Number(row?.[`spend_${c.scope}`] ?? 0) === 1).map((c) => c.scope), dbNow: new Date(row?.dbNow as Date) } } : {}),
  };
}

/**
 * The limits as the first statement of the creating transaction (`guard` of createJob, lib/jobs/create-job.ts),
 * so a create within them is one round trip: a SELECT whose scalar subquery returns two rows — error 1242,
 * "Subquery returns more than 1 row" ({@link isLimitsRefusal}) — when the user's jobs of this type created since
 * midnight UTC, or their queued + running ones, reach the type's limit. The server then stops and nothing is
 * written. A script cannot branch, and a session variable would pin the connection on RDS Proxy, so the guard
 * stops the script by failing. The counts use the same indexes as {@link readCreationPreflight}; they are as soft
 * as its (plain reads; see the module comment).
 */
export function limitsGuard(userId: string, def: JobDefinition, now: Date, spend?: SpendAdmission): SqlStatement {
  const reached = spend ? spendReachedSql(spend) : undefined;
  return {
    sql: `SELECT (SELECT 1 UNION ALL SELECT 1 FROM DUAL WHERE ${TODAY_COUNT_SQL} >= ? OR ${ACTIVE_COUNT_SQL} >= ?${reached ? ` OR ${reached.sql}` : ''}) AS withinLimits`,
    values: [
      ...todayCountValues(userId, def, now), def.limits.dailyQuotaPerUser,
      ...activeCountValues(userId, def), def.limits.maxActiveJobsPerUser,
      ...(reached?.values ?? []),
    ] as SqlStatement['values'],
  };
}

/** MySQL/MariaDB ER_SUBQUERY_NO_1_ROW: on the create path, only ever the {@link limitsGuard}. */
const ER_SUBQUERY_NO_1_ROW = 1242;

/** True when `err` is the {@link limitsGuard} stopping a create at a limit (nothing was written). */
export function isLimitsRefusal(err: unknown): boolean {
  return (err as { errno?: number } | undefined)?.errno === ER_SUBQUERY_NO_1_ROW;
}

/**
 * Refuses a new job over the type's per-user limits or a spending cap (a replay of an existing idempotency key never is).
 * @throws SpendLimitReachedError when a spending cap that applies to the job is reached (Retry-After: its period's end)
 * @throws TooManyJobsError when the user's queued + running jobs of this type reach `maxActiveJobsPerUser`
 * @throws QuotaExceededError when the jobs of this type the user created since midnight UTC reach
 *   `dailyQuotaPerUser`
 */
export function assertWithinLimits(pre: Pick<CreationPreflight, 'active' | 'today' | 'replay' | 'spend'>, def: JobDefinition, now: Date): void {
  if (pre.replay) return;
  if (pre.spend?.reached.length) {
    // Every reached cap must reset before the job can run: wait for the one that resets last.
    const { dbNow } = pre.spend;
    const [scope, ends] = pre.spend.reached.map((s) => [s, periodEnd(s, dbNow).getTime()] as const).reduce((a, b) => (b[1] > a[1] ? b : a));
    throw new SpendLimitReachedError(scope, Math.max(1, Math.ceil((ends - dbNow.getTime()) / 1000)));
  }
  if (pre.today >= def.limits.dailyQuotaPerUser) {
    throw new QuotaExceededError(def.jobType, def.limits.dailyQuotaPerUser, secondsUntilNextUtcDay(now));
  }
  if (pre.active >= def.limits.maxActiveJobsPerUser) {
    throw new TooManyJobsError(def.jobType, def.limits.maxActiveJobsPerUser, TOO_MANY_JOBS_RETRY_AFTER_SECONDS);
  }
}

/** Guarded tries of one create while jobs end and others take their place, before it answers as at the limit. */
export const MAX_GUARDED_TRIES = 3;

/** The two steps {@link createWithinLimits} runs: the create (with the guard, or without it for a replay) and the counts. */
export interface LimitedCreate<T> {
  create(guard: SqlStatement | undefined): Promise<T>;
  counts(): Promise<CreationPreflight>;
}

/**
 * Creates behind the {@link limitsGuard}. When the guard refuses, nothing was written, and the counts say which
 * limit was reached (429), or that the idempotency key replays an existing job, which no limit refuses: that
 * create runs without the guard and meets its duplicate key. When the counts are within the limits (a job
 * ended meanwhile) the create is tried again, guarded, up to {@link MAX_GUARDED_TRIES} times in all, then
 * answered as at the active-jobs limit.
 * @throws TooManyJobsError, QuotaExceededError (see {@link assertWithinLimits})
 */
export async function createWithinLimits<T>(userId: string, def: JobDefinition, now: Date, steps: LimitedCreate<T>, spend?: SpendAdmission): Promise<T> {
  const guard = limitsGuard(userId, def, now, spend);
  for (let tries = 1; ; tries += 1) {
    try {
      return await steps.create(guard);
    } catch (err) {
      if (!isLimitsRefusal(err)) throw err;
    }
    const counts = await steps.counts();
    assertWithinLimits(counts, def, now);
    if (counts.replay) return steps.create(undefined);
    if (tries >= MAX_GUARDED_TRIES) {
      throw new TooManyJobsError(def.jobType, def.limits.maxActiveJobsPerUser, TOO_MANY_JOBS_RETRY_AFTER_SECONDS);
    }
  }
}
