/**
 * What RDS Proxy (Aurora MySQL) pins a session on, checked against general-log rows; the rules and the SET
 * allow-list are explained in docs/deploy.md, "RDS Proxy: what the application sends".
 */
import type { GeneralLogRow } from './general-log.ts';

/** RDS Proxy pins a session that sends a statement text longer than this. */
export const MAX_STATEMENT_BYTES = 16 * 1024;

/**
 * The only SETs the application may send, each with why it is safe through the proxy. Matched against one
 * statement with its literals replaced by `?` and spaces collapsed, upper-cased.
 */
export const SET_ALLOW_LIST: readonly { pattern: RegExp; why: string }[] = [
  { pattern: /^SET TIME_ZONE ?= ?\?$/, why: 'the mariadb driver sets UTC on connect (timezone: Z); the proxy tracks TIME_ZONE' },
  { pattern: /^SET NAMES \w+( COLLATE \w+)?$/, why: 'driver charset on connect; the proxy tracks NAMES' },
  {
    pattern: /^SET TRANSACTION ISOLATION LEVEL READ COMMITTED$/,
    why: 'next-transaction scope, untracked by the proxy: it pins but for the EXCLUDE_VARIABLE_SETS filter (test/infra/database-settings.test.ts), so it is always sent in the same COM_QUERY as its START TRANSACTION (checked below)',
  },
  {
    pattern: /^SET SESSION WAIT_TIMEOUT = (\?|\d+|DEFAULT)$/,
    why: "the scheduled dispatcher's held claim: its lock TTL (lib/outbox/held-claim.ts), at most 3 connections",
  },
];

export interface PinningReport {
  violations: string[];
  counts: { statements: number; prepares: number; userVariables: number; sets: number; changeUsers: number; largeStatements: number };
  /** How often each kind of SET was sent (numbers replaced by N). */
  setKinds: Record<string, number>;
}

/** Replaces quoted strings and identifiers with `?` so that values never look like SQL. */
export function withoutLiterals(sql: string): string {
  return sql
    .replace(/'(?:[^'\\]|\\.|'')*'/gs, '?')
    .replace(/"(?:[^"\\]|\\.|"")*"/gs, '?')
    .replace(/`(?:[^`]|``)*`/g, 'ident');
}

/** The statements of one COM_QUERY text, literals replaced, normalised. */
export function statementsOf(sql: string): string[] {
  return withoutLiterals(sql).split(';').map((s) => s.replace(/\s+/g, ' ').trim().toUpperCase()).filter(Boolean);
}

const USER_VARIABLE = /(^|[^@\w])@[A-Z_$][\w$]*/;

/**
 * Checks every row (in the log's order): no server-side prepared statements, no COM_CHANGE_USER, no user
 * variables, no SET outside the allow-list, no GET_LOCK outside `allowLocks` threads (the migrator), no
 * temporary tables or table locks, and no statement text over 16 KB on a connection that sends anything after it.
 */
export function checkPinning(rows: readonly GeneralLogRow[], allowLocks: ReadonlySet<number> = new Set()): PinningReport {
  const violations: string[] = [];
  const counts = { statements: 0, prepares: 0, userVariables: 0, sets: 0, changeUsers: 0, largeStatements: 0 };
  const setKinds: Record<string, number> = {};
  const flag = (row: GeneralLogRow, why: string) => violations.push(`${why}: [${row.threadId} ${row.command}] ${row.argument.slice(0, 300)}`);
  /** The last row of each connection that is not its `Quit`. */
  const lastUse = new Map<number, number>();
  rows.forEach((row, index) => {
    if (row.command !== 'Quit') lastUse.set(row.threadId, index);
  });
  for (const [index, row] of rows.entries()) {
    if (['Prepare', 'Execute', 'Close stmt', 'Reset stmt'].includes(row.command)) {
      if (row.command === 'Prepare') counts.prepares += 1;
      flag(row, 'server-side prepared statement');
    }
    if (row.command === 'Change user') {
      counts.changeUsers += 1;
      flag(row, 'COM_CHANGE_USER');
    }
    if (row.command !== 'Query' && row.command !== 'Prepare') continue;
    if (Buffer.byteLength(row.argument) > MAX_STATEMENT_BYTES) {
      counts.largeStatements += 1;
      // Pins the session; tolerable only when the client closes that connection right after (lib/db/large-statements.ts).
      if (index < (lastUse.get(row.threadId) ?? -1)) flag(row, 'statement text over 16 KB on a connection used again afterwards');
    }
    const statements = statementsOf(row.argument);
    statements.forEach((statement, i) => {
      counts.statements += 1;
      if (USER_VARIABLE.test(statement)) {
        counts.userVariables += 1;
        flag(row, 'user-defined variable');
      }
      if (/\bGET_LOCK\s*\(/.test(statement) && !allowLocks.has(row.threadId)) flag(row, 'GET_LOCK outside the migrator');
      if (/^(CREATE TEMPORARY|LOCK TABLES?|FLUSH TABLES)/.test(statement)) flag(row, 'temporary table or table lock');
      if (!statement.startsWith('SET ')) return;
      counts.sets += 1;
      const kind = statement.replace(/\d+/g, 'N');
      setKinds[kind] = (setKinds[kind] ?? 0) + 1;
      if (!SET_ALLOW_LIST.some((a) => a.pattern.test(statement))) flag(row, `SET outside the allow-list (${statement})`);
      if (statement.startsWith('SET TRANSACTION') && !/^(START TRANSACTION|BEGIN)\b/.test(statements[i + 1] ?? '')) {
        flag(row, 'SET TRANSACTION not followed by START TRANSACTION in the same COM_QUERY');
      }
    });
  }
  return { violations, counts, setKinds };
}

/** Threads that ran the migrator (they touch `_prisma_migrations`): the one place a named lock is allowed. */
export function migratorThreads(rows: readonly GeneralLogRow[]): Set<number> {
  return new Set(rows.filter((r) => r.argument.includes('_prisma_migrations')).map((r) => r.threadId));
}
