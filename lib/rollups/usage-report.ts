/**
 * "What did we spend, on what, for whom": tokens and cost per UTC day × job type × model × credential mode
 * (and per user), for a day range with filters. Days before the usage watermark are read from the rollup
 * tables (an indexed range over days); later ones live from the ledger's (createdAt) index, so the result is
 * exact. Cost is bounded by the days asked for (≤ {@link MAX_REPORT_DAYS}) and the traffic since the watermark.
 */
import type { Db } from '../db/client.ts';
import { readWatermark } from './watermark.ts';
import { addTotals, mergeUsageRows, sumLedger, toUsageRow, type UsageFilter, type UsageRow, type UsageTotals } from './usage-rollup.ts';
import { DAY_MS, dayKey, floorDay, maxDate } from './time-buckets.ts';

/** Longest range one report covers. */
export const MAX_REPORT_DAYS = 92;
/** Days covered when no range is given (today included). */
export const DEFAULT_REPORT_DAYS = 7;

export interface UsageReportQuery extends UsageFilter {
  /** First UTC day, `YYYY-MM-DD` (default: 6 days before today). */
  from?: string | undefined;
  /** Last UTC day, inclusive (default: today). */
  to?: string | undefined;
  /** One row per user as well. */
  perUser: boolean;
}

export interface UsageReport {
  from: string;
  to: string;
  rows: UsageRow[];
  total: UsageTotals;
  rollupCoveredUntil: string | null;
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
  const [rolled, live] = await Promise.all([
    split.getTime() > from.getTime() ? rolledUsage(db, from, split, perUser, q) : Promise.resolve([]),
    split.getTime() < end.getTime() ? sumLedger(db, { from: split, to: end, perUser, filter: q }) : Promise.resolve([]),
  ]);
  const rows = mergeUsageRows([...rolled, ...live]).sort((a, b) => a.day.localeCompare(b.day) || Number(b.costUsd) - Number(a.costUsd));
  return {
    from: dayKey(from), to: dayKey(to), rows,
    total: rows.reduce<UsageTotals>((t, r) => addTotals(t, r), ZERO),
    rollupCoveredUntil: watermark?.toISOString() ?? null,
  };
}

async function rolledUsage(db: Db, from: Date, until: Date, perUser: boolean, f: UsageFilter): Promise<UsageRow[]> {
  const where = {
    day: { gte: from, lt: until },
    ...(f.jobType !== undefined ? { jobType: f.jobType } : {}),
    ...(f.model !== undefined ? { model: f.model } : {}),
  };
  const rows = perUser
    ? await db.aiUsageUserDaily.findMany({ where: { ...where, ...(f.userId !== undefined ? { userId: f.userId } : {}) } })
    : await db.aiUsageDaily.findMany({ where });
  return rows.map((r) => toUsageRow({ ...r, day: dayKey(r.day), costUsd: r.costUsd.toFixed(8) }));
}
