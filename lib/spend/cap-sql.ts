/**
 * The SQL of a spend cap and its counter, shared by the reservation (lib/capacity/reserve-statements.ts), the
 * admission at create (./admission.ts) and the reads (./caps-repository.ts), so they can never disagree on
 * which cap applies or which period a counter belongs to.
 *
 * Which cap applies (precedence): the subject's own row (an admin's override for that user or job type) ←
 * the scope's `*` row (an admin's default) ← the stage's configured default (a parameter; NULL: no cap).
 */
import type { SqlValue } from '../db/sql.ts';
import type { DbClock } from '../capacity/db-clock.ts';
import { DEFAULT_SUBJECT, type SpendCapDefaults, type SpendScope } from './caps.ts';

export interface SqlPart {
  sql: string;
  values: SqlValue[];
}

/** The cap of `scope` for the subject in SQL expression `subjectSql` (NULL when none applies). */
export function capSql(scope: SpendScope, subjectSql: string, subjectValues: readonly SqlValue[], defaults: SpendCapDefaults): SqlPart {
  return {
    sql: `COALESCE((SELECT capUsd FROM \`SpendCap\` WHERE scope = '${scope}' AND subject = ${subjectSql}),`
      + ` (SELECT capUsd FROM \`SpendCap\` WHERE scope = '${scope}' AND subject = '${DEFAULT_SUBJECT}'), CAST(? AS DECIMAL(14, 8)))`,
    values: [...subjectValues, defaults[scope]],
  };
}

/** The period a counter of `scope` belongs to at `clock`: the UTC day, or the first day of the UTC month. */
export function periodSql(scope: SpendScope, clock: DbClock): SqlPart {
  return scope === 'user_month'
    ? { sql: `CAST(DATE_FORMAT(${clock.sql}, '%Y-%m-01') AS DATE)`, values: [...clock.values] }
    : { sql: `DATE(${clock.sql})`, values: [...clock.values] };
}

/** Whether a user-scope cap was set for this very user (their own key is charged only then). */
export function ownCapExistsSql(scope: SpendScope, userValue: SqlValue): SqlPart {
  return { sql: `EXISTS (SELECT 1 FROM \`SpendCap\` WHERE scope = '${scope}' AND subject = ?)`, values: [userValue] };
}
