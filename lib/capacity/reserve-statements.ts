/**
 * The reservation of one provider call as ONE transaction in ONE round trip (./reserve.ts runs it): a hold row,
 * then the rows it takes from created if missing and locked, then ONE guarded multi-table UPDATE whose affected
 * rows decide — the hold becomes `held` and every counter moves, or nothing does.
 *
 * Lock order (no deadlock between reservations, settlements and sweeps, which lock in the same order):
 *   the model's ProviderLimit row → waiting jobs (CapacityWait; the job's own row not at all on its first lease,
 *   when it has none) → the minute window → spend counters in primary-key order (SPEND_SCOPES) → the user's
 *   share of the minute window (which only reservations of the model lock, each holding the model's row first).
 *   A hold row is locked only by its own reservation, settlement or sweep.
 * The ProviderLimit upsert comes first for that reason, and because it is where the configuration reaches the
 * database: a row with `source = 'config'` takes the configured limits, an admin's row keeps its own.
 *
 * Everything time-dependent is computed by the database from one clock reading stored on the hold row
 * (`createdAt`): the minute window, the spend periods, the expiry. No session variable, no SELECT … FOR UPDATE
 * across round trips: nothing pins an RDS Proxy session.
 */
import type { SqlStatement, SqlValue } from '../db/sql.ts';
import type { ModelRoute } from '../ai/types.ts';
import { capSql } from '../spend/cap-sql.ts';
import { DEFAULT_SUBJECT, SPEND_SCOPES, type SpendCapDefaults, type SpendScope } from '../spend/caps.ts';
import { withClock, type DbClock } from './db-clock.ts';
import type { ModelLimits } from './limits-config.ts';

/** What one reservation asks for. */
export interface HoldRequest {
  holdId: string;
  /** Unique per job, lease and route: reserving again under the same key takes nothing twice. */
  holdKey: string;
  job: { id: string; userId: string; jobType: string; priority: number };
  route: ModelRoute;
  /** Provider capacity to take (calls on the platform's key); null for a user's own key. */
  capacity: { limits: ModelLimits; tokens: number } | null;
  /** The call's maximum cost (8 decimals) reserved against every cap that applies. */
  costUsd: string;
  /**
   * Which caps the call is charged to: `platform` (the platform's key: every cap), `own` (the user's own key: the
   * user's caps set for that very user), `none` (a call that costs nothing: no counter is touched).
   */
  spend: 'platform' | 'own' | 'none';
  defaults: SpendCapDefaults;
  /** How long the hold lives unless settled (the sweeper gives it back after). */
  holdMs: number;
  /** How long after its due time a waiting job still has slots kept for it. */
  waitGraceMs: number;
  /**
   * The job holds its first lease (`leaseVersion` 1): it was never parked, so it has no waiting row (only a park,
   * fenced by a lease, writes one) and the reservation neither locks nor admits one. Absent or false: it may have.
   */
  firstLease?: boolean;
  clock: DbClock;
}

const HOLD = '`CapacityHold`';
const KEY = 'holdKey = ?';

/** The spend counter of each scope, as the hold names its subject and period. */
const COUNTER: Readonly<Record<SpendScope, { alias: string; subject: string; period: string }>> = {
  job_type_day: { alias: 'sj', subject: 'h.jobType', period: 'jobTypeDay' },
  platform_day: { alias: 'sp', subject: `'${DEFAULT_SUBJECT}'`, period: 'platformDay' },
  user_day: { alias: 'su', subject: 'h.userId', period: 'userDay' },
  user_month: { alias: 'sm', subject: 'h.userId', period: 'userMonth' },
};

