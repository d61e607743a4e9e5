/**
 * The clock every window and period is keyed by: the DATABASE's, never a Lambda's (consumers on many hosts
 * must agree on which minute, day and month it is). Repositories take a {@link DbClock} and put its SQL where
 * "now" is needed; production passes {@link DATABASE_CLOCK}. A test that must stay inside one minute window
 * passes a fixed instant as SQL instead (`CAST(? AS DATETIME(3))`), which exercises the same statements.
 */
import type { SqlValue } from '../db/sql.ts';

/** "Now" as an SQL expression, with the values of its placeholders. Constant within one statement. */
export interface DbClock {
  readonly sql: string;
  readonly values: readonly SqlValue[];
}

/** The database server's UTC time, millisecond precision (independent of the session's time zone). */
export const DATABASE_CLOCK: DbClock = Object.freeze({ sql: 'UTC_TIMESTAMP(3)', values: [] });

/**
 * A statement from a template where `{now}` stands for the clock and `?` for the next of `values`: the values
 * come out in the order of the text, whatever the clock's own placeholders.
 */
export function withClock(template: string, clock: DbClock, values: readonly SqlValue[] = []): { sql: string; values: SqlValue[] } {
  const out: SqlValue[] = [];
  let next = 0;
  const sql = template.replace(/\{now\}|\?/g, (mark) => {
    if (mark === '?') {
      if (next >= values.length) throw new RangeError('withClock: more placeholders than values');
      out.push(values[next++]!);
      return '?';
    }
    out.push(...clock.values);
    return clock.sql;
  });
  if (next !== values.length) throw new RangeError('withClock: more values than placeholders');
  return { sql, values: out };
}
