/**
 * Bounded incremental aggregation of finished jobs into AiJobFinishedHourly (per hour × type × terminal state)
 * and AiJobFinishedTotal (all time), run by the scheduled maintenance (lib/maintenance/).
 *
 * Reads only closed hours: those that ended more than {@link FINISH_LAG_MS} ago. A job's `finishedAt` is set
 * to the time of the transaction that finishes it, and those transactions last seconds, so no row can appear
 * in a closed hour after it was aggregated: the rollup is exact, and a reader adding the live rows at or after
 * the watermark gets exact counts. Each hour is read with a covering range of the
 * (lifecycleStatus, finishedAt, jobType) index: work is bounded by the traffic of the span, never by history.
 */
import type { Db, PrismaDb } from '../db/client.ts';
import { TERMINAL_STATES, type JobState } from '../jobs/states.ts';
import { upsertRows } from './upsert-rows.ts';
import { advanceWatermark, ensureWatermark, readWatermark, WatermarkMovedError } from './watermark.ts';
import { floorHour, HOUR_MS, minDate, parseSqlTime } from './time-buckets.ts';

/** How long after an hour ends it is aggregated: far longer than any finishing transaction. */
export const FINISH_LAG_MS = 2 * 60_000;
/** Hours aggregated per transaction. */
export const HOURS_PER_STEP = 6;

const TERMINAL = [...TERMINAL_STATES];
const IN_TERMINAL = `lifecycleStatus IN (${TERMINAL.map((s) => `'${s}'`).join(', ')})`;

/** Finished jobs of one hour × type × state. */
export interface FinishedCount {
  hour: Date;
  jobType: string;
  status: JobState;
  jobs: number;
}

/**
 * Finished jobs with `from <= finishedAt < to`, per hour × type × state (live read of the index range).
 * Also what the stats read for the span after the watermark.
 */
export async function countFinishedByHour(db: Db, from: Date, to?: Date): Promise<FinishedCount[]> {
  const rows = await db.$queryRawUnsafe<{ hour: string; jobType: string; status: JobState; jobs: bigint | number }[]>(
    `SELECT DATE_FORMAT(finishedAt, '%Y-%m-%d %H:00:00') AS hour, jobType, lifecycleStatus AS status, COUNT(*) AS jobs
     FROM \`AiJob\` WHERE ${IN_TERMINAL} AND finishedAt >= ?${to ? ' AND finishedAt < ?' : ''}
     GROUP BY hour, jobType, lifecycleStatus`,
    ...(to ? [from, to] : [from]),
  );
  return rows.map((r) => ({ hour: parseSqlTime(r.hour), jobType: r.jobType, status: r.status, jobs: Number(r.jobs) }));
}

/** Where the first run starts: the hour of the oldest finished job, or the current closed hour when none. */
async function initialWatermark(db: Db, end: Date): Promise<Date> {
  let oldest = end;
  for (const status of TERMINAL) {
    const rows = await db.$queryRawUnsafe<{ finishedAt: Date }[]>(
      'SELECT finishedAt FROM `AiJob` WHERE lifecycleStatus = ? AND finishedAt IS NOT NULL ORDER BY finishedAt LIMIT 1', status,
    );
    if (rows[0]) oldest = minDate(oldest, floorHour(rows[0].finishedAt));
  }
  return oldest;
}

/** What one aggregation step did. */
export interface RollupStep {
  from: Date;
  to: Date;
  rows: number;
}

/**
 * Aggregates up to {@link HOURS_PER_STEP} closed hours after the watermark in one short transaction.
 * Null when everything closed is aggregated already (or another run advanced the watermark meanwhile).
 */
export async function aggregateFinishedJobsStep(db: PrismaDb, now: Date): Promise<RollupStep | null> {
  const end = floorHour(new Date(now.getTime() - FINISH_LAG_MS));
  const from = (await readWatermark(db, 'finished_jobs')) ?? (await ensureWatermark(db, 'finished_jobs', await initialWatermark(db, end), now));
  if (from.getTime() >= end.getTime()) return null;
  const to = minDate(end, new Date(from.getTime() + HOURS_PER_STEP * HOUR_MS));
  const counts = await countFinishedByHour(db, from, to);
  const advanced = await db.$transaction(async (tx) => {
    await advanceWatermark(tx, 'finished_jobs', from, to, now);
    await upsertRows(tx, 'INSERT INTO `AiJobFinishedHourly` (hour, jobType, lifecycleStatus, jobs)', 'jobs = VALUES(jobs)',
      counts.map((c) => [c.hour, c.jobType, c.status, c.jobs]));
    await upsertRows(tx, 'INSERT INTO `AiJobFinishedTotal` (jobType, lifecycleStatus, jobs)', 'jobs = jobs + VALUES(jobs)',
      sumByTypeAndStatus(counts).map((t) => [t.jobType, t.status, t.jobs]));
    return true;
  }).catch((err: unknown) => {
    // Another run advanced the watermark first and counted this span: nothing to do.
    if (err instanceof WatermarkMovedError) return false;
    throw err;
  });
  if (!advanced) return null;
  return { from, to, rows: counts.length };
}

/** Sums counts per type × state. */
export function sumByTypeAndStatus(counts: readonly Omit<FinishedCount, 'hour'>[]): Omit<FinishedCount, 'hour'>[] {
  const sums = new Map<string, Omit<FinishedCount, 'hour'>>();
  for (const c of counts) {
    const key = `${c.jobType}\u0000${c.status}`;
    const entry = sums.get(key) ?? { jobType: c.jobType, status: c.status, jobs: 0 };
    entry.jobs += c.jobs;
    sums.set(key, entry);
  }
  return [...sums.values()];
}
