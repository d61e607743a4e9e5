/**
 * Spending caps at job creation (lib/api/creation-limits.ts): a user whose spend has reached a cap that would
 * apply to the new job gets 429 SPEND_LIMIT_REACHED with `Retry-After` at the end of that cap's UTC period, and
 * the job is not created. The conditions below are folded into the creating transaction's existing guard
 * statement (no extra round trip) and read again only to explain a refusal.
 *
 * "Reached" means the counter's settled plus reserved spend is at or above the cap: no call of any cost fits.
 * Which caps apply mirrors the reservation (lib/capacity/reserve-statements.ts): on the platform's key every
 * cap; on the user's own key only the user's caps set for that very user. A job created with `userKeyIfStored`
 * runs on the user's key exactly when one is active, which the same transaction decides.
 */
import type { SqlValue } from '../db/sql.ts';
import { ACTIVE_USER_KEY_ID_SQL } from '../credentials/user-credential-repository.ts';
import { withClock, type DbClock, DATABASE_CLOCK } from '../capacity/db-clock.ts';
import { capSql } from './cap-sql.ts';
import { DEFAULT_SUBJECT, SPEND_SCOPES, type SpendCapDefaults, type SpendScope } from './caps.ts';

/** Which key the job will run on: the platform's, the user's own, or the user's when one is stored. */
export type CreateCredential = 'platform' | 'user_key' | 'user_key_if_stored';

export interface SpendAdmission {
  userId: string;
  jobType: string;
  credential: CreateCredential;
  defaults: SpendCapDefaults;
  clock?: DbClock;
}

/** One scope's "reached" as a boolean SQL expression. */
export interface ReachedCondition {
  scope: SpendScope;
  sql: string;
  values: SqlValue[];
}

const PERIOD: Readonly<Record<SpendScope, string>> = {
  job_type_day: 'DATE({now})', platform_day: 'DATE({now})', user_day: 'DATE({now})', user_month: "CAST(DATE_FORMAT({now}, '%Y-%m-01') AS DATE)",
};

/** Per scope, whether the user's new job would be refused by that cap now. */
export function spendReachedConditions(a: SpendAdmission): ReachedCondition[] {
  const clock = a.clock ?? DATABASE_CLOCK;
  const userKey: { sql: string; values: SqlValue[] } = a.credential === 'platform' ? { sql: 'FALSE', values: [] }
    : a.credential === 'user_key' ? { sql: 'TRUE', values: [] } : { sql: `(${ACTIVE_USER_KEY_ID_SQL} IS NOT NULL)`, values: [a.userId] };
  return SPEND_SCOPES.map((scope) => {
    const subject = scope.startsWith('user') ? a.userId : scope === 'job_type_day' ? a.jobType : DEFAULT_SUBJECT;
    const cap = capSql(scope, '?', [subject], a.defaults);
    const spent = `(SELECT settledUsd + reservedUsd FROM \`SpendCounter\` WHERE scope = '${scope}' AND subject = ? AND periodStart = ${PERIOD[scope]})`;
    const reached = `COALESCE(${spent} >= ${cap.sql}, FALSE)`;
    if (scope.startsWith('user')) {
      const own = `COALESCE(${spent} >= (SELECT capUsd FROM \`SpendCap\` WHERE scope = '${scope}' AND subject = ?), FALSE)`;
      const s = withClock(`IF(${userKey.sql}, ${own}, ${reached})`, clock, [...userKey.values, subject, subject, subject, ...cap.values]);
      return { scope, ...s };
    }
    const s = withClock(`(NOT ${userKey.sql} AND ${reached})`, clock, [...userKey.values, subject, ...cap.values]);
    return { scope, ...s };
  });
}
