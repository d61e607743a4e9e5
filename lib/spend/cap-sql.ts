/**
 * The SQL of the cap that applies, shared by the reservation (lib/capacity/reserve-statements.ts), the refusal's
 * explanation (lib/capacity/reserve.ts) and the admission at create (./admission.ts), so they can never disagree
 * on which cap applies.
 *
 * Which cap applies (precedence): the subject's own row (an admin's override for that user or job type) ←
 * the scope's `*` row (an admin's default) ← the stage's configured default (a parameter; NULL: no cap).
 */
import type { SqlValue } from '../db/sql.ts';
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
