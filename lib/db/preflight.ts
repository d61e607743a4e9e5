/**
 * The deploy's preflight: before any new code serves, connect exactly as the functions do — the same driver
 * (mariadb), the same pool options and DATABASE_URL (built from the database secret), through RDS Proxy — and
 * prove what the code assumes but no test on MariaDB can: that the connection negotiated multi-statements and
 * runs a multi-statement query, and that the server's settings are those of lib/db/server-settings.ts (which
 * the stack pins in its parameter groups). Run by the deploy-time Lambda on every deployment, also when no
 * migration is pending (functions/migrate.ts); a problem fails the deployment with what is wrong and what to do.
 *
 * Why the capability is checked and not assumed: the mariadb driver asks for CLIENT_MULTI_STATEMENTS only when
 * the server's greeting offers it, and drops it silently otherwise; every create, claim and projection would
 * then fail with a syntax error. AWS documents nothing about RDS Proxy passing it through.
 * Nothing here pins a proxy session for longer than the check: reads of variables, one multi-statement SELECT,
 * and one statement of {@link LARGEST_STATEMENT_BYTES} on a connection the pool closes after it (./large-statements.ts).
 */
import type * as mariadb from 'mariadb';
import { retryWhileUnavailable, type ConnectRetryOptions } from './connect-retry.ts';
import { parseDatabaseUrl } from './database-url.ts';
import { PREFLIGHT_CHECKS, type PreflightObservation, type PreflightProblem } from './preflight-checks.ts';
import { LARGEST_STATEMENT_BYTES } from './server-settings.ts';
import { createSqlPool, type SqlPool } from './sql-pool.ts';

export type { PreflightProblem } from './preflight-checks.ts';

/** The server (or proxy) does not meet what the application relies on; every problem is listed with its remedy. */
export class PreflightError extends Error {
  constructor(readonly problems: readonly PreflightProblem[], where: string) {
    super([
      `database preflight failed through ${where}: ${problems.length} problem(s); the deployment stops before any function changes`,
      ...problems.map((p) => `- ${p.check}: found ${p.found}; expected ${p.expected}. ${p.action}`),
    ].join('\n'));
    this.name = 'PreflightError';
  }
}

export interface PreflightOptions extends ConnectRetryOptions {
  /** The statement size the server must accept (default {@link LARGEST_STATEMENT_BYTES}). */
  largestStatementBytes?: number;
}

export interface PreflightReport {
  serverVersion: string;
  /** Every check that ran, in order (all passed). */
  passed: string[];
}

/** CLIENT_MULTI_STATEMENTS among the protocol's capability flags. */
const CLIENT_MULTI_STATEMENTS = 1n << 16n;

/** The session's settings, read without changing any (no SET: nothing for the proxy to pin). */
const SETTINGS_SQL = `SELECT @@SESSION.sql_mode AS sqlMode, @@SESSION.time_zone AS sessionTimeZone,
  @@GLOBAL.time_zone AS serverTimeZone, @@system_time_zone AS systemTimeZone,
  TIMESTAMPDIFF(SECOND, UTC_TIMESTAMP(), NOW()) AS offsetSeconds,
  @@character_set_client AS charsetClient, @@character_set_connection AS charsetConnection,
  @@character_set_results AS charsetResults, @@character_set_server AS charsetServer,
  @@character_set_database AS charsetDatabase, @@collation_database AS collationDatabase,
  @@max_allowed_packet AS maxAllowedPacket, VERSION() AS version`;

/** MySQL 8 names the isolation variable `transaction_isolation`; MariaDB 10.11 only knows `tx_isolation`. */
const ISOLATION_SQL = "SHOW SESSION VARIABLES WHERE Variable_name IN ('transaction_isolation', 'tx_isolation')";

/**
 * Checks the database behind `pool` (a pool made as the application makes it: {@link createSqlPool}).
 * @throws PreflightError listing every problem found; a driver error when the database cannot be reached
 *   (after `connectRetryMs` of retries)
 */
export async function preflightDatabase(pool: SqlPool, where: string, options: PreflightOptions = {}): Promise<PreflightReport> {
  const largest = options.largestStatementBytes ?? LARGEST_STATEMENT_BYTES;
  const conn = await retryWhileUnavailable(() => pool.getConnection(), options);
  let observed: PreflightObservation;
  try {
    observed = await observeSession(conn);
  } finally {
    await conn.release();
  }
  observed.largeStatement = await sendLargest(pool, largest, observed.settings.maxAllowedPacket);
  observed.largestStatementBytes = largest;
  const problems = PREFLIGHT_CHECKS.flatMap((check) => check.problems(observed));
  if (problems.length > 0) throw new PreflightError(problems, where);
  return { serverVersion: observed.settings.version, passed: PREFLIGHT_CHECKS.map((c) => c.name) };
}