/** The statements of one reservation, in lock order; the guarded UPDATE is at index {@link guardIndex}. */
export function reservationStatements(r: HoldRequest): SqlStatement[] {
  return [
    ...(r.capacity ? [limitUpsert(r.route, r.capacity.limits)] : []),
    holdInsert(r),
    ...(r.firstLease ? [] : [{ sql: 'UPDATE `CapacityWait` SET waits = waits WHERE jobId = ?', values: [r.job.id] }]),
    ...(r.capacity ? [windowUpsert(r.holdKey)] : []),
    ...(r.spend !== 'none' ? [counterUpsert(r.holdKey)] : []),
    guardedUpdate(r),
    ...(r.capacity ? [userWindowCount(r)] : []),
  ];
}

/** Index of the guarded UPDATE in {@link reservationStatements}: its affected rows say whether the hold was taken. */
export function guardIndex(r: Pick<HoldRequest, 'capacity' | 'spend' | 'firstLease'>): number {
  return (r.capacity ? 4 : 2) + (r.spend !== 'none' ? 1 : 0) - (r.firstLease ? 1 : 0);
}

/** Creates the model's row from the configuration, or follows it (unless an admin set the limits); locks it. */
function limitUpsert(route: ModelRoute, l: ModelLimits): SqlStatement {
  return {
    sql: `INSERT INTO \`ProviderLimit\` (provider, model, rpm, tpm, maxInFlight, source, updatedAt)
          VALUES (?, ?, ?, ?, ?, 'config', UTC_TIMESTAMP(3))
          ON DUPLICATE KEY UPDATE
            updatedAt = IF(source = 'config' AND (rpm <> ? OR tpm <> ? OR maxInFlight <> ?), UTC_TIMESTAMP(3), updatedAt),
            rpm = IF(source = 'config', ?, rpm), tpm = IF(source = 'config', ?, tpm), maxInFlight = IF(source = 'config', ?, maxInFlight)`,
    values: [route.provider, route.model, l.rpm, l.tpm, l.maxInFlight, l.rpm, l.tpm, l.maxInFlight, l.rpm, l.tpm, l.maxInFlight],
  };
}

/** The minute window of `{now}`, and the spend periods (UTC day, first day of the UTC month). */
const MINUTE = "CAST(DATE_FORMAT({now}, '%Y-%m-%d %H:%i:00') AS DATETIME(3))";
const DAY = 'DATE({now})';
const MONTH = "CAST(DATE_FORMAT({now}, '%Y-%m-01') AS DATE)";

/**
 * The hold, `pending`, with the clock read once (`createdAt`) and every key derived from it; for provider
 * capacity also the requests and tokens of the waiting jobs ranked before this one (priority first, then the
 * user with fewer calls admitted in this window), due now and within the grace period.
 */
function holdInsert(r: HoldRequest): SqlStatement {
  const { userId } = r.job;
  const values: SqlValue[] = [
    r.holdId, r.holdKey, r.job.id, userId, r.job.jobType, r.route.provider, r.route.model, r.capacity?.tokens ?? 0, r.costUsd,
  ];
  const userPeriod = (scope: SpendScope, period: string): string => {
    if (r.spend !== 'own') return r.spend === 'platform' ? period : 'NULL';
    values.push(userId);
    return `IF(EXISTS (SELECT 1 FROM \`SpendCap\` WHERE scope = '${scope}' AND subject = ?), ${period}, NULL)`;
  };
  const platformPeriod = r.spend === 'platform' ? DAY : 'NULL';
  const keys = [r.capacity ? MINUTE : 'NULL', platformPeriod, platformPeriod, userPeriod('user_day', DAY), userPeriod('user_month', MONTH)];
  values.push(r.holdMs * 1000);
  const ahead = r.capacity ? aheadOf(r, values) : { columns: '0, 0', from: 'DUAL' };
  return withClock(
    `INSERT INTO ${HOLD} (id, holdKey, jobId, userId, jobType, provider, model, tokens, costUsd, windowStart,
       jobTypeDay, platformDay, userDay, userMonth, aheadRequests, aheadTokens, state, expiresAt, createdAt)
     SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ${keys.join(', ')}, ${ahead.columns}, 'pending', {now} + INTERVAL ? MICROSECOND, {now}
     FROM ${ahead.from}
     ON DUPLICATE KEY UPDATE ${HOLD}.id = ${HOLD}.id`,
    r.clock, values,
  );
}

