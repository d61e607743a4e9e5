/** Capacity and spend test helpers: a fixed database clock, reservation requests, a pool wide enough to race. */
import { newId } from '../../lib/db/ids.ts';
import { createSqlPool, type SqlPool } from '../../lib/db/sql-pool.ts';
import type { DbClock } from '../../lib/capacity/db-clock.ts';
import type { HoldRequest } from '../../lib/capacity/reserve-statements.ts';
import { DEFAULT_SPEND_CAPS_USD, type SpendCapDefaults } from '../../lib/spend/caps.ts';
import { rawDb } from './db.ts';

/** The database's clock pinned to `at`: every statement of the repository sees this instant as now. */
export function fixedClock(at: Date | string): DbClock {
  return { sql: 'CAST(? AS DATETIME(3))', values: [new Date(at)] };
}

/** No caps at all (a test of provider limits alone). */
export const NO_CAPS: SpendCapDefaults = { job_type_day: null, platform_day: null, user_day: null, user_month: null };
/** The built-in default caps. */
export const DEFAULT_CAPS: SpendCapDefaults = DEFAULT_SPEND_CAPS_USD;

/** A reservation for a fresh job of `userId` on `mock/mock-chat` (override anything). */
export function holdRequest(over: Partial<HoldRequest> & { clock: DbClock }): HoldRequest {
  const jobId = over.job?.id ?? newId();
  return {
    holdId: newId(), holdKey: `${jobId}:1:mock/mock-chat`,
    job: { id: jobId, userId: 'user-1', jobType: 'synthetic_job', priority: 50 },
    route: { provider: 'mock', model: 'mock-chat' },
    capacity: { limits: { rpm: 60, tpm: 1_000_000, maxInFlight: 1_000, maxOutputTokens: 100 }, tokens: 100 },
    costUsd: '0.00000000', spend: 'platform', defaults: NO_CAPS, holdMs: 60_000, waitGraceMs: 30_000,
    ...over,
  };
}

/** A raw pool of `connections` connections to this worker's database (so many reservations really race). */
export function racingPool(connections = 20): SqlPool {
  const url = new URL(process.env.DATABASE_URL ?? '');
  url.searchParams.set('connectionLimit', String(connections));
  return createSqlPool(url.toString());
}

/** One row of a capacity table, by a raw WHERE. */
export async function rowOf(table: string, where: string, params: unknown[]): Promise<Record<string, unknown> | undefined> {
  const [rows] = await (await rawDb()).query(`SELECT * FROM \`${table}\` WHERE ${where}`, params);
  return (rows as Record<string, unknown>[])[0];
}
