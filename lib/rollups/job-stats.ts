/**
 * The job half of the admin stats, from bounded reads only (issue 12):
 * - open jobs (queued, running) per state × type: exact, a covering range of the (lifecycleStatus, finishedAt,
 *   jobType) index over open jobs only;
 * - finished jobs per window: the hourly rollup for hours before the watermark plus a live range of the same
 *   index from the watermark on, so exact; `lastHour` is a sliding live range (exact), `last24h` and `perDay`
 *   are hour- and day-aligned (last24h = from the start of the hour 23 hours ago, so 23–24 h);
 * - all-time terminal counts (the `byStatus`/`byType` fields kept from before): AiJobFinishedTotal plus the
 *   live rows after the watermark. Jobs deleted by an opt-in retention stay counted (they did finish).
 * Cost: open jobs + hours × types in the windows + traffic since the watermark (minutes when the maintenance
 * runs); none of it grows with history.
 */
import type { Db } from '../db/client.ts';
import { JOB_STATES, TERMINAL_STATES, type JobState } from '../jobs/states.ts';
import { countFinishedByHour, type FinishedCount } from './finished-jobs-rollup.ts';
import { readWatermark } from './watermark.ts';
import { DAY_MS, dayKey, floorDay, floorHour, HOUR_MS, maxDate } from './time-buckets.ts';

export type PerState = Record<JobState, number>;
type Terminal = 'succeeded' | 'failed' | 'cancelled';
export type PerTerminalState = Record<Terminal, number>;

/** Finished jobs in one window. */
export interface FinishedWindow {
  byStatus: PerTerminalState;
  byType: Record<string, PerTerminalState>;
}

export interface JobStats {
  byStatus: PerState;
  byType: Record<string, PerState>;
  finished: {
    lastHour: FinishedWindow;
    last24h: FinishedWindow;
    perDay: (FinishedWindow & { day: string })[];
    /** The 24 UTC hours of `last24h`, oldest first (the console's throughput chart). */
    perHour: { hour: string; byStatus: PerTerminalState }[];
    /** Finished jobs before this instant come from the rollup, later ones are counted live. */
    rollupCoveredUntil: string | null;
  };
}

/** Days of `perDay`, today included. */
export const STATS_DAYS = 7;

export function zeroPerState(): PerState {
  return Object.fromEntries(JOB_STATES.map((s) => [s, 0])) as PerState;
}

function emptyWindow(): FinishedWindow {
  return { byStatus: { succeeded: 0, failed: 0, cancelled: 0 }, byType: {} };
}

function addTo(w: FinishedWindow, c: Pick<FinishedCount, 'jobType' | 'status' | 'jobs'>): void {
  const s = c.status as Terminal;
  w.byStatus[s] += c.jobs;
  (w.byType[c.jobType] ??= { succeeded: 0, failed: 0, cancelled: 0 })[s] += c.jobs;
}

/** Collects the job stats at `now`. */
export async function collectJobStats(db: Db, now: Date): Promise<JobStats> {
  const watermark = await readWatermark(db, 'finished_jobs');
  const firstDay = new Date(floorDay(now).getTime() - (STATS_DAYS - 1) * DAY_MS);
  const liveFrom = watermark ?? new Date(0);
  const [open, totals, rolled, live, lastHour] = await Promise.all([
    openCounts(db),
    watermark ? finishedTotals(db) : Promise.resolve([]),
    watermark ? rolledHours(db, firstDay, watermark) : Promise.resolve([]),
    countFinishedByHour(db, liveFrom),
    countFinishedByHour(db, new Date(now.getTime() - HOUR_MS)),
  ]);
  const byStatus = zeroPerState();
  const byType: Record<string, PerState> = {};
  for (const c of [...open, ...totals, ...live]) {
    byStatus[c.status] += c.jobs;
    (byType[c.jobType] ??= zeroPerState())[c.status] += c.jobs;
  }
  return { byStatus, byType, finished: windows(now, firstDay, [...rolled, ...live], lastHour, watermark) };
}

function windows(now: Date, firstDay: Date, hours: FinishedCount[], lastHourCounts: FinishedCount[], watermark: Date | null): JobStats['finished'] {
  const since24h = new Date(floorHour(now).getTime() - 23 * HOUR_MS);
  const lastHour = emptyWindow();
  const last24h = emptyWindow();
  const days = new Map<string, FinishedWindow>();
  for (let d = firstDay.getTime(); d <= now.getTime(); d += DAY_MS) days.set(dayKey(new Date(d)), emptyWindow());
  const perHour = new Map<number, PerTerminalState>();
  for (let h = since24h.getTime(); h <= now.getTime(); h += HOUR_MS) perHour.set(h, { succeeded: 0, failed: 0, cancelled: 0 });
  for (const c of lastHourCounts) addTo(lastHour, c);
  for (const c of hours) {
    if (c.hour.getTime() >= since24h.getTime()) addTo(last24h, c);
    const hour = perHour.get(c.hour.getTime());
    if (hour) hour[c.status as Terminal] += c.jobs;
    const day = days.get(dayKey(c.hour));
    if (day) addTo(day, c);
  }
  return {
    lastHour, last24h,
    perDay: [...days].map(([day, w]) => ({ day, ...w })),
    perHour: [...perHour].map(([hour, byStatus]) => ({ hour: new Date(hour).toISOString(), byStatus })),
    rollupCoveredUntil: watermark?.toISOString() ?? null,
  };
}

/** Open jobs per state × type: a range of the index over queued and running rows only. */
async function openCounts(db: Db): Promise<Omit<FinishedCount, 'hour'>[]> {
  const rows = await db.$queryRawUnsafe<{ jobType: string; status: JobState; jobs: bigint | number }[]>(
    `SELECT jobType, lifecycleStatus AS status, COUNT(*) AS jobs FROM \`AiJob\`
     WHERE lifecycleStatus IN ('queued', 'running') GROUP BY lifecycleStatus, jobType`,
  );
  return rows.map((r) => ({ jobType: r.jobType, status: r.status, jobs: Number(r.jobs) }));
}

async function finishedTotals(db: Db): Promise<Omit<FinishedCount, 'hour'>[]> {
  const rows = await db.aiJobFinishedTotal.findMany();
  return rows.filter((r) => TERMINAL_STATES.has(r.lifecycleStatus)).map((r) => ({ jobType: r.jobType, status: r.lifecycleStatus, jobs: Number(r.jobs) }));
}

/** Rolled-up hours in [from, watermark). */
async function rolledHours(db: Db, from: Date, watermark: Date): Promise<FinishedCount[]> {
  const rows = await db.aiJobFinishedHourly.findMany({ where: { hour: { gte: from, lt: maxDate(from, watermark) } } });
  return rows.map((r) => ({ hour: r.hour, jobType: r.jobType, status: r.lifecycleStatus, jobs: r.jobs }));
}
