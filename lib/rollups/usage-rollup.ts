/**
 * Bounded incremental aggregation of the usage ledger (AiUsageLog) into AiUsageDaily (day × job type ×
 * provider/model × credential mode) and AiUsageUserDaily (the same per user), run by the scheduled maintenance.
 *
 * Only closed UTC days are aggregated (ended more than {@link USAGE_LAG_MS} ago); a ledger row is inserted in
 * its own short statement at the time of the call, so no row can land in a closed day later and the rollup
 * is exact. Readers add the live ledger rows at or after the watermark (lib/rollups/usage-report.ts).
 * One day per transaction; the read is a range of the ledger's (createdAt) index joined to AiJob by id.
 */
import type { Db, PrismaDb } from '../db/client.ts';
import type { CredentialMode } from '../db/generated/enums.ts';
import { advanceWatermark, ensureWatermark, readWatermark, WatermarkMovedError } from './watermark.ts';
import { DAY_MS, floorDay, minDate, parseSqlTime } from './time-buckets.ts';
import { upsertRows } from './upsert-rows.ts';

/** How long after a day ends it is aggregated. */
export const USAGE_LAG_MS = 5 * 60_000;

/** Token and cost sums of one group of ledger rows. Tokens as numbers (exact below 2^53), cost as a decimal string. */
export interface UsageTotals {
  calls: number;
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  costUsd: string;
}

/** One rollup row: a UTC day × job type × model × credential mode (× user, in the per-user table). */
export interface UsageRow extends UsageTotals {
  day: string;
  jobType: string;
  provider: string;
  model: string;
  credentialMode: CredentialMode;
  userId?: string;
}

/** Filters of the live read and of the reports. */
export interface UsageFilter {
  jobType?: string | undefined;
  model?: string | undefined;
  userId?: string | undefined;
  /** Only these users (a per-user report's listed users; never empty). */
  userIds?: readonly string[] | undefined;
}

const SUMS = `COUNT(*) AS calls, CAST(SUM(u.promptTokens) AS CHAR) AS promptTokens,
  CAST(SUM(u.completionTokens) AS CHAR) AS completionTokens, CAST(SUM(u.totalTokens) AS CHAR) AS totalTokens,
  CAST(SUM(u.costUsd) AS CHAR) AS costUsd`;

/**
 * Ledger rows with `from <= createdAt < to` (to open-ended when omitted), per day × type × model × mode,
 * and per user when `perUser`. Live read; bounded by the traffic of the span.
 */
/**
 * The WHERE condition of ledger rows (`AiUsageLog u LEFT JOIN AiJob j`) in [`from`, `to`) that pass `filter`
 * (index `createdAt`), with its values.
 */
export function ledgerWhere(from: Date, to: Date | undefined, filter: UsageFilter = {}): { sql: string; values: unknown[] } {
  const where = ['u.createdAt >= ?'];
  const values: unknown[] = [from];
  if (to) (where.push('u.createdAt < ?'), values.push(to));
  if (filter.userId !== undefined) (where.push('u.userId = ?'), values.push(filter.userId));
  if (filter.userIds !== undefined) (where.push(`u.userId IN (${filter.userIds.map(() => '?').join(', ')})`), values.push(...filter.userIds));
  if (filter.model !== undefined) (where.push('u.model = ?'), values.push(filter.model));
  if (filter.jobType !== undefined) (where.push('j.jobType = ?'), values.push(filter.jobType));
  return { sql: where.join(' AND '), values };
}

export async function sumLedger(db: Db, o: { from: Date; to?: Date | undefined; perUser: boolean; filter?: UsageFilter }): Promise<UsageRow[]> {
  const where = ledgerWhere(o.from, o.to, o.filter);
  const user = o.perUser ? ', u.userId' : '';
  const rows = await db.$queryRawUnsafe<Record<string, unknown>[]>(
    `SELECT DATE_FORMAT(u.createdAt, '%Y-%m-%d') AS day, COALESCE(j.jobType, 'unknown') AS jobType, u.provider, u.model,
            u.credentialMode${user}, ${SUMS}
     FROM \`AiUsageLog\` u LEFT JOIN \`AiJob\` j ON j.id = u.jobId
     WHERE ${where.sql}
     GROUP BY day, jobType, u.provider, u.model, u.credentialMode${user}`,
    ...where.values,
  );
  return rows.map(toUsageRow);
}

