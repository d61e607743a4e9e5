/**
 * Parameterised SQL statements for hot write paths. Repositories build statements; an executor runs them
 * either inside a caller's Prisma transaction (`executeInTransaction`) or as one atomic round trip on the
 * raw driver (`runAtomically` in ./sql-pool.ts). Same SQL both ways, so the two paths cannot drift.
 */
import type { Prisma } from './client.ts';

export type SqlValue = string | number | boolean | Date | null;

export interface SqlStatement {
  sql: string;
  values: SqlValue[];
  /** Several statements in one text ({@link joinStatements}): run them in a transaction of their own when alone. */
  several?: boolean;
}

/**
 * Several statements as ONE text, for a caller that carries one statement (a write carried in a projection's
 * script): the server runs them in order; whoever runs the result alone wraps it in a transaction
 * (`several` says so).
 */
export function joinStatements(statements: readonly SqlStatement[]): SqlStatement {
  if (statements.length === 1) return statements[0]!;
  return { sql: statements.map((s) => s.sql).join(';\n'), values: statements.flatMap((s) => s.values), several: true };
}

/** A column value the server computes: SQL with `?` placeholders (e.g. a scalar subquery) and their values. */
export interface SqlExpression {
  readonly expression: string;
  readonly values: SqlValue[];
}

/**
 * `INSERT INTO \`table\` (cols…) VALUES (?…)` for one row; undefined values are left to column defaults, and
 * `computed` columns take the server's value of their expression instead of the row's.
 */
export function insertStatement(
  table: string, row: Record<string, SqlValue | undefined>, computed: Readonly<Record<string, SqlExpression>> = {},
): SqlStatement {
  const entries = Object.entries(row).filter((e): e is [string, SqlValue] => e[1] !== undefined);
  const columns = entries.map(([c]) => `\`${c}\``).join(', ');
  const marks = entries.map(([c]) => computed[c]?.expression ?? '?').join(', ');
  const values = entries.flatMap(([c, v]) => computed[c]?.values ?? [v]);
  return { sql: `INSERT INTO \`${table}\` (${columns}) VALUES (${marks})`, values };
}

/**
 * `INSERT INTO \`table\` (cols…) VALUES (…), (…)` for rows of one table: consecutive rows with the same defined
 * columns share one statement (one parse and one table open on the server instead of one per row); undefined
 * values are left to column defaults, as in {@link insertStatement}. The rows are inserted in their order.
 */
export function insertRowsStatements(table: string, rows: readonly Record<string, SqlValue | undefined>[]): SqlStatement[] {
  const statements: SqlStatement[] = [];
  let columns = '';
  for (const row of rows) {
    const entries = Object.entries(row).filter((e): e is [string, SqlValue] => e[1] !== undefined);
    const names = entries.map(([c]) => `\`${c}\``).join(', ');
    const tuple = `(${entries.map(() => '?').join(', ')})`;
    const last = statements.at(-1);
    if (last && names === columns) {
      last.sql += `, ${tuple}`;
      last.values.push(...entries.map(([, v]) => v));
    } else {
      statements.push({ sql: `INSERT INTO \`${table}\` (${names}) VALUES ${tuple}`, values: entries.map(([, v]) => v) });
      columns = names;
    }
  }
  return statements;
}

/** Runs statements in order inside the caller's Prisma transaction. */
export async function executeInTransaction(tx: Prisma.TransactionClient, statements: SqlStatement[]): Promise<void> {
  for (const s of statements) await tx.$executeRawUnsafe(s.sql, ...s.values);
}

/**
 * Runs statements inside the caller's Prisma transaction in ONE round trip (a multi-statement COM_QUERY; the
 * driver substitutes every `?` client-side, escaped). The server stops at the first failing statement and the
 * error reaches the caller, whose transaction then rolls back. For writes whose results are not needed.
 */
export async function executeTogether(tx: Prisma.TransactionClient, statements: SqlStatement[]): Promise<void> {
  if (statements.length === 0) return;
  await tx.$executeRawUnsafe(statements.map((s) => s.sql).join(';\n'), ...statements.flatMap((s) => s.values));
}