/** {@link preflightDatabase} on a pool of its own for `databaseUrl`, closed after. */
export async function preflightDatabaseUrl(databaseUrl: string, options: PreflightOptions = {}): Promise<PreflightReport> {
  const s = parseDatabaseUrl(databaseUrl);
  const pool = createSqlPool(databaseUrl);
  try {
    return await preflightDatabase(pool, `${s.host}:${s.port}/${s.database} (user ${s.user})`, options);
  } finally {
    await pool.end();
  }
}

/** What one of the application's connections negotiated and sees. */
async function observeSession(conn: mariadb.PoolConnection): Promise<PreflightObservation> {
  // mariadb 3.4's ConnectionInformation keeps the negotiated flags (client's ∩ server's) in `clientCapabilities`
  // (lib/cmd/handshake/client-capabilities.js), a field its type declarations leave out.
  const negotiated = (((conn.info as { clientCapabilities?: bigint } | null)?.clientCapabilities ?? 0n) & CLIENT_MULTI_STATEMENTS) !== 0n;
  let multiStatement: string | null = null;
  try {
    const results = (await conn.query('SELECT 1 AS one; SELECT 2 AS two')) as unknown;
    const [first, second] = Array.isArray(results) ? (results as { one?: number; two?: number }[][]) : [];
    if (Number(first?.[0]?.one) !== 1 || Number(second?.[0]?.two) !== 2) multiStatement = `two result sets expected, got ${JSON.stringify(results)}`;
  } catch (err) {
    multiStatement = describe(err);
  }
  const [row] = (await conn.query(SETTINGS_SQL)) as Record<string, unknown>[];
  const isolation = Object.fromEntries(((await conn.query(ISOLATION_SQL)) as { Variable_name: string; Value: string }[])
    .map((r) => [r.Variable_name, r.Value]));
  const text = (key: string) => String(row?.[key] ?? '');
  return {
    multiStatementsNegotiated: negotiated,
    multiStatementError: multiStatement,
    settings: {
      sqlMode: text('sqlMode'), sessionTimeZone: text('sessionTimeZone'), serverTimeZone: text('serverTimeZone'),
      systemTimeZone: text('systemTimeZone'), offsetSeconds: Number(row?.offsetSeconds),
      charsetClient: text('charsetClient'), charsetConnection: text('charsetConnection'), charsetResults: text('charsetResults'),
      charsetServer: text('charsetServer'), charsetDatabase: text('charsetDatabase'), collationDatabase: text('collationDatabase'),
      maxAllowedPacket: Number(row?.maxAllowedPacket), version: text('version'),
      isolation: isolation.transaction_isolation ?? isolation.tx_isolation ?? '',
    },
    largeStatement: null,
    largestStatementBytes: 0,
  };
}

/**
 * Sends one statement of exactly `bytes` through the pool (it runs on a connection of its own, closed after:
 * the proxy pins a session for a statement over 16 KB) and checks that the server received all of it.
 * @returns null when it did; why not otherwise; 'skipped' when max_allowed_packet already says it cannot.
 */
async function sendLargest(pool: SqlPool, bytes: number, maxAllowedPacket: number): Promise<string | null> {
  if (!(maxAllowedPacket >= bytes)) return 'skipped';
  const sql = 'SELECT LENGTH(?) AS n';
  // The text sent: the SQL with `?` replaced by the quoted value.
  const value = 'x'.repeat(bytes - Buffer.byteLength(sql) + 1 - 2);
  try {
    const [row] = (await pool.query(sql, [value])) as { n: number | bigint }[];
    return Number(row?.n) === value.length ? null : `the server received ${String(row?.n)} of ${value.length} bytes of the value`;
  } catch (err) {
    return describe(err);
  }
}

function describe(err: unknown): string {
  const e = err as { code?: unknown; errno?: unknown; sqlMessage?: unknown; message?: unknown };
  return `${String(e?.code ?? 'error')} (${String(e?.errno ?? '-')}): ${String(e?.sqlMessage ?? e?.message ?? err).split('\n')[0]}`;
}