/** A rollup or ledger row as returned by the driver (sums as strings or numbers) to a UsageRow. */
export function toUsageRow(r: Record<string, unknown>): UsageRow {
  return {
    day: typeof r.day === 'string' ? r.day : (r.day as Date).toISOString().slice(0, 10),
    jobType: String(r.jobType), provider: String(r.provider), model: String(r.model),
    credentialMode: r.credentialMode as CredentialMode,
    ...(r.userId !== undefined ? { userId: String(r.userId) } : {}),
    calls: Number(r.calls), promptTokens: Number(r.promptTokens), completionTokens: Number(r.completionTokens),
    totalTokens: Number(r.totalTokens), costUsd: String(r.costUsd),
  };
}

async function initialWatermark(db: Db, end: Date): Promise<Date> {
  const rows = await db.$queryRawUnsafe<{ createdAt: Date }[]>('SELECT createdAt FROM `AiUsageLog` ORDER BY createdAt LIMIT 1');
  return rows[0] ? minDate(end, floorDay(rows[0].createdAt)) : end;
}

/**
 * Aggregates the first closed day after the watermark in one short transaction; null when none is left
 * (or another run advanced the watermark meanwhile).
 */
export async function aggregateUsageStep(db: PrismaDb, now: Date): Promise<{ day: Date; rows: number } | null> {
  const end = floorDay(new Date(now.getTime() - USAGE_LAG_MS));
  const from = (await readWatermark(db, 'usage')) ?? (await ensureWatermark(db, 'usage', await initialWatermark(db, end), now));
  if (from.getTime() >= end.getTime()) return null;
  const to = new Date(from.getTime() + DAY_MS);
  const perUser = await sumLedger(db, { from, to, perUser: true });
  const advanced = await db.$transaction(async (tx) => {
    await advanceWatermark(tx, 'usage', from, to, now);
    const cols = 'jobType, provider, model, credentialMode, calls, promptTokens, completionTokens, totalTokens, costUsd';
    const set = 'calls = VALUES(calls), promptTokens = VALUES(promptTokens), completionTokens = VALUES(completionTokens), totalTokens = VALUES(totalTokens), costUsd = VALUES(costUsd)';
    await upsertRows(tx, `INSERT INTO \`AiUsageUserDaily\` (userId, day, ${cols})`, set,
      perUser.map((r) => [r.userId ?? '', r.day, ...rowValues(r)]));
    await upsertRows(tx, `INSERT INTO \`AiUsageDaily\` (day, ${cols})`, set,
      mergeUsageRows(perUser.map(({ userId: _u, ...r }) => r)).map((r) => [r.day, ...rowValues(r)]));
    return true;
  }).catch((err: unknown) => {
    // Another run advanced the watermark first and counted this span: nothing to do.
    if (err instanceof WatermarkMovedError) return false;
    throw err;
  });
  if (!advanced) return null;
  return { day: from, rows: perUser.length };
}

function rowValues(r: UsageRow): (string | number)[] {
  return [r.jobType, r.provider, r.model, r.credentialMode, r.calls, r.promptTokens, r.completionTokens, r.totalTokens, r.costUsd];
}

/** Sums rows that share day, type, model, mode (and user): merges rollup rows with live ones, or users away. */
export function mergeUsageRows(rows: readonly UsageRow[]): UsageRow[] {
  const merged = new Map<string, UsageRow>();
  for (const r of rows) {
    const key = [r.day, r.jobType, r.provider, r.model, r.credentialMode, r.userId ?? ''].join('\u0000');
    const m = merged.get(key);
    if (!m) merged.set(key, { ...r });
    else Object.assign(m, addTotals(m, r));
  }
  return [...merged.values()];
}

/** a + b, with the cost added exactly in units of 1e-8 USD (the ledger's precision). */
export function addTotals(a: UsageTotals, b: UsageTotals): UsageTotals {
  return {
    calls: a.calls + b.calls, promptTokens: a.promptTokens + b.promptTokens,
    completionTokens: a.completionTokens + b.completionTokens, totalTokens: a.totalTokens + b.totalTokens,
    costUsd: fromNanoCents(toNanoCents(a.costUsd) + toNanoCents(b.costUsd)),
  };
}

function toNanoCents(usd: string): bigint {
  const negative = usd.startsWith('-');
  const [whole = '0', frac = ''] = usd.replace('-', '').split('.');
  const v = BigInt(whole) * 100_000_000n + BigInt((frac + '00000000').slice(0, 8));
  return negative ? -v : v;
}

function fromNanoCents(v: bigint): string {
  const sign = v < 0n ? '-' : '';
  const abs = v < 0n ? -v : v;
  return `${sign}${abs / 100_000_000n}.${(abs % 100_000_000n).toString().padStart(8, '0')}`;
}