/**
 * Waiting jobs of this model ranked before the job: count and tokens, as the hold INSERT's own aggregate (no
 * GROUP BY: one row, 0 and 0 when nobody waits; a derived table of it cost an internal temporary table a
 * reservation, `bench:db-status`). A waiting row of a job that ended meanwhile
 * (cancelled while it waited) keeps nothing. Its values follow the SELECT list's; the INSERT's ON DUPLICATE KEY
 * UPDATE names the hold's table, as `AiJob` and `ProviderUserWindow` in the SELECT have an `id` too.
 */
function aheadOf(r: HoldRequest, values: SqlValue[]): { columns: string; from: string } {
  const { provider, model } = r.route;
  values.push(provider, model, r.job.id, r.waitGraceMs * 1000, r.job.priority, r.job.priority, provider, model, r.job.userId);
  return {
    columns: 'COUNT(*), COALESCE(SUM(q.tokens), 0)',
    from: `\`CapacityWait\` q
            JOIN \`AiJob\` j ON j.id = q.jobId AND j.lifecycleStatus = 'running'
            LEFT JOIN \`ProviderUserWindow\` qu ON qu.provider = q.provider AND qu.model = q.model AND qu.windowStart = ${MINUTE} AND qu.userId = q.userId
           WHERE q.provider = ? AND q.model = ? AND q.reason = 'provider_capacity' AND q.jobId <> ?
             AND q.dueAt <= {now} AND q.dueAt > {now} - INTERVAL ? MICROSECOND
             AND (q.priority < ? OR (q.priority = ? AND COALESCE(qu.requests, 0) < COALESCE(
               (SELECT requests FROM \`ProviderUserWindow\` WHERE provider = ? AND model = ? AND windowStart = ${MINUTE} AND userId = ?), 0)))`,
  };
}

/** The minute window, created if missing and locked. */
function windowUpsert(holdKey: string): SqlStatement {
  return {
    sql: `INSERT INTO \`ProviderWindow\` (provider, model, windowStart, requests, tokens)
          SELECT provider, model, windowStart, 0, 0 FROM ${HOLD} WHERE ${KEY} AND state = 'pending'
          ON DUPLICATE KEY UPDATE requests = requests`,
    values: [holdKey],
  };
}

/**
 * The user's share of the minute window (what ranks waiting jobs of equal priority, {@link aheadOf}) counts the
 * call: created at 1 or incremented, after the guarded UPDATE and only when it held the hold this very run (the
 * hold row keeps the id of the run that inserted it: a reservation repeated under the same key counts nothing).
 * No limit reads this row, so it is locked last; every reservation of the model holds the model's row already.
 */
function userWindowCount(r: HoldRequest): SqlStatement {
  return {
    sql: `INSERT INTO \`ProviderUserWindow\` (provider, model, windowStart, userId, requests)
          SELECT provider, model, windowStart, userId, 1 FROM ${HOLD} WHERE ${KEY} AND id = ? AND state = 'held'
          ON DUPLICATE KEY UPDATE requests = requests + 1`,
    values: [r.holdKey, r.holdId],
  };
}

/** The spend counters the hold is charged to, created if missing and locked, in primary-key order. */
function counterUpsert(holdKey: string): SqlStatement {
  const branches = SPEND_SCOPES.map((scope) => {
    const c = COUNTER[scope];
    return `SELECT '${scope}' AS scope, ${c.subject.replace('h.', '')} AS subject, ${c.period} AS periodStart FROM ${HOLD}
            WHERE ${KEY} AND state = 'pending' AND ${c.period} IS NOT NULL`;
  });
  return {
    sql: `INSERT INTO \`SpendCounter\` (scope, subject, periodStart, reservedUsd, settledUsd)
          SELECT k.scope, k.subject, k.periodStart, 0, 0 FROM (${branches.join(' UNION ALL ')}) AS k
          ORDER BY k.scope, k.subject, k.periodStart
          ON DUPLICATE KEY UPDATE reservedUsd = reservedUsd`,
    values: SPEND_SCOPES.map(() => holdKey),
  };
}

