/**
 * "What did we spend, on what, for whom": tokens and cost per UTC day × job type × model × credential mode
 * (and per user), for a day range with filters. Days before the usage watermark are read from the rollup
 * tables (an indexed range over days); later ones live from the ledger's (createdAt) index, so the result is
 * exact. Cost is bounded by the days asked for (≤ {@link MAX_REPORT_DAYS}) and the traffic since the watermark.
 */
import type { Db } from '../db/client.ts';
import { readWatermark } from './watermark.ts';
import { addTotals, ledgerWhere, mergeUsageRows, sumLedger, toUsageRow, type UsageFilter, type UsageRow, type UsageTotals } from './usage-rollup.ts';
import { DAY_MS, dayKey, floorDay, maxDate } from './time-buckets.ts';

/** Longest range one report covers. */
export const MAX_REPORT_DAYS = 92;
/** Days covered when no range is given (today included). */
export const DEFAULT_REPORT_DAYS = 7;
/** Users a per-user report lists when the query names no number, and the most it may name. */
export const DEFAULT_REPORT_USERS = 100;
export const MAX_REPORT_USERS = 1_000;

export interface UsageReportQuery extends UsageFilter {
  /** First UTC day, `YYYY-MM-DD` (default: 6 days before today). */
  from?: string | undefined;
  /** Last UTC day, inclusive (default: today). */
  to?: string | undefined;
  /** One row per user as well, for the `users` users with the highest cost (default {@link DEFAULT_REPORT_USERS}). */
  perUser: boolean;
  users?: number | undefined;
}

export interface UsageReport {
  from: string;
  to: string;
  /** Per-user report: the rows of the listed users only. */
  rows: UsageRow[];
  /** Every call of the range and filters (per-user report: of every user, listed or not). */
  total: UsageTotals;
  rollupCoveredUntil: string | null;
  /** Per-user report: how many users had calls in the range and filters. */
  userCount?: number;
}

const ZERO: UsageTotals = { calls: 0, promptTokens: 0, completionTokens: 0, totalTokens: 0, costUsd: '0.00000000' };

/** The report; rows sorted by day, then cost (highest first). */
export async function usageReport(db: Db, q: UsageReportQuery, now: Date): Promise<UsageReport> {
  const to = q.to ? new Date(`${q.to}T00:00:00Z`) : floorDay(now);
  const from = q.from ? new Date(`${q.from}T00:00:00Z`) : new Date(to.getTime() - (DEFAULT_REPORT_DAYS - 1) * DAY_MS);
  const end = new Date(to.getTime() + DAY_MS);
  const watermark = await readWatermark(db, 'usage');
  const split = watermark ? maxDate(from, watermark) : from;
  const perUser = q.perUser || q.userId !== undefined;
  const filter: UsageFilter = { jobType: q.jobType, model: q.model, userId: q.userId };
  // A per-user report lists the users with the highest cost only: its rows are one per user × day × type × model
  // × mode, and thousands of active users would outgrow a Lambda answer (6 MB) within a week.
  const ranking = q.perUser ? await rankUsers(db, { from, split, end }, filter, q.users ?? DEFAULT_REPORT_USERS) : undefined;
  const rowFilter: UsageFilter = ranking ? { ...filter, userIds: ranking.userIds } : filter;
  const [rolled, live] = ranking?.userIds.length === 0 ? [[], []] : await Promise.all([
    split.getTime() > from.getTime() ? rolledUsage(db, from, split, perUser, rowFilter) : Promise.resolve([]),
    split.getTime() < end.getTime() ? sumLedger(db, { from: split, to: end, perUser, filter: rowFilter }) : Promise.resolve([]),
  ]);
  const rows = mergeUsageRows([...rolled, ...live]).sort((a, b) => a.day.localeCompare(b.day) || Number(b.costUsd) - Number(a.costUsd));
  return {
    from: dayKey(from), to: dayKey(to), rows,
    total: ranking?.total ?? rows.reduce<UsageTotals>((t, r) => addTotals(t, r), ZERO),
    rollupCoveredUntil: watermark?.toISOString() ?? null,
    ...(ranking ? { userCount: ranking.userCount } : {}),
  };
}

