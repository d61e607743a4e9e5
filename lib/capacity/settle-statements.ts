/**
 * Settling a hold, and cooling a model down after a 429.
 *
 * Settlement gives back the difference between what was held and what the call used: the window keeps the
 * request and moves from the held tokens to the real ones (zero for a call that failed or was refused: its
 * tokens come back, its request still counts, as the provider counted it); the call leaves the calls in flight;
 * every spend counter moves the held cost from reserved to the real cost settled. Idempotent: only a `held`
 * hold is settled, once, and then deleted. Locks in the reservation's order (hold, model, window, counters in
 * primary-key order), so a settlement carried in a projection's transaction cannot deadlock with a reservation.
 *
 * Cooldown (one statement on the model's row, assignments evaluated left to right):
 * - the cooldown ends at the latest `Retry-After` any consumer was given: `GREATEST(cooldownUntil, now + wait)`;
 * - a 429 outside a cooldown cuts the admitted rate to half its current value (at least 10%); once the cooldown
 *   is over it recovers by 10 points a minute (./reserve-statements.ts `rateFactorSql`), so a model cut once is
 *   back at its full limits five minutes after the cooldown ends. 429s during the cooldown (other consumers'
 *   calls already in flight) cut nothing more.
 */
import type { SqlStatement } from '../db/sql.ts';
import type { ModelRoute } from '../ai/types.ts';
import { withClock, type DbClock } from './db-clock.ts';
import { rateFactorSql } from './reserve-statements.ts';

/** What a settled call used: tokens (the window) and cost (8 decimals; the spend counters). */
export interface ActualUse {
  tokens: number;
  costUsd: string;
}

/** The lowest share of a model's limits a cooldown cuts to (per mille). */
export const MIN_RATE_FACTOR = 100;
/** The cooldown a 429 without `Retry-After` sets. */
export const DEFAULT_COOLDOWN_MS = 10_000;

const SETTLING = "h.holdKey = ? AND h.state = 'settling'";

/**
 * The settlement of one hold (nothing when it is not `held` any more). What the hold did not take is left out:
 * `capacity: false` (a user's own key: no window, no calls in flight), `charged: false` (a call that costs
 * nothing: no spend counter). By default (the sweep, which does not know) everything is included.
 */
export function settlementStatements(holdKey: string, actual: ActualUse, took: { capacity?: boolean; charged?: boolean } = {}): SqlStatement[] {
  const key = [holdKey];
  // The hold, the model and the window in ONE statement, locked in that order (the hold by its unique key
  // first); a hold that took no capacity (no window) joins no model or window row, whose columns it leaves alone.
  const capacity = took.capacity !== false;
  const statements: SqlStatement[] = [{
    sql: `UPDATE \`CapacityHold\` h${capacity ? ` LEFT JOIN \`ProviderLimit\` l ON l.provider = h.provider AND l.model = h.model AND h.windowStart IS NOT NULL
            LEFT JOIN \`ProviderWindow\` w ON w.provider = h.provider AND w.model = h.model AND w.windowStart = h.windowStart` : ''}
          SET h.state = 'settling', h.actualTokens = ?, h.actualUsd = ?${capacity ? ', l.inFlight = GREATEST(l.inFlight - 1, 0), w.tokens = GREATEST(CAST(w.tokens AS SIGNED) - h.tokens + ?, 0)' : ''}
          WHERE h.holdKey = ? AND h.state = 'held'`,
    values: [actual.tokens, actual.costUsd, ...(capacity ? [actual.tokens] : []), holdKey],
  }];
  if (took.charged !== false) {
    statements.push({
      sql: `UPDATE \`SpendCounter\` s JOIN \`CapacityHold\` h ON ${SETTLING} AND (
              (s.scope = 'job_type_day' AND s.subject = h.jobType AND s.periodStart = h.jobTypeDay)
              OR (s.scope = 'platform_day' AND s.subject = '*' AND s.periodStart = h.platformDay)
              OR (s.scope = 'user_day' AND s.subject = h.userId AND s.periodStart = h.userDay)
              OR (s.scope = 'user_month' AND s.subject = h.userId AND s.periodStart = h.userMonth))
            SET s.reservedUsd = GREATEST(s.reservedUsd - h.costUsd, 0), s.settledUsd = s.settledUsd + h.actualUsd`,
      values: key,
    });
  }
  // Last: its affected rows (0 or 1) say whether this settled the hold.
  statements.push({ sql: "DELETE FROM `CapacityHold` WHERE holdKey = ? AND state = 'settling'", values: key });
  return statements;
}

/** Sets or extends the model's cooldown after a 429 asking for `waitMs` (see the module comment). */
export function cooldownStatement(route: ModelRoute, waitMs: number, clock: DbClock): SqlStatement {
  return withClock(
    `UPDATE \`ProviderLimit\` l SET
       l.rateFactor = IF(l.cooldownUntil IS NOT NULL AND l.cooldownUntil > {now}, l.rateFactor,
         GREATEST(${MIN_RATE_FACTOR}, FLOOR(${rateFactorSql('l', '{now}')} / 2))),
       l.cooldownUntil = GREATEST(COALESCE(l.cooldownUntil, {now}), {now} + INTERVAL ? MICROSECOND)
     WHERE l.provider = ? AND l.model = ?`,
    clock, [Math.round(waitMs) * 1000, route.provider, route.model],
  );
}
