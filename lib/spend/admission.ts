/**
 * Spending caps at job creation (lib/api/creation-limits.ts): a user whose spend has reached a cap that would
 * apply to the new job gets 429 SPEND_LIMIT_REACHED with `Retry-After` at the end of that cap's UTC period, and
 * the job is not created. The conditions below are folded into the creating transaction's existing guard
 * statement (no extra round trip) as ONE `EXISTS` over the user's spend counters ({@link spendReachedSql}), and
 * read again scope by scope ({@link spendReachedConditions}) only to explain a refusal.
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

/** Whether the job runs on the user's own key, as a boolean SQL expression. */
function userKeySql(a: SpendAdmission): { sql: string; values: SqlValue[] } {
  return a.credential === 'platform' ? { sql: 'FALSE', values: [] }
    : a.credential === 'user_key' ? { sql: 'TRUE', values: [] } : { sql: `(${ACTIVE_USER_KEY_ID_SQL} IS NOT NULL)`, values: [a.userId] };
}

/** The subject of a scope's counter and cap for this user and job type. */
const subjectOf = (a: SpendAdmission, scope: SpendScope): string => (scope.startsWith('user') ? a.userId : scope === 'job_type_day' ? a.jobType : DEFAULT_SUBJECT);

/**
 * Whether any cap that applies to the new job is reached, as ONE boolean SQL expression (the creating
 * transaction's guard): an EXISTS over the counters of the current periods (at most four rows, primary-key
 * lookups) whose spend is at or above the cap of its scope. The same rules as {@link spendReachedConditions}, which
 * says which scope refused: on the platform's key the subject's cap ← the scope's `*` row ← the configured
 * default ({@link capSql}'s precedence); on the user's own key only a cap set for that very user, on user scopes. A
 * missing counter has spent nothing, so it reaches no cap.
 */
export function spendReachedSql(a: SpendAdmission): { sql: string; values: SqlValue[] } {
  const userKey = userKeySql(a);
  const own = "(SELECT capUsd FROM `SpendCap` o WHERE o.scope = c.scope AND o.subject = c.subject)";
  const configured = `CASE c.scope ${SPEND_SCOPES.map((scope) => `WHEN '${scope}' THEN CAST(? AS DECIMAL(14, 8))`).join(' ')} END`;
  const star = `(SELECT capUsd FROM \`SpendCap\` d WHERE d.scope = c.scope AND d.subject = '${DEFAULT_SUBJECT}')`;
  const keys = SPEND_SCOPES.map((scope) => `(c.scope = '${scope}' AND c.subject = ? AND c.periodStart = ${PERIOD[scope]})`);
  return withClock(
    `EXISTS (SELECT 1 FROM \`SpendCounter\` c WHERE (${keys.join(' OR ')})
       AND c.settledUsd + c.reservedUsd >= IF(${userKey.sql}, IF(c.scope LIKE 'user%', ${own}, NULL), COALESCE(${own}, ${star}, ${configured})))`,
    a.clock ?? DATABASE_CLOCK,
    [...SPEND_SCOPES.map((scope) => subjectOf(a, scope)), ...userKey.values, ...SPEND_SCOPES.map((scope) => a.defaults[scope])],
  );
}

/** Per scope, whether the user's new job would be refused by that cap now. */
export function spendReachedConditions(a: SpendAdmission): ReachedCondition[] {
  const clock = a.clock ?? DATABASE_CLOCK;
  const userKey = userKeySql(a);
  return SPEND_SCOPES.map((scope) => {
    const subject = subjectOf(a, scope);
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
