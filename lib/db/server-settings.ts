/**
 * The MySQL server settings the application relies on, in one place: the Aurora parameter groups of the stack
 * (infra/data-layer.ts) set them, the deploy's preflight (./preflight.ts) checks them through RDS Proxy before
 * any request depends on them, and the test server is given the same `sql_mode` (test/setup/global-setup.ts).
 *
 * Pure data: no imports at all, so CDK (infra/) can import it without pulling in a driver, Prisma or the AWS SDK.
 *
 * Why each one matters:
 * - `sql_mode`: strict (a too-long value or a bad date is an error, never silently truncated or zeroed),
 *   `ONLY_FULL_GROUP_BY` (MySQL 8's default; a query it refuses fails in CI as it would in production), and never
 *   `NO_BACKSLASH_ESCAPES`: both drivers escape quotes in values with a backslash (text protocol), which that mode
 *   turns into literal backslashes and broken quoting. `ANSI_QUOTES` and `PIPES_AS_CONCAT` are left out too.
 * - time zone UTC: timestamps are written and read as UTC (the driver sets the session's `time_zone` to
 *   `+00:00`; server-side defaults such as `CURRENT_TIMESTAMP(3)` in sessions that do not set it use the server's).
 * - utf8mb4 with `utf8mb4_unicode_ci`: every table names its own collation (the migration lint checks it); the
 *   server's default decides the database's default when RDS creates it, and the connection's collation is the
 *   one the driver negotiates in its handshake.
 * - REPEATABLE READ by default: the isolation every transaction assumes unless it asks for READ COMMITTED itself
 *   (the outbox claims, lib/outbox/outbox-claims.ts).
 * - `max_allowed_packet` above {@link LARGEST_STATEMENT_BYTES}.
 */

/** MySQL 8.0's default `sql_mode`, spelled out so that no default decides it. MariaDB 10.11 accepts every name. */
export const SQL_MODES = [
  'ONLY_FULL_GROUP_BY', 'STRICT_TRANS_TABLES', 'NO_ZERO_IN_DATE', 'NO_ZERO_DATE', 'ERROR_FOR_DIVISION_BY_ZERO', 'NO_ENGINE_SUBSTITUTION',
] as const;

/** The `sql_mode` value: {@link SQL_MODES} joined. */
export const SQL_MODE = SQL_MODES.join(',');

/**
 * Modes a session gets from the client, not the server: both drivers (mariadb, mysql2) ask for CLIENT_IGNORE_SPACE
 * in their handshake, and the server then adds IGNORE_SPACE to that session's `sql_mode`.
 */
export const CLIENT_SQL_MODES = ['IGNORE_SPACE'] as const;

/** Modes that break what the application sends (see the module comment); the preflight names them when found. */
export const FORBIDDEN_SQL_MODES = ['NO_BACKSLASH_ESCAPES', 'ANSI_QUOTES', 'PIPES_AS_CONCAT'] as const;

/** The server's time zone (Aurora's `time_zone` parameter). */
export const SERVER_TIME_ZONE = 'UTC';

/** The offset the mariadb driver sets on every connection (`timezone: 'Z'`, lib/db/database-url.ts). */
export const SESSION_TIME_ZONE = '+00:00';

export const CHARACTER_SET = 'utf8mb4';
export const COLLATION = 'utf8mb4_unicode_ci';

/** The default isolation, as MySQL 8 spells the value of `transaction_isolation` (MariaDB 10.11: `tx_isolation`). */
export const TRANSACTION_ISOLATION = 'REPEATABLE-READ';

/** MySQL 8.0's default `max_allowed_packet` (64 MiB), pinned. */
export const MAX_ALLOWED_PACKET_BYTES = 64 * 1024 * 1024;

/**
 * An upper bound of the largest statement text the application sends, with room to spare. Text costs at most
 * 3 bytes per UTF-16 unit once the driver has written and escaped it, and at most 7 inside a JSON value (a
 * control character becomes `\u00XX` in the JSON text, and the driver escapes its backslash). The largest
 * statements (docs/deploy.md, "Preflight"):
 * - a quiz projection on the transaction path: one INSERT of up to 20 questions, each 1,000 + 2,000 units of
 *   text and six options of 300 units in a JSON column — under 450 KB;
 * - the per-user usage report of 1,000 users: user ids of at most 64 code points in an IN list — under 270 KB;
 * - a create: the request body is at most 64 KiB and its input is written once, into the snapshot — under 140 KB.
 * The preflight requires `max_allowed_packet` of at least this, and sends a statement this large through the proxy.
 */
export const LARGEST_STATEMENT_BYTES = 1024 * 1024;

/** Aurora MySQL 3 parameters that are set per cluster (DB cluster parameter group). */
export const CLUSTER_PARAMETERS: Readonly<Record<string, string>> = {
  time_zone: SERVER_TIME_ZONE,
  character_set_server: CHARACTER_SET,
  collation_server: COLLATION,
};

/** Aurora MySQL 3 parameters that are set per instance (DB parameter group of the writer and every reader). */
export const INSTANCE_PARAMETERS: Readonly<Record<string, string>> = {
  sql_mode: SQL_MODE,
  transaction_isolation: TRANSACTION_ISOLATION,
  max_allowed_packet: String(MAX_ALLOWED_PACKET_BYTES),
};
