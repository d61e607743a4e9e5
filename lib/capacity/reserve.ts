/**
 * Taking a hold for one provider call (./reserve-statements.ts: one transaction, one round trip), and when it
 * is refused, why and for how long — read in a second round trip that also drops the refused hold row.
 */
import { affectedRows, getSqlPool, retryOnDeadlock, runAtomically, type SqlPool } from '../db/sql-pool.ts';
import type { SqlValue } from '../db/sql.ts';
import type { ModelRoute } from '../ai/types.ts';
import { capSql } from '../spend/cap-sql.ts';
import { DEFAULT_SUBJECT, periodEnd, SPEND_SCOPES, type SpendScope } from '../spend/caps.ts';
import { admittedSql, guardIndex, reservationStatements, type HoldRequest } from './reserve-statements.ts';

/** Why a route could not take the call now. */
export type RefusalReason =
  /** The model is cooling down after a 429. */
  | 'cooldown'
  /** The model's minute window has no requests or tokens left. */
  | 'window'
  /** The window's last slots are kept for waiting jobs ranked before this one (priority, fairness). */
  | 'yield'
  /** The model's calls in flight are at their limit. */
  | 'in_flight'
  /** A spending cap would be exceeded by this call's maximum cost. */
  | 'spend_cap';

export interface CapacityRefusal {
  reason: RefusalReason;
  route: ModelRoute;
  /** From the database's now until the refusal may lift (a cooldown's end, the next window, a period's end). */
  retryInMs: number;
  /** The cap that refused (`spend_cap` only). */
  scope?: SpendScope;
  /** The database's now when the refusal was read. */
  at: Date;
}

export type Reservation = { kind: 'held'; holdKey: string } | { kind: 'refused'; refusal: CapacityRefusal };

/** After a refusal for calls in flight: when to look again (a call of ~seconds will have ended). */
export const IN_FLIGHT_RETRY_MS = 2_000;
/** Deadlock retries of a reservation (its statements are all guarded: safe to run again after a rollback). */
const DEADLOCK_TRIES = 3;

/** Takes the hold, or says why not. @throws the driver's error when the database cannot be reached */
export async function reserve(r: HoldRequest, pool: SqlPool = getSqlPool()): Promise<Reservation> {
  const results = await retryOnDeadlock(() => runAtomically(reservationStatements(r), pool), undefined, DEADLOCK_TRIES);
  if (affectedRows(results[guardIndex(r)]) > 0) return { kind: 'held', holdKey: r.holdKey };
  const row = await readRefusal(r, pool);
  if (!row || row.state === 'held') return { kind: 'held', holdKey: r.holdKey }; // taken by an earlier run of this key
  return { kind: 'refused', refusal: classify(r, row) };
}

type RefusalRow = Record<string, unknown> & { state: string; now: Date };

/** The hold's view of every limit it was checked against, and the refused hold row deleted. */
async function readRefusal(r: HoldRequest, pool: SqlPool): Promise<RefusalRow | undefined> {
  const columns = ['h.state', 'h.createdAt AS now', 'h.costUsd', 'h.tokens', 'h.aheadRequests', 'h.aheadTokens'];
  const joins: string[] = [];
  const values: SqlValue[] = [];
  if (r.capacity) {
    columns.push('l.cooldownUntil', 'l.inFlight', 'l.maxInFlight', `${admittedSql('l', 'rpm', 'h.createdAt')} AS rpm`,
      `${admittedSql('l', 'tpm', 'h.createdAt')} AS tpm`, 'w.requests AS windowRequests', 'w.tokens AS windowTokens', 'h.windowStart');
    joins.push('LEFT JOIN `ProviderLimit` l ON l.provider = h.provider AND l.model = h.model',
      'LEFT JOIN `ProviderWindow` w ON w.provider = h.provider AND w.model = h.model AND w.windowStart = h.windowStart');
  }
  for (const scope of SPEND_SCOPES) {
    const subject = scope.startsWith('user') ? 'h.userId' : scope === 'job_type_day' ? 'h.jobType' : `'${DEFAULT_SUBJECT}'`;
    const period = { job_type_day: 'jobTypeDay', platform_day: 'platformDay', user_day: 'userDay', user_month: 'userMonth' }[scope];
    const cap = capSql(scope, subject, [], r.defaults);
    columns.push(`h.${period} AS ${scope}_period`, `s_${scope}.settledUsd + s_${scope}.reservedUsd AS ${scope}_spent`, `${cap.sql} AS ${scope}_cap`);
    joins.push(`LEFT JOIN \`SpendCounter\` s_${scope} ON s_${scope}.scope = '${scope}' AND s_${scope}.subject = ${subject} AND s_${scope}.periodStart = h.${period}`);
    values.push(...cap.values);
  }
  const [rows] = await runAtomically([
    { sql: `SELECT ${columns.join(', ')} FROM \`CapacityHold\` h ${joins.join(' ')} WHERE h.holdKey = ?`, values: [...values, r.holdKey] },
    { sql: "DELETE FROM `CapacityHold` WHERE holdKey = ? AND state = 'pending'", values: [r.holdKey] },
  ], pool) as [RefusalRow[]];
  return rows?.[0];
}

/** The refusal's reason, most lasting first: a spend cap, a cooldown, the window, the calls in flight. */
function classify(r: HoldRequest, row: RefusalRow): CapacityRefusal {
  const at = new Date(row.now);
  const refusal = (reason: RefusalReason, until: number, scope?: SpendScope): CapacityRefusal =>
    ({ reason, route: r.route, retryInMs: Math.max(0, until - at.getTime()), at, ...(scope ? { scope } : {}) });
  for (const scope of SPEND_SCOPES) {
    if (row[`${scope}_period`] == null || row[`${scope}_cap`] == null) continue;
    if (Number(row[`${scope}_spent`] ?? 0) + Number(row.costUsd) > Number(row[`${scope}_cap`])) {
      return refusal('spend_cap', periodEnd(scope, at).getTime(), scope);
    }
  }
  if (!r.capacity) return refusal('in_flight', at.getTime() + IN_FLIGHT_RETRY_MS); // a lost race on the hold row itself
  const cooldown = row.cooldownUntil ? new Date(row.cooldownUntil as Date).getTime() : 0;
  if (cooldown > at.getTime()) return refusal('cooldown', cooldown);
  const nextWindow = new Date(row.windowStart as Date).getTime() + 60_000;
  const requests = Number(row.windowRequests ?? 0);
  const tokens = Number(row.windowTokens ?? 0);
  const rpm = Number(row.rpm);
  const tpm = Number(row.tpm);
  if (requests + 1 > rpm || tokens + Number(row.tokens) > tpm) return refusal('window', nextWindow);
  if (Number(row.inFlight) >= Number(row.maxInFlight)) return refusal('in_flight', at.getTime() + IN_FLIGHT_RETRY_MS);
  return refusal('yield', nextWindow);
}