/**
 * The `limit` users with the highest cost in the range (ties by id), how many users had calls, and the totals of
 * all of them, in one query over the same two sources as the report: the per-user rollup before the watermark
 * (`split`), the ledger from it. The window sums run over every user's group before LIMIT applies.
 */
async function rankUsers(
  db: Db, range: { from: Date; split: Date; end: Date }, f: UsageFilter, limit: number,
): Promise<{ userIds: string[]; userCount: number; total: UsageTotals }> {
  const parts: string[] = [];
  const values: unknown[] = [];
  if (range.split.getTime() > range.from.getTime()) {
    const where = ['day >= ?', 'day < ?'];
    values.push(range.from, range.split);
    if (f.jobType !== undefined) (where.push('jobType = ?'), values.push(f.jobType));
    if (f.model !== undefined) (where.push('model = ?'), values.push(f.model));
    if (f.userId !== undefined) (where.push('userId = ?'), values.push(f.userId));
    parts.push(`SELECT userId, calls, promptTokens, completionTokens, totalTokens, costUsd FROM \`AiUsageUserDaily\` WHERE ${where.join(' AND ')}`);
  }
  if (range.split.getTime() < range.end.getTime()) {
    const where = ledgerWhere(range.split, range.end, f);
    values.push(...where.values);
    parts.push(`SELECT u.userId AS userId, 1 AS calls, u.promptTokens AS promptTokens, u.completionTokens AS completionTokens,
        u.totalTokens AS totalTokens, u.costUsd AS costUsd
      FROM \`AiUsageLog\` u LEFT JOIN \`AiJob\` j ON j.id = u.jobId WHERE ${where.sql}`);
  }
  const rows = await db.$queryRawUnsafe<Record<string, unknown>[]>(
    `SELECT userId, COUNT(*) OVER () AS userCount,
            CAST(SUM(SUM(calls)) OVER () AS CHAR) AS calls, CAST(SUM(SUM(promptTokens)) OVER () AS CHAR) AS promptTokens,
            CAST(SUM(SUM(completionTokens)) OVER () AS CHAR) AS completionTokens,
            CAST(SUM(SUM(totalTokens)) OVER () AS CHAR) AS totalTokens, CAST(SUM(SUM(costUsd)) OVER () AS CHAR) AS costUsd
     FROM (${parts.join(' UNION ALL ')}) t
     GROUP BY userId ORDER BY SUM(costUsd) DESC, userId LIMIT ?`,
    ...values, limit,
  );
  const first = rows[0];
  return {
    userIds: rows.map((r) => String(r.userId)),
    userCount: Number(first?.userCount ?? 0),
    total: first ? {
      calls: Number(first.calls), promptTokens: Number(first.promptTokens), completionTokens: Number(first.completionTokens),
      totalTokens: Number(first.totalTokens), costUsd: addTotals(ZERO, { ...ZERO, costUsd: String(first.costUsd) }).costUsd,
    } : ZERO,
  };
}

async function rolledUsage(db: Db, from: Date, until: Date, perUser: boolean, f: UsageFilter): Promise<UsageRow[]> {
  const where = {
    day: { gte: from, lt: until },
    ...(f.jobType !== undefined ? { jobType: f.jobType } : {}),
    ...(f.model !== undefined ? { model: f.model } : {}),
  };
  const users = f.userIds !== undefined ? { userId: { in: [...f.userIds] } } : {};
  const rows = perUser
    ? await db.aiUsageUserDaily.findMany({ where: { ...where, ...users, ...(f.userId !== undefined ? { userId: f.userId } : {}) } })
    : await db.aiUsageDaily.findMany({ where });
  return rows.map((r) => toUsageRow({ ...r, day: dayKey(r.day), costUsd: r.costUsd.toFixed(8) }));
}