/** The admitted share of a model's limit (per mille), recovering after a cooldown ({@link ./cooldown.ts}). */
export function rateFactorSql(l: string, nowSql: string): string {
  return `(CASE WHEN ${l}.cooldownUntil IS NULL THEN 1000 WHEN ${l}.cooldownUntil > ${nowSql} THEN ${l}.rateFactor
            ELSE LEAST(1000, ${l}.rateFactor + 100 * FLOOR(TIMESTAMPDIFF(SECOND, ${l}.cooldownUntil, ${nowSql}) / 60)) END)`;
}

/** A limit scaled by the admitted share, never below 1. */
export function admittedSql(l: string, column: 'rpm' | 'tpm', nowSql: string): string {
  return `GREATEST(1, FLOOR(${l}.${column} * ${rateFactorSql(l, nowSql)} / 1000))`;
}

/** The one guarded UPDATE: the hold becomes `held` and every counter moves only if every limit and cap allows. */
function guardedUpdate(r: HoldRequest): SqlStatement {
  const joins: string[] = [];
  const sets: string[] = ["h.state = 'held'", ...(r.firstLease ? [] : ["ow.reason = 'admitted'"])];
  const guards: string[] = ['h.holdKey = ?', "h.state = 'pending'"];
  const values: SqlValue[] = [];
  if (r.capacity) {
    joins.push(
      'JOIN `ProviderLimit` l ON l.provider = h.provider AND l.model = h.model',
      'JOIN `ProviderWindow` w ON w.provider = h.provider AND w.model = h.model AND w.windowStart = h.windowStart',
    );
    sets.push('l.inFlight = l.inFlight + 1', 'w.requests = w.requests + 1', 'w.tokens = w.tokens + h.tokens');
    guards.push(
      '(l.cooldownUntil IS NULL OR l.cooldownUntil <= h.createdAt)',
      'l.inFlight < l.maxInFlight',
      `w.requests + 1 + h.aheadRequests <= ${admittedSql('l', 'rpm', 'h.createdAt')}`,
      `w.tokens + h.tokens + h.aheadTokens <= ${admittedSql('l', 'tpm', 'h.createdAt')}`,
    );
  }
  const capValues: SqlValue[] = [];
  for (const scope of r.spend === 'none' ? [] : SPEND_SCOPES) {
    const c = COUNTER[scope];
    joins.push(`LEFT JOIN \`SpendCounter\` ${c.alias} ON ${c.alias}.scope = '${scope}' AND ${c.alias}.subject = ${c.subject} AND ${c.alias}.periodStart = h.${c.period}`);
    sets.push(`${c.alias}.reservedUsd = ${c.alias}.reservedUsd + h.costUsd`);
    const cap = capSql(scope, c.subject, [], r.defaults);
    guards.push(`(h.${c.period} IS NULL OR (${c.alias}.scope IS NOT NULL AND COALESCE(${c.alias}.settledUsd + ${c.alias}.reservedUsd + h.costUsd <= ${cap.sql}, TRUE)))`);
    capValues.push(...cap.values);
  }
  values.push(r.holdKey, ...capValues);
  return {
    sql: `UPDATE ${HOLD} h ${joins.join('\n')}
          ${r.firstLease ? '' : 'LEFT JOIN `CapacityWait` ow ON ow.jobId = h.jobId'}
          SET ${sets.join(', ')}
          WHERE ${guards.join('\n AND ')}`,
    values,
  };
}
